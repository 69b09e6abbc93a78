"""Benchmarks tab: pick a benchmark, set its parameters, queue runs, watch progress, read results.

The runs wait in the engine's :class:`~hwbench_gui.engine.run.queue.RunQueue`; each is a child
process executed by the queue on a :class:`~hwbench_gui.ui.workers.Worker`. The tab only turns the
queue's changes into widgets. The parameter form, availability and reasons all come from the
engine's declarations.
"""

from __future__ import annotations

import importlib.util
import json
import time
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
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

from hwbench_gui.engine.results.formatting import figure_text, spread_text
from hwbench_gui.engine.run import registry
from hwbench_gui.engine.run.queue import QueueChange, QueuedRun, RunQueue, RunSkipped
from hwbench_gui.engine.run.suites import SuiteRun, suite_names
from hwbench_gui.engine.spec.benchmark import Benchmark, ParamError
from hwbench_gui.ui.context import AppContext
from hwbench_gui.ui.param_form import ParamForm
from hwbench_gui.ui.pipeline_view import BENCH_ID as PIPELINE_BENCH_ID
from hwbench_gui.ui.pipeline_view import PipelineView
from hwbench_gui.ui.theme import ERROR_COLOR, OK_COLOR, WARNING_COLOR, is_dark
from hwbench_gui.ui.workers import Worker, create_worker

_PALETTE = ("#2563eb", "#dc2626", "#16a34a", "#d97706", "#7c3aed", "#0891b2", "#db2777", "#65a30d")
_STATUS_COLORS = {"ok": OK_COLOR, "failed": ERROR_COLOR, "cancelled": WARNING_COLOR}
_RESULT_COLUMNS = ("Started", "Benchmark", "Precision", "Figure", "Spread (p5–p95)", "Status", "Device")


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
        self._run_started = 0.0
        self._live_points: dict[str, tuple[list[float], list[float]]] = {}
        self._documents: list[dict[str, Any]] = []

        splitter = QSplitter(Qt.Horizontal, self)
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["Benchmark", "Status"])
        self.tree.header().setSectionResizeMode(0, QHeaderView.ResizeToContents)
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

        self.queue_list = QListWidget()
        self.queue_list.setMaximumHeight(70)
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
        self.results.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
        self.results.horizontalHeader().setStretchLastSection(True)
        self.results.itemSelectionChanged.connect(self._on_result_selected)
        self.plot = pg.PlotWidget()
        self.plot.showGrid(x=True, y=True, alpha=0.25)
        self.plot.addLegend(offset=(10, 10))
        self._apply_plot_colors()
        self.bottom.addTab(self.results, "Results")
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
            if reason is not None:
                item.setForeground(0, QBrush(self.palette().color(self.palette().ColorGroup.Disabled,
                                                                  self.palette().ColorRole.Text)))
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
        self.title.setText(text)
        self._form = ParamForm(bench.params)
        self.form_area.setWidget(self._form)
        self.run_button.setEnabled(reason is None)
        self.run_button.setToolTip(reason or "Add this benchmark to the queue")

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
        self.queue.add(bench_id, params)
        self._start_next()

    def enqueue_suite(self, name: str) -> int:
        """Queue every run of suite ``name`` that can run here; the log says why others were left out."""
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
            self._on_done(change.run.document, str(change.run.result.path or ""))

    def _on_started(self, run: QueuedRun) -> None:
        self._refresh_queue()
        self._live_points.clear()
        self.plot.clear()
        self.log.appendPlainText(f"=== {run.bench_id} {json.dumps(run.params)}")
        self._run_started = time.monotonic()
        self.progress.setValue(0)
        self.progress.setFormat(f"{run.bench_id}: starting")
        self.run_status.setText(f"Running {run.bench_id}…")
        self.cancel_button.setEnabled(True)

    def _on_event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "progress":
            fraction = max(0.0, min(1.0, float(event.get("fraction") or 0.0)))
            self.progress.setValue(int(fraction * 1000))
            elapsed = time.monotonic() - self._run_started
            eta = f", about {elapsed * (1 - fraction) / fraction:.0f} s left" if fraction > 0.02 else ""
            message = event.get("message", "")
            self.progress.setFormat(f"{fraction * 100:.0f}%  {message}")
            self.run_status.setText(f"{elapsed:.0f} s elapsed{eta}")
        elif kind == "log":
            self.log.appendPlainText(str(event.get("message", "")))
        elif kind == "metric":
            self._add_live_point(event)
        elif kind == "error":
            self.log.appendPlainText(f"error: {event.get('message', '')}")

    def _add_live_point(self, event: dict[str, Any]) -> None:
        value = event.get("value")
        if value is None:
            return
        label = str(event.get("series") or event.get("name"))
        xs, ys = self._live_points.setdefault(label, ([], []))
        x = event.get("x")
        xs.append(float(x) if x is not None else float(len(xs)))
        ys.append(float(value))
        self._draw_curves([(label, xs, ys) for label, (xs, ys) in self._live_points.items()],
                          x_label=event.get("x_label", ""), y_label=event.get("unit", ""),
                          x_log=bool(event.get("x_log", False)))

    def _on_done(self, document: dict[str, Any], path: str) -> None:
        status = document.get("status", "failed")
        figure = figure_text(document)
        self.progress.setValue(1000 if status == "ok" else self.progress.value())
        self.progress.setFormat(f"{status}: {figure}")
        self.run_status.setText(f"{document.get('benchmark', {}).get('id', '?')} {status}"
                                + (f": {document.get('reason')}" if document.get("reason") else "")
                                + (f" — saved to {path}" if path else ""))
        for warning in document.get("warnings") or []:
            self.log.appendPlainText(f"warning: {warning}")
        if status != "ok" and document.get("log_tail"):
            self.log.appendPlainText("\n".join(document["log_tail"][-20:]))
        self.cancel_button.setEnabled(False)
        self._add_result_row(document, select=True)
        if document.get("series"):
            self.bottom.setCurrentWidget(self.plot)
        if self._show_pipeline(document):
            self.bottom.setCurrentWidget(self.pipeline)
        self.context.show_status(f"{document.get('benchmark', {}).get('id', 'run')}: {status}", 8000)

    # --- results ---------------------------------------------------------------------------------
    def _load_previous_results(self) -> None:
        try:
            from hwbench_gui.engine.results.store import list_results

            documents, errors = list_results(self.context.results_dir)
        except Exception as exc:  # a broken results folder must not cost the tab
            self.log.appendPlainText(f"could not read earlier results: {exc}")
            return
        for error in errors:
            self.log.appendPlainText(f"skipped unreadable result file: {error}")
        for document in sorted(documents, key=lambda d: d.get("started_at") or "")[-200:]:
            self._add_result_row(document)

    def _add_result_row(self, document: dict[str, Any], select: bool = False) -> None:
        self._documents.append(document)
        row = self.results.rowCount()
        self.results.insertRow(row)
        figure = figure_text(document)
        measured = (document.get("figure") or {}).get("value") is not None
        spread = spread_text(document.get("stats")) if measured else ""
        status = document.get("status", "?")
        cells = (
            (document.get("started_at") or "")[:19].replace("T", " "),
            document.get("benchmark", {}).get("id", "?"),
            document.get("precision") or "",
            figure,
            spread,
            status,
            document.get("device") or "",
        )
        for column, text in enumerate(cells):
            item = QTableWidgetItem(str(text))
            if column == 5 and status in _STATUS_COLORS:
                item.setForeground(QBrush(QColor(_STATUS_COLORS[status])))
            if column == 3 and document.get("reason"):
                item.setToolTip(document["reason"])
            self.results.setItem(row, column, item)
        if select:
            self.results.selectRow(row)

    def _on_result_selected(self) -> None:
        rows = {index.row() for index in self.results.selectedIndexes()}
        if len(rows) != 1:
            return
        document = self._documents[rows.pop()]
        self._show_pipeline(document)
        series = document.get("series") or []
        if not series:
            return
        first = series[0]
        self._draw_curves([(s["label"], s["x"], s["y"]) for s in series], x_label=first.get("x_label", ""),
                          y_label=first.get("y_label", ""), x_log=bool(first.get("x_log")))
        self.plot.setTitle(document.get("benchmark", {}).get("title", ""))

    def _show_pipeline(self, document: dict[str, Any]) -> bool:
        """Show a finished datapath.analyze document in the "Pipeline" tab; False for other documents."""
        if (document.get("benchmark") or {}).get("id") != PIPELINE_BENCH_ID or document.get("status") != "ok":
            return False
        if self.pipeline is None:
            self.pipeline = PipelineView()
            self.bottom.addTab(self.pipeline, "Pipeline")
        self.pipeline.set_document(document)
        return True

    def _draw_curves(self, curves, x_label: str, y_label: str, x_log: bool) -> None:
        self.plot.clear()
        self.plot.setLogMode(x=x_log, y=False)
        self.plot.setLabel("bottom", x_label)
        self.plot.setLabel("left", y_label)
        for index, (label, xs, ys) in enumerate(curves):
            color = _PALETTE[index % len(_PALETTE)]
            self.plot.plot(_as_floats(xs), _as_floats(ys), pen=pg.mkPen(color, width=2), symbol="o",
                           symbolSize=5, symbolBrush=color, name=label, connect="finite")

    def _apply_plot_colors(self) -> None:
        dark = is_dark(self.palette())
        self.plot.setBackground("#1e1f22" if dark else "w")
        axis_pen = pg.mkPen("#c8c8c8" if dark else "#404040")
        for axis in ("left", "bottom"):
            self.plot.getAxis(axis).setPen(axis_pen)
            self.plot.getAxis(axis).setTextPen(axis_pen)

    def shutdown(self) -> None:
        """Drop the waiting runs and cancel the running one; the window waits for its worker."""
        self.queue.remove_listener(self._queue_listener)
        self.queue.clear()
        if self._worker is not None:
            self._worker.abort()
