"""Benchmarks tab: pick a benchmark, set its parameters, queue runs, watch progress, read results.

The tab composes three views over one model, the context's run queue
(:class:`~hwbench_gui.engine.run.queue.RunQueue`), seen from Qt through a
:class:`~hwbench_gui.ui.benchmarks.queue_runner.QueueRunner`: the catalogue (what can run here and
the presets), the run panel (form, buttons, progress, log, live plot) and the results table. Each
run is a child process executed by the queue on a :class:`~hwbench_gui.ui.workers.Worker`.
"""

from __future__ import annotations

from typing import Any, Callable

from PySide6.QtCore import QByteArray, Qt
from PySide6.QtWidgets import QMessageBox, QSplitter, QTabWidget, QVBoxLayout, QWidget

from hwbench_gui.engine.run.queue import QueuedRun, RunSkipped, plan_suite
from hwbench_gui.ui.benchmarks.catalogue import Catalogue
from hwbench_gui.ui.benchmarks.family_page import FamilyPages
from hwbench_gui.ui.benchmarks.queue_runner import QueueRunner
from hwbench_gui.ui.benchmarks.results_table import ResultsTable
from hwbench_gui.ui.benchmarks.run_panel import RunPanel
from hwbench_gui.ui.benchmarks.suite_bar import SuiteBar
from hwbench_gui.ui.context import AppContext
from hwbench_gui.ui.param_form import ParamForm
from hwbench_gui.ui.pipeline_view import BENCH_ID as PIPELINE_BENCH_ID
from hwbench_gui.ui.pipeline_view import PipelineView


#: Narrowest the catalogue gets, so that the benchmarks' names stay readable on a 1024-pixel screen.
CATALOGUE_MIN_WIDTH_PX = 300
#: Lowest the lower tabs (results, plot, log) get, so that a live plot stays a plot.
LOWER_MIN_HEIGHT_PX = 200
#: Qt's QWIDGETSIZE_MAX: no maximum height.
UNLIMITED_PX = (1 << 24) - 1
#: Settings keys of the two splitters' remembered sizes.
SPLITTER_KEYS = ("benchmarks/splitter", "benchmarks/run_splitter")
#: A suite expected to take longer than this here (or whose time is unknown) is queued only once the user
#: has read how long and agreed.
LONG_SUITE_S = 20 * 60


class BenchmarksTab(QWidget):
    def __init__(self, context: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.context = context
        self.queue = context.run_queue
        self.runner = QueueRunner(context, self)
        self.catalogue = Catalogue()
        self.run_panel = RunPanel(self.runner, context)
        self.results_table = ResultsTable(self.runner, context)
        self.pipeline: PipelineView | None = None  # the "Pipeline" tab, added with the first datapath result
        self._pipeline_pending: dict[str, Any] | None = None  # a finished run's analysis, shown once selected
        self.suite_bar = SuiteBar()

        # The views' widgets and hooks under the names scripts and tests have always used.
        self.tree = self.catalogue.tree
        self.suite_combo, self.suite_button = self.catalogue.suite_combo, self.catalogue.suite_button
        panel = self.run_panel
        self.title, self.form_area, self.queue_list = panel.title, panel.form_area, panel.queue_list
        self.run_button, self.cancel_button = panel.run_button, panel.cancel_button
        self.clear_queue_button, self.folder_warning = panel.clear_queue_button, panel.folder_warning
        self.progress, self.run_status, self.log = panel.progress, panel.run_status, panel.log
        self.plot, self.x_axis = panel.plot, panel.plot.x_axis
        self._elapsed_timer = panel.elapsed_timer
        self._on_started, self._on_event, self._clear_queue = panel.on_started, panel.on_event, panel.clear_queue
        self.results, self.save_as_button = self.results_table.table, self.results_table.save_as_button
        self._add_result_row = self.results_table.add_document
        self._iter_items = self.catalogue.iter_items

        self.bottom = QTabWidget()
        # each registered benchmark family's page (Health, Language model, Training, ...), added when first needed
        self.family_pages = FamilyPages(self.bottom, self.results_table.documents)
        self.bottom.addTab(self.results_table, "Results")
        self.bottom.setTabToolTip(0, "Select a result to draw it; double-click it (or press Enter) to open its page")
        self.bottom.addTab(self.plot, "Plot")
        self.bottom.addTab(panel.log_view, "Log")
        self.bottom.addTab(panel.queue_list, "Queue")
        self.bottom.setMinimumHeight(LOWER_MIN_HEIGHT_PX)
        self.catalogue.setMinimumWidth(CATALOGUE_MIN_WIDTH_PX)
        # The form above, the results, plot and log below; both grow with the window, and the user's
        # split is kept (settings) so that a window resized or reopened keeps its shape.
        self.run_splitter = QSplitter(Qt.Vertical)
        self.run_splitter.addWidget(self.run_panel)
        self.run_splitter.addWidget(self.bottom)
        # The split never moves by itself: a page that opens below reads in the lower share (scrolling where
        # it must) and the form keeps its rows.
        self.run_splitter.setStretchFactor(0, 3)
        self.run_splitter.setStretchFactor(1, 2)
        self.run_splitter.setSizes([600, 400])
        self.splitter = QSplitter(Qt.Horizontal, self)
        self.splitter.addWidget(self.catalogue)
        self.splitter.addWidget(self.run_splitter)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setSizes([420, 860])
        for splitter in (self.splitter, self.run_splitter):
            splitter.setChildrenCollapsible(False)
        self._restore_splitters()
        for splitter in (self.splitter, self.run_splitter):
            splitter.splitterMoved.connect(self._save_splitters)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.suite_bar)
        layout.addWidget(self.splitter)

        self.catalogue.selected.connect(self.run_panel.show_benchmark)
        self.catalogue.selected.connect(self._fit_form)
        self.catalogue.suite_requested.connect(lambda name: self.enqueue_suite(name, confirm=self._confirm_long_suite))
        self.catalogue.suite_resume_requested.connect(
            lambda name: self.enqueue_suite(name, resume=True, confirm=self._confirm_long_suite))
        self.runner.run_started.connect(self.suite_bar.on_started)
        self.runner.run_event.connect(self.suite_bar.on_event)
        self.runner.pending_changed.connect(lambda: self.suite_bar.on_pending_changed(self.queue.pending()))
        self.suite_bar.suite_finished.connect(self._on_suite_finished)
        self.run_panel.run_requested.connect(lambda bench_id, params: self.enqueue(bench_id, params))
        self.results_table.document_selected.connect(self._on_document_selected)
        self.results_table.document_opened.connect(self.open_document)
        self.runner.run_started.connect(self._on_run_started)
        self.runner.run_event.connect(self._on_run_event)
        self.runner.run_finished.connect(self._on_run_finished)  # after the views: their rows exist by then
        self.runner.run_finished.connect(self.suite_bar.on_finished)
        self.catalogue.selected.connect(lambda bench, _reason: self.family_pages.on_chosen(getattr(bench, "id", None)))
        self.catalogue.select_first_available()
        self.results_table.saved_loaded.connect(self._log_lines)
        self.results_table.arrivals_added.connect(self._log_lines)
        self.results_table.load_saved()

    def _fit_form(self, *_selected) -> None:
        """The form above is never taller than its rows (and the run's controls) need: the height it would leave
        empty goes to the results and pages below. It follows the chosen benchmark's form, never a page that
        opens, so reading a result does not move it."""
        panel, area = self.run_panel, self.run_panel.form_area
        form = area.widget()
        if form is None:
            panel.setMaximumHeight(UNLIMITED_PX)
            return
        controls = panel.sizeHint().height() - area.sizeHint().height()  # title, buttons, progress, status
        panel.setMaximumHeight(controls + form.sizeHint().height() + 2 * area.frameWidth())

    def _log_lines(self, lines: list[str]) -> None:
        for line in lines:
            self.log.appendPlainText(line)

    def _restore_splitters(self) -> None:
        for splitter, key in zip((self.splitter, self.run_splitter), SPLITTER_KEYS):
            state = self.context.settings.value(key)
            if isinstance(state, QByteArray):
                splitter.restoreState(state)

    def _save_splitters(self, *_moved) -> None:
        for splitter, key in zip((self.splitter, self.run_splitter), SPLITTER_KEYS):
            self.context.settings.setValue(key, splitter.saveState())

    @property
    def clock(self) -> Callable[[], float]:
        """The clock for a run's elapsed time (tests replace it)."""
        return self.run_panel.clock

    @clock.setter
    def clock(self, clock: Callable[[], float]) -> None:
        self.run_panel.clock = clock

    @property
    def _run_started(self) -> float:
        return self.run_panel.run_started_at

    def select(self, bench_id: str) -> None:
        """Select a benchmark by id (for scripts and tests)."""
        self.catalogue.select(bench_id)

    def form(self) -> ParamForm | None:
        return self.run_panel.form()

    # --- commands to the queue -------------------------------------------------------------------
    def enqueue_current(self) -> None:
        self.run_panel.enqueue_current()

    def enqueue(self, bench_id: str, params: dict[str, Any]) -> None:
        self.run_panel.check_results_folder_in_background()
        self.queue.add(bench_id, params)
        self._start_next()

    def review_run(self, bench_id: str, params: dict[str, Any]) -> None:
        """Select ``bench_id`` and fill its form with ``params`` (Reports → Run like this here): the user
        reviews them and presses Run; nothing is queued here. ``KeyError`` for a benchmark not listed."""
        self.select(bench_id)
        form = self.form()
        if form is not None:
            form.set_values(params)
        self.run_button.setFocus()
        self.context.show_status(f"{bench_id}: the form holds the reference's parameters; review them, then Run",
                                 8000)

    def enqueue_suite(self, name: str, resume: bool = False,
                      confirm: Callable[[str], bool] | None = None) -> int:
        """Queue every run of suite ``name`` that can run here (with ``resume``, those without an ok result
        from this machine in the results folder); the log lists once why the others were left out.
        ``confirm(text)`` is asked first when the suite will take long here or its time is unknown
        (:data:`LONG_SUITE_S`); it says how long, and nothing is queued unless it returns True."""
        self.run_panel.check_results_folder_in_background()
        plan = plan_suite(name, results_dir=self.context.results_dir, resume=resume)
        runs, estimates = [], []
        for run, estimate in zip(plan.to_run, plan.estimates):
            try:
                runs.append((run, self.catalogue.prepare_suite_run(run)))
                estimates.append(estimate)
            except RunSkipped as exc:
                plan.unavailable.append((run, str(exc)))
        plan.to_run, plan.estimates = [run for run, _ in runs], estimates
        known_s, unknown = plan.expected_s()
        if confirm is not None and plan.to_run and (known_s > LONG_SUITE_S or unknown):
            if not confirm(f"{plan.summary()}.\n\nQueue it?"):
                self.context.show_status(f"suite {name}: not queued", 5000)
                return 0
        queued = [self.queue.add(run.bench_id, params, run.label, suite_run=run) for run, params in runs]
        by_reason: dict[str, list[str]] = {}
        for run, reason in plan.unavailable:
            by_reason.setdefault(reason, []).append(run.label)
        self.log.appendPlainText(plan.summary())
        for reason, labels in by_reason.items():
            self.log.appendPlainText(f"  skipped, {reason}: {', '.join(labels)}")
        for run, doc in plan.finished:
            self.log.appendPlainText(f"  done before: {run.label} ({doc.get('_path')})")
        self.context.show_status(plan.summary(), 8000)
        self.suite_bar.start(plan, queued)
        self._start_next()
        return len(queued)

    def _confirm_long_suite(self, text: str) -> bool:
        answer = QMessageBox.question(self, "Queue suite", text, QMessageBox.Yes | QMessageBox.No, QMessageBox.Yes)
        return answer == QMessageBox.Yes

    def _on_suite_finished(self, name: str, documents: list[dict[str, Any]]) -> None:
        """The suite's report into the results folder (as ``hwbench run --suite`` writes it)."""
        from hwbench_gui.engine.reports.suite_report import write_suite_report

        if not documents:
            self.log.appendPlainText(f"suite {name}: no result to report on")
            return
        try:
            paths, kind = write_suite_report(name, documents, self.context.results_dir)
        except (OSError, ValueError) as exc:
            self.log.appendPlainText(f"suite {name}: the report could not be written: {exc}")
            return
        where = ", ".join(map(str, paths))
        self.log.appendPlainText(f"suite {name}: {kind}: {where}")
        self.context.show_status(f"suite {name} done: {kind} in {where}", 15000)

    def check_results_folder(self) -> str | None:
        """Probe the results folder; show why results will not be saved there (None when they will)."""
        return self.run_panel.check_results_folder()

    def _start_next(self) -> None:
        self.runner.start_next()

    def cancel_current(self) -> None:
        self.run_panel.cancel_current()

    def is_running(self) -> bool:
        return self.runner.is_running()

    # --- results ---------------------------------------------------------------------------------
    def selected_document(self) -> dict[str, Any] | None:
        return self.results_table.selected_document()

    def save_document_as(self, document: dict[str, Any], path):
        """Write ``document`` to ``path`` ("Save as…"); a failure is shown, not raised."""
        return self.results_table.save_document_as(document, path)

    def _on_document_selected(self, document: dict[str, Any]) -> None:
        if self._show_pipeline(document) and document is self._pipeline_pending:
            self.bottom.setCurrentWidget(self.pipeline)
        self._pipeline_pending = None
        self.plot.show_document(document)
        self.family_pages.on_selected(document)

    def family_page(self, name: str) -> QWidget | None:
        """The page of the family registered as ``name`` (``"health.burnin"``, ``"llm.infer"``, ...), None until
        it is added."""
        return self.family_pages.page(name)

    def _on_run_started(self, run: QueuedRun) -> None:
        """A run of a family with a live page (the burn-in) brings it forward: progress and time left now, the
        verdict when it ends."""
        self.family_pages.on_run_started(run.bench_id, run)

    def _on_run_event(self, event: dict[str, Any]) -> None:
        self.family_pages.on_run_event(event)

    def _on_run_finished(self, run: QueuedRun) -> None:
        """Bring forward what matters about the run that ended: an unsaved result, its curves, its pipeline
        (the results table selects the run's row a turn or two later, which draws them)."""
        document = run.document or {}
        if getattr(run.result, "save_error", None):
            self.bottom.setCurrentIndex(0)
        elif not self.family_pages.show_live(document) and document.get("series"):
            self.bottom.setCurrentWidget(self.plot)
        self._pipeline_pending = document if _has_pipeline(document) else None
        self.family_pages.on_run_finished(run.document)
        self.context.show_status(f"{document.get('benchmark', {}).get('id', 'run')}: "
                                 f"{document.get('status', 'failed')}", 8000)

    def reading_pages(self) -> tuple[QWidget, ...]:
        """The lower pages that are read, not glanced at (the Pipeline page and the families' pages, once added)."""
        return ((self.pipeline,) if self.pipeline is not None else ()) + self.family_pages.all()

    def page_of(self, document: dict[str, Any]) -> QWidget | None:
        """The reading page that shows ``document`` (None for a result without one)."""
        if _has_pipeline(document):
            return self.pipeline
        return self.family_pages.page_of(document)[1]

    def open_document(self, document: dict[str, Any]) -> None:
        """A result opened (double-click or Enter on its row): its page comes forward; the split stays as it is."""
        page = self.page_of(document)
        self.bottom.setCurrentWidget(page if page is not None else self.plot)

    def show_pipeline(self, document: dict[str, Any]) -> bool:
        """Show a finished datapath.analyze document in the "Pipeline" tab and bring it forward (for
        scripts); False for other documents."""
        if not self._show_pipeline(document):
            return False
        self.bottom.setCurrentWidget(self.pipeline)
        return True

    def _show_pipeline(self, document: dict[str, Any]) -> bool:
        """Show a finished datapath.analyze document in the "Pipeline" tab; False for other documents."""
        if not _has_pipeline(document):
            return False
        if self.pipeline is None:
            self.pipeline = PipelineView()
            self.bottom.addTab(self.pipeline, "Pipeline")
        self.pipeline.set_document(document)
        return True

    def shutdown(self) -> None:
        """Drop the waiting runs and cancel the running one; the window waits for its worker."""
        self._save_splitters()
        self.context.stop_watching_results()
        self.run_panel.shutdown()
        self.runner.shutdown()


def _has_pipeline(document: dict[str, Any]) -> bool:
    """Whether ``document`` is a finished data-path analysis (it has a pipeline to show)."""
    return (document.get("benchmark") or {}).get("id") == PIPELINE_BENCH_ID and document.get("status") == "ok"

