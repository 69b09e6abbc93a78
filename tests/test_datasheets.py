"""The datasheet table: device names as NVML reports them find the right model, and every rate is dense."""

import pytest

from hwbench_gui.engine.inventory import datasheets


@pytest.mark.parametrize("name, model", [
    ("NVIDIA H100 80GB HBM3", "H100 SXM"),
    ("NVIDIA H100 PCIe", "H100 PCIe"),
    ("NVIDIA H100 NVL", "H100 NVL"),
    ("NVIDIA H200", "H200 SXM"),
    ("NVIDIA H200 NVL", "H200 NVL"),
    ("NVIDIA A100-SXM4-80GB", "A100 SXM4 80GB"),
    ("NVIDIA A100-SXM4-40GB", "A100 SXM4 40GB"),
    ("NVIDIA A100 80GB PCIe", "A100 PCIe 80GB"),
    ("NVIDIA A100-PCIE-40GB", "A100 PCIe 40GB"),
    ("NVIDIA L40S", "L40S"),
    ("NVIDIA GeForce RTX 4090", "GeForce RTX 4090"),
    ("NVIDIA GeForce RTX 5090", "GeForce RTX 5090"),
    ("NVIDIA RTX 6000 Ada Generation", "RTX 6000 Ada"),
    ("Quadro RTX 8000", "Quadro RTX 8000"),
    ("Tesla V100-SXM2-32GB", "V100 SXM2"),
    ("Tesla V100-PCIE-16GB", "V100 PCIe"),
])
def test_nvml_names_find_their_model(name, model):
    assert datasheets.lookup(name).model == model


def test_an_unknown_gpu_is_none_with_a_reason_not_a_neighbour():
    assert datasheets.lookup("NVIDIA GeForce RTX 3090") is None
    assert datasheets.lookup(None) is None
    assert "not in hwbench's datasheet table" in datasheets.unknown_reason("NVIDIA GeForce RTX 3090")


def test_peaks_are_dense_and_per_precision():
    h100 = datasheets.lookup("NVIDIA H100 80GB HBM3")
    # The datasheet's BF16 "1,979 TFLOPS" is with 2:4 sparsity; dense is half.
    assert h100.peak_tflops("bf16-amp") == 989.5
    assert h100.peak_tflops("fp8") == 1979.0
    assert h100.peak_tflops("tf32") == 494.5
    assert datasheets.lookup("NVIDIA H100 PCIe").peak_tflops("bf16") == 756.0
    # GeForce: FP32-accumulate rate, half the FP16-accumulate one (330.3).
    assert datasheets.lookup("NVIDIA GeForce RTX 4090").peak_tflops("fp16-amp") == 165.2
    assert datasheets.lookup("Quadro RTX 8000").peak_tflops("bf16") is None
    assert datasheets.lookup("NVIDIA H200").memory_gb_per_s == 4800


def test_every_sheet_names_its_source_and_sparse_figures_never_exceed_fp8():
    for sheet in datasheets.DATASHEETS:
        assert sheet.source
        if sheet.bf16_tflops and sheet.fp8_tflops:
            # 1.5 %: the L40S datasheet's own dense figures are 362.05 (BF16) and 733 (FP8) TFLOP/s
            assert sheet.fp8_tflops == pytest.approx(2 * sheet.bf16_tflops, rel=0.015)
