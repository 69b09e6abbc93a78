"""What a GPU model's datasheet promises: dense tensor peaks per precision, memory bandwidth, PCIe, power.

The limits a measured figure is held against (model FLOPs utilisation, a language model's
bandwidth bound, the health burn-in's "normal for its kind") read these tables and nothing else.
Every rate is *dense*: NVIDIA's datasheets print the 2:4-sparse figure first for Ampere and later
("with sparsity"), which is twice the dense one; a utilisation computed against that would be halved.
GeForce cards run FP16/BF16 tensor maths with FP32 accumulate at half the FP16-accumulate rate; the
figure here is the FP32-accumulate one, because that is what autocast training and inference use.

Pure tables, no NVML: a GPU is found by the name NVML or CUDA reports. A name the table does not hold
gives ``None`` (with :func:`unknown_reason` saying so); nothing is guessed from a sibling model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hwbench_gui.engine.spec.precision import BF16, FP8, FP16, FP32, TF32


@dataclass(frozen=True)
class Datasheet:
    """One GPU model's published figures. Rates in TFLOP/s (1e12), bandwidth in GB/s (1e9 bytes/s).

    ``None`` where the model has no such unit (no BF16 before Ampere, no FP8 before Ada/Hopper).
    """

    model: str
    #: Substrings of the NVML/CUDA device name that identify the model (all must occur, case-insensitive).
    match: tuple[str, ...]
    fp32_tflops: float
    tf32_tflops: float | None
    fp16_tflops: float | None
    bf16_tflops: float | None
    fp8_tflops: float | None
    memory_gb_per_s: float
    memory_gib: float
    pcie_generation: int
    pcie_width: int
    power_w: float
    source: str

    def peak_tflops(self, precision: str) -> float | None:
        """Dense tensor peak for a precision label ("fp32", "tf32", "fp16", "bf16", "fp8"; "-amp" ignored)."""
        key = precision.lower().replace("-amp", "").replace("_amp", "")
        return {"fp32": self.fp32_tflops, "tf32": self.tf32_tflops, "fp16": self.fp16_tflops,
                "bf16": self.bf16_tflops, "fp8": self.fp8_tflops}.get(key)


_H100_SRC = "NVIDIA H100 Tensor Core GPU datasheet (2023), dense = half the 'with sparsity' figure"
_H200_SRC = "NVIDIA H200 Tensor Core GPU product brief (2024), dense = half the 'with sparsity' figure"
_A100_SRC = "NVIDIA A100 Tensor Core GPU datasheet (2021); BF16/FP16 312 TFLOP/s dense"
_ADA_SRC = "NVIDIA Ada Lovelace architecture whitepaper v1.1, appendix tables (dense, FP32 accumulate)"

#: Ordered most specific first: "H100 NVL" before "H100", "H200 NVL" before "H200".
DATASHEETS: tuple[Datasheet, ...] = (
    Datasheet("H100 NVL", ("h100", "nvl"), 60.0, 417.5, 835.5, 835.5, 1670.5, 3900, 94, 5, 16, 400, _H100_SRC),
    Datasheet("H100 PCIe", ("h100", "pcie"), 51.0, 378.0, 756.0, 756.0, 1513.0, 2000, 80, 5, 16, 350, _H100_SRC),
    Datasheet("H100 SXM", ("h100",), 67.0, 494.5, 989.5, 989.5, 1979.0, 3350, 80, 5, 16, 700, _H100_SRC),
    Datasheet("H200 NVL", ("h200", "nvl"), 60.0, 417.5, 835.5, 835.5, 1670.5, 4800, 141, 5, 16, 600, _H200_SRC),
    Datasheet("H200 SXM", ("h200",), 67.0, 494.5, 989.5, 989.5, 1979.0, 4800, 141, 5, 16, 700, _H200_SRC),
    Datasheet("A100 SXM4 80GB", ("a100", "sxm", "80"), 19.5, 156.0, 312.0, 312.0, None, 2039, 80, 4, 16, 400,
              _A100_SRC),
    Datasheet("A100 SXM4 40GB", ("a100", "sxm"), 19.5, 156.0, 312.0, 312.0, None, 1555, 40, 4, 16, 400, _A100_SRC),
    Datasheet("A100 PCIe 80GB", ("a100", "80"), 19.5, 156.0, 312.0, 312.0, None, 1935, 80, 4, 16, 300, _A100_SRC),
    Datasheet("A100 PCIe 40GB", ("a100",), 19.5, 156.0, 312.0, 312.0, None, 1555, 40, 4, 16, 250, _A100_SRC),
    Datasheet("L40S", ("l40s",), 91.6, 183.0, 362.05, 362.05, 733.0, 864, 48, 4, 16, 350,
              "NVIDIA L40S datasheet (2023), dense = half the 'with sparsity' figure"),
    Datasheet("RTX 6000 Ada", ("rtx 6000 ada",), 91.1, 182.1, 364.2, 364.2, 728.5, 960, 48, 4, 16, 300, _ADA_SRC),
    Datasheet("GeForce RTX 4090", ("rtx 4090",), 82.6, 82.6, 165.2, 165.2, 330.3, 1008, 24, 4, 16, 450, _ADA_SRC),
    Datasheet("GeForce RTX 5090", ("rtx 5090",), 104.8, 104.8, 209.5, 209.5, 419.0, 1792, 32, 5, 16, 575,
              "NVIDIA RTX Blackwell GPU architecture whitepaper v1.0, GeForce RTX 5090 (dense, FP32 accumulate)"),
    Datasheet("Quadro RTX 8000", ("rtx 8000",), 16.3, None, 130.5, None, None, 672, 48, 3, 16, 295,
              "NVIDIA Quadro RTX 8000 datasheet (2019); the seed's workstation GPU; no BF16 (Turing)"),
    Datasheet("V100 SXM2", ("v100", "sxm2"), 15.7, None, 125.0, None, None, 900, 32, 3, 16, 300,
              "NVIDIA Tesla V100 datasheet (2017); no BF16 (Volta)"),
    Datasheet("V100 PCIe", ("v100",), 14.0, None, 112.0, None, None, 900, 32, 3, 16, 250,
              "NVIDIA Tesla V100 datasheet (2017); no BF16 (Volta)"),
)


def _normal(name: str) -> str:
    return re.sub(r"[\s_-]+", " ", name.lower())


def lookup(device_name: str | None) -> Datasheet | None:
    """The datasheet of the GPU NVML or CUDA names ``device_name`` ("NVIDIA H100 80GB HBM3"), or None."""
    if not device_name:
        return None
    text = _normal(device_name)
    for sheet in DATASHEETS:
        if all(_normal(part) in text for part in sheet.match):
            return sheet
    return None


def unknown_reason(device_name: str | None) -> str:
    """Why :func:`lookup` found nothing, for a document's ``null`` plus reason."""
    if not device_name:
        return "no GPU name to look up"
    return f"{device_name} is not in hwbench's datasheet table ({', '.join(s.model for s in DATASHEETS)})"


# -- what healthy machines reach ------------------------------------------------------------------

#: The figures a healthy fraction is held for, and the limit each is a fraction of.
HEALTHY_FIGURES = {
    "memory_copy": "the datasheet memory bandwidth (gpu.d2d's largest copy, 2 × bytes per copy)",
    "pcie_pinned": "the link's theoretical one-direction rate (gpu.pcie, pinned memory, largest transfer)",
    "matmul_burst": "the datasheet dense tensor peak of the precision (gpu.matmul, burst mode, best size)",
}


@dataclass(frozen=True)
class Healthy:
    """What healthy machines of one GPU model reach on one figure, as a fraction of its limit
    (:data:`HEALTHY_FIGURES`), and where that was measured. ``low`` = ``high`` for a single run."""

    figure: str
    low: float
    high: float
    source: str
    precision: str | None = None  # matmul_burst only: the precision's label ("BF16")


_H200_REF = "hwbench reference run on an H200 SXM (700 W, PCIe Gen5 x16), resources/reference/h200/"
_H200_D2D = _H200_REF + "2026-12-03T08-27-27_gpu.d2d_52e98a7a.json: 4,266 of 4,800 GB/s"
_H200_PCIE = _H200_REF + "2026-12-03T08-26-59_gpu.pcie_bac6fd02.json: H2D 54.1, D2H 54.9 of 63.0 GB/s"
_H200_MM = _H200_REF + "2026-12-03T08-27-35_gpu.matmul_fafcfce5.json"

#: Per datasheet model, the healthy fractions hwbench holds with their source. Only measured figures
#: are here (hwbench's own reference runs); a model without an entry is shown against its datasheet alone.
HEALTHY: dict[str, tuple[Healthy, ...]] = {
    "H200 SXM": (
        Healthy("memory_copy", 0.889, 0.889, _H200_D2D),
        Healthy("pcie_pinned", 0.858, 0.871, _H200_PCIE),
        Healthy("matmul_burst", 0.804, 0.804, _H200_MM + ": 53.9 of 67 TFLOP/s", FP32.label),
        Healthy("matmul_burst", 0.833, 0.833, _H200_MM + ": 412 of 494.5 TFLOP/s", TF32.label),
        Healthy("matmul_burst", 0.767, 0.767, _H200_MM + ": 759 of 989.5 TFLOP/s", FP16.label),
        Healthy("matmul_burst", 0.798, 0.798, _H200_MM + ": 790 of 989.5 TFLOP/s", BF16.label),
        Healthy("matmul_burst", 0.743, 0.743, _H200_MM + ": 1,471 of 1,979 TFLOP/s", FP8.label),
    ),
}


def healthy(sheet: Datasheet | None, figure: str, precision: str | None = None) -> Healthy | None:
    """The healthy fraction :data:`HEALTHY` holds for ``sheet``'s model and ``figure`` (and precision), or None."""
    if sheet is None:
        return None
    for entry in HEALTHY.get(sheet.model, ()):
        if entry.figure == figure and (entry.precision or None) == (precision or None):
            return entry
    return None
