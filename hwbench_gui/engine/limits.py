"""A figure's limit on the machine its document describes, and where that limit comes from.

One answer for gpu.d2d, gpu.pcie, gpu.matmul and host.membw figures, read by the floor (a figure against its
limit: :mod:`hwbench_gui.engine.health.normal`, normal for its kind) and by the ceiling (a figure above the most
its hardware can give: :mod:`hwbench_gui.engine.reports.physical_limits`, an impossible figure). The published
numbers themselves live with the inventory's tables (datasheets, PCIe rates, the RAM's speed × channels); this
module only chooses, for one figure of one document, which of them applies.

A :class:`Limit` carries two numbers because a GPU's datasheet and its own inventory differ by clock: the
datasheet quotes its peaks at the boost clock (the H200's FP32 67 TFLOP/s), the inventory counts them at the
maximum SM clock NVML reports (66.9 or 72 TFLOP/s), so ``value`` (the datasheet's: what healthy machines are
held to) and ``most`` (what the document's own hardware could give at most) are both stated, each with its words.
For the PCIe link and the host RAM there is one number, and both are it. Pure: reads a document, never the machine.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from hwbench_gui.engine.inventory import datasheets
from hwbench_gui.engine.inventory.gpu_arch import pcie_bandwidth_gb_per_s
from hwbench_gui.engine.inventory.memory import theoretical_peak_gb_per_s
from hwbench_gui.engine.spec.precision import BF16, FP8, FP16, FP32, INT8, TF32

BENCHMARKS = ("gpu.d2d", "gpu.pcie", "gpu.matmul", "host.membw")

#: Dense tensor peak of each matmul precision as a multiple of the FP16 one (TF32 runs at half the
#: FP16 rate on every tensor-core generation since Ampere; FP8 and INT8 at twice it). FP32 (no
#: tensor cores) is held against the CUDA-core peak instead.
TENSOR_SHARE_OF_FP16 = {TF32.label: 0.5, FP16.label: 1.0, BF16.label: 1.0, FP8.label: 2.0, INT8.label: 2.0}

PCIE_SOURCE = "PCIe spec: GT/s × line-code efficiency × lanes / 8 (gpu.pcie's details)"

_DEVICE_GPU = re.compile(r"^cuda(?::(?P<index>\d+))?\s*(?:\((?P<name>[^)]+)\))?")


@dataclass(frozen=True)
class Limit:
    """The limit of one figure: ``value`` in the figure's unit with ``what`` (its words, or why it is unknown)
    and ``source`` (where the number comes from); ``most`` the most the document's own hardware could give
    (None when its document does not state it) with ``most_what``."""

    value: float | None
    what: str
    source: str | None = None
    most: float | None = None
    most_what: str = ""


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else None


def _dict(node: Any, key: str) -> dict[str, Any]:
    return node.get(key) if isinstance(node, dict) and isinstance(node.get(key), dict) else {}


def gpu_name(doc: dict[str, Any]) -> str | None:
    """The GPU a document measured: ``details.gpu``, else the name in its ``device`` ("cuda:0 (NVIDIA H200)")."""
    details = _dict(doc, "details")
    if isinstance(details.get("gpu"), str):
        return details["gpu"]
    device = doc.get("device")
    if isinstance(device, str) and device.startswith("cuda"):
        match = re.search(r"\((.+)\)", device)
        return match.group(1) if match else None
    return None


def inventory_gpus(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The inventory GPUs the run's device names (by name, else by index; every GPU when unsure)."""
    gpus = [g for g in _dict(doc, "inventory").get("gpus") or [] if isinstance(g, dict)]
    claimed = _DEVICE_GPU.match(str(doc.get("device") or ""))
    if claimed and claimed.group("name"):
        named = [g for g in gpus if str(g.get("name")) == claimed.group("name").strip()]
        if named:
            return named
    if claimed and claimed.group("index"):
        indexed = [g for g in gpus if g.get("index") == int(claimed.group("index"))]
        if indexed:
            return indexed
    return gpus


def _largest(gpus: list[dict[str, Any]], read) -> float | None:
    values = [v for v in map(_number, map(read, gpus)) if v is not None]
    return max(values) if values else None


def matmul_precision(doc: dict[str, Any], figure: str) -> str | None:
    """The precision a gpu.matmul figure was measured in: a label in its name ("TF32 matmul (best size)"), else the
    document's own for its headline."""
    found = next((p for p in (FP32.label, *TENSOR_SHARE_OF_FP16) if re.search(rf"\b{p}\b", figure)), None)
    if found is None and figure == str(_dict(doc, "figure").get("name")):
        found = str(doc.get("precision") or "")
    return found


def limit_of(doc: dict[str, Any], figure: str) -> Limit | None:
    """The limit of the figure named ``figure`` of ``doc`` (a gpu.d2d, gpu.pcie, gpu.matmul or host.membw
    document), or None for a figure no limit applies to (another benchmark, a matmul precision without one)."""
    bench_id = _dict(doc, "benchmark").get("id")
    if bench_id == "host.membw":
        return _host_memory(doc)
    if bench_id == "gpu.pcie":
        return _pcie(doc)
    if bench_id == "gpu.d2d":
        return _gpu_memory(doc)
    if bench_id == "gpu.matmul":
        return _matmul(doc, figure)
    return None


def _sheet(doc: dict[str, Any]) -> tuple[datasheets.Datasheet | None, str]:
    """The datasheet of the document's GPU and, when hwbench holds none, why."""
    name = gpu_name(doc)
    if name is None:
        return None, "the document names no GPU"
    sheet = datasheets.lookup(name)
    return sheet, "" if sheet else datasheets.unknown_reason(name)


def _gpu_memory(doc: dict[str, Any]) -> Limit:
    sheet, why = _sheet(doc)
    most = _largest(inventory_gpus(doc), lambda g: g.get("memory_bandwidth_gb_per_s"))
    return Limit(sheet.memory_gb_per_s if sheet else None, f"the {sheet.model} datasheet" if sheet else why,
                 sheet.source if sheet else None, most, "theoretical memory bandwidth")


def _matmul(doc: dict[str, Any], figure: str) -> Limit | None:
    precision = matmul_precision(doc, figure)
    if precision not in (FP32.label, *TENSOR_SHARE_OF_FP16):
        return None
    sheet, why = _sheet(doc)
    peak = sheet.peak_tflops(precision) if sheet else None
    what = (f"the {sheet.model} dense {precision} peak" if peak else
            f"no {precision} peak on the {sheet.model} datasheet" if sheet else why)
    gpus = inventory_gpus(doc)

    def inventory_peak(key: str) -> float | None:
        return _largest(gpus, lambda g: _dict(g, "peaks").get(key))

    if precision == FP32.label:
        most, most_what = inventory_peak("fp32_tflops"), "FP32 peak (CUDA cores × 2 × maximum SM clock)"
    else:
        tensor_fp16 = inventory_peak("tensor_fp16_dense_tflops")
        most = tensor_fp16 * TENSOR_SHARE_OF_FP16[precision] if tensor_fp16 else None
        most_what = f"dense {precision} tensor peak at the maximum SM clock"
    return Limit(peak, what, sheet.source if sheet else None, most, most_what)


def _pcie(doc: dict[str, Any]) -> Limit:
    """The link's maximum rate: what gpu.pcie read from NVML at the run, else (and never below) what the
    inventory states for the GPU's link."""
    link = _dict(_dict(doc, "details"), "pcie_link")
    stated = _number(link.get("max_theoretical_gbps"))
    what = (f"PCIe Gen{link.get('max_gen')} x{link.get('max_width')} (the link's maximum, spec rate)" if stated
            else "the document holds no PCIe link rate")
    most = [stated]
    for gpu in inventory_gpus(doc):
        most.append(_number(gpu.get("pcie_bandwidth_max_gb_per_s")))
        if isinstance(gpu.get("pcie_gen_max"), int) and isinstance(gpu.get("pcie_width_max"), int):
            most.append(_number(pcie_bandwidth_gb_per_s(gpu["pcie_gen_max"], gpu["pcie_width_max"]).value))
    largest = max((v for v in most if v is not None), default=None)
    return Limit(stated, what, PCIE_SOURCE, largest, "theoretical maximum of its PCIe link")


def _host_memory(doc: dict[str, Any]) -> Limit:
    """The RAM's theoretical peak (:func:`~hwbench_gui.engine.inventory.memory.theoretical_peak_gb_per_s`); when
    unknown, the inventory's own reason."""
    memory = _dict(_dict(doc, "inventory"), "memory")
    peak, derived = theoretical_peak_gb_per_s(memory)
    if peak is not None:
        return Limit(peak, derived, "the inventory's RAM: speed (MT/s) × 8 bytes × channels", peak,
                     f"theoretical peak of its documented RAM ({derived})")
    reasons = _dict(memory, "reasons")
    why = reasons.get("channels") or reasons.get("configured_speed_mts") or derived
    return Limit(None, f"the host memory's rate is unknown: {why}", None, None, derived)
