"""The GPU benchmarks' code paths, run against a CPU stand-in for ``torch.cuda``.

This machine has no GPU, so the real figures are checked on a GPU host (see the report's smoke
commands). Here the stand-in maps CUDA tensors to CPU tensors and CUDA events to the wall clock,
which checks control flow, the sweep, the matrices and the Outcome's shape; no figure it produces
means anything and none is asserted beyond being positive.
"""

from __future__ import annotations

import contextlib
import importlib.util
import sys
import time
import types

import pytest
from recording import Recorder

pytestmark = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch not installed")


class _Event:
    def __init__(self, enable_timing=False):
        self.t = None

    def record(self, stream=None):
        self.t = time.perf_counter()

    def synchronize(self):
        pass

    def elapsed_time(self, end):
        return (end.t - self.t) * 1e3


class _Stream:
    def __init__(self, device=None, priority=0):
        self.device = device

    def wait_stream(self, other):
        pass

    def synchronize(self):
        pass


class _Props:
    pci_domain_id, pci_bus_id, pci_device_id = 0, 0x19, 0
    memory_clock_rate, memory_bus_width = 3_200_000, 6144


@pytest.fixture
def fake_cuda(monkeypatch):
    """``torch`` whose ``cuda`` namespace runs everything on the CPU; returns that namespace."""
    import torch as real

    from hwbench_gui.engine.benchmarks import gpu_p2p, gpu_pcie
    from hwbench_gui.engine.measure import bandwidth

    # CPU memcpy is slow next to a GPU's: move little per timed repeat.
    monkeypatch.setattr(gpu_pcie, "TARGET_BYTES_PER_REPEAT", 1 << 20)
    monkeypatch.setattr(bandwidth, "TARGET_TRAFFIC_BYTES", 8 << 20)
    monkeypatch.setattr(gpu_p2p, "TARGET_BYTES_PER_REPEAT", 2 << 20)

    def on_cpu(factory):
        def make(*args, **kwargs):
            kwargs.pop("pin_memory", None)
            kwargs.pop("device", None)
            return factory(*args, **kwargs)
        return make

    cuda = types.SimpleNamespace(
        is_available=lambda: True, device_count=lambda: 2, set_device=lambda d: None,
        get_device_name=lambda d=None: "Stand-in GPU", get_device_properties=lambda d=None: _Props(),
        get_device_capability=lambda d=None: (9, 0), Stream=_Stream, Event=_Event,
        stream=lambda s: contextlib.nullcontext(), current_stream=lambda d=None: _Stream(),
        synchronize=lambda d=None: None, can_device_access_peer=lambda a, b: True, empty_cache=lambda: None,
        OutOfMemoryError=real.cuda.OutOfMemoryError)

    class FakeTorch(types.ModuleType):
        def __getattr__(self, name):
            return getattr(real, name)

    fake = FakeTorch("torch")
    fake.cuda = cuda
    fake.device = lambda *args: real.device("cpu")
    for name in ("randint", "empty", "randn", "rand"):
        setattr(fake, name, on_cpu(getattr(real, name)))
    fake.empty_like = lambda t, **kwargs: real.empty_like(t)
    monkeypatch.setitem(sys.modules, "torch", fake)
    return cuda


def test_pcie_sweep(fake_cuda):
    from hwbench_gui.engine.benchmarks import gpu_pcie

    bench, rec = gpu_pcie.BENCHMARK, Recorder()
    outcome = bench.run(bench.resolve_params({"min_bytes": 4096, "max_bytes": 1 << 18, "repeats": 2}), rec)
    assert outcome.figure_name == "pinned H2D, 256 KiB" and len(outcome.samples) == 2
    assert [s.label for s in outcome.series] == ["pinned H2D", "pinned D2H", "pageable H2D", "pageable D2H",
                                                 "pinned bidirectional"]
    assert all(s.x_log and s.x == [4096.0, 16384.0, 65536.0, 262144.0] for s in outcome.series)
    assert set(outcome.figures) == {f"{m}, 256 KiB" for m in ("pinned D2H", "pageable H2D", "pageable D2H",
                                                               "pinned bidirectional")}
    assert "pcie_link" in outcome.details and len(rec.metrics) == 5 * 4
    assert rec.progress_calls[-1][0] == 1.0


def test_d2d_sweep(fake_cuda):
    from hwbench_gui.engine.benchmarks import gpu_d2d

    bench = gpu_d2d.BENCHMARK
    outcome = bench.run(bench.resolve_params({"size_mib": 4, "min_size_mib": 1, "repeats": 2}), Recorder())
    assert outcome.figure_name == "device copy, 4 MiB" and all(s > 0 for s in outcome.samples)
    assert outcome.series[0].x == [float(1 << 20), float(4 << 20)]
    assert outcome.details["theoretical_gbps"] == pytest.approx(3.2e9 * 2 * 6144 / 8 / 1e9)


@pytest.mark.parametrize("peer", [True, False])
def test_p2p_matrices(fake_cuda, peer):
    from hwbench_gui.engine.benchmarks import gpu_p2p

    fake_cuda.can_device_access_peer = lambda a, b: peer
    bench = gpu_p2p.BENCHMARK
    outcome = bench.run(bench.resolve_params({"size_mib": 1, "repeats": 1, "latency_copies": 3}), Recorder())
    mode = "on" if peer else "off"
    assert outcome.figure_name == f"mean P2P {mode} unidirectional bandwidth"
    assert len(outcome.samples) == 1 and outcome.samples[0] > 0
    uni = outcome.details["on_unidirectional_gbps"]
    assert uni[0][0] is None and uni[1][1] is None
    assert (uni[0][1] is not None) == peer
    bi = outcome.details["off_bidirectional_gbps"]
    assert bi[0][1] == bi[1][0] > 0
    assert outcome.details["peer_access"] == [[False, peer], [peer, False]]
    assert ("no GPU pair has peer access" in " ".join(outcome.warnings)) != peer


def test_p2p_needs_two_devices(fake_cuda):
    from hwbench_gui.engine.benchmarks import gpu_p2p
    from hwbench_gui.engine.spec.benchmark import BenchmarkUnavailable

    with pytest.raises(BenchmarkUnavailable, match="needs 2 GPUs, found 1"):
        gpu_p2p.BENCHMARK.run(gpu_p2p.BENCHMARK.resolve_params({"devices": "1"}), Recorder())


def test_matmul_gpu_precisions(fake_cuda):
    from hwbench_gui.engine.benchmarks import gpu_matmul

    bench = gpu_matmul.BENCHMARK
    outcome = bench.run(bench.resolve_params({"sizes": "32,40", "repeats": 1}), Recorder())
    assert outcome.precision == "BF16" and set(outcome.figures) == {"FP32", "TF32", "FP16", "BF16", "FP8"}
    assert outcome.figures["FP8"]["size"] == 32  # 40 is no multiple of 16
    assert any("FP8 size 40 skipped" in w for w in outcome.warnings)
    fake_cuda.get_device_capability = lambda d=None: (8, 0)
    outcome = bench.run(bench.resolve_params({"sizes": "32", "repeats": 1}), Recorder())
    assert "FP8" not in outcome.figures and any("compute capability 8.9" in w for w in outcome.warnings)
    outcome = bench.run(bench.resolve_params({"sizes": "32", "repeats": 1, "precision": "tf32"}), Recorder())
    assert outcome.precision == "TF32" and outcome.figure_name == "TF32 matmul (best size)"
