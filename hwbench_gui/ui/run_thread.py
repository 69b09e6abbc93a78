"""The QThread that watches one benchmark child process and turns its events into Qt signals.

The child does the work; this thread only reads its JSON lines (through the engine's runner,
which polls with timeouts), so cancel is seen within a poll and the GUI thread never blocks.
"""

from __future__ import annotations

import threading
from typing import Any

from PySide6.QtCore import QThread, Signal


class RunThread(QThread):
    #: One protocol event from the child (progress, log, metric, result, error), as a dict.
    event = Signal(dict)
    #: The finished run: (result document, path or "") — always emitted, also for failures.
    done = Signal(dict, str)

    def __init__(self, bench_id: str, params: dict[str, Any], *, results_dir, sampler=None,
                 timeout_s: float | None = None, parent=None) -> None:
        super().__init__(parent)
        self.bench_id = bench_id
        self.params = params
        self.results_dir = results_dir
        self.sampler = sampler
        self.timeout_s = timeout_s
        self._cancel = threading.Event()

    def cancel(self) -> None:
        self._cancel.set()

    def run(self) -> None:  # runs on the worker thread
        from hwbench_gui.engine.bench.runner import run_benchmark

        try:
            result = run_benchmark(self.bench_id, self.params, on_event=self.event.emit, cancel=self._cancel,
                                   timeout_s=self.timeout_s, results_dir=self.results_dir, sampler=self.sampler)
        except Exception as exc:  # the runner turns child failures into documents; this is the runner itself
            self.done.emit({"status": "failed", "reason": f"{type(exc).__name__}: {exc}",
                            "benchmark": {"id": self.bench_id}, "params": self.params}, "")
            return
        self.done.emit(result.document, str(result.path or ""))
