"""The Monitor's control bar: time window, sampling interval, pause, and the recording buttons
(export the history as CSV, open a recorded CSV, back to live), with a status line.

The bar only says what was asked for (its signals); the tab does it.
"""

from __future__ import annotations

import time
from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QFileDialog, QHBoxLayout, QLabel, QPushButton, QWidget

WINDOWS_S = (("1 min", 60.0), ("5 min", 300.0), ("30 min", 1800.0))
INTERVALS_S = (0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0)


class MonitorControls(QWidget):
    window_changed = Signal(float)
    interval_changed = Signal(float)
    pause_toggled = Signal(bool)
    #: A path chosen in the Export dialog.
    export_requested = Signal(str)
    #: A path chosen in the Open recording dialog.
    open_requested = Signal(str)
    live_requested = Signal()

    def __init__(self, interval_s: float, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.window_box = QComboBox()
        for label, seconds in WINDOWS_S:
            self.window_box.addItem(label, seconds)
        self.window_box.currentIndexChanged.connect(
            lambda index: self.window_changed.emit(float(self.window_box.itemData(index))))
        self.interval_box = QComboBox()
        for s in INTERVALS_S:
            self.interval_box.addItem(f"{s:g} s", s)
        current = self.interval_box.findData(interval_s)
        if current < 0:
            self.interval_box.addItem(f"{interval_s:g} s", interval_s)
            current = self.interval_box.count() - 1
        self.interval_box.setCurrentIndex(current)
        self.interval_box.currentIndexChanged.connect(
            lambda index: self.interval_changed.emit(float(self.interval_box.itemData(index))))
        self.pause_button = QPushButton("Pause")
        self.pause_button.setCheckable(True)
        self.pause_button.setToolTip("Freeze the plots (sampling goes on); pan and zoom while paused")
        self.pause_button.toggled.connect(self._on_pause)
        self.export_button = QPushButton("Export CSV…")
        self.export_button.setToolTip("Write the whole sampled history to a CSV file")
        self.export_button.clicked.connect(self._export_dialog)
        self.open_button = QPushButton("Open recording…")
        self.open_button.setToolTip("Show a telemetry CSV (from Export or `hwbench monitor --csv`)")
        self.open_button.clicked.connect(self._open_dialog)
        self.live_button = QPushButton("Back to live")
        self.live_button.clicked.connect(lambda _checked=False: self.live_requested.emit())
        self.live_button.hide()
        self.status = QLabel()
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for w in (QLabel("Window"), self.window_box, QLabel("Interval"), self.interval_box,
                  self.pause_button, self.export_button, self.open_button, self.live_button):
            layout.addWidget(w)
        layout.addStretch(1)
        layout.addWidget(self.status)

    @property
    def paused(self) -> bool:
        return self.pause_button.isChecked()

    def set_recording(self, recording: bool) -> None:
        """A recording is shown: the live-only controls are off and "Back to live" is offered."""
        self.live_button.setVisible(recording)
        for w in (self.pause_button, self.interval_box, self.window_box, self.export_button):
            w.setEnabled(not recording)

    def _on_pause(self, paused: bool) -> None:
        self.pause_button.setText("Resume" if paused else "Pause")
        self.pause_toggled.emit(paused)

    def _export_dialog(self) -> None:
        default = str(Path.home() / time.strftime("hwbench-telemetry-%Y%m%d-%H%M%S.csv"))
        path, _ = QFileDialog.getSaveFileName(self, "Export telemetry", default, "CSV files (*.csv)")
        if path:
            self.export_requested.emit(path)

    def _open_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open telemetry recording", str(Path.home()), "CSV files (*.csv)")
        if path:
            self.open_requested.emit(path)
