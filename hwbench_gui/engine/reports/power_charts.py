"""GPU power read out of a document's telemetry, and the chart of each headline figure per watt."""

from __future__ import annotations

import re
from typing import Any, Sequence

from matplotlib.figure import Figure

from hwbench_gui.engine.reports.chart_kit import Chart, drawn_docs, param, short
from hwbench_gui.engine.reports.sides import Side
from hwbench_gui.engine.results import describe
from hwbench_gui.engine.spec.precision import of_document as precision_of

_POWER = re.compile(r"^gpu\d+_power_w$")


def mean_gpu_power_w(doc: dict[str, Any]) -> float | None:
    """Sum over GPUs of each GPU's mean power draw during the run, or None when none was sampled."""
    metrics = ((doc.get("telemetry") or {}).get("metrics") or {}) if isinstance(doc.get("telemetry"), dict) else {}
    values = [m.get("mean") for name, m in metrics.items() if _POWER.match(str(name)) and isinstance(m, dict)]
    values = [float(v) for v in values if describe.is_number(v)]
    return sum(values) if values and sum(values) > 0 else None


#: GPU runs whose figure the GPU's power does not pay for: a PCIe copy is the link's and host memory's
#: work, and the data path's end-to-end rate is held by the host's stages as often as by the GPU.
NOT_GPU_WORK = ("gpu.pcie", "datapath.analyze")


def gpu_power_is_the_cost(doc: dict[str, Any]) -> bool:
    """Whether ``doc``'s figure per watt of GPU power means something: the run did its work on a CUDA
    device, in a benchmark whose figure is the GPU's work (not host memory, a disk, a CPU decoder or the
    PCIe link, whose runs sample the GPUs' idle power too)."""
    bench_id = str((doc.get("benchmark") or {}).get("id") or "")
    return str(doc.get("device") or "").startswith("cuda") and bench_id not in NOT_GPU_WORK


def _per_watt_group(doc: dict[str, Any]) -> str:
    """What a figure per watt is compared within: the benchmark, its model where it takes one, and the
    precision (tokens/s of a 124M model and of an 8B one per watt are not one quantity)."""
    parts = [(doc.get("benchmark") or {}).get("id"), param(doc, "model"), param(doc, "method")]
    return " ".join(str(p) for p in parts if isinstance(p, str) and p) + f" ({precision_of(doc)})"


def perf_per_watt_chart(sides: Sequence[Side]) -> Chart | None:
    """Headline figure per watt of mean GPU power, for the runs where GPU power is the cost
    (:func:`gpu_power_is_the_cost`): one panel per benchmark, model and precision, each on its own scale and
    unit (figures of different kinds on one axis leave the small ones as invisible bars), a bar per side."""
    groups: dict[str, dict[str, float]] = {}
    units: dict[str, str] = {}
    for side in sides:
        for doc in drawn_docs(side.docs):
            power_w = mean_gpu_power_w(doc)
            figure = doc["figure"]
            if power_w is None or not figure.get("higher_is_better", True) or not gpu_power_is_the_cost(doc):
                continue
            group = _per_watt_group(doc)
            groups.setdefault(group, {}).setdefault(side.name, float(figure["value"]) / power_w)
            units.setdefault(group, f"{figure.get('unit')}/W")
    if not groups:
        return None
    bars = sum(len(values) for values in groups.values())
    figure = Figure(figsize=(8.0, 0.5 + 0.28 * bars + 0.62 * len(groups)), layout="constrained")
    axes = figure.subplots(len(groups), 1, squeeze=False)[:, 0]
    for ax, (group, values) in zip(axes, groups.items()):
        names = list(values)
        drawn = ax.barh(range(len(names)), [values[n] for n in names], 0.7,
                        color=[f"C{[s.name for s in sides].index(n) % 10}" for n in names])
        ax.bar_label(drawn, labels=[f"{values[n]:.3g}" for n in names], fontsize=7, padding=2)
        ax.set_yticks(range(len(names)), [short(n, 50, 1) for n in names] if len(sides) > 1 else [""] * len(names),
                      fontsize=7)
        ax.invert_yaxis()
        ax.set_xlim(0, 1.15 * max(values.values()))
        ax.set_title(f"{group}: {units[group]}", fontsize=8, loc="left")
        ax.tick_params(axis="x", labelsize=7)
        ax.grid(axis="x", alpha=0.3)
        ax.set_axisbelow(True)
    figure.suptitle("Performance per watt (headline figure / mean GPU power during the run)", fontsize=10)
    return Chart("perf_per_watt", "Performance per watt", figure,
                 "Mean board power of all GPUs as NVML reported it during the run; only runs whose work the GPU "
                 "did (no host memory, disk, CPU decode, PCIe or data-path figure per GPU watt). Each panel has "
                 "its own scale: compare bars within a panel, not across.")
