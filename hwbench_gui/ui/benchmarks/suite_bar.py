"""The suite under way: one progress bar with an ETA over all its runs, and where its report went.

Fed by the tab's :class:`~hwbench_gui.ui.benchmarks.queue_runner.QueueRunner` signals; the counting
is the Qt-free :class:`~hwbench_gui.engine.run.queue.SuiteProgress` the CLI shows too. Hidden while
no suite runs.
"""

from __future__ import annotations

from typing import Any, Callable

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QWidget

from hwbench_gui.engine.run.queue import QueuedRun, SuitePlan, SuiteProgress

#: How often the ETA is redrawn between progress events (it counts down with the clock).
REFRESH_MS = 1000


class SuiteBar(QWidget):
    #: Every run of the suite has ended: (suite name, the documents of its ok runs, those done before included).
    suite_finished = Signal(str, object)

    def __init__(self, clock: Callable[[], float] | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.clock = clock
        self.bar = QProgressBar()
        self.bar.setRange(0, 1000)
        self.bar.setTextVisible(False)
        self.label = QLabel()
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(QLabel("Suite"))
        layout.addWidget(self.bar, 1)
        layout.addWidget(self.label)
        self.name: str | None = None
        self.progress: SuiteProgress | None = None
        self._runs: set[int] = set()  # QueuedRun ids of this suite still to end
        self._started: set[int] = set()
        self._docs: list[dict[str, Any]] = []
        self._cancelled = False
        self._timer = QTimer(self)
        self._timer.setInterval(REFRESH_MS)
        self._timer.timeout.connect(self._redraw)
        self.hide()

    def start(self, plan: SuitePlan, queued: list[QueuedRun]) -> None:
        """Follow ``queued``, the runs queued for ``plan`` (those done before count as done)."""
        kwargs = {"clock": self.clock} if self.clock is not None else {}
        self.name = plan.name
        self.progress = SuiteProgress(len(queued) + len(plan.finished), done_before=len(plan.finished),
                                      estimates=list(plan.estimates[:len(queued)]), **kwargs)
        self._runs = {run.id for run in queued}
        self._started: set[int] = set()
        self._docs = [doc for _, doc in plan.finished]
        self._cancelled = False
        self.show()
        self._timer.start()
        self._redraw()
        if not queued:
            self._end()

    def on_started(self, run: QueuedRun) -> None:
        if self.progress is not None and run.id in self._runs:
            self._started.add(run.id)
            self.progress.start(run.label)
            self._redraw()

    def on_event(self, event: dict[str, Any]) -> None:
        if self.progress is not None and self.progress.current_start is not None and event.get("type") == "progress":
            fraction = event.get("fraction")
            if isinstance(fraction, (int, float)):
                self.progress.update(fraction)
                self._redraw()

    def on_finished(self, run: QueuedRun) -> None:
        if self.progress is None or run.id not in self._runs:
            return
        self._runs.discard(run.id)
        self.progress.finish()
        self._cancelled |= run.status == "cancelled"
        if run.status == "ok" and run.result is not None and getattr(run.result, "path", None) is not None:
            self._docs.append(run.document)
        self._redraw()
        if not self._runs:
            self._end()

    def on_pending_changed(self, pending: list[QueuedRun]) -> None:
        """Waiting runs of the suite that left the queue without starting (it was cleared) will not run."""
        if self.progress is None:
            return
        waiting = {run.id for run in pending}
        dropped = {i for i in self._runs - waiting - self._started}
        if dropped:
            self._runs -= dropped
            self.progress.drop(len(dropped))
            self._redraw()
            if not self._runs:
                self._end()

    def _redraw(self) -> None:
        if self.progress is not None:
            self.bar.setValue(round(1000 * self.progress.fraction()))
            self.label.setText(self.progress.text())

    def _end(self) -> None:
        """The suite's last run has ended, or the rest were dropped: the bar stays, saying how it ended."""
        self._timer.stop()
        if self.progress is not None:
            self.progress.ended = "cancelled" if self._cancelled or self.progress.dropped else "done"
        self._redraw()
        name, docs = self.name, self._docs
        self.name, self.progress = None, None
        self.suite_finished.emit(name, docs)
