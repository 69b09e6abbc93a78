"""What a model run decides for itself: the memory format (channels_last=auto), the batch on the CPU
(batch=0), the device it landed on, and progress with an ETA from the measured step time."""

from __future__ import annotations

import pytest

from hwbench_gui.engine.models.common import (
    CPU_BATCH_DIVISOR,
    MODELS,
    StepProgress,
    default_batch,
    format_eta,
    resolve_channels_last,
)
from hwbench_gui.engine.results.document import build_document, now_utc
from hwbench_gui.engine.run import registry, runner


@pytest.mark.parametrize("framework, device, precision, nhwc", [
    ("torch", "cuda", "bf16-amp", True), ("torch", "cuda", "fp16-amp", True), ("torch", "cuda", "tf32", True),
    ("torch", "cuda", "fp32", False),  # TF32 off: CUDA cores, no NHWC kernels to gain from
    ("torch", "cpu", "bf16-amp", False), ("torch", "cpu", "fp32", False),
    ("tf", "cuda", "fp32", True), ("tf", "cpu", "fp32", True),  # Keras is NHWC whatever is asked
])
def test_auto_memory_format_per_framework_device_and_precision(framework, device, precision, nhwc):
    assert resolve_channels_last("auto", framework, device, precision) is nhwc


def test_torchvision_detection_stays_nchw():
    assert resolve_channels_last("auto", "torch", "cuda", "bf16-amp", "detect") is False
    assert resolve_channels_last("true", "torch", "cuda", "bf16-amp", "detect") is False
    assert resolve_channels_last("auto", "tf", "cuda", "bf16-amp", "detect") is True


def test_a_given_memory_format_is_kept():
    assert resolve_channels_last("true", "torch", "cpu", "fp32") is True
    assert resolve_channels_last("false", "torch", "cuda", "bf16-amp") is False
    assert resolve_channels_last(True, "torch", "cpu", "fp32") is True  # a document's resolved value


def test_cpu_default_batch_is_the_gpu_default_divided():
    assert CPU_BATCH_DIVISOR == 8
    assert {k: (default_batch(s, "cuda"), default_batch(s, "cpu")) for k, s in MODELS.items()} == {
        "resnet50": (128, 16), "vgg16": (128, 16), "fasterrcnn": (16, 2), "unet": (32, 4)}


def test_a_reference_with_true_false_memory_format_still_resolves():
    bench = registry.get("model.resnet50")
    assert bench.resolve_params({"channels_last": True})["channels_last"] == "true"
    assert bench.resolve_params({"channels_last": False})["channels_last"] == "false"


def test_the_document_stores_the_values_the_run_chose():
    bench = registry.get("model.resnet50")
    params = bench.resolve_params({"device": "cpu"})
    outcome = {"figure_name": "x", "unit": "images/s", "samples": [1.0, 2.0],
               "resolved_params": {"batch": 16, "channels_last": False, "not_a_param": 1}}
    doc = build_document(bench, params, status="ok", started_at=now_utc(), duration_s=1.0, outcome=outcome)
    assert doc["params"]["batch"] == 16 and doc["params"]["channels_last"] is False
    assert doc["params_requested"] == {"batch": 0, "channels_last": "auto"}
    assert "not_a_param" not in doc["params"]


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


class Recorder:
    def __init__(self):
        self.events = []

    def progress(self, fraction, message=""):
        self.events.append((fraction, message))


def test_progress_reports_every_step_with_an_eta_from_the_step_time():
    clock, rec = Clock(), Recorder()
    params = {"warmup": 3, "steps": 4, "repeats": 2, "mode": "train"}
    progress = StepProgress(rec, params, on_gpu=False, interval_s=0.0, clock=clock)
    clock.now = 30.0  # the first warm-up step: compilation, not a step time
    progress.step()
    assert rec.events[-1] == (0.0, "warm-up step 1/3, ETA after the first steps")
    for _ in range(2):
        clock.now += 2.0
        progress.step()
    # 2 s a step, 8 timed steps to come: 16 s
    assert rec.events[-1][1] == "warm-up step 3/3, 2 s/step, ETA 16 s"
    assert rec.events[-1][0] == pytest.approx(34 / 50)
    progress.set_window(4)
    progress.begin("timed")
    progress.repeat = 1
    clock.now += 1.0
    progress.step()
    # mean of 2, 2, 1 s; 7 steps to come
    assert rec.events[-1][1] == f"timed step 1/8 (repeat 2/2), 1.67 s/step, {format_eta(7 * 5 / 3)}"


def test_progress_names_the_steps_past_the_warm_up_as_the_loader_settling():
    clock, rec = Clock(), Recorder()
    progress = StepProgress(rec, {"warmup": 2, "steps": 3, "repeats": 1, "mode": "train"}, on_gpu=False,
                            interval_s=0.0, clock=clock)
    for _ in range(5):  # 2 warm-up steps, then 3 while a loader starts and settles
        clock.now += 1.0
        progress.step()
    assert rec.events[-1][1].startswith("settling the loader: step 3, 1 s/step")
    assert all(not message.startswith("warm-up step 3") for _, message in rec.events)


def test_progress_on_a_gpu_counts_the_windows_that_fill_min_time():
    clock, rec = Clock(), Recorder()
    params = {"warmup": 2, "steps": 10, "repeats": 5, "mode": "train", "min_time_s": 10.0}
    progress = StepProgress(rec, params, on_gpu=True, interval_s=0.0, clock=clock)
    clock.now = 5.0
    progress.step()
    clock.now += 1 / 64
    progress.step()
    # 1/64 s a step: 10 s need 640 timed steps (5 windows of 128), plus the 10-step sizing window
    assert progress.remaining_steps() == 650
    assert rec.events[-1][1].endswith(format_eta(650 / 64))


def test_eta_format():
    assert (format_eta(44.6), format_eta(190), format_eta(3900)) == ("ETA 45 s", "ETA 3 min 10 s", "ETA 1 h 05 min")


def test_a_default_run_on_a_cpu_machine_says_so_and_uses_the_cpu_batch(tmp_path, monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")  # this machine has no GPU; a GPU box must look like one
    events = []
    result = runner.run_benchmark("model.resnet50", {"image_size": "32", "steps": "2", "warmup": "2",
                                                     "repeats": "2"}, on_event=events.append,
                                  results_dir=tmp_path, timeout_s=300)
    doc = result.document
    assert doc["status"] == "ok", doc["reason"]
    messages = [e.get("message", "") for e in events if e.get("type") in ("progress", "log")]
    assert "no GPU found: running on the CPU (batch 16, the CPU default)" in messages
    assert any("ETA" in m and m.startswith("timed step") for m in messages)
    assert doc["params"]["batch"] == 16 and doc["params"]["channels_last"] is False
    assert doc["params_requested"] == {"batch": 0, "channels_last": "auto"}
    assert "no GPU found (device=auto): ran on the CPU" in doc["warnings"]
