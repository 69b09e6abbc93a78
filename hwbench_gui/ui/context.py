"""State the tabs share, owned by the main window and handed to every tab.

Tabs get the context in ``__init__``; they never reach into each other. The run queue lives here, so
what is queued and running is one model that every view shows and sends commands to. Every background
worker a tab starts goes through ``context.workers``; the tab's ``shutdown()`` only aborts its own workers
and stops its timers, and the window then waits for all workers at once (``WorkerPool.shutdown``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from PySide6.QtCore import QSettings

from hwbench_gui.engine.run.queue import RunQueue
from hwbench_gui.ui.workers import WorkerPool


@dataclass
class AppContext:
    settings: QSettings
    results_dir: Path
    #: The telemetry sampler shared by the Monitor tab and the benchmark runs (None until started).
    sampler: Any = None
    #: Shows a message in the window's status bar for ``timeout_ms`` (0 = until replaced).
    show_status: Callable[[str, int], None] = lambda message, timeout_ms=0: None
    #: Queues a run in the Benchmarks tab and shows it: ``request_run(bench_id, params)``. Set by the
    #: window; None where there is no window (a tab built alone).
    request_run: Callable[[str, dict], None] | None = None
    #: Every worker thread of the window; the window stops them all in ``closeEvent``.
    workers: WorkerPool = field(default_factory=WorkerPool)
    extras: dict[str, Any] = field(default_factory=dict)
    #: The benchmark runs waiting and running (Qt-free); saves into ``results_dir`` unless given.
    run_queue: RunQueue | None = None
    _results_watch: Any = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.run_queue is None:
            self.run_queue = RunQueue(results_dir=self.results_dir)

    def results_watch(self, owner: Any = None) -> Any:
        """The :class:`~hwbench_gui.ui.results_watch.ResultsWatch` of ``results_dir`` (documents other processes
        write there while the window is open), started by the first view that asks. It lives as long as that
        view (``owner``, a QObject): its timer must not outlive the views it feeds."""
        import shiboken6

        if self._results_watch is None or not shiboken6.isValid(self._results_watch):
            from hwbench_gui.ui.results_watch import ResultsWatch

            self._results_watch = ResultsWatch(self.results_dir, self.workers, owner)
        return self._results_watch

    def stop_watching_results(self) -> None:
        import shiboken6

        if self._results_watch is not None and shiboken6.isValid(self._results_watch):
            self._results_watch.stop()
