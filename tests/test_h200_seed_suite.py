"""The seed suite's PyTorch runs on the H200 box (resources/reference/h200/seed-suite-2026-12-04/), recorded
by one uninterrupted ``hwbench run --suite seed --out DIR`` (TensorFlow is not installed there: its 16 runs
were listed up front and skipped): all 16 PyTorch cells, one after another."""

from __future__ import annotations

import shutil
from datetime import datetime
from pathlib import Path

import pytest

from hwbench_gui.engine.results.library import scan
from hwbench_gui.engine.run import queue as queue_mod

FOLDER = Path(__file__).resolve().parents[1] / "resources" / "reference" / "h200" / "seed-suite-2026-12-04"
GPU_BATCH = {"resnet50": 128, "vgg16": 128, "fasterrcnn": 16, "unet": 32}


@pytest.fixture(scope="module")
def docs():
    library = scan([FOLDER])
    assert library.errors == []
    return {(d["benchmark"]["id"].split(".")[1], d["params"]["mode"], d["params"]["precision"]): d
            for d in library.docs}


def test_every_pytorch_cell_ran_at_the_defaults(docs):
    assert set(docs) == {(model, mode, precision) for model in GPU_BATCH for mode in ("train", "infer")
                         for precision in ("fp32", "fp16-amp")}
    for (model, mode, precision), doc in docs.items():
        assert doc["status"] == "ok" and doc["stats"]["n"] == 5 and not doc["telemetry"]["noise"]["busy"]
        assert doc["device"].startswith("cuda:0 (NVIDIA H200")
        assert doc["params_requested"] == {"batch": 0, "channels_last": "auto"}
        assert doc["params"]["batch"] == GPU_BATCH[model]
        # auto: NHWC for the mixed precision, never for torchvision's detector, NCHW for FP32 (TF32 off)
        nhwc = precision == "fp16-amp" and model != "fasterrcnn"
        assert doc["params"]["channels_last"] is nhwc and doc["details"]["channels_last"] is nhwc


def test_the_suite_ran_as_one_run(docs):
    """One suite, not pieces resumed: each run starts when the one before ended, and the whole took
    the 747 s the CLI printed."""
    spans = sorted((datetime.fromisoformat(d["started_at"]).timestamp(), d["duration_s"]) for d in docs.values())
    gaps = [b[0] - (a[0] + a[1]) for a, b in zip(spans, spans[1:])]
    assert max(gaps) < 5.0
    total = spans[-1][0] + spans[-1][1] - spans[0][0]
    assert total == pytest.approx(747, abs=10)


def test_slow_steps_time_windows_of_their_share(docs):
    """Windows sized by time: U-Net FP32 training (a step of 0.8 s) times 5 windows of 3 steps, not of 10."""
    unet = docs["unet", "train", "fp32"]["details"]
    assert unet["window_steps"] == [3] * 5 and 10.0 <= unet["total_timed_s"] <= 14.0
    for doc in docs.values():  # min_time_s in all, as the sizing window's pace predicts it (9.5-12.3 s)
        assert 9.0 <= sum(doc["details"]["window_s"]) <= 13.0


def test_the_nhwc_default_gives_the_mixed_precision_speed(docs):
    rate = {key: doc["figure"]["value"] for key, doc in docs.items()}
    # FP16-AMP NHWC ResNet-50 training: 4,673 images/s; NCHW BF16-AMP on this box was 2,305-2,351
    assert rate["resnet50", "train", "fp16-amp"] > 1.9 * 2351
    assert rate["resnet50", "train", "fp32"] == pytest.approx(1010, rel=0.01)  # TF32 off: as before (1,006-1,010)
    for model in ("resnet50", "vgg16", "unet"):
        assert rate[model, "train", "fp16-amp"] > 4 * rate[model, "train", "fp32"]
        assert rate[model, "infer", "fp16-amp"] > 3 * rate[model, "infer", "fp32"]


def test_resume_counts_the_recorded_runs_as_done(docs, tmp_path, monkeypatch):
    for path in FOLDER.glob("*.json"):
        shutil.copy(path, tmp_path)
    monkeypatch.setattr(queue_mod.socket, "gethostname", lambda: docs["unet", "infer", "fp32"]["hostname"])
    monkeypatch.setitem(queue_mod.FRAMEWORK_MODULES, "tf", ("hwbench_no_such_module", "TensorFlow is not installed"))
    plan = queue_mod.plan_suite("seed", {}, results_dir=tmp_path, resume=True, gpu_count=1)
    assert len(plan.finished) == 16 and len(plan.unavailable) == 16 and plan.to_run == []


def test_the_throughput_chart_names_each_bar_group_by_model_and_mode(docs):
    """The H200 evaluation report's throughput chart read "ResNet-50 training / inference..." under both
    the training and the inference bars (the benchmark's title, which names both modes)."""
    from hwbench_gui.engine.reports.charts import throughput_chart
    from hwbench_gui.engine.reports.compare import Side

    chart = throughput_chart([Side("H200", list(docs.values()))])
    labels = [t.get_text().replace("\n", " ") for t in chart.figure.axes[0].get_xticklabels()]
    assert sorted(labels) == sorted(f"{model} {mode}" for model in ("ResNet-50", "VGG16", "Faster R-CNN R50-FPN",
                                                                      "U-Net") for mode in ("training", "inference"))


def test_a_gpu_left_idle_by_the_cpu_is_noted(docs):
    """ResNet-50 FP16-AMP training at batch 128: the GPU busy 84 % of the timed phase, the windows spread
    4,545-4,860 images/s; the compute-bound runs (GPU busy 99-100 %) get no note, nor a CPU run."""
    from hwbench_gui.engine.models.common import gpu_idle_notes

    def notes(key, **change):
        doc = docs[key]
        return gpu_idle_notes({**doc["params"], **change}, {"device": doc["device"]}, doc["telemetry"])

    (note,) = notes(("resnet50", "train", "fp16-amp"))
    assert note.startswith("the GPU was busy 84 % of the timed phase")
    assert notes(("unet", "train", "fp32")) == [] and notes(("vgg16", "infer", "fp16-amp")) == []
    assert notes(("resnet50", "train", "fp16-amp"), data="/data/imagenet") == []  # a loader can be why
    assert gpu_idle_notes(docs["resnet50", "train", "fp16-amp"]["params"], {"device": "cpu (16 threads)"},
                          docs["resnet50", "train", "fp16-amp"]["telemetry"]) == []
