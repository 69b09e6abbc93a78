"""The run panel: the chosen benchmark's parameter form, Run / Cancel, the queue, progress with its
estimate of what is left, the run's log and its live plot.

The panel shows the run queue through a :class:`~hwbench_gui.ui.benchmarks.queue_runner.QueueRunner`
and sends it commands (cancel, clear); a new run leaves as :attr:`RunPanel.run_requested`. The log and
the plot are widgets of the panel that the tab places in its lower tabs.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from hwbench_gui.engine.results.formatting import figure_text
from hwbench_gui.engine.run import registry
from hwbench_gui.engine.run.framework_noise import is_framework_noise
from hwbench_gui.engine.run.protocol import ONE_LINE_KINDS
from hwbench_gui.engine.run.queue import QueuedRun
from hwbench_gui.engine.shown_text import escape, shown_path
from hwbench_gui.engine.spec.benchmark import Benchmark, ParamError
from hwbench_gui.ui.benchmarks.run_log import RunLog
from hwbench_gui.ui.benchmarks.plot import CurvePlot
from hwbench_gui.ui.benchmarks.queue_runner import QueueRunner
from hwbench_gui.ui.context import AppContext
from hwbench_gui.ui.elided_label import ElidedLabel
from hwbench_gui.ui.param_form import ParamForm
from hwbench_gui.ui.theme import ERROR_COLOR, WARNING_COLOR
from hwbench_gui.ui.workers import create_worker

log = logging.getLogger(__name__)

#: How often the elapsed time of a run is refreshed.
ELAPSED_TICK_MS = 1000


class RunPanel(QWidget):
    #: Run was pressed with valid parameters: (benchmark id, resolved parameters).
    run_requested = Signal(str, object)

    def __init__(self, runner: QueueRunner, context: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.runner = runner
        self.context = context
        self._current: Benchmark | None = None
        self._form: ParamForm | None = None
        self._folder_probe = None  # the last results-folder probe's worker (kept until it reports)
        self._tf_note_cache: dict[str, str | None] = {}
        #: The clock for a run's elapsed time (tests replace it).
        self.clock = time.monotonic
        self.run_started_at = 0.0
        self._running_id = ""
        self._last_progress = ""
        self.elapsed_timer = QTimer(self)
        self.elapsed_timer.setInterval(ELAPSED_TICK_MS)
        self.elapsed_timer.timeout.connect(self._update_elapsed)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.title = QLabel()
        self.title.setTextFormat(Qt.RichText)
        self.title.setWordWrap(True)
        layout.addWidget(self.title)
        self.form_area = QScrollArea()
        self.form_area.setWidgetResizable(True)
        # The form takes the panel's height that is left (the tab's splitter decides the panel's).
        layout.addWidget(self.form_area, 1)

        buttons = QHBoxLayout()
        self.run_button = QPushButton("Run")
        self.run_button.clicked.connect(self.enqueue_current)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel_current)
        self.clear_queue_button = QPushButton("Clear queue")
        self.clear_queue_button.clicked.connect(self.clear_queue)
        for button in (self.run_button, self.cancel_button, self.clear_queue_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        layout.addLayout(buttons)
        self.folder_warning = QLabel()
        self.folder_warning.setWordWrap(True)
        self.folder_warning.setStyleSheet(f"color: {ERROR_COLOR}; font-weight: 600;")
        self.folder_warning.hide()
        layout.addWidget(self.folder_warning)

        # The waiting runs are listed in the tab's lower pages (``queue_list``), and counted here in one line
        # of constant height: a list that came and went above the results moved the buttons under the
        # cursor (after Clear queue), and its room, kept, would cost the form two rows at 1024x700.
        self.queue_list = QListWidget()
        self.queue_label = QLabel("Queue: empty")
        layout.addWidget(self.queue_label)

        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(True)
        self.progress.setFormat("idle")
        self.progress.setValue(0)
        # One line, elided: a saved result's long path must not widen the panel (and narrow the catalogue).
        self.run_status = ElidedLabel("No run in progress.")
        layout.addWidget(self.progress)
        layout.addWidget(self.run_status)

        self.log_view = RunLog()
        self.log = self.log_view.log
        self.plot = CurvePlot()

        runner.pending_changed.connect(self._refresh_queue)
        runner.run_started.connect(self.on_started)
        runner.run_event.connect(self.on_event)
        runner.run_finished.connect(self.on_finished)

    # --- the chosen benchmark --------------------------------------------------------------------
    def show_benchmark(self, bench: Benchmark | None, reason: str | None) -> None:
        """Show ``bench``'s description and a fresh parameter form; Run only where it can run here."""
        self._current = bench
        if bench is None:
            self.title.setText("")
            self.form_area.takeWidget()
            self.run_button.setEnabled(False)
            return
        text = f"<h3>{bench.title} <small>({bench.id})</small></h3><p>{bench.description}</p>"
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
            self._form = ParamForm(bench.params, unavailable=self._unavailable_choices(bench))
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

    @staticmethod
    def _unavailable_choices(bench: Benchmark) -> dict[str, dict[str, str]]:
        """The frameworks ``bench`` offers that cannot run here (a packaged build leaves TensorFlow out; a
        PyTorch that cannot run torchvision's operators)."""
        limits = registry.framework_choice_limits(bench)
        return {"framework": limits} if any(p.name == "framework" for p in bench.params) else {}

    def _tf_note(self) -> str | None:
        """Why TensorFlow would see no GPU (asked once: it reads installed packages and NVML)."""
        if "tf" not in self._tf_note_cache:
            from hwbench_gui.engine import nvml
            from hwbench_gui.ui.tf_status import tensorflow_gpu_note

            self._tf_note_cache["tf"] = tensorflow_gpu_note(None, nvml.unavailable_reason())
        return self._tf_note_cache["tf"]

    def form(self) -> ParamForm | None:
        return self._form

    # --- commands --------------------------------------------------------------------------------
    def enqueue_current(self) -> None:
        """Ask for a run of the chosen benchmark with the form's values; a bad value is said, not queued."""
        if self._current is None or self._form is None:
            return
        try:
            params = self._current.resolve_params(self._form.values())
        except ParamError as exc:
            QMessageBox.warning(self, "Invalid parameter", str(exc))
            return
        self.run_requested.emit(self._current.id, params)

    def check_results_folder(self) -> str | None:
        """Probe the results folder; show why results will not be saved there (None when they will)."""
        from hwbench_gui.engine.results.store import check_writable

        problem = check_writable(self.context.results_dir)
        self._show_folder_problem(problem)
        return problem

    def check_results_folder_in_background(self) -> None:
        """As :meth:`check_results_folder`, on a worker thread: the probe writes and fsyncs a file,
        100-200 ms on a slow disk that queuing a run spent with the window frozen."""
        from hwbench_gui.engine.results.store import check_writable

        worker = self._folder_probe = create_worker(lambda _control, folder: check_writable(folder),
                                                    self.context.results_dir)
        worker.returned.connect(self._show_folder_problem)
        self.context.workers.start(worker)

    def _show_folder_problem(self, problem: str | None) -> None:
        if problem is None:
            self.folder_warning.hide()
        else:
            self.folder_warning.setText(f"⚠ Results will not be saved: {problem}. The run goes on; its result "
                                        "stays in the Results table, where “Save as…” writes it elsewhere.")
            self.folder_warning.show()
            self.log.appendPlainText(f"warning: {problem}")

    def cancel_current(self) -> None:
        if self.runner.cancel():
            self.run_status.setText("Cancelling…")
            self.cancel_button.setEnabled(False)

    def clear_queue(self) -> None:
        self.runner.queue.clear()

    def _refresh_queue(self) -> None:
        self.queue_list.clear()
        pending = self.runner.queue.pending()
        for run in pending:
            self.queue_list.addItem(f"{run.bench_id}  {json.dumps(run.params)}")
        self.queue_label.setText(f"Queue: {len(pending)} waiting (listed under Queue below)" if pending
                                 else "Queue: empty")

    # --- the running benchmark -------------------------------------------------------------------
    def on_started(self, run: QueuedRun) -> None:
        self._refresh_queue()
        try:
            title = registry.get(run.bench_id).title
        except KeyError:
            title = run.bench_id
        self.plot.start_live(title)
        self.log.appendPlainText(f"=== {run.bench_id} {json.dumps(run.params)}")
        self.run_started_at = self.clock()
        self._running_id = run.bench_id
        self._last_progress = ""
        self.progress.setValue(0)
        self.progress.setFormat(f"{run.bench_id}: starting")
        self.run_status.setText(f"Running {run.bench_id}…")
        self.cancel_button.setEnabled(True)
        self.elapsed_timer.start()

    def _elapsed(self) -> float:
        return self.clock() - self.run_started_at

    def _update_elapsed(self) -> None:
        """Timer slot: the elapsed time goes on while a run does. What is left is the benchmark's own
        estimate, in its progress message, and a suite's in the suite bar: one ETA each, none made up here."""
        if not self.runner.is_running():
            self.elapsed_timer.stop()
            return
        self.run_status.setText(f"Running {self._running_id}: {self._elapsed():.0f} s elapsed")

    def on_event(self, event: dict[str, Any]) -> None:
        """One protocol event of the running child: progress, log, metric, error or finished."""
        kind = event.get("type")
        elapsed = self._elapsed()
        if kind == "progress":
            fraction = max(0.0, min(1.0, float(event.get("fraction") or 0.0)))
            self.progress.setValue(int(fraction * 1000))
            message = str(event.get("message", ""))
            self.progress.setFormat(f"{fraction * 100:.0f}%  {message}")
            self._update_elapsed()
            if message and message != self._last_progress:  # one log line per step, not per tick
                self._last_progress = message
                self.log.appendPlainText(f"[{elapsed:6.1f} s] {message}")
        elif kind == "log" and event.get("stream") and is_framework_noise(str(event.get("message", ""))):
            self.log_view.add_framework_line(f"[{elapsed:6.1f} s] {event.get('message', '')}")
        elif kind == "log":
            self.log.appendPlainText(f"[{elapsed:6.1f} s] {event.get('message', '')}")
        elif kind == "metric":
            self._log_metric(event, elapsed)
            self.plot.add_live_point(event, self._elapsed())
        elif kind == "error" and event.get("kind") in ONE_LINE_KINDS:
            pass  # an expected refusal or out of memory: the finished line says it, once
        elif kind == "error":
            self.log.appendPlainText(f"error ({event.get('kind', 'exception')}): {event.get('message', '')}")
            for line in event.get("traceback") or []:
                self.log.appendPlainText(str(line).rstrip("\n"))
        elif kind == "finished":
            self.log.appendPlainText(f"[{elapsed:6.1f} s] finished: {event.get('status')}"
                                     + (f": {escape(str(event['reason']))}" if event.get("reason") else ""))

    def _log_metric(self, event: dict[str, Any], elapsed: float) -> None:
        extra = {k: v for k, v in event.items() if k not in ("type", "name", "value", "unit", "t", "series")}
        where = " ".join(f"{k}={v}" for k, v in extra.items())
        value = event.get("value")
        shown = f"{value:.4g}" if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)
        self.log.appendPlainText(f"[{elapsed:6.1f} s] {event.get('name')}: {shown} {event.get('unit', '')}"
                                 + (f"  ({where})" if where else ""))

    def on_finished(self, run: QueuedRun) -> None:
        """The run ended: its status, figure and where it was saved (or why it was not)."""
        self.elapsed_timer.stop()
        document = run.document or {}
        # Qt drops a lone surrogate (a name that is not UTF-8): shown as its escape instead
        path = shown_path(run.result.path or "") if run.result is not None else ""
        save_error = getattr(run.result, "save_error", None)
        save_error = escape(save_error) if save_error else save_error
        status = document.get("status", "failed")
        self.progress.setValue(1000 if status == "ok" else self.progress.value())
        self.progress.setFormat(f"{status}: {figure_text(document)}" + (" (not saved)" if save_error else ""))
        text = (f"{document.get('benchmark', {}).get('id', '?')} {status} after {self._elapsed():.0f} s"
                + (f": {escape(str(document.get('reason')))}" if document.get("reason") else ""))
        if save_error:
            text += f" — NOT SAVED: {save_error}. Use “Save as…” below the Results table."
            self.run_status.setStyleSheet(f"color: {ERROR_COLOR}; font-weight: 600;")
            self.log.appendPlainText(f"error: {save_error}")
        else:
            self.run_status.setStyleSheet("")
            text += f" — saved to {path}" if path else ""
        self.run_status.setText(text)
        for warning in document.get("warnings") or []:
            self.log.appendPlainText(f"warning: {warning}")
        if status != "ok" and document.get("log_tail") and document.get("error_kind") not in ONE_LINE_KINDS:
            self.log.appendPlainText("\n".join(document["log_tail"][-20:]))
        self.cancel_button.setEnabled(False)

    def shutdown(self) -> None:
        self.elapsed_timer.stop()
