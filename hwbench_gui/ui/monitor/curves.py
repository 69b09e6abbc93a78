"""What the Monitor plots show: one :class:`PlotSpec` per plot, one :class:`CurveSpec` per line.

Pure data, built from a list of metric names, so the live sampler and a recorded CSV header give the
same grid.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from PySide6.QtCore import Qt

GIB = 1024.0**3
#: Mid-saturation colours that read on white and on near-black backgrounds.
COLORS = ("#1f77b4", "#e8710a", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf")
STYLES = (Qt.PenStyle.SolidLine, Qt.PenStyle.DashLine, Qt.PenStyle.DotLine, Qt.PenStyle.DashDotLine)


@dataclass
class CurveSpec:
    metric: str
    label: str
    color: str | None  # None: the palette's text colour, faint (per-core lines)
    style: int = 0
    scale: float = 1.0
    width: float = 1.0
    right_axis: bool = False


@dataclass
class PlotSpec:
    key: str
    title: str
    unit: str
    gpu: bool
    curves: list[CurveSpec] = field(default_factory=list)
    right_unit: str | None = None


def plot_specs(names: list[str]) -> list[PlotSpec]:
    """The plot grid for a set of metric names (live sampler or a CSV header)."""
    present = set(names)
    gpus = sorted(int(n[3:].split("_", 1)[0]) for n in names
                  if n.startswith("gpu") and n.endswith("_util_percent") and "_mem_" not in n)
    cores = sorted(int(n[3:-8]) for n in names
                   if n.startswith("cpu") and n.endswith("_percent") and n[3:-8].isdigit())

    def gpu_curves(suffix, label, style=0, scale=1.0, right=False):
        return [CurveSpec(f"gpu{i}_{suffix}", f"GPU{i} {label}", COLORS[i % len(COLORS)], style, scale, 1.0, right)
                for i in gpus]

    specs = [
        PlotSpec("gpu_util", "GPU utilisation (solid) / memory-controller util. (dashed)", "%", True,
                 gpu_curves("util_percent", "util") + gpu_curves("mem_util_percent", "mem util", 1)),
        PlotSpec("vram", "VRAM used", "GiB", True, gpu_curves("vram_used_bytes", "VRAM", 0, GIB)),
        PlotSpec("power", "Power (solid, limit dotted) / temperature (dashed, right)", "W", True,
                 gpu_curves("power_w", "power") + gpu_curves("power_limit_w", "power limit", 2)
                 + gpu_curves("temp_c", "temp", 1, 1.0, True), right_unit="°C"),
        PlotSpec("clocks", "Clocks: SM (solid) / memory (dashed)", "MHz", True,
                 gpu_curves("sm_clock_mhz", "SM clock") + gpu_curves("mem_clock_mhz", "mem clock", 1)),
        PlotSpec("links", "PCIe RX (solid) / TX (dashed), NVLink RX (dotted) / TX (dash-dot)", "GB/s", True,
                 gpu_curves("pcie_rx_bytes_per_s", "PCIe RX", 0, 1e9)
                 + gpu_curves("pcie_tx_bytes_per_s", "PCIe TX", 1, 1e9)
                 + gpu_curves("nvlink_rx_bytes_per_s", "NVLink RX", 2, 1e9)
                 + gpu_curves("nvlink_tx_bytes_per_s", "NVLink TX", 3, 1e9)),
        PlotSpec("cpu", "CPU per core (faint) / total (bold)", "%", False,
                 [CurveSpec(f"cpu{i}_percent", f"cpu{i}", None) for i in cores]
                 + [CurveSpec("cpu_percent", "CPU total", COLORS[0], 0, 1.0, 2.0)]),
        PlotSpec("ram", "RAM / swap / watched process RSS", "GiB", False,
                 [CurveSpec("ram_used_bytes", "RAM used", COLORS[0], 0, GIB),
                  CurveSpec("swap_used_bytes", "swap used", COLORS[1], 1, GIB),
                  CurveSpec("proc_rss_bytes", "watched RSS", COLORS[2], 2, GIB)]),
        PlotSpec("disk", "Disk read (solid) / write (dashed)", "MB/s", False,
                 [CurveSpec("disk_read_bytes_per_s", "disk read", COLORS[0], 0, 1e6),
                  CurveSpec("disk_write_bytes_per_s", "disk write", COLORS[1], 1, 1e6)]),
    ]
    for spec in specs:
        spec.curves = [c for c in spec.curves if c.metric in present]
    return specs
