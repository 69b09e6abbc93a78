"""What a GPU's compute capability tells: cores per SM, Tensor/RT cores, peak rates, memory bandwidth.

Pure tables and arithmetic, no NVML, so they are unit-tested on any machine. A figure the tables do
not hold comes back as ``None`` with a reason; nothing here guesses from a neighbouring generation.

Sources:
- CUDA cores per SM: NVIDIA cuda-samples ``Common/helper_cuda.h`` ``_ConvertSMVer2Cores``.
- Tensor/RT cores per SM and generations: NVIDIA architecture whitepapers (Volta V100, Turing TU102,
  Ampere GA100 and GA102, Ada AD102, Hopper H100, Blackwell).
- Dense FP16 tensor FLOPs per SM per clock (FP16 accumulate), checked against published peaks:
  V100 125 TFLOPS = 80 SM x 1530 MHz x 1024; T4 65 = 40 x 1590 x 1024; A100 312 = 108 x 1410 x 2048;
  RTX A6000 154.8 = 84 x 1800 x 1024; RTX 4090 330 = 128 x 2520 x 1024; H100 SXM 989 = 132 x 1830 x 4096;
  RTX 5090 419 = 170 x 2407 x 1024.
"""

from __future__ import annotations

from dataclasses import dataclass

#: NVML ``nvmlDeviceGetArchitecture`` values (``NVML_DEVICE_ARCH_*``) to names.
NVML_ARCH_NAMES = {
    2: "Kepler",
    3: "Maxwell",
    4: "Pascal",
    5: "Volta",
    6: "Turing",
    7: "Ampere",
    8: "Ada Lovelace",
    9: "Hopper",
    10: "Blackwell",
    13: "Rubin",
}

#: cuda-samples helper_cuda.h ``_ConvertSMVer2Cores``: (major, minor) -> FP32 cores per SM.
CORES_PER_SM = {
    (3, 0): 192, (3, 2): 192, (3, 5): 192, (3, 7): 192,
    (5, 0): 128, (5, 2): 128, (5, 3): 128,
    (6, 0): 64, (6, 1): 128, (6, 2): 128,
    (7, 0): 64, (7, 2): 64, (7, 5): 64,
    (8, 0): 64, (8, 6): 128, (8, 7): 128, (8, 9): 128,
    (9, 0): 128,
    (10, 0): 128, (10, 1): 128, (10, 3): 128,
    (11, 0): 128,
    (12, 0): 128, (12, 1): 128,
}


@dataclass(frozen=True)
class ArchUnits:
    """Per-SM units of one compute capability; ``None`` means not known to these tables."""

    name: str
    chip: str
    tensor_per_sm: int | None
    tensor_generation: str | None
    rt_per_sm: int | None
    rt_generation: str | None
    #: Dense FP16 tensor FLOPs per SM per clock with FP16 accumulate.
    tensor_fp16_flops_per_clock_per_sm: int | None
    #: Non-tensor FP16 throughput relative to FP32.
    fp16_to_fp32_ratio: float | None


_NO_TENSOR = dict(tensor_per_sm=0, tensor_generation=None, tensor_fp16_flops_per_clock_per_sm=0)
_NO_RT = dict(rt_per_sm=0, rt_generation=None)

ARCH_UNITS = {
    (3, 0): ArchUnits("Kepler", "GK10x", **_NO_TENSOR, **_NO_RT, fp16_to_fp32_ratio=None),
    (3, 2): ArchUnits("Kepler", "GK20A", **_NO_TENSOR, **_NO_RT, fp16_to_fp32_ratio=None),
    (3, 5): ArchUnits("Kepler", "GK110", **_NO_TENSOR, **_NO_RT, fp16_to_fp32_ratio=None),
    (3, 7): ArchUnits("Kepler", "GK210", **_NO_TENSOR, **_NO_RT, fp16_to_fp32_ratio=None),
    (5, 0): ArchUnits("Maxwell", "GM10x", **_NO_TENSOR, **_NO_RT, fp16_to_fp32_ratio=None),
    (5, 2): ArchUnits("Maxwell", "GM20x", **_NO_TENSOR, **_NO_RT, fp16_to_fp32_ratio=None),
    (5, 3): ArchUnits("Maxwell", "GM20B", **_NO_TENSOR, **_NO_RT, fp16_to_fp32_ratio=None),
    (6, 0): ArchUnits("Pascal", "GP100", **_NO_TENSOR, **_NO_RT, fp16_to_fp32_ratio=2.0),
    (6, 1): ArchUnits("Pascal", "GP10x", **_NO_TENSOR, **_NO_RT, fp16_to_fp32_ratio=1 / 64),
    (6, 2): ArchUnits("Pascal", "GP10B", **_NO_TENSOR, **_NO_RT, fp16_to_fp32_ratio=2.0),
    (7, 0): ArchUnits("Volta", "GV100", 8, "1st", **_NO_RT, tensor_fp16_flops_per_clock_per_sm=1024,
                      fp16_to_fp32_ratio=2.0),
    (7, 2): ArchUnits("Volta", "GV10B", 8, "1st", **_NO_RT, tensor_fp16_flops_per_clock_per_sm=1024,
                      fp16_to_fp32_ratio=2.0),
    (7, 5): ArchUnits("Turing", "TU10x", 8, "2nd", 1, "1st", 1024, 2.0),
    (8, 0): ArchUnits("Ampere", "GA100", 4, "3rd", **_NO_RT, tensor_fp16_flops_per_clock_per_sm=2048,
                      fp16_to_fp32_ratio=4.0),
    (8, 6): ArchUnits("Ampere", "GA10x", 4, "3rd", 1, "2nd", 1024, 1.0),
    # Jetson Orin: tensor rate and RT units of GA10B are not in the published whitepapers.
    (8, 7): ArchUnits("Ampere", "GA10B", 4, "3rd", None, None, None, None),
    (8, 9): ArchUnits("Ada Lovelace", "AD10x", 4, "4th", 1, "3rd", 1024, 1.0),
    (9, 0): ArchUnits("Hopper", "GH100", 4, "4th", **_NO_RT, tensor_fp16_flops_per_clock_per_sm=4096,
                      fp16_to_fp32_ratio=2.0),
    (10, 0): ArchUnits("Blackwell", "GB100", 4, "5th", **_NO_RT, tensor_fp16_flops_per_clock_per_sm=None,
                       fp16_to_fp32_ratio=None),
    (10, 3): ArchUnits("Blackwell", "B300", 4, "5th", **_NO_RT, tensor_fp16_flops_per_clock_per_sm=None,
                       fp16_to_fp32_ratio=None),
    # Jetson Thor: sm_101 before CUDA 13 renamed it sm_110.
    (10, 1): ArchUnits("Blackwell", "Thor", 4, "5th", None, None, None, None),
    (11, 0): ArchUnits("Blackwell", "Thor", 4, "5th", None, None, None, None),
    (12, 0): ArchUnits("Blackwell", "GB20x", 4, "5th", 1, "4th", 1024, 1.0),
    (12, 1): ArchUnits("Blackwell", "GB10", 4, "5th", 1, "4th", None, None),
}

#: Turing parts without Tensor or RT cores (TU116/TU117: GTX 16xx, MX450/550, T400-T2000).
_TURING_WITHOUT_TENSOR = ("GTX 16", " MX", "T400", "T500", "T550", "T600", "T1000", "T1200", "T2000")


def arch_name_from_cc(major: int, minor: int) -> str | None:
    """Architecture name for compute capability ``major.minor``; ``None`` when unknown."""
    units = ARCH_UNITS.get((major, minor))
    return units.name if units else None


def cores_per_sm(major: int, minor: int) -> int | None:
    """FP32 CUDA cores per SM (helper_cuda.h table); ``None`` for a capability it does not list."""
    return CORES_PER_SM.get((major, minor))


def _units(major: int, minor: int, name: str | None) -> tuple[ArchUnits | None, str | None]:
    units = ARCH_UNITS.get((major, minor))
    if units is None:
        return None, f"compute capability {major}.{minor} is not in hwbench's architecture table"
    if (major, minor) == (7, 5) and name and any(tag in f" {name}" for tag in _TURING_WITHOUT_TENSOR):
        return ArchUnits("Turing", "TU11x", 0, None, 0, None, 0, 2.0), None
    return units, None


@dataclass(frozen=True)
class Counted:
    """A count (or rate) with where it came from, or ``None`` with why."""

    value: int | float | None
    reason: str | None = None
    generation: str | None = None
    per_sm: int | float | None = None


def tensor_cores(major: int, minor: int, sm_count: int | None, name: str | None = None) -> Counted:
    """Tensor Cores = SMs x Tensor Cores per SM for the architecture (generation in ``generation``)."""
    units, reason = _units(major, minor, name)
    if units is None:
        return Counted(None, reason)
    if units.tensor_per_sm is None:
        return Counted(None, f"Tensor Cores per SM for {units.name} {units.chip} are not in hwbench's table")
    if sm_count is None:
        return Counted(None, "SM count unknown", units.tensor_generation, units.tensor_per_sm)
    return Counted(sm_count * units.tensor_per_sm, None, units.tensor_generation, units.tensor_per_sm)


def rt_cores(major: int, minor: int, sm_count: int | None, name: str | None = None) -> Counted:
    """RT cores = SMs x RT cores per SM (0 for compute parts such as GA100, GH100, GB100)."""
    units, reason = _units(major, minor, name)
    if units is None:
        return Counted(None, reason)
    if units.rt_per_sm is None:
        return Counted(None, f"RT cores of {units.name} {units.chip} are not in hwbench's table")
    if sm_count is None:
        return Counted(None, "SM count unknown", units.rt_generation, units.rt_per_sm)
    return Counted(sm_count * units.rt_per_sm, None, units.rt_generation, units.rt_per_sm)


def peak_fp32_tflops(cuda_cores: int | None, clock_mhz: float | None) -> Counted:
    """FP32 peak = CUDA cores x 2 FLOPs (one FMA) x clock."""
    if cuda_cores is None:
        return Counted(None, "CUDA core count unknown")
    if not clock_mhz:
        return Counted(None, "maximum SM clock unknown")
    return Counted(cuda_cores * 2 * clock_mhz * 1e6 / 1e12)


def peak_fp16_tflops(major: int, minor: int, fp32_tflops: float | None) -> Counted:
    """Non-tensor FP16 peak: the FP32 peak times the architecture's FP16:FP32 ratio."""
    units, reason = _units(major, minor, None)
    if units is None:
        return Counted(None, reason)
    if units.fp16_to_fp32_ratio is None:
        return Counted(None, f"FP16:FP32 ratio of {units.name} {units.chip} is not in hwbench's table")
    if fp32_tflops is None:
        return Counted(None, "FP32 peak unknown")
    return Counted(fp32_tflops * units.fp16_to_fp32_ratio, per_sm=units.fp16_to_fp32_ratio)


def peak_tensor_fp16_dense_tflops(major: int, minor: int, sm_count: int | None, clock_mhz: float | None,
                                  name: str | None = None) -> Counted:
    """Dense (no sparsity) FP16 tensor peak with FP16 accumulate = SMs x FLOPs/clock/SM x clock."""
    units, reason = _units(major, minor, name)
    if units is None:
        return Counted(None, reason)
    rate = units.tensor_fp16_flops_per_clock_per_sm
    if rate is None:
        return Counted(None, f"tensor FP16 FLOPs per clock of {units.name} {units.chip} are not in hwbench's table")
    if rate == 0:
        return Counted(0.0, "no Tensor Cores", per_sm=0)
    if sm_count is None:
        return Counted(None, "SM count unknown", per_sm=rate)
    if not clock_mhz:
        return Counted(None, "maximum SM clock unknown", per_sm=rate)
    return Counted(sm_count * rate * clock_mhz * 1e6 / 1e12, per_sm=rate)


def memory_kind(bus_width_bits: int | None) -> str | None:
    """"HBM" for buses of 1024 bits or more (one HBM stack is 1024 bits; no GDDR board exceeds 512)."""
    if not bus_width_bits:
        return None
    return "HBM" if bus_width_bits >= 1024 else "GDDR"


def memory_data_rate_factor(major: int, minor: int, bus_width_bits: int | None) -> Counted:
    """Transfers per NVML-reported memory clock.

    NVML reports HBM at its command clock (H100 2619 MHz x 5120 bit x 2 = 3.35 TB/s) and GDDR5/5X/6/6X
    at half the per-pin data rate (RTX 3090 9751 MHz -> 19.5 Gbit/s per pin), so both are 2. The
    GDDR7 / LPDDR5X boards of Blackwell are not verified and give ``None``.
    """
    kind = memory_kind(bus_width_bits)
    if kind is None:
        return Counted(None, "memory bus width unknown")
    if kind == "HBM":
        return Counted(2)
    if major >= 10:
        return Counted(None, f"the data rate per NVML memory clock of sm_{major}{minor} boards (GDDR7/LPDDR5X) "
                             "is not verified")
    return Counted(2)


def memory_bandwidth_gb_per_s(bus_width_bits: int | None, mem_clock_mhz: float | None,
                              data_rate_factor: int | None) -> Counted:
    """Theoretical bandwidth in GB/s (1e9 bytes/s) = bus bits / 8 x clock x transfers per clock."""
    if not bus_width_bits:
        return Counted(None, "memory bus width unknown")
    if not mem_clock_mhz:
        return Counted(None, "maximum memory clock unknown")
    if not data_rate_factor:
        return Counted(None, "memory data rate per clock unknown")
    return Counted(bus_width_bits / 8 * mem_clock_mhz * 1e6 * data_rate_factor / 1e9)


#: Per-lane signalling rate (GT/s) and line-code efficiency of each PCIe generation (PCI-SIG specs: 8b/10b to
#: gen 2, 128b/130b from gen 3, gen 6's 242/256 FLIT framing). The one table of PCIe rates: the inventory, gpu.pcie's
#: link details and the limits (:mod:`hwbench_gui.engine.limits`) all read it.
PCIE_GTPS = {1: 2.5, 2: 5.0, 3: 8.0, 4: 16.0, 5: 32.0, 6: 64.0}
PCIE_EFFICIENCY = {1: 0.8, 2: 0.8, 3: 128 / 130, 4: 128 / 130, 5: 128 / 130, 6: 242 / 256}


def pcie_theoretical_gbps(gen: int | None, width: int | None) -> float | None:
    """Theoretical one-direction bandwidth of a PCIe link in GB/s (1e9): GT/s × efficiency × lanes / 8 (before
    packet overhead; PCIe 3.0 x16 = 15.75 GB/s). None when the generation or width is unknown."""
    if not gen or not width or gen not in PCIE_GTPS:
        return None
    return PCIE_GTPS[gen] * PCIE_EFFICIENCY[gen] * width / 8


def pcie_bandwidth_gb_per_s(generation: int | None, width: int | None) -> Counted:
    """Per-direction bandwidth of a PCIe link after line encoding (before packet overhead)."""
    if not generation or not width:
        return Counted(None, "link generation or width unknown")
    if int(generation) not in PCIE_GTPS:
        return Counted(None, f"PCIe generation {generation} is not in hwbench's table")
    return Counted(pcie_theoretical_gbps(int(generation), int(width)))


#: Largest finite float8_e4m3fn (FP8's range: a tensor is scaled by its largest magnitude ÷ this).
FP8_MAX = 448.0
#: Compute capability with FP8 tensor cores (Ada Lovelace 8.9, Hopper 9.0 and later).
FP8_CAPABILITY = (8, 9)


def fp8_capability_reason(major: int, minor: int, gpu: str) -> str | None:
    """Why a GPU of compute capability ``major.minor`` cannot multiply FP8 on tensor cores, or None when it can."""
    if (major, minor) >= FP8_CAPABILITY:
        return None
    return (f"FP8 needs compute capability {FP8_CAPABILITY[0]}.{FP8_CAPABILITY[1]} or newer (FP8 tensor cores); "
            f"{gpu} is {major}.{minor}")


#: ``nvmlDeviceGetNvLinkVersion`` values (``NVML_NVLINK_VERSION_*``) to NVLink versions.
NVLINK_VERSIONS = {1: "1.0", 2: "2.0", 3: "2.2", 4: "3.0", 5: "3.1", 6: "4.0", 7: "5.0", 8: "6.0"}
