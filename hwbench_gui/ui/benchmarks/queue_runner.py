"""The run queue seen from Qt: its plain callbacks become signals, and its runs execute on workers.

:class:`~hwbench_gui.engine.run.queue.RunQueue` tells its listeners on the thread that caused a
change, which for a running benchmark is a worker thread. This is the one place that turns those
callbacks into Qt signals delivered on the GUI thread, so every view of the Benchmarks tab
subscribes here and never to the queue itself.
"""

from __future__ import annotations

import shiboken6
from PySide6.QtCore import QObject, Signal

from hwbench_gui.engine.run.queue import QueueChange, QueuedRun, RunQueue
from hwbench_gui.ui.context import AppContext
from hwbench_gui.ui.inbox import gui_inbox
from hwbench_gui.ui.workers import Worker, create_worker


def _execute(control, queue: RunQueue, run: QueuedRun) -> QueuedRun:
    """Worker body: one run of the queue; the worker's abort cancels it."""
    return queue.execute(run, cancel=control.abort_event)


class QueueRunner(QObject):
    """Runs ``context.run_queue`` one run at a time on ``context.workers`` and re-emits its changes."""

    #: The waiting runs changed (queued or removed).
    pending_changed = Signal()
    #: A run was taken from the queue (:class:`QueuedRun`).
    run_started = Signal(object)
    #: One protocol event of the running child (a dict).
    run_event = Signal(object)
    #: A run ended (:class:`QueuedRun`, with its ``result``).
    run_finished = Signal(object)

    def __init__(self, context: AppContext, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.context = context
        self.queue: RunQueue = context.run_queue
        self._worker: Worker | None = None
        # Changes made on a worker thread come through the GUI thread's inbox (a worker thread
        # must not emit signals, see .inbox); those made here (add, clear) arrive at once.
        inbox = gui_inbox()

        def listener(change: QueueChange) -> None:
            if inbox.on_owner_thread():
                self._dispatch(change)
            else:
                inbox.post(self._dispatch, change)

        self._listener = listener
        self.queue.add_listener(self._listener)
        # The queue belongs to the context and may outlive this object: never call into a deleted one.
        queue, listener = self.queue, self._listener
        self.destroyed.connect(lambda *_: queue.remove_listener(listener))

    def _dispatch(self, change: QueueChange) -> None:
        if not shiboken6.isValid(self):  # destroyed after the change was posted
            return
        if change.kind in ("queued", "removed"):
            self.pending_changed.emit()
        elif change.kind == "started":
            self.run_started.emit(change.run)
        elif change.kind == "event":
            self.run_event.emit(change.event)
        elif change.kind == "finished":
            self.run_finished.emit(change.run)

    def is_running(self) -> bool:
        return self._worker is not None

    def start_next(self) -> None:
        """Start the first waiting run unless one is running."""
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

    def cancel(self) -> bool:
        """Cancel the running run; False when none is running."""
        if self._worker is None:
            return False
        self._worker.abort()
        return True

    def _on_worker_finished(self) -> None:
        if self._worker is not None and self._worker.is_finished():
            self._worker = None
            self.start_next()

    def shutdown(self) -> None:
        """Stop listening, drop the waiting runs and cancel the running one; the window waits for its worker."""
        self.queue.remove_listener(self._listener)
        self.queue.clear()
        if self._worker is not None:
            self._worker.abort()
