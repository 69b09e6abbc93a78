"""gpu.matmul on the CPU at tiny sizes, and what the GPU benchmarks say on a machine without GPUs."""

from __future__ import annotations

import importlib.util

import pytest
from recording import Recorder

from hwbench_gui.engine import nvml
from hwbench_gui.engine.benchmarks import gpu_d2d, gpu_matmul, gpu_p2p, gpu_pcie
from hwbench_gui.engine.spec.benchmark import BenchmarkUnavailable, ParamError

torch_missing = importlib.util.find_spec("torch") is None
GPU_COUNT = nvml.device_count()


def _matmul(**given):
    bench = gpu_matmul.BENCHMARK
    rec = Recorder()
    return bench.run(bench.resolve_params({"device": "cpu", "sizes": "32,64", "repeats": 2, **given}), rec), rec


@pytest.mark.skipif(torch_missing, reason="torch not installed")
def test_matmul_cpu_all_precisions():
    import torch

    tf32_before = torch.backends.cuda.matmul.allow_tf32, torch.get_float32_matmul_precision()
    outcome, rec = _matmul()
    assert outcome.precision == "FP32" and outcome.figure_name == "FP32 matmul (best size)"
    assert outcome.unit == "TFLOP/s" and len(outcome.samples) == 2 and all(s > 0 for s in outcome.samples)
    assert set(outcome.figures) == {"FP32", "BF16"}
    for label, fig in outcome.figures.items():
        assert fig["unit"] == "TFLOP/s" and fig["higher_is_better"] is True
        assert fig["value"] > 0 and fig["size"] in (32, 64) and len(fig["samples"]) == 2
    assert [s.label for s in outcome.series] == ["FP32", "BF16"]
    assert all(s.x == [32.0, 64.0] for s in outcome.series)
    assert {(m[0], m[3]["size"]) for m in rec.metrics} == {(p, n) for p in ("FP32", "BF16") for n in (32, 64)}
    assert "TF32 off" in outcome.method and outcome.device.startswith("cpu")
    assert (torch.backends.cuda.matmul.allow_tf32, torch.get_float32_matmul_precision()) == tf32_before


@pytest.mark.skipif(torch_missing, reason="torch not installed")
def test_matmul_cpu_single_precision_label():
    outcome, _ = _matmul(precision="bf16", sizes="48")
    assert outcome.precision == "BF16" and set(outcome.figures) == {"BF16"}


@pytest.mark.skipif(torch_missing, reason="torch not installed")
@pytest.mark.parametrize("precision", ["tf32", "fp16", "fp8"])
def test_matmul_cpu_refuses_gpu_only_precisions(precision):
    with pytest.raises(BenchmarkUnavailable, match="not measured on the CPU"):
        _matmul(precision=precision)


@pytest.mark.skipif(torch_missing, reason="torch not installed")
@pytest.mark.parametrize("label", ["FP32", "BF16"])
def test_matmul_inputs_are_random_not_zero(label):
    import torch

    fn, inputs = gpu_matmul.make_operands(label, 32, "cpu")
    for tensor in inputs:
        values = tensor.float()
        assert torch.count_nonzero(values) > 0.9 * values.numel() and values.std() > 0.5
    assert torch.count_nonzero(fn()) > 0


@pytest.mark.skipif(torch_missing, reason="torch not installed")
def test_matmul_bad_device_string():
    with pytest.raises(ParamError, match="device"):
        _matmul(device="gpu0")


@pytest.mark.skipif(torch_missing or GPU_COUNT > 0, reason="a GPU is present")
def test_matmul_on_missing_gpu_says_why():
    with pytest.raises(BenchmarkUnavailable, match="CUDA|GPU"):
        _matmul(device="cuda:0")


@pytest.mark.skipif(GPU_COUNT > 0, reason="a GPU is present")
@pytest.mark.parametrize("module", [gpu_pcie, gpu_d2d, gpu_p2p])
def test_gpu_benchmarks_say_why_without_a_gpu(module):
    reason = module.BENCHMARK.availability()
    assert reason and ("GPU" in reason or "PyTorch" in reason)


@pytest.mark.skipif(GPU_COUNT != 1, reason="needs exactly one GPU")
def test_p2p_with_one_gpu_says_why():
    assert gpu_p2p.BENCHMARK.availability() == "needs 2 GPUs, found 1"


@pytest.mark.skipif(torch_missing or GPU_COUNT > 0, reason="a GPU is present")
@pytest.mark.parametrize("module", [gpu_pcie, gpu_d2d, gpu_p2p])
def test_gpu_runs_raise_unavailable_without_cuda(module):
    bench = module.BENCHMARK
    with pytest.raises(BenchmarkUnavailable):
        bench.run(bench.resolve_params(), Recorder())


def test_pcie_theory_matches_the_spec():
    assert gpu_pcie.pcie_theoretical_gbps(3, 16) == pytest.approx(15.75, abs=0.01)
    assert gpu_pcie.pcie_theoretical_gbps(5, 16) == pytest.approx(63.0, abs=0.1)
    assert gpu_pcie.pcie_theoretical_gbps(None, 16) is None
    assert gpu_pcie.transfer_sizes(4096, 1 << 20, 4) == [4096, 16384, 65536, 262144, 1 << 20]
    assert gpu_pcie.transfer_sizes(1000, 5000, 2) == [1000, 2000, 4000, 5000]
    with pytest.raises(ParamError):
        gpu_pcie.transfer_sizes(8192, 4096, 2)
