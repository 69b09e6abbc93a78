"""The results folder watched while the window is open: documents another process writes there (``hwbench run``
in a terminal) appear in the tabs without a restart.

A file-system watch on the folder says when to look, a slow timer looks anyway (a watch can be missing or
silent, on a network folder for one); a look only lists names, sizes and change times
(:class:`~hwbench_gui.engine.results.arrivals.Arrivals`), and new files are loaded on a worker. The context
owns one; the Benchmarks and Reports tabs subscribe to :attr:`ResultsWatch.arrived`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QFileSystemWatcher, QObject, QTimer, Signal

from hwbench_gui.engine.results.arrivals import Arrivals
from hwbench_gui.engine.results.library import errors_text
from hwbench_gui.ui.workers import WorkerPool, create_worker

#: A look at the folder even when the watch said nothing.
RESCAN_MS = 3000
#: After the watch fires, wait this long for the writer's rename and its neighbours to land.
SETTLE_MS = 250


def _load(_control, arrivals: Arrivals, paths: list[Path]) -> tuple[list[dict[str, Any]], list[str]]:
    loaded = arrivals.load(paths)
    return loaded.docs, [f"skipped unreadable result file: {error}" for error in errors_text(loaded.errors)]


class ResultsWatch(QObject):
    #: New or rewritten documents of the folder (a list of dicts, each with ``_path``) and, in words, the
    #: files that could not be read (a list of str).
    arrived = Signal(list, list)

    def __init__(self, folder: Path, workers: WorkerPool, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.folder = Path(folder)
        self.workers = workers
        self.arrivals = Arrivals(self.folder)
        self._loading = False
        self._again = False
        self._stopped = False
        self.watcher = QFileSystemWatcher(self)
        if self.folder.is_dir():
            self.watcher.addPath(str(self.folder))
        self.watcher.directoryChanged.connect(lambda _path: self._settle.start())
        self._settle = QTimer(self, singleShot=True, interval=SETTLE_MS)
        self._settle.timeout.connect(self.look)
        self.timer = QTimer(self, interval=RESCAN_MS)
        self.timer.timeout.connect(self.look)
        self.timer.start()

    def look(self) -> None:
        """List the folder now; load what is new on a worker (one load at a time, the next look follows it)."""
        if self._stopped:
            return
        if self._loading:
            self._again = True
            return
        if not self.watcher.directories() and self.folder.is_dir():  # created since the window opened
            self.watcher.addPath(str(self.folder))
        paths = self.arrivals.changed()
        if not paths:
            return
        self._loading = True
        worker = create_worker(_load, self.arrivals, paths)
        worker.returned.connect(self._loaded)
        worker.errored.connect(lambda _exc: self._done())
        self.workers.start(worker)

    def _loaded(self, found: tuple[list[dict[str, Any]], list[str]]) -> None:
        docs, problems = found
        self._done()
        if (docs or problems) and not self._stopped:
            self.arrived.emit(docs, problems)

    def _done(self) -> None:
        self._loading = False
        if self._again:
            self._again = False
            self.look()

    def stop(self) -> None:
        """No more looks (the window is closing: its workers are about to be waited for)."""
        if self._stopped:
            return
        self._stopped = True
        self.timer.stop()
        self._settle.stop()
        self.watcher.directoryChanged.disconnect()
        if self.watcher.directories():
            self.watcher.removePaths(self.watcher.directories())
