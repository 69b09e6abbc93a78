"""The seed suite's PyTorch runs on the H200 box (resources/reference/h200/seed-suite-2026-12-03/), recorded
through ``hwbench run --suite seed --out DIR`` and, after the call's time limit stopped it, again with
``--resume`` (TensorFlow is not installed there: its 16 runs were listed up front and skipped). 14 of the
16 PyTorch runs; the two U-Net inference runs did not fit into the device time."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from hwbench_gui.engine.results.library import scan
from hwbench_gui.engine.run import queue as queue_mod

FOLDER = Path(__file__).resolve().parents[1] / "resources" / "reference" / "h200" / "seed-suite-2026-12-03"


@pytest.fixture(scope="module")
def docs():
    library = scan([FOLDER])
    assert library.errors == []
    return {(d["benchmark"]["id"].split(".")[1], d["params"]["mode"], d["params"]["precision"]): d
            for d in library.docs}


def test_the_runs_are_the_seed_cells_at_the_defaults(docs):
    assert len(docs) == 14
    assert ("unet", "infer", "fp32") not in docs and ("unet", "infer", "fp16-amp") not in docs
    gpu_batch = {"resnet50": 128, "vgg16": 128, "fasterrcnn": 16, "unet": 32}
    for (model, mode, precision), doc in docs.items():
        assert doc["status"] == "ok" and doc["stats"]["n"] == 5
        assert doc["device"].startswith("cuda:0 (NVIDIA H200")
        assert doc["params_requested"] == {"batch": 0, "channels_last": "auto"}
        assert doc["params"]["batch"] == gpu_batch[model]
        # auto: NHWC for the mixed precision, never for torchvision's detector, NCHW for FP32 (TF32 off)
        nhwc = precision == "fp16-amp" and model != "fasterrcnn"
        assert doc["params"]["channels_last"] is nhwc and doc["details"]["channels_last"] is nhwc


def test_the_nhwc_default_gives_the_mixed_precision_speed(docs):
    rate = {key: doc["figure"]["value"] for key, doc in docs.items()}
    # FP16-AMP NHWC ResNet-50 training: 5,172 images/s; NCHW BF16-AMP on this box was 2,305-2,351
    assert rate["resnet50", "train", "fp16-amp"] > 2 * 2351
    assert rate["resnet50", "train", "fp32"] == pytest.approx(1006, rel=0.01)  # TF32 off: as before (1,010)
    for model in ("resnet50", "vgg16", "unet"):
        assert rate[model, "train", "fp16-amp"] > 4 * rate[model, "train", "fp32"]


def test_resume_counts_the_recorded_runs_as_done(docs, tmp_path, monkeypatch):
    for path in FOLDER.glob("*.json"):
        shutil.copy(path, tmp_path)
    monkeypatch.setattr(queue_mod.socket, "gethostname", lambda: "vm")  # the box's hostname
    monkeypatch.setitem(queue_mod.FRAMEWORK_MODULES, "tf", ("hwbench_no_such_module", "TensorFlow is not installed"))
    plan = queue_mod.plan_suite("seed", {}, results_dir=tmp_path, resume=True, gpu_count=1)
    assert len(plan.finished) == 14 and len(plan.unavailable) == 16
    assert [run.label for run in plan.to_run] == ["model.unet torch infer fp32", "model.unet torch infer fp16-amp"]
