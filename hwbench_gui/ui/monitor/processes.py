"""The Monitor's process tables: GPU compute processes (from the sampler) beside the busiest host
processes (:mod:`hwbench_gui.engine.telemetry.processes`)."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from hwbench_gui.engine.telemetry.processes import TopProcesses
from hwbench_gui.ui.monitor.curves import GIB
from hwbench_gui.ui.workers import Worker, WorkerPool, create_worker

#: How often the tab refreshes the host process table.
PROCESS_REFRESH_S = 2.0
#: Host processes listed.
TOP_PROCESSES = 8
#: How long after it is asked for a host process scan starts (see ``update_host_processes``).
SCAN_DELAY_MS = 150


def _scan_processes(_control, top: TopProcesses, limit: int) -> list:
    return top.sample(limit)


class ProcessTables(QSplitter):
    """GPU processes on the left (hidden without GPU telemetry), host processes on the right."""

    def __init__(self, workers: WorkerPool | None = None, parent: QWidget | None = None) -> None:
        super().__init__(Qt.Orientation.Horizontal, parent)
        #: Where the host process scans run (None: on the calling thread).
        self._workers = workers
        self._scan: Worker | None = None
        row_height = self.fontMetrics().height() + 6
        self.gpu_table = QTableWidget(0, 4)
        self.gpu_table.setHorizontalHeaderLabels(["GPU", "PID", "Process", "GPU memory (GiB)"])
        self.gpu_table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.gpu_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.gpu_table.verticalHeader().setVisible(False)
        self.gpu_table.verticalHeader().setDefaultSectionSize(row_height)
        self.gpu_note = QLabel()
        self.gpu_box = QWidget()
        gl = QVBoxLayout(self.gpu_box)
        gl.setContentsMargins(0, 0, 0, 0)
        gl.addWidget(QLabel("GPU processes (compute)"))
        gl.addWidget(self.gpu_table)
        gl.addWidget(self.gpu_note)

        self._top = TopProcesses()
        self.host_table = QTableWidget(0, 5)
        self.host_table.setHorizontalHeaderLabels(["PID", "Process", "User", "CPU %", "Memory (GiB)"])
        self.host_table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.host_table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.host_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.host_table.verticalHeader().setVisible(False)
        self.host_table.verticalHeader().setDefaultSectionSize(row_height)
        self.host_table.setToolTip(f"The busiest host processes, refreshed every {PROCESS_REFRESH_S:g} s; "
                                   "CPU % is of one core, as top shows it")
        host_box = QWidget()
        hl = QVBoxLayout(host_box)
        hl.setContentsMargins(0, 0, 0, 0)
        hl.addWidget(QLabel("Host processes (busiest first)"))
        hl.addWidget(self.host_table)
        self.addWidget(self.gpu_box)
        self.addWidget(host_box)

    def show_gpu_processes(self, rows: list[dict], note: str | None = None) -> None:
        """Fill the GPU table from the sampler's ``gpu_processes()``; ``note`` says why it is empty."""
        self.gpu_table.setRowCount(len(rows))
        for r, proc in enumerate(rows):
            used = proc.get("used_bytes")
            cells = [str(proc["gpu"]), str(proc["pid"]), proc.get("name") or "(not visible)",
                     "N/A" if used is None else f"{used / GIB:.2f}"]
            for c, text in enumerate(cells):
                self.gpu_table.setItem(r, c, QTableWidgetItem(text))
        if note is None:
            note = "" if rows else "No compute process on any GPU."
        self.gpu_note.setText(note)

    def update_host_processes(self) -> None:
        """Refill the host process table from one engine sample, taken on a worker thread when the
        tables have a pool: reading every process takes tens of milliseconds on a busy machine, a
        stall the window would show. One scan at a time; a call during a scan is dropped.

        The scan starts :data:`SCAN_DELAY_MS` after the call: the Monitor asks for it as it redraws,
        and a scan running beside that repaint (its Python holds the GIL, and while a benchmark runs it
        wants the one core left to the window too) added its 20 ms to the repaint's stall."""
        if self._workers is None:
            self._fill_host_table(self._top.sample(TOP_PROCESSES))
            return
        if self._scan is not None:
            return
        scan = self._scan = create_worker(_scan_processes, self._top, TOP_PROCESSES)
        scan.returned.connect(self._fill_host_table)
        scan.finished.connect(self._scan_finished)
        QTimer.singleShot(SCAN_DELAY_MS, self, lambda: self._workers.start(scan))

    def _scan_finished(self) -> None:
        self._scan = None

    def _fill_host_table(self, rows: list) -> None:
        self.host_table.setRowCount(len(rows))
        for r, proc in enumerate(rows):
            cells = [str(proc.pid), proc.name, proc.user or "", f"{proc.cpu_percent:.0f}",
                     "" if proc.rss_bytes is None else f"{proc.rss_bytes / GIB:.2f}"]
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if c in (0, 3, 4):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.host_table.setItem(r, c, item)
