"""Workers: a function or generator run off the GUI thread, reported through Qt signals.

Shaped like superqt's ``create_worker`` / ``thread_worker`` (``yielded``, ``returned``, ``errored``,
``finished``; a generator is stopped between yields on abort), written here because superqt runs
its workers on the global ``QThreadPool``: that pool starts no more threads than there are cores
(a two-core machine could not collect the inventory while a benchmark and a demo run), and
``QCoreApplication``'s destructor waits for it without a limit, so one stuck worker hangs the exit.

The work runs on a daemon ``threading.Thread``, not a ``QThread``: a ``QThread`` object still running
when Python or Qt tears it down aborts the process ("QThread: Destroyed while thread is still
running"), while a daemon thread that has not stopped by then is simply abandoned. The thread never
calls into Qt: what it sends goes through the GUI thread's inbox (:mod:`.inbox`, which says why), and
every signal is emitted on the GUI thread, so any slot, lambdas included, may touch widgets.

Cooperative abort: the function gets a :class:`WorkerControl` as its first argument; its
``abort_event`` is what engine code takes as ``cancel=`` or ``stop=``. The window owns one
:class:`WorkerPool` (``AppContext.workers``) and stops every worker in it when it closes.
"""

from __future__ import annotations

import inspect
import logging
import threading
import time
from typing import Any, Callable

import shiboken6
from PySide6.QtCore import QObject, Signal

from hwbench_gui.ui.inbox import gui_inbox

log = logging.getLogger(__name__)


class WorkerControl:
    """What a worker's function gets as its first argument."""

    def __init__(self, post: Callable[[str, Any], None]) -> None:
        #: Set by :meth:`Worker.abort`; hand it to engine code as its cancel/stop event.
        self.abort_event = threading.Event()
        self._post = post

    @property
    def aborted(self) -> bool:
        return self.abort_event.is_set()

    def emit(self, value: Any) -> None:
        """Send ``value`` to the GUI thread as ``yielded`` (callable from any thread, e.g. a callback)."""
        self._post("yielded", value)


class Worker(QObject):
    """Runs ``func(control, *args, **kwargs)`` on its own daemon thread once :meth:`start` is called.

    A generator function's values arrive as ``yielded``; between two values an abort closes the
    generator (its ``finally`` blocks run) and no ``returned`` is sent. A plain function sees the
    abort through ``control.abort_event``. Signals arrive on the GUI thread in the order sent, and
    ``finished`` comes last, whatever happened. Never give a worker a Qt parent: it must outlive
    the widget that started it for as long as its thread runs.
    """

    started = Signal()
    #: A value from ``yield`` or ``control.emit``.
    yielded = Signal(object)
    #: The function's return value.
    returned = Signal(object)
    #: The exception the function raised; its traceback starts at the function.
    errored = Signal(object)
    finished = Signal()

    def __init__(self, func: Callable[..., Any], args: tuple = (), kwargs: dict[str, Any] | None = None,
                 *, name: str = "") -> None:
        super().__init__()
        self._func = func
        self._args = args
        self._kwargs = dict(kwargs or {})
        self.name = name or getattr(func, "__name__", "worker")
        self.control = WorkerControl(self._post)
        self._done = threading.Event()  # set once the thread has sent its last signal
        self._finished_sent = False  # set on the GUI thread just before ``finished`` is emitted
        self._post_lock = threading.Lock()
        self._muted = False
        self._thread: threading.Thread | None = None
        self._inbox = gui_inbox()

    # --- GUI thread -------------------------------------------------------------------------------
    def start(self) -> None:
        if self._thread is not None:
            raise RuntimeError(f"worker {self.name} was already started")
        self._thread = threading.Thread(target=self._run, name=f"hwbench-{self.name}", daemon=True)
        self._inbox.watch(self)
        self._thread.start()

    def abort(self) -> None:
        """Ask the work to stop; it stops at its next check (see the class doc). Never blocks."""
        self.control.abort_event.set()

    @property
    def abort_requested(self) -> bool:
        return self.control.aborted

    def is_running(self) -> bool:
        return self._thread is not None and not self._done.is_set()

    def is_finished(self) -> bool:
        """True once the function has ended (also inside a ``finished`` slot)."""
        return self._finished_sent or self._done.is_set()

    def wait(self, timeout_s: float | None = None) -> bool:
        """Block until the function has ended or ``timeout_s`` passed; True if it has ended."""
        if self._thread is None:
            return True
        return self._done.wait(timeout_s)

    def mute(self) -> None:
        """Send no more signals from now on (those already posted still arrive, unless Qt has destroyed
        this QObject by then, at exit)."""
        with self._post_lock:
            self._muted = True

    def _dispatch(self, kind: str, value: Any) -> None:
        if not shiboken6.isValid(self):  # destroyed (at exit) after this was posted
            return
        signal = {"started": self.started, "yielded": self.yielded, "returned": self.returned,
                  "errored": self.errored, "finished": self.finished}[kind]
        if kind == "finished":
            self._finished_sent = True
        if kind in ("started", "finished"):
            signal.emit()
        else:
            signal.emit(value)

    # --- worker thread ----------------------------------------------------------------------------
    def _post(self, kind: str, value: Any) -> None:
        with self._post_lock:
            if not self._muted:
                self._inbox.post(self._dispatch, kind, value)

    def _run(self) -> None:
        self._post("started", None)
        try:
            result = self._func(self.control, *self._args, **self._kwargs)
            if inspect.isgenerator(result):
                result = self._drain(result)
        except Exception as exc:
            self._post("errored", exc.with_traceback(_without_own_frames(exc.__traceback__)))
        else:
            if result is not _ABORTED:
                self._post("returned", result)
        self._post("finished", None)
        self._done.set()

    def _drain(self, generator) -> Any:
        while True:
            if self.control.aborted:
                generator.close()
                return _ABORTED
            try:
                value = next(generator)
            except StopIteration as stop:
                return stop.value
            self._post("yielded", value)


_ABORTED = object()


def _without_own_frames(tb):
    while tb is not None and tb.tb_frame.f_globals.get("__name__") == __name__:
        tb = tb.tb_next
    return tb


def create_worker(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Worker:
    """A :class:`Worker` for ``func(control, *args, **kwargs)``, not started yet."""
    return Worker(func, args, kwargs)


class WorkerPool:
    """The workers of one window. :meth:`shutdown` is the app's one rule for stopping them.

    Tabs start their workers here; on close a tab only aborts its own (it never waits), and the
    window calls :meth:`shutdown`, which waits for all of them together.
    """

    def __init__(self) -> None:
        self._workers: list[Worker] = []
        self._lock = threading.Lock()
        self._closed = False

    def start(self, worker: Worker) -> Worker:
        """Register ``worker`` and start it; after :meth:`shutdown` it is aborted before it starts."""
        with self._lock:
            self._workers = [w for w in self._workers if not w.is_finished()]
            self._workers.append(worker)
            closed = self._closed
        if closed:
            worker.abort()
            worker.mute()
        worker.start()
        return worker

    def running(self) -> list[Worker]:
        with self._lock:
            return [w for w in self._workers if w.is_running()]

    def shutdown(self, timeout_s: float) -> list[Worker]:
        """Abort every worker and wait up to ``timeout_s`` for all of them together.

        Returns the workers still running then. They are left to end on their own: their threads
        are daemons, so they never hold the process open nor abort it when it exits. Then every
        worker is muted, so none sends a signal into a window that is going away.
        """
        with self._lock:
            self._closed = True
            workers = list(self._workers)
        for worker in workers:
            worker.abort()
        deadline = time.monotonic() + timeout_s
        for worker in workers:
            worker.wait(max(0.0, deadline - time.monotonic()))
        for worker in workers:
            worker.mute()
        left = [w for w in workers if w.is_running()]
        for worker in left:
            log.warning("worker %s did not stop within %.1f s; leaving it to end on its own", worker.name, timeout_s)
        return left
