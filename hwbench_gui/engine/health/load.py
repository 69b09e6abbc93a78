"""What every burn-in load shares: a thread that runs windows of checked work until told to stop, and keeps
its rate per window, the wrong results it found and the error that stopped it."""

from __future__ import annotations

import threading
import time
import traceback
from typing import Any, Callable

#: Target length of one load window (a rate point; the stop flag is looked at between windows).
WINDOW_S = 0.5


class Load:
    """Runs :meth:`window` (returns the work done, in the rate's unit times seconds) until :meth:`stop`.

    ``t0`` is the monotonic time the burn-in's load began; rates are stored as ``(t, rate)`` with ``t``
    the window's middle in seconds since ``t0``. Subclasses append to ``check_errors`` as
    ``{"t", "what", "text"}`` and may set ``load_error`` (an exception in the window does it too).
    """

    name = "load"
    unit = ""

    def __init__(self, t0: float, *, check: bool = True, clock: Callable[[], float] = time.monotonic):
        self.t0 = t0
        self.check = check
        self.clock = clock
        self.rate: list[tuple[float, float]] = []
        self.check_errors: list[dict[str, Any]] = []
        self.checked = 0  # results compared
        self.load_error: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def now(self) -> float:
        return self.clock() - self.t0

    def prepare(self) -> None:
        """Allocate and check the reference before the clock starts (raises on failure)."""

    def window(self) -> float:
        raise NotImplementedError

    def finish(self) -> float:
        """After the last window: collect work still in flight (checked like the rest); returns its work."""
        return 0.0

    def release(self) -> None:
        """Free what :meth:`prepare` allocated."""

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"hwbench-burnin-{self.name}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def join(self, timeout_s: float) -> bool:
        if self._thread is not None:
            self._thread.join(timeout_s)
            return not self._thread.is_alive()
        return True

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                self._timed(self.window)
            self._timed(self.finish)
        except Exception as exc:  # a CUDA error or an allocation failure is the load's verdict, not a crash
            last = traceback.format_exception_only(type(exc), exc)[-1].strip()
            self.load_error = f"{last} (at {self.now():.1f} s)"
        finally:
            self.release()

    def _timed(self, step: Callable[[], float]) -> None:
        start = self.now()
        work = step()
        end = self.now()
        if end > start and work > 0:
            self.rate.append(((start + end) / 2, work / (end - start)))

    def error(self, what: str, text: str) -> None:
        self.check_errors.append({"t": round(self.now(), 3), "what": what, "text": text})
