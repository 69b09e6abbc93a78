"""Model benchmarks on the CPU at a tiny size: every model × framework × mode through the real
child-process runner, real folder data sets through the loaders, precision labels, the OOM path,
the max-batch search and the seed suite. Figures here are CPU figures of tiny models: the tests
check that runs complete and documents are right, never how fast anything is.

Slow (marked): the runs that take longest here (VGG16, Faster R-CNN training, most TensorFlow
runs, DDP). TensorFlow tests are skipped where TensorFlow is not installed (CI installs no TF).
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from hwbench_gui.engine.child import child_env
from hwbench_gui.engine.models import data as model_data
from hwbench_gui.engine.models.common import (
    MODELS,
    OutOfMemoryError,
    default_batch,
    oom_message,
    percentile,
)
from hwbench_gui.engine.spec.precision import MODEL_LABELS as PRECISION_LABELS
from hwbench_gui.engine.run import maxbatch, registry, runner, suites, worker
from hwbench_gui.engine.spec.benchmark import ParamError

TESTS_DIR = Path(__file__).resolve().parent
HAS_TF = importlib.util.find_spec("tensorflow") is not None
needs_tf = pytest.mark.skipif(not HAS_TF, reason="TensorFlow is not installed")
slow = pytest.mark.slow

TINY = {"device": "cpu", "batch": "2", "steps": "2", "warmup": "1", "repeats": "2"}
SIZE = {"resnet50": 64, "vgg16": 64, "unet": 64, "fasterrcnn": 128}


@pytest.fixture(autouse=True)
def quiet_threads(monkeypatch):
    """One compute thread per child: on a busy 2-core machine OpenMP spinning makes 2 threads far slower."""
    for name in ("OMP_NUM_THREADS", "TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS"):
        monkeypatch.setenv(name, "1")
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "2")


def run_model(tmp_path, model, framework="torch", mode="train", **params):
    given = {**TINY, "framework": framework, "mode": mode, "image_size": str(SIZE[model]),
             **{k: str(v) for k, v in params.items()}}
    result = runner.run_benchmark(f"model.{model}", given, results_dir=tmp_path, timeout_s=300)
    return result.document


def assert_ok_document(doc, model, mode, batch=2, steps=2, repeats=2):
    assert doc["status"] == "ok", (doc["reason"], doc.get("log_tail"))
    assert doc["benchmark"]["id"] == f"model.{model}"
    assert doc["precision"] == "FP32"
    assert doc["figure"]["unit"] == "images/s" and doc["figure"]["value"] > 0
    details = doc["details"]
    # one sample per timed window: its images / its wall time; the figure is their median
    assert details["window_steps"] == [steps] * repeats and len(details["window_s"]) == repeats
    assert doc["samples"] == pytest.approx([batch * steps / s for s in details["window_s"]])
    assert doc["figure"]["value"] == pytest.approx(sorted(doc["samples"])[repeats // 2] if repeats % 2 else
                                                   sum(sorted(doc["samples"])[repeats // 2 - 1:repeats // 2 + 1]) / 2)
    assert details["images_timed"] == batch * steps * repeats
    assert details["total_timed_s"] == pytest.approx(sum(details["window_s"]))
    assert details["total_images_per_s"] == pytest.approx(batch * steps * repeats / details["total_timed_s"])
    step = doc["figures"]["step_time"]
    assert len(step["samples"]) == steps * repeats and step["p50"] <= step["p90"] <= step["p99"]
    # the telemetry a result keeps is that of the timed windows; the whole run's is beside it
    assert doc["telemetry"]["scope"] == "timed phase" and len(doc["telemetry"]["windows"]) == repeats
    assert doc["telemetry_whole_run"]["scope"] == "whole run"
    if mode == "infer":
        assert len(doc["figures"]["latency_batch1"]["samples"]) == steps * repeats
        assert doc["figures"]["latency_batch"]["samples"] == step["samples"]
    else:
        assert "latency_batch1" not in doc["figures"]
        assert details["final_loss"] is not None
    assert doc["figures"]["peak_allocated_gib"]["value"] is None
    assert doc["figures"]["peak_allocated_gib"]["reason"]
    assert doc["method"] and doc["device"].startswith("cpu")
    json.dumps(doc, allow_nan=False)


# -- declarations ------------------------------------------------------------------------------------

def test_the_four_seed_model_benchmarks_are_declared_with_their_parameters():
    ids = {b.id for b in registry.all_benchmarks()}
    assert {"model.resnet50", "model.vgg16", "model.fasterrcnn", "model.unet"} <= ids
    expected_sizes = {"resnet50": 224, "vgg16": 224, "fasterrcnn": 800, "unet": 512}
    for key, size in expected_sizes.items():
        bench = registry.get(f"model.{key}")
        values = bench.resolve_params()
        assert {"framework", "mode", "precision", "batch", "image_size", "steps", "warmup", "device", "gpus",
                "channels_last", "compile", "data"} <= set(values)
        assert values["image_size"] == size and values["framework"] == "torch" and values["precision"] == "fp32"
        assert values["data"] == "synthetic" and values["compile"] is False
        assert bench.param("framework").choices == ("torch", "tf")
        assert bench.param("mode").choices == ("train", "infer")
        assert bench.param("precision").choices == ("fp32", "tf32", "fp16-amp", "bf16-amp")
    # batch 0: the model's default for the device the run lands on (128 on a GPU as in the seed)
    assert registry.get("model.resnet50").resolve_params()["batch"] == 0
    assert default_batch(MODELS["resnet50"], "cuda") == default_batch(MODELS["vgg16"], "cuda") == 128
    assert registry.get("model.resnet50").resolve_params()["channels_last"] == "auto"


def test_precision_labels_are_exact():
    assert PRECISION_LABELS == {"fp32": "FP32", "tf32": "TF32", "fp16-amp": "FP16-AMP", "bf16-amp": "BF16-AMP"}


def test_importing_the_model_modules_loads_no_framework():
    code = ("import sys, hwbench_gui.engine.benchmarks.models, hwbench_gui.engine.run.maxbatch, "
            "hwbench_gui.engine.run.suites, hwbench_gui.engine.models.unet, hwbench_gui.engine.models.data; "
            "print(sorted(m for m in ('torch', 'tensorflow', 'torchvision', 'keras') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=child_env(),
                         timeout=60)
    assert out.stdout.strip() == "[]", out.stderr


def test_percentile_matches_numpy_linear():
    assert percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 90) == pytest.approx(9.1)
    assert percentile([], 50) is None


# -- every model × mode in PyTorch through the runner ------------------------------------------------

@pytest.mark.parametrize("model, mode", [
    ("resnet50", "train"), ("resnet50", "infer"), ("unet", "train"), ("fasterrcnn", "infer"),
    pytest.param("unet", "infer", marks=slow), pytest.param("vgg16", "train", marks=slow),
    pytest.param("vgg16", "infer", marks=slow), pytest.param("fasterrcnn", "train", marks=slow),
])
def test_torch_model_runs_end_to_end(tmp_path, model, mode):
    doc = run_model(tmp_path, model, "torch", mode)
    assert_ok_document(doc, model, mode)
    assert doc["details"]["torch"] and doc["details"]["source"] == MODELS[model].torch_source
    if model == "fasterrcnn":
        assert doc["details"]["min_size"] == 128


@pytest.mark.parametrize("framework", ["torch", pytest.param("tf", marks=needs_tf)])
def test_the_default_device_is_a_gpu_the_framework_sees_else_the_cpu(tmp_path, framework):
    """device=auto by default: a machine without a GPU runs the model benchmarks on its CPU instead of
    failing on cuda:0 (the GUI's form and `hwbench run --like <GPU reference>` leave device at its default)."""
    import torch

    assert registry.get("model.resnet50").resolve_params()["device"] == "auto"
    given = {**{k: v for k, v in TINY.items() if k != "device"}, "framework": framework, "image_size": "64"}
    doc = runner.run_benchmark("model.resnet50", given, results_dir=tmp_path, timeout_s=300).document
    assert doc["status"] == "ok", (doc["reason"], doc.get("log_tail"))
    assert doc["device"].startswith("cuda" if torch.cuda.is_available() else "cpu"), doc["device"]


# -- TensorFlow --------------------------------------------------------------------------------------

@needs_tf
@pytest.mark.parametrize("model, mode", [
    ("resnet50", "train"),
    pytest.param("resnet50", "infer", marks=slow), pytest.param("vgg16", "train", marks=slow),
    pytest.param("vgg16", "infer", marks=slow), pytest.param("unet", "train", marks=slow),
    pytest.param("unet", "infer", marks=slow),
])
def test_tf_model_runs_end_to_end(tmp_path, model, mode):
    doc = run_model(tmp_path, model, "tf", mode)
    assert_ok_document(doc, model, mode)
    assert doc["details"]["tensorflow"] and doc["details"]["memory_growth"] is True
    assert doc["details"]["tensor_float_32_execution"] is False  # FP32 means TF32 off


@needs_tf
@pytest.mark.parametrize("mode, precision", [("train", "fp32"), ("infer", "bf16-amp")])
def test_tf_faster_rcnn_is_the_keras_implementation_of_torchvisions(tmp_path, mode, precision):
    # 64 px: the smallest input the five FPN levels take; FP16 on a CPU is emulated (minutes a step)
    doc = run_model(tmp_path, "fasterrcnn", "tf", mode, precision=precision, image_size=64)
    label = {"fp32": "FP32", "bf16-amp": "BF16-AMP"}[precision]
    assert doc["status"] == "ok", (doc["reason"], doc.get("log_tail"))
    assert doc["precision"] == label and doc["figure"]["value"] > 0
    assert "Keras implementation of the torchvision architecture" in doc["details"]["implementation"]
    assert "Keras implementation of the torchvision architecture" in doc["method"]
    assert doc["details"]["source"] == MODELS["fasterrcnn"].tf_source
    assert doc["details"]["trainable_parameters"] == 41_476_216  # torchvision's 41,449,656 + conv biases
    assert doc["details"]["model_dtype_policy"] == ("float32" if precision == "fp32" else "mixed_bfloat16")
    if mode == "train":
        assert math.isfinite(doc["details"]["final_loss"])


# -- precision labels and settings (in this process: fast) -------------------------------------------

class NullReporter:
    def progress(self, fraction, message=""):
        pass

    def log(self, message):
        pass

    def metric(self, name, value, unit, **extra):
        pass

    def phase(self, phase, state, repeat=None):
        pass


@pytest.mark.parametrize("precision, label", list(PRECISION_LABELS.items()))
def test_torch_precision_label_and_settings(precision, label):
    torch = pytest.importorskip("torch")
    bench = registry.get("model.resnet50")
    params = bench.resolve_params({**TINY, "image_size": "32", "batch": "1", "steps": "1", "warmup": "0",
                                   "mode": "infer", "precision": precision})
    saved = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        outcome = bench.run(params, NullReporter())
    finally:
        torch.set_num_threads(saved)
    from datetime import datetime, timezone

    from hwbench_gui.engine.results.document import build_document
    from hwbench_gui.engine.run.protocol import outcome_to_json

    doc = build_document(bench, params, status="ok", started_at=datetime.now(timezone.utc), duration_s=1.0,
                         outcome=outcome_to_json(outcome), machine={})
    assert doc["precision"] == label  # named once, from the run's parameter
    settings = outcome.details["precision_settings"]
    if label == "FP32":
        assert settings["cudnn.allow_tf32"] is False and settings["cuda.matmul.allow_tf32"] is False
        assert settings["float32_matmul_precision"] == "highest"
    if label == "TF32":
        assert settings["cudnn.allow_tf32"] is True and settings["cuda.matmul.allow_tf32"] is True
    expected = {"FP16-AMP": "float16", "BF16-AMP": "bfloat16"}.get(label)
    assert outcome.details["autocast_dtype"] == expected
    assert "allow_tf32" in outcome.method  # the method says how each precision was set up
    assert "precision_label" not in outcome.details  # the document names its precision once, in "precision"


@slow
def test_fp16_amp_training_uses_a_grad_scaler(tmp_path):
    doc = run_model(tmp_path, "resnet50", "torch", "train", precision="fp16-amp", image_size=32)
    assert doc["status"] == "ok", doc["reason"]
    assert doc["precision"] == "FP16-AMP" and doc["details"]["grad_scaler"] is True


# -- real data through the loaders -------------------------------------------------------------------

def _jpeg(path: Path, seed: int, size=(80, 72)):
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(rng.integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)).save(path, quality=90)


@pytest.fixture
def image_folder(tmp_path):
    root = tmp_path / "flowers"
    for c, name in enumerate(("daisy", "rose")):
        for i in range(3):
            _jpeg(root / name / f"{i}.jpg", 10 * c + i)
    (root / "rose" / "notes.txt").write_text("not an image")
    return root


@pytest.fixture
def voc_folder(tmp_path):
    root = tmp_path / "VOCdevkit" / "VOC2007"
    for i in range(4):
        _jpeg(root / "JPEGImages" / f"{i:06d}.jpg", i, size=(120, 90))
        ann = ET.Element("annotation")
        for name, box in (("dog", (5, 6, 60, 70)), ("person", (30, 10, 110, 85)), ("unicorn", (1, 1, 9, 9))):
            obj = ET.SubElement(ann, "object")
            ET.SubElement(obj, "name").text = name
            bnd = ET.SubElement(obj, "bndbox")
            for key, value in zip(("xmin", "ymin", "xmax", "ymax"), box):
                ET.SubElement(bnd, key).text = str(value)
        (root / "Annotations").mkdir(parents=True, exist_ok=True)
        ET.ElementTree(ann).write(root / "Annotations" / f"{i:06d}.xml")
    return tmp_path / "VOCdevkit"


@pytest.fixture
def mask_folder(tmp_path):
    import numpy as np
    from PIL import Image

    root = tmp_path / "kits"
    (root / "masks").mkdir(parents=True)
    for i in range(4):
        _jpeg(root / "images" / f"case{i}.jpg", i, size=(64, 64))
        mask = np.zeros((64, 64), dtype=np.uint8)
        mask[10:30, 20:50] = 255
        Image.fromarray(mask).save(root / "masks" / f"case{i}.png")
    return root


def test_layouts_are_read(image_folder, voc_folder, mask_folder):
    items, classes = model_data.image_folder_items(image_folder)
    assert classes == ["daisy", "rose"] and len(items) == 6 and {label for _, label in items} == {0, 1}
    voc = model_data.voc_items(voc_folder)
    assert len(voc) == 4
    boxes, labels = model_data.parse_voc_xml(voc[0][1])
    assert boxes == [[5, 6, 60, 70], [30, 10, 110, 85]]  # the unknown class is left out
    assert labels == [model_data.VOC_CLASSES.index("dog") + 1, model_data.VOC_CLASSES.index("person") + 1]
    assert len(model_data.mask_items(mask_folder)) == 4


def test_bad_folders_say_what_is_wrong(tmp_path, image_folder):
    with pytest.raises(ParamError, match="not a Pascal VOC folder"):
        model_data.voc_items(tmp_path)
    with pytest.raises(ParamError, match="images/ and masks/"):
        model_data.mask_items(tmp_path)
    torch = pytest.importorskip("torch")  # noqa: F841
    with pytest.raises(ParamError, match="fewer than one batch of 64"):
        model_data.torch_loader("classify", str(image_folder), 32, 64, 0, False)


def test_binary_masks_become_class_indices():
    import numpy as np

    assert model_data.normalise_mask(np.array([[0, 255]], dtype=np.uint8)).tolist() == [[0, 1]]
    assert model_data.normalise_mask(np.array([[0, 2, 1]], dtype=np.uint8)).tolist() == [[0, 2, 1]]


def test_torch_loader_batches_masks(mask_folder):
    pytest.importorskip("torch")
    loader = model_data.torch_loader("segment", str(mask_folder), 32, 2, 0, False)
    images, masks = next(iter(loader))
    assert tuple(images.shape) == (2, 3, 32, 32) and tuple(masks.shape) == (2, 32, 32)
    assert set(masks.unique().tolist()) <= {0, 1} and masks.max().item() == 1


def test_classifier_trains_on_an_image_folder_with_loader_workers(tmp_path, image_folder):
    doc = run_model(tmp_path, "resnet50", "torch", "train", data=image_folder, workers=1, steps=4)
    assert_ok_document(doc, "resnet50", "train", steps=4)
    assert doc["details"]["num_classes"] == 2
    assert doc["details"]["epochs_started"] >= 2  # 6 images, batch 2: the loader cycles
    waited = doc["figures"]["data_wait_s"]["value"]
    assert waited >= 0 and doc["figures"]["compute_s"]["value"] <= doc["details"]["total_timed_s"]
    assert "DataLoader" in doc["method"]


@slow
def test_faster_rcnn_trains_on_a_voc_folder(tmp_path, voc_folder):
    doc = run_model(tmp_path, "fasterrcnn", "torch", "train", data=voc_folder, workers=1)
    assert_ok_document(doc, "fasterrcnn", "train")
    assert doc["details"]["num_classes"] == 21


@slow
def test_unet_trains_on_image_and_mask_folders(tmp_path, mask_folder):
    doc = run_model(tmp_path, "unet", "torch", "train", data=mask_folder, workers=1)
    assert_ok_document(doc, "unet", "train")


@needs_tf
@slow
@pytest.mark.parametrize("model", ["resnet50", "unet"])
def test_tf_reads_folders_through_tf_data(tmp_path, image_folder, mask_folder, model):
    folder = image_folder if model == "resnet50" else mask_folder
    doc = run_model(tmp_path, model, "tf", "train", data=folder, workers=1)
    assert_ok_document(doc, model, "train")
    assert "tf.data" in doc["method"]


# -- out of memory -----------------------------------------------------------------------------------

def test_oom_message_format():
    text = oom_message(512, 131.44 * (1 << 30), 139.8 * (1 << 30))
    assert text.startswith("CUDA out of memory at batch 512 (peak 131.4 GiB of 139.8 GiB); suggestion: batch 256")
    assert "hwbench maxbatch" in text and "\n" not in text
    assert "(peak 2.0 GiB; total unknown)" in oom_message(8, 2 * (1 << 30), None)


def test_worker_files_our_oom_error_as_out_of_memory():
    event = worker.error_event(OutOfMemoryError(oom_message(64, 5 * (1 << 30), 80 * (1 << 30))))
    assert event["kind"] == "out_of_memory"
    assert "CUDA out of memory at batch 64 (peak 5.0 GiB of 80.0 GiB)" in event["message"]


def test_cuda_oom_in_a_run_gives_a_clean_failed_document(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    monkeypatch.setenv(registry.EXTRA_ENV, "test_model_bench_fixture")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in [str(TESTS_DIR), os.environ.get("PYTHONPATH")] if p))
    monkeypatch.syspath_prepend(str(TESTS_DIR))
    result = runner.run_benchmark("test.model_oom", {"batch": 4096, "device": "cuda:0"}, results_dir=tmp_path,
                                  timeout_s=120, check_availability=False)
    doc = result.document
    assert doc["status"] == "failed" and doc["error_kind"] == "out_of_memory"
    assert "CUDA out of memory at batch 4096 (peak 130.0 GiB of 139.8 GiB)" in doc["reason"]
    assert "suggestion" in doc["reason"] and doc["figure"] is None


# -- max batch -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("threshold, step, expected", [(300, 1, 300), (300, 8, None), (1, 1, 1), (5000, 1, 4096)])
def test_max_batch_search(threshold, step, expected):
    calls = []

    def fits(batch):
        calls.append(batch)
        return batch <= threshold

    result = maxbatch.search_max_batch(fits, start=8 if threshold >= 8 else 4, limit=4096, step=step)
    assert len(calls) == len(set(calls)), "a batch was tried twice"
    assert result.largest <= threshold
    if expected is not None:
        assert result.largest == expected
    else:
        assert result.smallest_failing - result.largest <= step and result.smallest_failing > threshold
    if result.largest == 4096:
        assert result.smallest_failing is None
    assert result.tries == [(b, b <= threshold) for b in calls]


def test_max_batch_when_nothing_fits():
    result = maxbatch.search_max_batch(lambda b: False, start=8, limit=64)
    assert result.largest == 0 and result.smallest_failing == 1


def test_max_batch_runs_each_try_through_the_runner(monkeypatch):
    seen = []

    class Result:
        def __init__(self, doc):
            self.document = doc

    def fake_run(bench_id, params, **kwargs):
        seen.append((bench_id, params["batch"], params["steps"], params["precision"]))
        if params["batch"] <= 40:
            return Result({"status": "ok"})
        return Result({"status": "failed", "error_kind": "out_of_memory", "reason": "CUDA out of memory at ..."})

    monkeypatch.setattr(runner, "run_benchmark", fake_run)
    result = maxbatch.max_batch("model.resnet50", {"precision": "bf16-amp"}, start=8, limit=1024, step=1)
    assert result.largest == 40 and result.smallest_failing == 41
    assert all(s[0] == "model.resnet50" and s[2] == 3 and s[3] == "bf16-amp" for s in seen)

    monkeypatch.setattr(runner, "run_benchmark",
                        lambda *a, **k: Result({"status": "failed", "error_kind": "crash", "reason": "segfault"}))
    with pytest.raises(maxbatch.MaxBatchError, match="segfault"):
        maxbatch.max_batch("model.resnet50", {}, start=8)


# -- suites ------------------------------------------------------------------------------------------

def test_seed_suite_is_the_seed_matrix():
    runs = suites.expand_suite("seed")
    assert len(runs) == 4 * 2 * 2 * 2
    assert {r.bench_id for r in runs} == {"model.resnet50", "model.vgg16", "model.fasterrcnn", "model.unet"}
    combos = {(r.bench_id, r.params["framework"], r.params["mode"], r.params["precision"]) for r in runs}
    assert len(combos) == len(runs)
    assert {r.params["precision"] for r in runs} == {"fp32", "fp16-amp"}
    for run in runs:  # every run's parameters are valid for its benchmark; batch is the model's default
        values = registry.get(run.bench_id).resolve_params(run.params)
        assert values["batch"] == 0 and default_batch(MODELS[run.bench_id.split(".")[1]], "cuda") == \
            MODELS[run.bench_id.split(".")[1]].batch


def test_suite_parameters_narrow_or_apply():
    runs = suites.expand_suite("seed", {"framework": "torch", "steps": "20"})
    assert len(runs) == 16
    assert all(r.params["framework"] == "torch" and r.params["steps"] == "20" for r in runs)
    with pytest.raises(KeyError, match="known: seed"):
        suites.expand_suite("nope")


def test_cli_suite_usage_errors(cli_env):
    from support import run_cli

    out = run_cli(["run", "--suite", "nope"], cli_env)
    assert out.returncode == 2 and "no suite 'nope'" in out.stderr
    out = run_cli(["run", "model.resnet50", "--suite", "seed"], cli_env)
    assert out.returncode == 2
    out = run_cli(["maxbatch", "model.resnet50", "-p", "precision=fp64"], cli_env)
    assert out.returncode == 2 and "precision" in out.stderr


# -- several GPUs, here as CPU ranks over gloo ---------------------------------------------------------

@slow
def test_ddp_launch_on_cpu_ranks(tmp_path):
    doc = run_model(tmp_path, "resnet50", "torch", "train", gpus=2, image_size=32)
    assert doc["status"] == "ok", (doc["reason"], doc.get("log_tail"))
    assert doc["details"]["world_size"] == 2 and doc["details"]["backend"] == "gloo"
    assert doc["details"]["images_timed"] == 2 * 2 * 2 * 2  # ranks × batch × steps × repeats
    figures = doc["figures"]
    assert len(figures["per_gpu_images_per_s"]["samples"]) == 2
    assert figures["single_gpu_images_per_s"]["value"] > 0
    efficiency = figures["scaling_efficiency"]["value"]
    assert efficiency == pytest.approx(doc["figure"]["value"] / (2 * figures["single_gpu_images_per_s"]["value"]))
    flagged = any("scaling efficiency" in w for w in doc["warnings"])
    assert flagged == (efficiency > 1.0 or efficiency < 0.5)


@needs_tf
@slow
def test_tf_mirrored_strategy_on_logical_cpu_devices(tmp_path):
    doc = run_model(tmp_path, "resnet50", "tf", "train", gpus=2, image_size=32)
    assert doc["status"] == "ok", (doc["reason"], doc.get("log_tail"))
    assert doc["details"]["strategy"] == "MirroredStrategy" and doc["details"]["world_size"] == 2
    assert doc["details"]["images_timed"] == 2 * 2 * 2 * 2  # ranks × batch × steps × repeats
    assert doc["figures"]["scaling_efficiency"]["value"] > 0


@needs_tf
def test_tf_mixed_precision_reaches_the_model(tmp_path):
    doc = run_model(tmp_path, "resnet50", "tf", "infer", precision="bf16-amp", image_size=32, steps=1)
    assert doc["status"] == "ok", (doc["reason"], doc.get("log_tail"))
    assert doc["precision"] == "BF16-AMP"
    assert doc["details"]["keras_policy"] == doc["details"]["model_dtype_policy"] == "mixed_bfloat16"
    assert doc["details"]["tensor_float_32_execution"] is True


@pytest.mark.skipif(os.name != "posix", reason="FIFOs and /dev/zero")
def test_hostile_voc_and_mask_files_are_left_out_with_their_reason(voc_folder, mask_folder):
    base = voc_folder / "VOC2007"
    (base / "Annotations" / "000000.xml").write_text("<annotation><object>" * 3)  # not XML
    (base / "Annotations" / "000001.xml").write_text(
        "<annotation><object><name>dog</name><bndbox><xmin>NaNx</xmin></bndbox></object></annotation>")
    os.remove(base / "JPEGImages" / "000002.jpg")
    os.mkfifo(base / "JPEGImages" / "000002.jpg")  # a read would never end in a loader worker
    skipped = []
    assert [Path(image).name for image, _ in model_data.voc_items(voc_folder, skipped)] == ["000003.jpg"]
    reasons = {Path(path).name: reason for path, reason in skipped}
    assert reasons["000000.xml"].startswith("not a VOC annotation (XML: ")
    assert reasons["000001.xml"].startswith("not a VOC annotation (a box coordinate: ")
    assert reasons["000002.jpg"].startswith("not a regular file")
    os.remove(mask_folder / "masks" / "case1.png")
    (mask_folder / "masks" / "case1.png").symlink_to("/dev/zero")
    skipped = []
    assert len(model_data.mask_items(mask_folder, skipped)) == 3
    assert [(Path(p).name, r.split(" (")[0]) for p, r in skipped] == [("case1.png", "not a regular file")]
