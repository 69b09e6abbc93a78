"""The Monitor tab: live telemetry plots drawn from the shared sampler's ring buffers.

The sampler thread never touches Qt; one QTimer on the GUI thread (~10 Hz) reads the ring buffers
and redraws only when a new sample has arrived. The same plots can show a recorded CSV instead.
The tab composes the control bar (:mod:`.controls`), the plot grid (:mod:`.plots`) and the process
tables (:mod:`.processes`); without a GPU the GPU plots are left out and one line says why.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QLabel, QSplitter, QVBoxLayout, QWidget

from hwbench_gui.engine import telemetry
from hwbench_gui.ui.context import AppContext
from hwbench_gui.ui.monitor.controls import WINDOWS_S, MonitorControls
from hwbench_gui.ui.monitor.plot import Plot
from hwbench_gui.ui.monitor.plots import PlotGrid
from hwbench_gui.ui.monitor.processes import PROCESS_REFRESH_S, ProcessTables
from hwbench_gui.ui.turns import next_turn

REDRAW_MS = 100
#: Delay of the redraw when the tab is shown (see :meth:`MonitorTab.showEvent`).
REDRAW_AFTER_SHOW_MS = 10
#: Milliseconds between the plots of one redraw: each plot is drawn (and repainted) in a turn of its
#: own; the whole grid and its repaint in one turn took 20-50 ms of a busy 2-core machine's GUI thread.
REDRAW_STEP_MS = 10
#: How often the GPU process table is refreshed.
GPU_TABLE_REFRESH_S = 1.0


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
        self._last_process_update = 0.0
        self._recorded: tuple[np.ndarray, dict[str, np.ndarray]] | None = None
        self._recorded_path: Path | None = None
        self.redraw_count = 0
        self._drawing_after_show = False
        self._stepping = False  # a redraw is drawing its plots one per turn

        self.controls = MonitorControls(self._sampler.interval_s)
        self.controls.window_changed.connect(self._on_window_changed)
        self.controls.interval_changed.connect(self._on_interval_changed)
        self.controls.pause_toggled.connect(self._on_pause)
        self.controls.export_requested.connect(self.export_csv)
        self.controls.open_requested.connect(self._open_recording)
        self.controls.live_requested.connect(self.show_live)
        self._banner = QLabel()
        self._banner.setWordWrap(True)
        self._banner.hide()
        self.grid = PlotGrid()
        self.processes = ProcessTables(context.workers)
        self._readout = QLabel("Hover a plot to read values.")
        self._readout.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._readout.setWordWrap(True)
        self.grid.hovered.connect(self._readout.setText)
        self._splitter = QSplitter(Qt.Orientation.Vertical)
        self._splitter.addWidget(self.grid)
        self._splitter.addWidget(self.processes)
        self._splitter.setStretchFactor(0, 5)
        self._splitter.setStretchFactor(1, 2)
        self._splitter.setSizes([600, 260])  # room for about eight process rows under the plots

        root = QVBoxLayout(self)
        root.addWidget(self.controls)
        root.addWidget(self._banner)
        root.addWidget(self._splitter, 1)
        root.addWidget(self._readout)

        # The parts' widgets under the names tests and scripts reach for.
        self._layout_widget = self.grid.layout_widget
        self._window_box = self.controls.window_box
        self._interval_box = self.controls.interval_box
        self._pause_button = self.controls.pause_button
        self._status = self.controls.status
        self._gpu_box = self.processes.gpu_box
        self.host_table = self.processes.host_table

        self._build_plots(self._sampler.metric_names(), self._sampler.gpu_unavailable_reason)
        self._timer = QTimer(self)
        self._timer.setInterval(REDRAW_MS)
        self._timer.timeout.connect(self._on_redraw_timer)
        self._timer.start()

    @property
    def _plots(self) -> list[Plot]:
        return self.grid.plots

    def _build_plots(self, names: list[str], gpu_reason: str | None) -> None:
        count = self.grid.build(names, gpu_reason, interactive=self._recorded is not None or self.controls.paused)
        if gpu_reason:
            from hwbench_gui.engine.nvml import plain_reason

            self._banner.setText(f"{plain_reason(gpu_reason)}: the GPU plots are hidden.")
            self._banner.setToolTip(gpu_reason)
            self._banner.show()
        else:
            self._banner.hide()
        self._gpu_box.setVisible(not gpu_reason)
        # Eight plots need the height; with host plots only the process tables get more.
        self._splitter.setSizes([720, 160] if count > 3 else [600, 260])

    # -- drawing -----------------------------------------------------------------------------
    def showEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        super().showEvent(event)
        # Draw the history gathered while hidden at once, but in a later event-loop turn: the tab comes
        # forward with the plots as they were (their axes from the cache), and the new data and its
        # repaint are turns of their own, not added to the tab switch's. Until then the redraw timer
        # waits too. (A 0 ms timer would be a posted event, delivered with the switch's repaint.)
        self._drawing_after_show = True
        next_turn(self, self._redraw_after_show, REDRAW_AFTER_SHOW_MS)

    def _redraw_after_show(self) -> None:
        self._drawing_after_show = False
        self._last_ts = None
        self.redraw()

    def _on_redraw_timer(self) -> None:
        if not self._drawing_after_show:
            self.redraw()

    def redraw(self) -> bool:
        """Redraw from the sampler if a new sample arrived (timer slot). Returns whether it drew."""
        if self._recorded is not None or self.controls.paused:
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
        if self._stepping:  # the last sample's plots are still being drawn: this one waits its turn
            return False
        self._last_ts = ts
        since = ts - self._window_s
        t, values = self._sampler.history(since=since, metrics=self.grid.plotted_metrics())
        self._draw_step(self.grid.plots, t, values, since, ts, 0)
        now = time.monotonic()
        if now - self._last_table_update >= GPU_TABLE_REFRESH_S and not self.grid.gpu_reason:
            self._last_table_update = now
            self.processes.show_gpu_processes(self._sampler.gpu_processes())
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

    def _draw_step(self, plots: list[Plot], t, values, since: float, until: float, index: int) -> None:
        """Draw plot ``index`` of one sample's redraw, then schedule the next; stops when the tab is
        hidden (its show redraws) or the grid was rebuilt meanwhile."""
        self._stepping = index < len(plots) and self.isVisible() and self.grid.plots is plots
        if not self._stepping:
            return
        self.grid.draw(t, values, since, until, only=index)
        next_turn(self, lambda: self._draw_step(plots, t, values, since, until, index + 1), REDRAW_STEP_MS)

    def update_host_processes(self) -> None:
        """Refill the host process table (a low-rate timer slot)."""
        self.processes.update_host_processes()

    def readout_at(self, x: float, plot_key: str) -> str:
        """Text of the values nearest to time ``x`` for the curves of plot ``plot_key``."""
        return self.grid.readout_at(x, plot_key)

    # -- controls --------------------------------------------------------------------------
    def _on_window_changed(self, seconds: float) -> None:
        self._window_s = seconds
        self._last_ts = None  # force a redraw with the new window

    def _on_interval_changed(self, seconds: float) -> None:
        self._sampler.set_interval(seconds)
        self._context.settings.setValue("monitor/interval_s", seconds)

    def _on_pause(self, paused: bool) -> None:
        self.grid.set_interaction(paused)
        if not paused:
            self._last_ts = None

    def export_csv(self, path: str | Path) -> Path:
        """Write the sampler's whole history to ``path`` (the Export button's action)."""
        written = self._sampler.write_csv(path)
        self._context.show_status(f"Telemetry written to {written}", 5000)
        return written

    def _open_recording(self, path: str) -> None:
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
            self.grid.draw(t, {m: values[m] for m in self.grid.plotted_metrics()}, float(t[0]), float(t[-1]),
                           force_legend=True)
        self.processes.show_gpu_processes([], "Per-process GPU memory is not part of a recording.")
        self.controls.set_recording(True)
        self._status.setText(f"recording {self._recorded_path.name}: {t.size} samples"
                             + (f", {t[-1] - t[0]:.0f} s" if t.size > 1 else ""))

    def show_live(self) -> None:
        """Leave a recording and go back to the live sampler."""
        self._recorded = None
        self._recorded_path = None
        self._build_plots(self._sampler.metric_names(), self._sampler.gpu_unavailable_reason)
        self.controls.set_recording(False)
        self._last_ts = None
        self.redraw()

    @property
    def showing_recording(self) -> bool:
        return self._recorded is not None

    def plots(self) -> dict[str, pg.PlotItem]:
        """The grid's PlotItems by key (for tests and screenshots)."""
        return self.grid.items()

    def curve_data(self, metric: str) -> tuple[np.ndarray, np.ndarray] | None:
        """The (x, y) a metric's curve currently shows, in display units."""
        return self.grid.curve_data(metric)

    def shutdown(self) -> None:
        """Stop redrawing; stops the sampler only if this tab created it."""
        self._timer.stop()
        if self._own_sampler:
            self._sampler.stop()
