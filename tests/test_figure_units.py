"""The unit and direction of every registered benchmark's headline figure, from its own ``run``.

Each benchmark runs in-process at a tiny size where that is cheap (disk.read, cpu.decode with its
pool in this process, host.membw, gpu.matmul on the CPU), against the CPU stand-in for
``torch.cuda`` for the GPU-only transfers, and for the model benchmarks with the framework's timed
loop replaced by a known timed run (the dispatch and the Outcome they build are the real ones).
No figure these produce means anything; only the unit, the direction and the figure's name are
asserted, plus the model throughput arithmetic, which has a known answer.
"""

from __future__ import annotations

import importlib.util
import types

import pytest
from support import InProcessPool
from recording import Recorder
from test_microbench_gpu_paths import fake_cuda  # noqa: F401  (the CPU stand-in for torch.cuda, a fixture)

from hwbench_gui.engine.run import registry

#: benchmark id -> (headline unit, higher is better)
UNITS = {
    "disk.read": ("MB/s", True),
    "cpu.decode": ("images/s", True),
    "host.membw": ("GB/s", True),
    "gpu.pcie": ("GB/s", True),
    "gpu.d2d": ("GB/s", True),
    "gpu.p2p": ("GB/s", True),
    "gpu.matmul": ("TFLOP/s", True),
    "model.resnet50": ("images/s", True),
    "model.vgg16": ("images/s", True),
    "model.fasterrcnn": ("images/s", True),
    "model.unet": ("images/s", True),
    "datapath.analyze": ("images/s", True),
    # a machine without a GPU: the host's checked matmul; with GPUs the headline is the GEMM rate per GPU in
    # TFLOP/s, another figure name (and precision), so a comparison never pairs the two
    "health.burnin": ("GFLOP/s", True),
    "llm.infer": ("tokens/s", True),
    "llm.train": ("tokens/s", True),
    "diffusion.infer": ("images/min", True),
    "llm.endpoint": ("tokens/s", True),
    "llm.llamacpp": ("tokens/s", True),
    "llm.ollama": ("tokens/s", True),
    "speech.transcribe": ("x real time", True),
}

#: Benchmarks whose whole run is too heavy for a unit test (a loader-fed training run and every
#: stage of the data path); tests/test_datapath.py checks its unit in its end-to-end runs. llm.infer's
#: unit is checked from its small CPU run in tests/test_llm_infer.py (run once there, not twice), llm.train's
#: in tests/test_llm_train_step.py, diffusion.infer's in tests/test_diffusion_infer.py, speech.transcribe's in
#: tests/test_speech_transcribe.py, llm.endpoint's against a real server in tests/test_llm_serving.py, llm.llamacpp's
#: and llm.ollama's in tests/test_llm_engines.py.
NOT_RUN_HERE = {"datapath.analyze", "llm.infer", "llm.train", "diffusion.infer", "speech.transcribe", "llm.endpoint",
                "llm.llamacpp", "llm.ollama"}

torch_missing = importlib.util.find_spec("torch") is None


def test_every_registered_benchmark_has_a_unit_in_the_table():
    assert not registry.module_errors()
    assert {b.id for b in registry.all_benchmarks()} == set(UNITS)


def _check(outcome, bench_id):
    assert (outcome.unit, outcome.higher_is_better) == UNITS[bench_id]
    assert outcome.samples and all(s > 0 for s in outcome.samples)


def test_disk_read(tmp_path):
    bench = registry.get("disk.read")
    outcome = bench.run(bench.resolve_params({"folder": str(tmp_path), "file_size_mib": 1, "repeats": 1,
                                              "random_reads": 10}), Recorder())
    _check(outcome, "disk.read")
    assert outcome.figure_name == "sequential read"
    assert outcome.figures["random 4 KiB read IOPS"]["unit"] == "IOPS"
    assert outcome.figures["random 4 KiB read IOPS"]["higher_is_better"] is True


@pytest.mark.skipif(importlib.util.find_spec("cv2") is None, reason="OpenCV not installed")
def test_cpu_decode(monkeypatch):
    from hwbench_gui.engine.measure import decode

    # Real decoding, in this process: a spawned pool would spend seconds importing.
    monkeypatch.setattr(decode, "die_with_parent", lambda pid: None)
    monkeypatch.setattr(decode, "_worker_state", {})
    monkeypatch.setattr(decode.multiprocessing, "get_context",
                        lambda method: types.SimpleNamespace(Pool=InProcessPool))
    bench = registry.get("cpu.decode")
    outcome = bench.run(bench.resolve_params({"count": 2, "image_size": 16, "workers": "1", "repeats": 1,
                                              "repeat_s": 0.01}), Recorder())
    _check(outcome, "cpu.decode")
    assert outcome.figure_name == "JPEG decode, OpenCV, largest worker count"


def test_host_membw():
    bench = registry.get("host.membw")
    outcome = bench.run(bench.resolve_params({"array_mib": 1, "threads": "1", "engine": "numpy", "repeats": 1}),
                        Recorder())
    _check(outcome, "host.membw")
    assert outcome.figure_name == "triad, largest thread count"
    assert {f["unit"] for f in outcome.figures.values() if "unit" in f} == {"GB/s"}


@pytest.mark.skipif(torch_missing, reason="torch not installed")
def test_gpu_matmul_on_the_cpu():
    bench = registry.get("gpu.matmul")
    outcome = bench.run(bench.resolve_params({"device": "cpu", "precision": "fp32", "sizes": "16", "repeats": 1}),
                        Recorder())
    _check(outcome, "gpu.matmul")
    assert outcome.figures["FP32"]["unit"] == "TFLOP/s"


@pytest.mark.skipif(torch_missing, reason="torch not installed")
@pytest.mark.parametrize("bench_id, given", [
    ("gpu.pcie", {"min_bytes": 4096, "max_bytes": 16384, "repeats": 1}),
    ("gpu.d2d", {"size_mib": 1, "min_size_mib": 1, "repeats": 1}),
    ("gpu.p2p", {"size_mib": 1, "repeats": 1, "latency_copies": 2}),
])
def test_gpu_transfers(fake_cuda, bench_id, given):  # noqa: F811
    bench = registry.get(bench_id)
    outcome = bench.run(bench.resolve_params(given), Recorder())
    _check(outcome, bench_id)


@pytest.mark.skipif(torch_missing, reason="torch not installed")
@pytest.mark.parametrize("bench_id", ["model.resnet50", "model.vgg16", "model.fasterrcnn", "model.unet"])
@pytest.mark.parametrize("mode", ["train", "infer"])
def test_model_benchmarks(monkeypatch, bench_id, mode):
    from hwbench_gui.engine.models import torch_measure
    from hwbench_gui.engine.models.common import TimedRun

    # Two timed windows: 2 steps of batch 4 in 0.5 s, then 2 in 1.0 s: 16 and 8 images/s.
    run = TimedRun(batch=4, steps=4, total_s=1.5, step_s=[0.25, 0.25, 0.5, 0.5], window_s=[0.5, 1.0],
                   window_steps=[2, 2])
    monkeypatch.setattr(torch_measure, "measure", lambda spec, params, reporter: (run, {}, "cpu (test)"))
    bench = registry.get(bench_id)
    outcome = bench.run(bench.resolve_params({"device": "cpu", "mode": mode}), Recorder())
    _check(outcome, bench_id)
    assert outcome.samples == pytest.approx([16.0, 8.0])
    assert outcome.figure_name.endswith(f"{'training' if mode == 'train' else 'inference'} throughput")
    assert outcome.details["total_images_per_s"] == pytest.approx(16 / 1.5)
    step = outcome.figures["step_time"]
    assert (step["unit"], step["higher_is_better"]) == ("ms", False)
    assert (outcome.figures["data_wait_fraction"]["unit"], outcome.figures["data_wait_fraction"]["higher_is_better"]) \
        == ("fraction", False)


def test_health_burnin_without_a_gpu(monkeypatch):
    from hwbench_gui.engine import nvml

    monkeypatch.setattr(nvml, "unavailable_reason", lambda: "NVML could not start: test (NVMLError_LibraryNotFound)")
    monkeypatch.setattr(nvml, "device_count", lambda: 0)
    bench = registry.get("health.burnin")
    outcome = bench.run(bench.resolve_params({"minutes": 0.02, "ram_share": 0.001}), Recorder())
    _check(outcome, "health.burnin")
    assert outcome.figure_name == "host checked matmul under burn-in"
    assert outcome.details["health"]["gpus"] == [] and outcome.details["health"]["no_gpu_reason"]


def test_every_benchmark_is_run_here_but_the_listed_heavy_one():
    tested = {"disk.read", "cpu.decode", "host.membw", "gpu.matmul", "gpu.pcie", "gpu.d2d", "gpu.p2p",
              "model.resnet50", "model.vgg16", "model.fasterrcnn", "model.unet", "health.burnin"}
    assert tested | NOT_RUN_HERE == set(UNITS) and not tested & NOT_RUN_HERE
