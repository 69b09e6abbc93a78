"""The inventory and the gpu.pcie benchmark warn when a GPU's PCIe link runs narrower or at a lower
generation than its maximum.

NVML is replaced by a minimal stand-in that answers only the calls named here; every other read
gets NVML's "not in this nvidia-ml-py" answer, as on an old driver.
"""

from __future__ import annotations

import importlib.util

import pytest
from recording import Recorder
from test_microbench_gpu_paths import fake_cuda  # noqa: F401  (the CPU stand-in for torch.cuda, a fixture)

from hwbench_gui.engine import nvml
from hwbench_gui.engine.inventory import gpus


class _LinkOnlyNvml:
    NVML_CLOCK_GRAPHICS, NVML_CLOCK_SM, NVML_CLOCK_MEM = 0, 1, 2
    NVML_NVLINK_MAX_LINKS = 18

    def __init__(self, gen, gen_max, width, width_max, gen_gpu=None):
        self.values = {"nvmlDeviceGetCurrPcieLinkGeneration": gen, "nvmlDeviceGetMaxPcieLinkGeneration": gen_max,
                       "nvmlDeviceGetGpuMaxPcieLinkGeneration": gen_gpu if gen_gpu is not None else gen_max,
                       "nvmlDeviceGetCurrPcieLinkWidth": width, "nvmlDeviceGetMaxPcieLinkWidth": width_max}

    def nvmlDeviceGetCount(self):
        return 1

    def nvmlDeviceGetHandleByIndex(self, index):
        return ("handle", index)

    def nvmlDeviceGetName(self, handle):
        return "Test GPU"

    def __getattr__(self, name):
        if name in self.values:
            return lambda handle: self.values[name]
        raise AttributeError(name)


def _gpu(monkeypatch, **link):
    monkeypatch.setattr(nvml, "init", lambda: _LinkOnlyNvml(**link))
    gpu_list, system = gpus.collect(None)
    assert system["available"] and len(gpu_list) == 1
    gpu = gpu_list[0]
    assert "error" not in gpu, gpu.get("error")
    return gpu


def _link_warnings(gpu):
    return [w for w in gpu["warnings"] if w.startswith("PCIe link runs")]


def test_x8_of_x16_warns_about_the_width(monkeypatch):
    gpu = _gpu(monkeypatch, gen=4, gen_max=4, width=8, width_max=16)
    assert _link_warnings(gpu) == [
        "PCIe link runs at x8, below its maximum x16 (lane count does not drop to save power: check the slot, "
        "riser or BIOS lane split)"]
    assert (gpu["pcie_width_current"], gpu["pcie_width_max"]) == (8, 16)
    # Gen 4 moves 1.969 GB/s per lane and direction (16 GT/s, 128b/130b): x8 is half of x16.
    assert gpu["pcie_bandwidth_current_gb_per_s"] == pytest.approx(8 * 16 * 128 / 130 / 8, rel=1e-3)
    assert gpu["pcie_bandwidth_max_gb_per_s"] == pytest.approx(16 * 16 * 128 / 130 / 8, rel=1e-3)


def test_full_link_does_not_warn(monkeypatch):
    gpu = _gpu(monkeypatch, gen=4, gen_max=4, width=16, width_max=16)
    assert _link_warnings(gpu) == []
    assert gpu["pcie_bandwidth_current_gb_per_s"] == gpu["pcie_bandwidth_max_gb_per_s"]


def test_gen3_of_gen4_warns_about_the_generation(monkeypatch):
    gpu = _gpu(monkeypatch, gen=3, gen_max=4, width=16, width_max=16)
    assert _link_warnings(gpu) == [
        "PCIe link runs at Gen 3, below its maximum Gen 4 (an idle GPU lowers its link generation to save "
        "power: check again under load)"]
    # Gen 3 x16: 8 GT/s × 16 lanes × 128/130 / 8 bits = 15.75 GB/s (the seed's figure).
    assert gpu["pcie_bandwidth_current_gb_per_s"] == pytest.approx(15.75, abs=0.01)


def test_narrow_and_slow_gives_both_warnings(monkeypatch):
    gpu = _gpu(monkeypatch, gen=3, gen_max=4, width=8, width_max=16)
    warnings = _link_warnings(gpu)
    assert len(warnings) == 2
    assert warnings[0].startswith("PCIe link runs at Gen 3, below its maximum Gen 4")
    assert warnings[1].startswith("PCIe link runs at x8, below its maximum x16")


def test_unknown_link_does_not_warn(monkeypatch):
    gpu = _gpu(monkeypatch, gen=None, gen_max=None, width=None, width_max=None)
    assert _link_warnings(gpu) == []
    assert gpu["pcie_bandwidth_current_gb_per_s"] is None


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch not installed")
@pytest.mark.parametrize("link, expected", [
    ((4, 4, 8, 16), "PCIe link runs at gen 4 x8, below its maximum gen 4 x16"),
    ((3, 4, 16, 16), "PCIe link runs at gen 3 x16, below its maximum gen 4 x16"),
    ((4, 4, 16, 16), None),
])
def test_pcie_benchmark_warns_about_the_link_it_measured(fake_cuda, monkeypatch, link, expected):  # noqa: F811
    from hwbench_gui.engine.benchmarks import gpu_pcie

    gen, gen_max, width, width_max = link
    monkeypatch.setattr(nvml, "init", lambda: _LinkOnlyNvml(gen=gen, gen_max=gen_max, width=width,
                                                             width_max=width_max))
    monkeypatch.setattr(gpu_pcie, "nvml_handle_for", lambda index: ("handle", index))
    bench = gpu_pcie.BENCHMARK
    outcome = bench.run(bench.resolve_params({"min_bytes": 4096, "max_bytes": 4096, "repeats": 1}), Recorder())
    assert outcome.details["pcie_link"]["current_width"] == width
    assert [w for w in outcome.warnings if w.startswith("PCIe link runs")] == ([expected] if expected else [])
