"""Benchmarks tab: pick a benchmark, set its parameters, queue runs, watch progress, read results.

The runs wait in the engine's :class:`~hwbench_gui.engine.run.queue.RunQueue`; each is a child
process executed by the queue on a :class:`~hwbench_gui.ui.workers.Worker`. The tab only turns the
queue's changes into widgets. The parameter form, availability and reasons all come from the
engine's declarations.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import math
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QMessageBox,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from hwbench_gui.engine.reports.compare import busy_reasons
from hwbench_gui.engine.results.formatting import figure_text, spread_text
from hwbench_gui.engine.run import registry
from hwbench_gui.engine.run.queue import QueueChange, QueuedRun, RunQueue, RunSkipped
from hwbench_gui.engine.run.suites import SuiteRun, suite_names
from hwbench_gui.engine.spec.benchmark import Benchmark, ParamError
from hwbench_gui.ui.context import AppContext
from hwbench_gui.ui.param_form import ParamForm
from hwbench_gui.ui.pipeline_view import BENCH_ID as PIPELINE_BENCH_ID
from hwbench_gui.ui.pipeline_view import PipelineView
from hwbench_gui.ui.theme import ERROR_COLOR, OK_COLOR, WARNING_COLOR, on_theme_changed, plot_colors
from hwbench_gui.ui.workers import Worker, create_worker

log = logging.getLogger(__name__)

_PALETTE = ("#2563eb", "#dc2626", "#16a34a", "#d97706", "#7c3aed", "#0891b2", "#db2777", "#65a30d")
_STATUS_COLORS = {"ok": OK_COLOR, "failed": ERROR_COLOR, "cancelled": WARNING_COLOR}
_RESULT_COLUMNS = ("Started", "Benchmark", "Precision", "Figure", "Value", "Spread (p5–p95)", "Status", "Device")
#: Column index by header, so code and tests name the column they mean.
COLUMN = {name: index for index, name in enumerate(_RESULT_COLUMNS)}
#: Keys of a metric event that say where on a sweep the point lies: (key, axis label, log axis, integer axis).
_SWEEP_KEYS = (
    ("x", None, False, False),
    ("bytes", "transfer size (bytes)", True, False),
    ("size", "matrix size (n)", True, True),
    ("threads", "threads", False, True),
    ("workers", "workers", False, True),
    ("repeat", "repeat", False, True),
)
#: How often the elapsed time of a run is refreshed.
ELAPSED_TICK_MS = 1000


class IntegerAxis(pg.AxisItem):
    """An axis that, when :attr:`integer` is set, puts ticks on whole numbers only (threads, workers)."""

    integer = False

    def tickValues(self, minVal, maxVal, size):  # noqa: N802,N803 (pyqtgraph's names)
        levels = super().tickValues(minVal, maxVal, size)
        if not self.integer or self.logMode:
            return levels
        kept = [(spacing, [v for v in values if float(v).is_integer()]) for spacing, values in levels
                if spacing >= 1]
        if not kept:
            kept = [(1.0, [float(v) for v in range(math.ceil(minVal), math.floor(maxVal) + 1)])]
        return kept


def sweep_x(event: dict[str, Any], elapsed_s: float) -> tuple[float, str, bool, bool]:
    """(x, axis label, log axis, integer axis) of a live metric point: the sweep variable the event
    carries (bytes, size, threads, workers, repeat), else the seconds since the run started."""
    for key, label, x_log, integer in _SWEEP_KEYS:
        value = event.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value), label or str(event.get("x_label") or "x"), bool(event.get("x_log", x_log)), integer
    return elapsed_s, "elapsed (s)", False, False


def _as_floats(values) -> np.ndarray:
    """JSON nulls (points that could not be measured) become NaN: pyqtgraph crashes on None."""
    return np.array([np.nan if v is None else float(v) for v in values], dtype=float)


def _execute(control, queue: RunQueue, run: QueuedRun) -> QueuedRun:
    """Worker body: one run of the queue; the worker's abort cancels it."""
    return queue.execute(run, cancel=control.abort_event)


class BenchmarksTab(QWidget):
    #: A change of the run queue, re-emitted so that it reaches the widgets on the GUI thread.
    _queue_changed = Signal(object)

    def __init__(self, context: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.context = context
        self._benchmarks: dict[str, Benchmark] = {}
        self._reasons: dict[str, str | None] = {}
        self._current: Benchmark | None = None
        self._form: ParamForm | None = None
        self.queue = RunQueue(results_dir=context.results_dir)
        self._worker: Worker | None = None
        #: The clock for a run's elapsed time (tests replace it).
        self.clock = time.monotonic
        self._run_started = 0.0
        self._running_id = ""
        self._last_progress = ""
        self._live_points: dict[str, tuple[list[float], list[float]]] = {}
        self._live_axis: tuple[str, bool, bool] | None = None
        self._documents: list[dict[str, Any]] = []
        self._tf_note_cache: dict[str, str | None] = {}
        self._elapsed_timer = QTimer(self)
        self._elapsed_timer.setInterval(ELAPSED_TICK_MS)
        self._elapsed_timer.timeout.connect(self._update_elapsed)

        splitter = QSplitter(Qt.Horizontal, self)
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["Benchmark", "Status"])
        # The name takes what is left so that Status stays in view; long names elide (full text in the tooltip).
        self.tree.header().setStretchLastSection(False)
        self.tree.header().setSectionResizeMode(0, QHeaderView.Stretch)
        self.tree.header().setSectionResizeMode(1, QHeaderView.ResizeToContents)
        self.tree.setTextElideMode(Qt.ElideRight)
        self.tree.currentItemChanged.connect(self._on_select)
        splitter.addWidget(self.tree)

        right = QWidget()
        right_layout = QVBoxLayout(right)
        self.title = QLabel()
        self.title.setTextFormat(Qt.RichText)
        self.title.setWordWrap(True)
        right_layout.addWidget(self.title)
        self.form_area = QScrollArea()
        self.form_area.setWidgetResizable(True)
        self.form_area.setMaximumHeight(260)
        right_layout.addWidget(self.form_area)

        buttons = QHBoxLayout()
        self.run_button = QPushButton("Run")
        self.run_button.clicked.connect(self.enqueue_current)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel_current)
        self.clear_queue_button = QPushButton("Clear queue")
        self.clear_queue_button.clicked.connect(self._clear_queue)
        self.suite_combo = QComboBox()
        self.suite_combo.addItems(suite_names())
        self.suite_button = QPushButton("Queue suite")
        self.suite_button.setToolTip("Queue every run of the chosen preset (the seed suite: 4 models × "
                                     "PyTorch/TensorFlow × train/infer at FP32 and FP16-AMP)")
        self.suite_button.clicked.connect(lambda: self.enqueue_suite(self.suite_combo.currentText()))
        buttons.addWidget(self.run_button)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.clear_queue_button)
        buttons.addSpacing(24)
        buttons.addWidget(QLabel("Preset"))
        buttons.addWidget(self.suite_combo)
        buttons.addWidget(self.suite_button)
        buttons.addStretch(1)
        right_layout.addLayout(buttons)
        self.folder_warning = QLabel()
        self.folder_warning.setWordWrap(True)
        self.folder_warning.setStyleSheet(f"color: {ERROR_COLOR}; font-weight: 600;")
        self.folder_warning.hide()
        right_layout.addWidget(self.folder_warning)

        self.queue_list = QListWidget()
        self.queue_list.setMaximumHeight(56)
        right_layout.addWidget(QLabel("Queue"))
        right_layout.addWidget(self.queue_list)

        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(True)
        self.progress.setFormat("idle")
        self.progress.setValue(0)
        self.run_status = QLabel("No run in progress.")
        right_layout.addWidget(self.progress)
        right_layout.addWidget(self.run_status)

        self.bottom = QTabWidget()
        self.log = QPlainTextEdit()
        self.log.setReadOnly(True)
        self.log.setMaximumBlockCount(5000)
        self.results = QTableWidget(0, len(_RESULT_COLUMNS))
        self.results.setHorizontalHeaderLabels(_RESULT_COLUMNS)
        self.results.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.results.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.results.verticalHeader().setVisible(False)
        self.results.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        self.results.setWordWrap(False)
        self.results.setTextElideMode(Qt.ElideRight)
        header = self.results.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.Interactive)
        header.setStretchLastSection(True)
        self.results.itemSelectionChanged.connect(self._on_result_selected)
        results_box = QWidget()
        results_layout = QVBoxLayout(results_box)
        results_layout.setContentsMargins(0, 0, 0, 0)
        results_layout.addWidget(self.results, 1)
        results_buttons = QHBoxLayout()
        self.save_as_button = QPushButton("Save as…")
        self.save_as_button.setToolTip("Write the selected result document to a file of your choice")
        self.save_as_button.setEnabled(False)
        self.save_as_button.clicked.connect(self._save_selected_as)
        results_buttons.addWidget(self.save_as_button)
        results_buttons.addStretch(1)
        results_layout.addLayout(results_buttons)
        self.x_axis = IntegerAxis("bottom")
        self.plot = pg.PlotWidget(axisItems={"bottom": self.x_axis})
        self.plot.showGrid(x=True, y=True, alpha=0.25)
        self.plot.addLegend(offset=(10, 10))
        self._apply_plot_colors()
        on_theme_changed(self, self._on_theme_changed)
        self.bottom.addTab(results_box, "Results")
        self.bottom.addTab(self.plot, "Plot")
        self.bottom.addTab(self.log, "Log")
        self.pipeline: PipelineView | None = None  # the "Pipeline" tab, added with the first datapath result
        right_layout.addWidget(self.bottom, 1)
        splitter.addWidget(right)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([420, 860])

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(splitter)

        self._populate()
        self._load_previous_results()
        # Changes made on a worker thread arrive queued; those made here (add, clear) arrive at once.
        self._queue_changed.connect(self._on_queue_change)
        self._queue_listener = self._queue_changed.emit
        self.queue.add_listener(self._queue_listener)

    # --- catalogue ---------------------------------------------------------------------------
    def _populate(self) -> None:
        self.tree.clear()
        categories: dict[str, QTreeWidgetItem] = {}
        first_available = None
        for bench in registry.all_benchmarks():
            self._benchmarks[bench.id] = bench
            reason = registry.availability(bench)
            self._reasons[bench.id] = reason
            parent = categories.get(bench.category)
            if parent is None:
                parent = QTreeWidgetItem(self.tree, [bench.category, ""])
                parent.setFlags(parent.flags() & ~Qt.ItemIsSelectable)
                parent.setExpanded(True)
                categories[bench.category] = parent
            item = QTreeWidgetItem(parent, [f"{bench.title}  ({bench.id})", "ready" if reason is None else "unavailable"])
            item.setData(0, Qt.UserRole, bench.id)
            item.setToolTip(0, f"{bench.title} ({bench.id})")
            if reason is not None:
                item.setData(1, Qt.UserRole, "unavailable")
                item.setForeground(0, self._disabled_brush())
                item.setForeground(1, QBrush(QColor(WARNING_COLOR)))
                item.setToolTip(0, reason)
                item.setToolTip(1, reason)
            elif first_available is None:
                first_available = item
        for broken_id, error in registry.module_errors().items():
            parent = categories.setdefault("Not loaded", QTreeWidgetItem(self.tree, ["Not loaded", ""]))
            item = QTreeWidgetItem(parent, [broken_id, "error"])
            item.setToolTip(0, error)
            item.setForeground(1, QBrush(QColor(ERROR_COLOR)))
        self.tree.expandAll()
        if first_available is not None:
            self.tree.setCurrentItem(first_available)

    def _disabled_brush(self) -> QBrush:
        palette = QApplication.instance().palette() if QApplication.instance() else self.palette()
        return QBrush(palette.color(QPalette.Disabled, QPalette.Text))

    def _on_theme_changed(self, _palette=None) -> None:
        """Plots and the catalogue's greyed items paint with colours of their own: redo them."""
        self._apply_plot_colors()
        brush = self._disabled_brush()
        for item in self._iter_items():
            if item.data(1, Qt.UserRole) == "unavailable":
                item.setForeground(0, brush)

    def select(self, bench_id: str) -> None:
        """Select a benchmark by id (for scripts and tests)."""
        for item in self._iter_items():
            if item.data(0, Qt.UserRole) == bench_id:
                self.tree.setCurrentItem(item)
                return
        raise KeyError(bench_id)

    def _iter_items(self):
        for i in range(self.tree.topLevelItemCount()):
            top = self.tree.topLevelItem(i)
            for j in range(top.childCount()):
                yield top.child(j)

    def _on_select(self, item: QTreeWidgetItem | None, _previous=None) -> None:
        bench_id = item.data(0, Qt.UserRole) if item is not None else None
        bench = self._benchmarks.get(bench_id) if bench_id else None
        self._current = bench
        if bench is None:
            self.title.setText("")
            self.form_area.takeWidget()
            self.run_button.setEnabled(False)
            return
        reason = self._reasons.get(bench.id)
        text = f"<h3>{bench.title}</h3><p>{bench.description}</p>"
        if reason:
            text += f"<p style='color:{WARNING_COLOR}'><b>Cannot run here:</b> {reason}</p>"
        elif any(p.name == "framework" and "tf" in p.choices for p in bench.params):
            note = self._tf_note()
            if note:
                text += f"<p style='color:{WARNING_COLOR}'>framework=tf: {note}</p>"
        self.title.setText(text)
        old = self.form_area.takeWidget()
        if old is not None:
            old.deleteLater()
        try:
            self._form = ParamForm(bench.params)
        except Exception as exc:  # a form that cannot be built must not leave the previous one (and its values)
            log.exception("the form of %s could not be built", bench.id)
            self._form = None
            error = QLabel(f"The parameter form of {bench.id} could not be built: {type(exc).__name__}: {exc}")
            error.setWordWrap(True)
            error.setStyleSheet(f"color: {ERROR_COLOR};")
            self.form_area.setWidget(error)
            self.run_button.setEnabled(False)
            self.run_button.setToolTip("This benchmark's form could not be built")
            return
        self.form_area.setWidget(self._form)
        self.run_button.setEnabled(reason is None)
        self.run_button.setToolTip(reason or "Add this benchmark to the queue")

    def _tf_note(self) -> str | None:
        """Why TensorFlow would see no GPU (asked once: it reads installed packages and NVML)."""
        if "tf" not in self._tf_note_cache:
            from hwbench_gui.engine import nvml
            from hwbench_gui.ui.tf_status import tensorflow_gpu_note

            self._tf_note_cache["tf"] = tensorflow_gpu_note(None, nvml.unavailable_reason())
        return self._tf_note_cache["tf"]

    def form(self) -> ParamForm | None:
        return self._form

    # --- queue and runs -------------------------------------------------------------------------
    def enqueue_current(self) -> None:
        if self._current is None or self._form is None:
            return
        try:
            params = self._current.resolve_params(self._form.values())
        except ParamError as exc:
            QMessageBox.warning(self, "Invalid parameter", str(exc))
            return
        self.enqueue(self._current.id, params)

    def enqueue(self, bench_id: str, params: dict[str, Any]) -> None:
        self.check_results_folder()
        self.queue.add(bench_id, params)
        self._start_next()

    def check_results_folder(self) -> str | None:
        """Probe the results folder; show why results will not be saved there (None when they will)."""
        from hwbench_gui.engine.results.store import check_writable

        problem = check_writable(self.context.results_dir)
        if problem is None:
            self.folder_warning.hide()
        else:
            self.folder_warning.setText(f"⚠ Results will not be saved: {problem}. The run goes on; its result "
                                        "stays in the Results table, where “Save as…” writes it elsewhere.")
            self.folder_warning.show()
            self.log.appendPlainText(f"warning: {problem}")
        return problem

    def enqueue_suite(self, name: str) -> int:
        """Queue every run of suite ``name`` that can run here; the log says why others were left out."""
        self.check_results_folder()
        queued, skipped = self.queue.add_suite(name, prepare=self._prepare_suite_run)
        for run, reason in skipped:
            self.log.appendPlainText(f"suite {name}: skipped {run.label}: {reason}")
        self.context.show_status(f"suite {name}: {len(queued)} runs queued", 8000)
        self._start_next()
        return len(queued)

    def _prepare_suite_run(self, run: SuiteRun) -> dict[str, Any]:
        bench = self._benchmarks.get(run.bench_id)
        reason = self._reasons.get(run.bench_id) if bench is not None else "not registered"
        if reason is None and run.params.get("framework") == "tf" and importlib.util.find_spec("tensorflow") is None:
            reason = "TensorFlow is not installed (pip install 'hwbench-gui[tf]')"
        if reason is not None:
            raise RunSkipped(reason)
        try:
            return bench.resolve_params(run.params)
        except ParamError as exc:
            raise RunSkipped(str(exc)) from None

    def _refresh_queue(self) -> None:
        self.queue_list.clear()
        for run in self.queue.pending():
            self.queue_list.addItem(f"{run.bench_id}  {json.dumps(run.params)}")

    def _clear_queue(self) -> None:
        self.queue.clear()

    def is_running(self) -> bool:
        return self._worker is not None

    def _start_next(self) -> None:
        if self._worker is not None:
            return
        run = self.queue.take_next()
        if run is None:
            return
        self.queue.sampler = self.context.sampler  # the window starts it after the first tab is built
        worker = create_worker(_execute, self.queue, run)
        worker.finished.connect(self._on_worker_finished)
        self._worker = worker
        self.context.workers.start(worker)

    def cancel_current(self) -> None:
        if self._worker is not None:
            self._worker.abort()
            self.run_status.setText("Cancelling…")
            self.cancel_button.setEnabled(False)

    def _on_worker_finished(self) -> None:
        if self._worker is not None and self._worker.is_finished():
            self._worker = None
            self._start_next()

    def _on_queue_change(self, change: QueueChange) -> None:
        if change.kind in ("queued", "removed"):
            self._refresh_queue()
        elif change.kind == "started":
            self._on_started(change.run)
        elif change.kind == "event":
            self._on_event(change.event)
        elif change.kind == "finished":
            result = change.run.result
            self._on_done(change.run.document, str(result.path or ""), getattr(result, "save_error", None))

    def _on_started(self, run: QueuedRun) -> None:
        self._refresh_queue()
        self._reset_live_plot(run.bench_id)
        self.log.appendPlainText(f"=== {run.bench_id} {json.dumps(run.params)}")
        self._run_started = self.clock()
        self._running_id = run.bench_id
        self._last_progress = ""
        self.progress.setValue(0)
        self.progress.setFormat(f"{run.bench_id}: starting")
        self.run_status.setText(f"Running {run.bench_id}…")
        self.cancel_button.setEnabled(True)
        self._elapsed_timer.start()

    def _reset_live_plot(self, bench_id: str) -> None:
        """A new run starts on an empty plot: no curves, title, axis labels or log scale of the last one."""
        self._live_points.clear()
        self._live_axis = None
        self.plot.clear()
        self.plot.setLogMode(x=False, y=False)
        self.x_axis.integer = False
        bench = self._benchmarks.get(bench_id)
        self.plot.setTitle(f"{bench.title if bench else bench_id} (live)")
        self.plot.setLabel("bottom", "")
        self.plot.setLabel("left", "")
        self.plot.enableAutoRange()

    def _update_elapsed(self) -> None:
        """Timer slot: the elapsed time (and an estimate of what is left) goes on while a run does."""
        if self._worker is None:
            self._elapsed_timer.stop()
            return
        elapsed = self.clock() - self._run_started
        fraction = self.progress.value() / 1000
        eta = f", about {elapsed * (1 - fraction) / fraction:.0f} s left" if fraction > 0.02 else ""
        self.run_status.setText(f"Running {self._running_id}: {elapsed:.0f} s elapsed{eta}")

    def _on_event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        elapsed = self.clock() - self._run_started
        if kind == "progress":
            fraction = max(0.0, min(1.0, float(event.get("fraction") or 0.0)))
            self.progress.setValue(int(fraction * 1000))
            message = str(event.get("message", ""))
            self.progress.setFormat(f"{fraction * 100:.0f}%  {message}")
            self._update_elapsed()
            if message and message != self._last_progress:  # one log line per step, not per tick
                self._last_progress = message
                self.log.appendPlainText(f"[{elapsed:6.1f} s] {message}")
        elif kind == "log":
            self.log.appendPlainText(f"[{elapsed:6.1f} s] {event.get('message', '')}")
        elif kind == "metric":
            self._log_metric(event, elapsed)
            self._add_live_point(event)
        elif kind == "error":
            self.log.appendPlainText(f"error ({event.get('kind', 'exception')}): {event.get('message', '')}")
            for line in event.get("traceback") or []:
                self.log.appendPlainText(str(line).rstrip("\n"))
        elif kind == "finished":
            self.log.appendPlainText(f"[{elapsed:6.1f} s] finished: {event.get('status')}"
                                     + (f": {event['reason']}" if event.get("reason") else ""))

    def _log_metric(self, event: dict[str, Any], elapsed: float) -> None:
        extra = {k: v for k, v in event.items() if k not in ("type", "name", "value", "unit", "t", "series")}
        where = " ".join(f"{k}={v}" for k, v in extra.items())
        value = event.get("value")
        shown = f"{value:.4g}" if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)
        self.log.appendPlainText(f"[{elapsed:6.1f} s] {event.get('name')}: {shown} {event.get('unit', '')}"
                                 + (f"  ({where})" if where else ""))

    def _add_live_point(self, event: dict[str, Any]) -> None:
        value = event.get("value")
        if value is None:
            return
        label = str(event.get("series") or event.get("name"))
        x, x_label, x_log, integer = sweep_x(event, self.clock() - self._run_started)
        if self._live_axis is None:
            self._live_axis = (x_label, x_log, integer)
        elif self._live_axis[0] != x_label:  # metrics of one run on different sweeps: fall back to time
            x, (x_label, x_log, integer) = self.clock() - self._run_started, ("elapsed (s)", False, False)
            self._live_axis = (x_label, x_log, integer)
        xs, ys = self._live_points.setdefault(label, ([], []))
        xs.append(x)
        ys.append(float(value))
        self._draw_curves([(label, xs, ys) for label, (xs, ys) in self._live_points.items()],
                          x_label=x_label, y_label=str(event.get("unit", "")), x_log=x_log, integer_x=integer)

    def _on_done(self, document: dict[str, Any], path: str, save_error: str | None = None) -> None:
        self._elapsed_timer.stop()
        status = document.get("status", "failed")
        figure = figure_text(document)
        self.progress.setValue(1000 if status == "ok" else self.progress.value())
        self.progress.setFormat(f"{status}: {figure}" + (" (not saved)" if save_error else ""))
        elapsed = self.clock() - self._run_started
        text = (f"{document.get('benchmark', {}).get('id', '?')} {status} after {elapsed:.0f} s"
                + (f": {document.get('reason')}" if document.get("reason") else ""))
        if save_error:
            document["_save_error"] = save_error
            text += f" — NOT SAVED: {save_error}. Use “Save as…” below the Results table."
            self.run_status.setStyleSheet(f"color: {ERROR_COLOR}; font-weight: 600;")
            self.log.appendPlainText(f"error: {save_error}")
        else:
            self.run_status.setStyleSheet("")
            text += f" — saved to {path}" if path else ""
            if path:
                document["_path"] = path
        self.run_status.setText(text)
        for warning in document.get("warnings") or []:
            self.log.appendPlainText(f"warning: {warning}")
        if status != "ok" and document.get("log_tail"):
            self.log.appendPlainText("\n".join(document["log_tail"][-20:]))
        self.cancel_button.setEnabled(False)
        self._add_result_row(document, select=True)
        self._fit_result_columns()
        if save_error:
            self.bottom.setCurrentIndex(0)
        elif document.get("series"):
            self.bottom.setCurrentWidget(self.plot)
        if self._show_pipeline(document):
            self.bottom.setCurrentWidget(self.pipeline)
        self.context.show_status(f"{document.get('benchmark', {}).get('id', 'run')}: {status}", 8000)

    # --- results ---------------------------------------------------------------------------------
    def _load_previous_results(self) -> None:
        try:
            from hwbench_gui.engine.results.library import list_results

            documents, errors = list_results(self.context.results_dir)
        except Exception as exc:  # a broken results folder must not cost the tab
            self.log.appendPlainText(f"could not read earlier results: {exc}")
            return
        for error in errors:
            self.log.appendPlainText(f"skipped unreadable result file: {error}")
        for document in sorted(documents, key=lambda d: d.get("started_at") or "")[-200:]:
            self._add_result_row(document)
        self._fit_result_columns()

    def _fit_result_columns(self) -> None:
        """Columns fit their text, but long figure names and devices elide (full text in the tooltip)."""
        self.results.resizeColumnsToContents()
        for name, widest in (("Figure", 220), ("Device", 200), ("Spread (p5–p95)", 190)):
            column = COLUMN[name]
            self.results.setColumnWidth(column, min(self.results.columnWidth(column), widest))

    def _add_result_row(self, document: dict[str, Any], select: bool = False) -> None:
        self._documents.append(document)
        row = self.results.rowCount()
        self.results.insertRow(row)
        figure = figure_text(document)
        measured = (document.get("figure") or {}).get("value") is not None
        spread = spread_text(document.get("stats")) if measured else ""
        status = document.get("status", "?")
        save_error = document.get("_save_error")
        busy = bool(busy_reasons(document))
        warnings = [str(w) for w in document.get("warnings") or []]
        cells = {
            "Started": (document.get("started_at") or "")[:19].replace("T", " "),
            "Benchmark": document.get("benchmark", {}).get("id", "?"),
            "Precision": document.get("precision") or "",
            "Figure": (document.get("figure") or {}).get("name") or "",
            "Value": figure,
            "Spread (p5–p95)": spread,
            "Status": status + (" (not saved)" if save_error else "") + (" · busy machine" if busy else ""),
            "Device": document.get("device") or "",
        }
        for name, text in cells.items():
            item = QTableWidgetItem(str(text))
            if name == "Status" and (save_error or status in _STATUS_COLORS):
                item.setForeground(QBrush(QColor(ERROR_COLOR if save_error else _STATUS_COLORS[status])))
                if save_error:
                    item.setToolTip(save_error)
            if name == "Status" and busy and not save_error:
                item.setForeground(QBrush(QColor(WARNING_COLOR)))
            if name == "Status" and warnings:
                item.setToolTip("\n".join(filter(None, [save_error, *warnings])))
            if name == "Value" and document.get("reason"):
                item.setToolTip(document["reason"])
            if name in ("Figure", "Device", "Spread (p5–p95)"):
                item.setToolTip(str(text))
            self.results.setItem(row, COLUMN[name], item)
        if select:
            self.results.selectRow(row)

    def _on_result_selected(self) -> None:
        rows = {index.row() for index in self.results.selectedIndexes()}
        if len(rows) != 1:
            return
        document = self._documents[rows.pop()]
        self.save_as_button.setEnabled(True)
        self._show_pipeline(document)
        series = document.get("series") or []
        if not series:
            return
        first = series[0]
        xs = [x for s in series for x in s.get("x") or [] if x is not None]
        integer = bool(xs) and all(float(x).is_integer() for x in xs) and not first.get("x_log")
        self._draw_curves([(s["label"], s["x"], s["y"]) for s in series], x_label=first.get("x_label", ""),
                          y_label=first.get("y_label", ""), x_log=bool(first.get("x_log")), integer_x=integer)
        bench = document.get("benchmark", {})
        self.plot.setTitle(bench.get("title") or bench.get("id", ""))

    def selected_document(self) -> dict[str, Any] | None:
        rows = {index.row() for index in self.results.selectedIndexes()}
        return self._documents[rows.pop()] if len(rows) == 1 else None

    def _save_selected_as(self) -> None:
        document = self.selected_document()
        if document is None:
            return
        from hwbench_gui.engine.results.store import result_file_name

        default = Path.home() / result_file_name(document)
        path, _ = QFileDialog.getSaveFileName(self, "Save result as", str(default), "JSON (*.json)")
        if path:
            self.save_document_as(document, path)

    def save_document_as(self, document: dict[str, Any], path: str | Path) -> Path | None:
        """Write ``document`` to ``path`` ("Save as…"); a failure is shown, not raised."""
        from hwbench_gui.engine.results.store import write_result_file

        try:
            written = write_result_file(document, path)
        except (OSError, ValueError) as exc:
            QMessageBox.warning(self, "Save result", f"Could not write {path}:\n{exc}")
            return None
        document.pop("_save_error", None)
        document["_path"] = str(written)
        row = self._documents.index(document)
        status = self.results.item(row, COLUMN["Status"])
        status.setText(document.get("status", "?"))
        status.setToolTip(f"saved to {written}")
        status.setForeground(QBrush(QColor(_STATUS_COLORS.get(document.get("status"), OK_COLOR))))
        self.context.show_status(f"Result saved to {written}", 6000)
        return written

    def _show_pipeline(self, document: dict[str, Any]) -> bool:
        """Show a finished datapath.analyze document in the "Pipeline" tab; False for other documents."""
        if (document.get("benchmark") or {}).get("id") != PIPELINE_BENCH_ID or document.get("status") != "ok":
            return False
        if self.pipeline is None:
            self.pipeline = PipelineView()
            self.bottom.addTab(self.pipeline, "Pipeline")
        self.pipeline.set_document(document)
        return True

    def _draw_curves(self, curves, x_label: str, y_label: str, x_log: bool, integer_x: bool = False) -> None:
        self.plot.clear()
        self.x_axis.integer = integer_x
        self.plot.setLogMode(x=x_log, y=False)
        self.plot.setLabel("bottom", x_label)
        self.plot.setLabel("left", y_label)
        for index, (label, xs, ys) in enumerate(curves):
            color = _PALETTE[index % len(_PALETTE)]
            self.plot.plot(_as_floats(xs), _as_floats(ys), pen=pg.mkPen(color, width=2), symbol="o",
                           symbolSize=5, symbolBrush=color, name=label, connect="finite")

    def _apply_plot_colors(self) -> None:
        palette = QApplication.instance().palette() if QApplication.instance() else self.palette()
        background, foreground = plot_colors(palette)
        self.plot.setBackground(background)
        axis_pen = pg.mkPen(foreground)
        for axis in ("left", "bottom"):
            self.plot.getAxis(axis).setPen(axis_pen)
            self.plot.getAxis(axis).setTextPen(axis_pen)
        self.plot.getPlotItem().titleLabel.setAttr("color", foreground)
        self.plot.getPlotItem().titleLabel.setText(self.plot.getPlotItem().titleLabel.text)

    def shutdown(self) -> None:
        """Drop the waiting runs and cancel the running one; the window waits for its worker."""
        self._elapsed_timer.stop()
        self.queue.remove_listener(self._queue_listener)
        self.queue.clear()
        if self._worker is not None:
            self._worker.abort()
