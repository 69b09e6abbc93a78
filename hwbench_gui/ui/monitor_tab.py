"""The Monitor tab: live telemetry plots drawn from the shared sampler's ring buffers.

The sampler thread never touches Qt; one QTimer on the GUI thread (~10 Hz) reads the ring buffers
and redraws only when a new sample has arrived. The same plots can show a recorded CSV instead.
Under each plot's title a legend line names its curves in their colour and line style with their
latest value (as nvitop shows them), outside the plot so it never covers data; without a GPU the GPU plots are left out
and one line says why. Below the plots: GPU compute processes and the busiest host processes
(:mod:`hwbench_gui.engine.telemetry.processes`, sampled every :data:`PROCESS_REFRESH_S`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, Qt, QTimer
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from hwbench_gui.engine import telemetry
from hwbench_gui.engine.telemetry.processes import TopProcesses
from hwbench_gui.ui.context import AppContext
from hwbench_gui.ui.theme import on_theme_changed

GIB = 1024.0**3
REDRAW_MS = 100
#: How often the host process table and the legends' current values are refreshed.
PROCESS_REFRESH_S = 2.0
LEGEND_REFRESH_S = 0.5
#: Host processes listed.
TOP_PROCESSES = 8
WINDOWS_S = (("1 min", 60.0), ("5 min", 300.0), ("30 min", 1800.0))
INTERVALS_S = (0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0)
#: Mid-saturation colours that read on white and on near-black backgrounds.
COLORS = ("#1f77b4", "#e8710a", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf")
STYLES = (Qt.PenStyle.SolidLine, Qt.PenStyle.DashLine, Qt.PenStyle.DotLine, Qt.PenStyle.DashDotLine)
#: The legend line's sample of each line style.
_GLYPHS = ("━━", "╍╍", "┅┅", "━·")
#: Curves named in one plot's legend line (the hover readout names them all).
LEGEND_MAX = 6


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
    gpus = sorted(int(n[3:].split("_", 1)[0]) for n in names if n.startswith("gpu") and n.endswith("_util_percent") and "_mem_" not in n)
    cores = sorted(int(n[3:-8]) for n in names if n.startswith("cpu") and n.endswith("_percent") and n[3:-8].isdigit())

    def gpu_curves(suffix, label, style=0, scale=1.0, right=False):
        return [CurveSpec(f"gpu{i}_{suffix}", f"GPU{i} {label}", COLORS[i % len(COLORS)], style, scale, 1.0, right) for i in gpus]

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
                 gpu_curves("pcie_rx_bytes_per_s", "PCIe RX", 0, 1e9) + gpu_curves("pcie_tx_bytes_per_s", "PCIe TX", 1, 1e9)
                 + gpu_curves("nvlink_rx_bytes_per_s", "NVLink RX", 2, 1e9) + gpu_curves("nvlink_tx_bytes_per_s", "NVLink TX", 3, 1e9)),
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


class _Plot:
    """One PlotItem of the grid with its curves (and a second ViewBox for a right axis)."""

    def __init__(self, spec: PlotSpec, item: pg.PlotItem):
        self.spec = spec
        self.item = item
        self.right_vb: pg.ViewBox | None = None
        self.curves: list[tuple[CurveSpec, pg.PlotDataItem]] = []
        self.cursor = pg.InfiniteLine(angle=90, movable=False)
        self.cursor.setZValue(10)
        self.cursor.hide()
        item.addItem(self.cursor, ignoreBounds=True)
        self.na_text: pg.TextItem | None = None
        item.setLabel("left", spec.unit)
        item.getAxis("left").enableAutoSIPrefix(False)  # "GiB (x0.001)" reads worse than 0.5
        item.showGrid(x=True, y=True, alpha=0.25)
        # Major ticks and grid lines only: the minor levels cost a third of each repaint of the
        # eight live plots (31 → 19 ms here) and add little to a 1-30 minute view.
        for axis in ("left", "bottom"):
            item.getAxis(axis).setStyle(maxTickLevel=0)
        item.setDownsampling(auto=True, mode="peak")
        item.setClipToView(True)
        item.setMenuEnabled(False)
        if spec.right_unit:
            self.right_vb = pg.ViewBox()
            item.showAxis("right")
            item.scene().addItem(self.right_vb)
            item.getAxis("right").linkToView(self.right_vb)
            item.getAxis("right").setLabel(spec.right_unit)
            item.getAxis("right").enableAutoSIPrefix(False)
            self.right_vb.setXLink(item)
            item.vb.sigResized.connect(self._sync_right)
        self.legend_text = ""
        self._fg = "#000000"
        for curve in spec.curves:
            data_item = pg.PlotDataItem(antialias=False)
            # Items outside the PlotItem's own ViewBox need these set on themselves.
            data_item.setDownsampling(auto=True, method="peak")
            data_item.setClipToView(True)
            if curve.right_axis and self.right_vb is not None:
                self.right_vb.addItem(data_item)
            else:
                item.addItem(data_item)
            self.curves.append((curve, data_item))

    def legend_entries(self, latest: dict[str, float]) -> list[tuple[CurveSpec, str]]:
        """(curve, "GPU0 util 45 %") for the named curves (per-core lines stay out: the readout names
        the busiest), at most :data:`LEGEND_MAX` with a value first."""
        entries = []
        for curve, _ in self.curves:
            if curve.color is None:
                continue
            value = latest.get(curve.metric, math.nan)
            unit = self.spec.right_unit if curve.right_axis else self.spec.unit
            entries.append((curve, f"{curve.label} {_value_text(value / curve.scale)} {unit}"))
        if len(entries) > LEGEND_MAX:
            entries = [e for e in entries if not e[1].endswith(f"– {self.spec.unit}")][:LEGEND_MAX]
        return entries

    def set_title(self, fg: str, latest: dict[str, float] | None = None) -> None:
        """Title, and below it the legend line with the latest values."""
        self._fg = fg
        entries = self.legend_entries(latest or {})
        self.legend_text = "   ".join(text for _, text in entries)
        legend = " &nbsp; ".join(
            f"<span style='color:{curve.color}'>{_GLYPHS[curve.style]}</span>&nbsp;"
            f"<span style='color:{fg}'>{text}</span>" for curve, text in entries)
        title = f"<span style='color:{fg}; font-size:9pt'>{self.spec.title}</span>"
        self.item.setTitle(title + (f"<br><span style='font-size:8pt'>{legend}</span>" if legend else ""))

    def _sync_right(self) -> None:
        self.right_vb.setGeometry(self.item.vb.sceneBoundingRect())
        self.right_vb.linkedViewChanged(self.item.vb, self.right_vb.XAxis)

    def set_unavailable(self, reason: str | None, fg: QColor) -> None:
        if self.na_text is not None:
            self.item.removeItem(self.na_text)
            self.na_text = None
        self.item.setOpacity(1.0 if reason is None else 0.45)
        self.item.setEnabled(reason is None)
        if reason:
            self.na_text = pg.TextItem(_wrap(f"N/A: {reason}", 60), color=fg, anchor=(0.5, 0.5))
            self.item.addItem(self.na_text, ignoreBounds=True)
            self.item.setXRange(0, 1, padding=0)
            self.item.setYRange(0, 1, padding=0)
            self.na_text.setPos(0.5, 0.5)


def _value_text(value: float) -> str:
    """"–" for no value, "1,980" from a thousand up, else three significant digits."""
    if math.isnan(value):
        return "–"
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def _wrap(text: str, width: int) -> str:
    words, lines, line = text.split(), [], ""
    for w in words:
        if len(line) + len(w) + 1 > width and line:
            lines.append(line)
            line = w
        else:
            line = f"{line} {w}".strip()
    return "\n".join(lines + [line])


def _set_curve(data_item: pg.PlotDataItem, x: np.ndarray, y: np.ndarray) -> None:
    finite = np.isfinite(y)
    if finite.all():
        data_item.setData(x, y, connect="all", skipFiniteCheck=True)
    elif finite.any():
        # N/A gaps: break the line there (skipping the check would draw garbage through NaN).
        data_item.setData(x, y, connect="finite", skipFiniteCheck=False)
    else:
        data_item.setData([], [])


class MonitorTab(QWidget):
    """Live telemetry plots over ``context.sampler``; :meth:`load_csv` shows a recording instead."""

    def __init__(self, context: AppContext, parent: QWidget | None = None):
        super().__init__(parent)
        self._context = context
        self._own_sampler = context.sampler is None
        if self._own_sampler:  # no window around us (a test, a script): run our own
            context.sampler = telemetry.Sampler()
            context.sampler.start()
        self._sampler: telemetry.Sampler = context.sampler
        self._window_s = WINDOWS_S[0][1]
        self._last_ts: float | None = None
        self._last_table_update = 0.0
        self._recorded: tuple[np.ndarray, dict[str, np.ndarray]] | None = None
        self._recorded_path: Path | None = None
        self._shown_t = np.empty(0)
        self._shown: dict[str, np.ndarray] = {}
        self._latest: dict[str, float] = {}
        self._plots: list[_Plot] = []
        self.redraw_count = 0

        self._build_controls()
        self._layout_widget = pg.GraphicsLayoutWidget()
        self._layout_widget.ci.setSpacing(4)
        self._readout = QLabel("Hover a plot to read values.")
        self._readout.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._readout.setWordWrap(True)
        self._table = QTableWidget(0, 4)
        self._table.setHorizontalHeaderLabels(["GPU", "PID", "Process", "GPU memory (GiB)"])
        self._table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self._table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self._table.verticalHeader().setVisible(False)
        self._table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        self._table_note = QLabel()

        self._gpu_box = QWidget()
        tl = QVBoxLayout(self._gpu_box)
        tl.setContentsMargins(0, 0, 0, 0)
        tl.addWidget(QLabel("GPU processes (compute)"))
        tl.addWidget(self._table)
        tl.addWidget(self._table_note)
        self._top = TopProcesses()
        self._last_process_update = 0.0
        self._last_legend_update = 0.0
        self.host_table = QTableWidget(0, 5)
        self.host_table.setHorizontalHeaderLabels(["PID", "Process", "User", "CPU %", "Memory (GiB)"])
        self.host_table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.host_table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.host_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.host_table.verticalHeader().setVisible(False)
        self.host_table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        self.host_table.setToolTip(f"The busiest host processes, refreshed every {PROCESS_REFRESH_S:g} s; "
                                   "CPU % is of one core, as top shows it")
        host_box = QWidget()
        hl = QVBoxLayout(host_box)
        hl.setContentsMargins(0, 0, 0, 0)
        hl.addWidget(QLabel("Host processes (busiest first)"))
        hl.addWidget(self.host_table)
        table_box = QSplitter(Qt.Orientation.Horizontal)
        table_box.addWidget(self._gpu_box)
        table_box.addWidget(host_box)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self._layout_widget)
        splitter.addWidget(table_box)
        splitter.setStretchFactor(0, 5)
        splitter.setStretchFactor(1, 2)
        self._splitter = splitter
        splitter.setSizes([600, 260])  # room for about eight process rows under the plots

        root = QVBoxLayout(self)
        root.addLayout(self._controls)
        root.addWidget(self._banner)
        root.addWidget(splitter, 1)
        root.addWidget(self._readout)

        self._layout_widget.scene().sigMouseMoved.connect(self._on_mouse_moved)
        self._build_plots(self._sampler.metric_names(), self._sampler.gpu_unavailable_reason)

        self._timer = QTimer(self)
        self._timer.setInterval(REDRAW_MS)
        self._timer.timeout.connect(self.redraw)
        self._timer.start()
        on_theme_changed(self, lambda palette: self._apply_palette(palette) if self._plots else None)

    # -- widgets --------------------------------------------------------------------------
    def _build_controls(self) -> None:
        self._controls = QHBoxLayout()
        self._window_box = QComboBox()
        for label, seconds in WINDOWS_S:
            self._window_box.addItem(label, seconds)
        self._window_box.currentIndexChanged.connect(self._on_window_changed)
        self._interval_box = QComboBox()
        for s in INTERVALS_S:
            self._interval_box.addItem(f"{s:g} s", s)
        current = self._interval_box.findData(self._sampler.interval_s)
        if current < 0:
            self._interval_box.addItem(f"{self._sampler.interval_s:g} s", self._sampler.interval_s)
            current = self._interval_box.count() - 1
        self._interval_box.setCurrentIndex(current)
        self._interval_box.currentIndexChanged.connect(self._on_interval_changed)
        self._pause_button = QPushButton("Pause")
        self._pause_button.setCheckable(True)
        self._pause_button.setToolTip("Freeze the plots (sampling goes on); pan and zoom while paused")
        self._pause_button.toggled.connect(self._on_pause)
        self._export_button = QPushButton("Export CSV…")
        self._export_button.setToolTip("Write the whole sampled history to a CSV file")
        self._export_button.clicked.connect(self._on_export)
        self._open_button = QPushButton("Open recording…")
        self._open_button.setToolTip("Show a telemetry CSV (from Export or `hwbench monitor --csv`)")
        self._open_button.clicked.connect(self._on_open)
        self._live_button = QPushButton("Back to live")
        self._live_button.clicked.connect(self.show_live)
        self._live_button.hide()
        self._status = QLabel()
        for w in (QLabel("Window"), self._window_box, QLabel("Interval"), self._interval_box,
                  self._pause_button, self._export_button, self._open_button, self._live_button):
            self._controls.addWidget(w)
        self._controls.addStretch(1)
        self._controls.addWidget(self._status)
        self._banner = QLabel()
        self._banner.setWordWrap(True)
        self._banner.hide()

    def _build_plots(self, names: list[str], gpu_reason: str | None) -> None:
        self._layout_widget.clear()
        self._plots = []
        # Without GPU data the GPU plots would be five empty frames repeating one error: leave them out.
        specs = [spec for spec in plot_specs(names) if not (spec.gpu and gpu_reason)]
        for n, spec in enumerate(specs):
            columns = 3 if len(specs) <= 3 else 2  # host plots only: one row, room left for the tables
            item = self._layout_widget.addPlot(row=n // columns, col=n % columns, axisItems={"bottom": pg.DateAxisItem()})
            self._plots.append(_Plot(spec, item))
        self._gpu_reason = gpu_reason
        # Link the time axes of the plots that draw data; an N/A plot keeps its own 0..1 view.
        live = [p for p in self._plots if p.curves and not (p.spec.gpu and gpu_reason)]
        for p in live[1:]:
            p.item.setXLink(live[0].item)
        if gpu_reason:
            self._banner.setText(f"No GPU telemetry, so the GPU plots are hidden: {gpu_reason}")
            self._banner.setToolTip(gpu_reason)
            self._banner.show()
        else:
            self._banner.hide()
        self._gpu_box.setVisible(not gpu_reason)
        # Eight plots need the height; with host plots only the process tables get more.
        self._splitter.setSizes([720, 160] if len(specs) > 3 else [600, 260])
        self._last_legend_update = 0.0
        self._apply_palette()
        self._set_interaction(self._recorded is not None or self._pause_button.isChecked())

    def _apply_palette(self, palette: QPalette | None = None) -> None:
        """Colours from ``palette`` (the new application palette on a theme change), else the widget's."""
        pal = palette if palette is not None else self.palette()
        bg, fg = pal.color(QPalette.ColorRole.Base), pal.color(QPalette.ColorRole.Text)
        faint = QColor(fg)
        faint.setAlpha(70)
        self._layout_widget.setBackground(bg)
        for p in self._plots:
            for side in ("left", "bottom", "right"):
                axis = p.item.getAxis(side)
                axis.setPen(fg)
                axis.setTextPen(fg)
            cursor_color = QColor(fg)
            cursor_color.setAlpha(140)
            p.cursor.setPen(pg.mkPen(cursor_color, width=1))
            for curve, data_item in p.curves:
                color = QColor(curve.color) if curve.color else faint
                data_item.setPen(pg.mkPen(color, width=curve.width, style=STYLES[curve.style]))
            p.set_title(fg.name(), self._latest)
            p.set_unavailable(None if p.curves else "not in this data", fg)

    def changeEvent(self, event) -> None:  # noqa: N802 (Qt name)
        if event.type() == QEvent.Type.PaletteChange and self._plots:
            self._apply_palette()
        super().changeEvent(event)

    def _set_interaction(self, enabled: bool) -> None:
        for p in self._plots:
            p.item.setMouseEnabled(x=enabled, y=enabled)

    # -- drawing -----------------------------------------------------------------------------
    def _plotted_metrics(self) -> list[str]:
        return [c.metric for p in self._plots for c, _ in p.curves]

    def showEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        super().showEvent(event)
        self._last_ts = None  # draw the history gathered while hidden at once
        self.redraw()

    def redraw(self) -> bool:
        """Redraw from the sampler if a new sample arrived (timer slot). Returns whether it drew."""
        if self._recorded is not None or self._pause_button.isChecked():
            return False
        if not self.isVisible():  # another tab is shown: the record goes on, drawing waits for showEvent
            return False
        latest = self._sampler.latest()
        if latest is None:
            self._status.setText("waiting for the first sample…")
            return False
        ts = latest["timestamp"]
        if ts == self._last_ts:
            return False
        self._last_ts = ts
        since = ts - self._window_s
        t, values = self._sampler.history(since=since, metrics=self._plotted_metrics())
        self._draw(t, values, since, ts)
        now = time.monotonic()
        if now - self._last_table_update >= 1.0 and not self._gpu_reason:
            self._last_table_update = now
            self._update_table(self._sampler.gpu_processes())
        if now - self._last_process_update >= PROCESS_REFRESH_S:
            self._last_process_update = now
            self.update_host_processes()
        cost = self._sampler.last_sample_cost_s
        self._status.setText(
            f"{len(t)} samples shown · every {self._sampler.interval_s:g} s"
            + (f" · sample took {cost * 1e3:.1f} ms" if cost is not None else "")
        )
        self.redraw_count += 1
        return True

    def update_host_processes(self) -> None:
        """Refill the host process table from one engine sample (a low-rate timer slot)."""
        rows = self._top.sample(TOP_PROCESSES)
        self.host_table.setRowCount(len(rows))
        for r, proc in enumerate(rows):
            cells = [str(proc.pid), proc.name, proc.user or "", f"{proc.cpu_percent:.0f}",
                     "" if proc.rss_bytes is None else f"{proc.rss_bytes / GIB:.2f}"]
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if c in (0, 3, 4):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.host_table.setItem(r, c, item)

    def _update_legends(self, values: dict[str, np.ndarray], force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last_legend_update < LEGEND_REFRESH_S:
            return
        self._last_legend_update = now
        latest = {}
        for metric, y in values.items():
            finite = y[np.isfinite(y)] if y.size else y
            latest[metric] = float(finite[-1]) if finite.size else math.nan
        self._latest = latest
        for p in self._plots:
            p.set_title(p._fg, latest)

    def _draw(self, t: np.ndarray, values: dict[str, np.ndarray], x0: float, x1: float) -> None:
        self._shown_t, self._shown = t, values
        self._update_legends(values, force=self._recorded is not None)
        for p in self._plots:
            if p.spec.gpu and self._gpu_reason:
                continue
            for curve, data_item in p.curves:
                y = values[curve.metric]
                _set_curve(data_item, t, y / curve.scale if curve.scale != 1.0 else y)
            if p.curves:
                p.item.setXRange(x0, x1, padding=0)
                p.item.enableAutoRange(axis="y")
                if p.right_vb is not None:
                    p.right_vb.enableAutoRange(axis="y")

    def _update_table(self, rows: list[dict]) -> None:
        self._table.setRowCount(len(rows))
        for r, proc in enumerate(rows):
            used = proc.get("used_bytes")
            cells = [str(proc["gpu"]), str(proc["pid"]), proc.get("name") or "(not visible)",
                     "N/A" if used is None else f"{used / GIB:.2f}"]
            for c, text in enumerate(cells):
                self._table.setItem(r, c, QTableWidgetItem(text))
        if self._recorded is not None:
            self._table_note.setText("Per-process GPU memory is not part of a recording.")
        elif self._gpu_reason:
            self._table_note.setText(f"N/A: {self._gpu_reason}")
        else:
            self._table_note.setText("" if rows else "No compute process on any GPU.")

    def _on_mouse_moved(self, pos) -> None:
        if self._shown_t.size == 0:
            return
        hovered = next((p for p in self._plots if p.item.sceneBoundingRect().contains(pos)), None)
        if hovered is None:
            return
        x = hovered.item.vb.mapSceneToView(pos).x()
        for p in self._plots:
            p.cursor.setPos(x)
            p.cursor.show()
        self._readout.setText(self.readout_at(x, hovered.spec.key))

    def readout_at(self, x: float, plot_key: str) -> str:
        """Text of the values nearest to time ``x`` for the curves of plot ``plot_key``."""
        t = self._shown_t
        if t.size == 0:
            return ""
        i = int(np.clip(np.searchsorted(t, x), 0, t.size - 1))
        if i > 0 and abs(t[i - 1] - x) < abs(t[i] - x):
            i -= 1
        plot = next(p for p in self._plots if p.spec.key == plot_key)
        stamp = time.strftime("%H:%M:%S", time.localtime(t[i])) + f".{int((t[i] % 1) * 10)}"
        parts = []
        curves = plot.spec.curves
        if plot.spec.key == "cpu" and len(curves) > 9:  # many cores: total plus the busiest
            per_core = [c for c in curves if c.metric != "cpu_percent"]
            per_core.sort(key=lambda c: -np.nan_to_num(self._shown[c.metric][i], nan=-1))
            curves = [c for c in curves if c.metric == "cpu_percent"] + per_core[:8]
        for c in curves:
            v = self._shown[c.metric][i]
            unit = plot.spec.right_unit if c.right_axis else plot.spec.unit
            parts.append(f"{c.label} {'N/A' if math.isnan(v) else f'{v / c.scale:.4g}'} {unit}")
        return f"{stamp}  {plot.spec.title.split(' (')[0].split(':')[0]}:  " + " · ".join(parts)

    # -- controls --------------------------------------------------------------------------
    def _on_window_changed(self, index: int) -> None:
        self._window_s = float(self._window_box.itemData(index))
        self._last_ts = None  # force a redraw with the new window

    def _on_interval_changed(self, index: int) -> None:
        seconds = float(self._interval_box.itemData(index))
        self._sampler.set_interval(seconds)
        self._context.settings.setValue("monitor/interval_s", seconds)

    def _on_pause(self, paused: bool) -> None:
        self._pause_button.setText("Resume" if paused else "Pause")
        self._set_interaction(paused)
        if not paused:
            self._last_ts = None

    def _on_export(self) -> None:
        default = str(Path.home() / time.strftime("hwbench-telemetry-%Y%m%d-%H%M%S.csv"))
        path, _ = QFileDialog.getSaveFileName(self, "Export telemetry", default, "CSV files (*.csv)")
        if path:
            self.export_csv(path)

    def export_csv(self, path: str | Path) -> Path:
        """Write the sampler's whole history to ``path`` (the Export button's action)."""
        written = self._sampler.write_csv(path)
        self._context.show_status(f"Telemetry written to {written}", 5000)
        return written

    def _on_open(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open telemetry recording", str(Path.home()), "CSV files (*.csv)")
        if path:
            try:
                self.load_csv(path)
            except (OSError, ValueError) as exc:
                self._context.show_status(f"Could not read {path}: {exc}", 8000)

    def load_csv(self, path: str | Path) -> None:
        """Show a recorded telemetry CSV (``write_csv`` / ``hwbench monitor --csv`` format) instead of live data."""
        t, values = telemetry.read_csv(path)
        self._recorded = (t, values)
        self._recorded_path = Path(path)
        names = list(values)
        has_gpu = any(n.startswith("gpu") for n in names)
        self._build_plots(names, None if has_gpu else "this recording has no GPU columns")
        if t.size:
            self._draw(t, {m: values[m] for m in self._plotted_metrics()}, float(t[0]), float(t[-1]))
        self._update_table([])
        self._live_button.show()
        for w in (self._pause_button, self._interval_box, self._window_box, self._export_button):
            w.setEnabled(False)
        self._status.setText(f"recording {self._recorded_path.name}: {t.size} samples"
                             + (f", {t[-1] - t[0]:.0f} s" if t.size > 1 else ""))

    def show_live(self) -> None:
        """Leave a recording and go back to the live sampler."""
        self._recorded = None
        self._recorded_path = None
        self._build_plots(self._sampler.metric_names(), self._sampler.gpu_unavailable_reason)
        self._live_button.hide()
        for w in (self._pause_button, self._interval_box, self._window_box, self._export_button):
            w.setEnabled(True)
        self._last_ts = None
        self.redraw()

    @property
    def showing_recording(self) -> bool:
        return self._recorded is not None

    def plots(self) -> dict[str, pg.PlotItem]:
        """The grid's PlotItems by key (for tests and screenshots)."""
        return {p.spec.key: p.item for p in self._plots}

    def curve_data(self, metric: str) -> tuple[np.ndarray, np.ndarray] | None:
        """The (x, y) a metric's curve currently shows, in display units."""
        for p in self._plots:
            for curve, data_item in p.curves:
                if curve.metric == metric:
                    x, y = data_item.getOriginalDataset()
                    return (np.empty(0), np.empty(0)) if x is None else (x, y)
        return None

    def shutdown(self) -> None:
        """Stop redrawing; stops the sampler only if this tab created it."""
        self._timer.stop()
        if self._own_sampler:
            self._sampler.stop()
