"""CPU timing keeps its warm-up outside the timed window.

The workloads here do no work: each call advances a virtual clock by exactly one second and is
counted, and the timer reads that clock. A timed repeat of ``inner`` calls must then last ``inner``
seconds exactly; a warm-up call that leaked into a window would make it longer, whatever the
machine's load.
"""

from __future__ import annotations

import types

import pytest
from support import InProcessPool
from recording import Recorder

from hwbench_gui.engine.measure import decode, timing


class VirtualClock:
    def __init__(self):
        self.now = 0.0
        self.calls = 0
        self.calls_at_reads: list[int] = []

    def perf_counter(self) -> float:
        self.calls_at_reads.append(self.calls)
        return self.now

    def work(self, *args):
        self.calls += 1
        self.now += 1.0


@pytest.fixture
def clock(monkeypatch):
    clock = VirtualClock()
    monkeypatch.setattr(timing, "time", types.SimpleNamespace(perf_counter=clock.perf_counter))
    return clock


@pytest.mark.parametrize("repeats, inner, warmup", [(3, 4, 2), (1, 1, 5), (5, 2, 0), (2, 7, 1)])
def test_time_cpu_times_only_the_timed_calls(clock, repeats, inner, warmup):
    seconds = timing.time_cpu(clock.work, repeats=repeats, inner=inner, warmup=warmup)
    assert seconds == [1.0] * repeats
    assert clock.calls == warmup + repeats * inner
    # Every warm-up call is done before the first clock read; each window then holds ``inner`` calls.
    assert clock.calls_at_reads == [warmup + r * inner + end * inner for r in range(repeats) for end in (0, 1)]


def test_host_membw_warms_each_kernel_up_untimed(clock, monkeypatch):
    from hwbench_gui.engine.benchmarks import host_membw

    calls = {name: 0 for name in host_membw.KERNELS}

    def counting_kernels(n):
        def kernel(name):
            def run():
                calls[name] += 1
                clock.work()
            return run
        return {name: kernel(name) for name in host_membw.KERNELS}, lambda threads: None, lambda: None

    monkeypatch.setattr(host_membw, "_numpy_kernels", counting_kernels)
    bench = host_membw.BENCHMARK
    params = bench.resolve_params({"array_mib": 1, "threads": "1,2", "engine": "numpy", "repeats": 3})
    outcome = bench.run(params, Recorder())
    # One untimed warm-up call per kernel and thread count, then one timed call per repeat.
    assert calls == {name: 2 * (1 + 3) for name in host_membw.KERNELS}
    # Each timed call lasted exactly one virtual second: triad moves 3 arrays of 1 MiB.
    assert outcome.samples == pytest.approx([3 * 2**20 / 1e9] * 3)
    assert outcome.figures["copy, 2 threads"]["samples"] == pytest.approx([2 * 2**20 / 1e9] * 3)


def test_decode_rates_keep_worker_setup_and_warm_up_pass_untimed(monkeypatch):
    clock = VirtualClock()
    monkeypatch.setattr(decode, "time", types.SimpleNamespace(perf_counter=clock.perf_counter))
    monkeypatch.setattr(decode, "die_with_parent", lambda pid: None)
    monkeypatch.setattr(decode, "decoder", lambda library: lambda data: clock.work() or data)
    monkeypatch.setattr(decode.multiprocessing, "get_context", lambda method: types.SimpleNamespace(
        Pool=lambda workers, initializer, initargs: InProcessPool(workers, initializer, initargs)))
    monkeypatch.setattr(decode, "_worker_state", {})
    jpegs = [b"one", b"two", b"three"]
    rates = decode.decode_rates("opencv", jpegs, workers=2, passes=4, repeats=3)
    # Setup: 1 decode per worker; warm-up pass: 3 images per worker; timed: 2 workers × 4 passes × 3 images.
    assert clock.calls == 2 * 1 + 2 * 3 + 3 * (2 * 4 * 3)
    assert clock.calls_at_reads[0] == 2 * 1 + 2 * 3
    # 24 images decoded in 24 virtual seconds per repeat: exactly 1 image/s, no warm-up inside.
    assert rates == [1.0, 1.0, 1.0]
