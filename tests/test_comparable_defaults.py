"""The defaults that make two machines' results comparable: repeat counts a comparison can test, the
model benchmarks' timed-window sizing (at least ``min_time_s`` on a GPU in all), and deciding
parameters whose defaults do not depend on the machine."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import pytest
from recording import Recorder

from hwbench_gui.engine.models.common import GPU_WINDOW_MIN_STEPS, time_windows
from hwbench_gui.engine.reports import compare
from hwbench_gui.engine.run import registry

#: benchmark id -> default repeats (each repeat is one sample of the headline figure); None for a benchmark
#: without repeats, whose samples are its load's half-second windows (health.burnin: hundreds of them)
REPEATS = {
    "disk.read": 5, "cpu.decode": 5, "host.membw": 10, "gpu.pcie": 10, "gpu.d2d": 10, "gpu.p2p": 5,
    "gpu.matmul": 10, "model.resnet50": 5, "model.vgg16": 5, "model.fasterrcnn": 5, "model.unet": 5,
    "datapath.analyze": 3, "health.burnin": None, "llm.infer": 5, "llm.train": 5, "diffusion.infer": 5,
    "llm.endpoint": 4, "llm.llamacpp": None, "llm.ollama": 5,
    "speech.transcribe": 4,
}

MODEL_IDS = ("model.resnet50", "model.vgg16", "model.fasterrcnn", "model.unet")


def test_default_repeats_of_every_benchmark():
    assert {b.id: b.resolve_params().get("repeats") for b in registry.all_benchmarks()} == REPEATS


def test_default_repeats_let_a_comparison_reach_significance():
    # n vs n samples can give p < 0.05 only from n = 4 (2 / C(8, 4) ≈ 0.029; 3 vs 3: p >= 0.1).
    repeated = {bench_id: n for bench_id, n in REPEATS.items() if n is not None}
    testable = {bench_id for bench_id, n in repeated.items() if 2 / math.comb(2 * n, n) < compare.ALPHA}
    # datapath.analyze's 3 repeats per stage give "too few repeats" between two default runs.
    assert set(repeated) - testable == {"datapath.analyze"}


@pytest.mark.parametrize("bench_id", MODEL_IDS)
def test_model_window_defaults(bench_id):
    params = registry.get(bench_id).resolve_params()
    assert (params["steps"], params["repeats"], params["min_time_s"], params["warmup"]) == (10, 5, 10.0, 10)
    assert params["workers"] == 8  # fixed, not the core count: machines share it
    assert (params["gpus"], params["nnodes"], params["precision"], params["mode"]) == (1, 1, "fp32", "train")


@pytest.mark.parametrize("bench_id, batch, image_size", [
    ("model.resnet50", 128, 224), ("model.vgg16", 128, 224), ("model.fasterrcnn", 16, 800), ("model.unet", 32, 512),
])
def test_model_batch_and_image_size_defaults(bench_id, batch, image_size):
    from hwbench_gui.engine.models import common

    spec = common.MODELS[bench_id.removeprefix("model.")]
    params = registry.get(bench_id).resolve_params()
    # The batch a default GPU run uses: the declared default, or the model's own when it declares 0 (auto).
    gpu_batch = params["batch"] or common.default_batch(spec, "cuda")
    assert (spec.batch, gpu_batch, params["image_size"]) == (batch, batch, image_size)


class _SteadySteps:
    """``run_steps`` of a model whose every step takes ``step_s`` (virtual seconds: nothing is timed)."""

    def __init__(self, step_s: float, recorder: Recorder):
        self.step_s, self.recorder, self.calls = step_s, recorder, []

    def __call__(self, n: int):
        self.calls.append((n, list(self.recorder.phases)))
        return n * self.step_s, [self.step_s] * n, 0.0


def _windows(step_s, *, on_gpu, **given):
    recorder = Recorder()
    params = {**registry.get("model.resnet50").resolve_params(), **given}
    steps = _SteadySteps(step_s, recorder)
    return time_windows(steps, params, recorder, on_gpu=on_gpu), steps, recorder


def test_gpu_windows_fill_min_time_in_all():
    windows, steps, recorder = _windows(0.01, on_gpu=True)
    # Sizing: 10 steps took 0.1 s; 10 s over 5 windows is 2 s each, i.e. 200 steps per window.
    assert steps.calls[0] == (10, [])  # the sizing window is run before any timed phase starts
    assert windows.calibration == {"steps": 10, "seconds": pytest.approx(0.1), "target_window_s": 2.0}
    assert windows.window_steps == [200] * 5
    assert sum(windows.window_s) == pytest.approx(10.0)
    assert recorder.phases == [("timed", state, r) for r in range(5) for state in ("start", "end")]
    assert len(windows.step_s) == 5 * 200


def test_gpu_windows_of_slow_steps_fill_their_share_with_a_few_steps():
    windows, steps, _ = _windows(0.8, on_gpu=True)  # the sizing window's 10 steps take 8 s
    assert steps.calls[0][0] == 10
    assert windows.window_steps == [3] * 5  # 2 s a window needs 2.5 steps: 3, not the sizing window's 10
    assert sum(windows.window_s) == pytest.approx(12.0)
    windows, _, _ = _windows(5.0, on_gpu=True)  # one step is longer than a window's share
    assert windows.window_steps == [GPU_WINDOW_MIN_STEPS] * 5


def test_gpu_window_rounds_up_to_reach_the_target():
    windows, _, _ = _windows(0.03, on_gpu=True, repeats=3, min_time_s=1.0)
    # 10 steps in 0.3 s; 1/3 s per window needs 11.1 steps: 12, so that the total is not short.
    assert windows.window_steps == [12] * 3
    assert sum(windows.window_s) >= 1.0


@pytest.mark.parametrize("on_gpu, min_time_s", [(False, 10.0), (True, 0.0)])
def test_cpu_or_no_minimum_runs_just_the_steps(on_gpu, min_time_s):
    windows, steps, _ = _windows(0.01, on_gpu=on_gpu, min_time_s=min_time_s)
    assert windows.calibration is None
    assert [n for n, _ in steps.calls] == [10] * 5
    assert windows.window_steps == [10] * 5


_DECIDING_DEFAULTS = """
import json
from hwbench_gui.engine.run import registry
print(json.dumps({b.id: {p.name: b.resolve_params()[p.name] for p in b.params if p.decides_comparability}
                  for b in registry.all_benchmarks()}, sort_keys=True))
"""


def _deciding_defaults(cpus: set[int]) -> dict:
    code = f"import os; os.sched_setaffinity(0, {sorted(cpus)!r})\n" + _DECIDING_DEFAULTS
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    return json.loads(out.stdout)


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs two CPUs and CPU affinity")
def test_deciding_defaults_do_not_depend_on_the_core_count():
    cpus = sorted(os.sched_getaffinity(0))
    one, all_cpus = _deciding_defaults({cpus[0]}), _deciding_defaults(set(cpus))
    differing = {(bench_id, name) for bench_id in all_cpus for name in all_cpus[bench_id]
                 if all_cpus[bench_id][name] != one[bench_id][name]}
    assert differing == set()
