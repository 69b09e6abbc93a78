"""The Snake page's controls: the game row under the board and the training box.

They hold widgets and show the page's state; the page connects their buttons to what they do.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSlider,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)


class GameControls(QWidget):
    """Speed of the game on the board, and Watch agent / Play yourself / Stop game."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.speed = QSlider(Qt.Horizontal)
        self.speed.setRange(1, 60)
        self.speed.setValue(12)
        self.speed_label = QLabel()
        self.speed.valueChanged.connect(self._show_speed)
        self.watch_button = QPushButton("Watch agent")
        self.play_button = QPushButton("Play yourself")
        self.end_button = QPushButton("Stop game")

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        speed_row = QHBoxLayout()
        speed_row.addWidget(QLabel("Speed"))
        speed_row.addWidget(self.speed, 1)
        speed_row.addWidget(self.speed_label)
        layout.addLayout(speed_row)
        game_row = QHBoxLayout()
        for b in (self.watch_button, self.play_button, self.end_button):
            game_row.addWidget(b)
        layout.addLayout(game_row)
        self._show_speed(self.speed.value())

    def _show_speed(self, moves_per_s: int) -> None:
        self.speed_label.setText(f"{moves_per_s} moves/s")

    def show_state(self, training: bool, in_game: bool) -> None:
        for w in (self.watch_button, self.play_button):
            w.setEnabled(not training)
        self.end_button.setEnabled(in_game)


class TrainingControls(QGroupBox):
    """Board side, time budget and device of a training; Train, Pause, Stop, Load…, Save…; the status line."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Training", parent)
        self.board_size = QSpinBox()
        self.board_size.setRange(6, 20)
        self.board_size.setValue(12)
        self.minutes = QDoubleSpinBox()
        self.minutes.setRange(0.1, 240.0)
        self.minutes.setValue(5.0)
        self.minutes.setSuffix(" min")
        self.device = QComboBox()
        self.device.addItems(["cpu", "cuda"])
        self.cuda_reason = cuda_unavailable_reason()
        if self.cuda_reason is not None:  # offered, greyed, with the reason: never a traceback later
            cuda = self.device.model().item(1)
            cuda.setEnabled(False)
            from hwbench_gui.engine.nvml import plain_reason

            cuda.setText(f"cuda (unavailable: {plain_reason(self.cuda_reason)})")
            cuda.setToolTip(self.cuda_reason)
        self.train_button = QPushButton("Train")
        self.pause_button = QPushButton("Pause")
        self.stop_button = QPushButton("Stop")
        self.load_button = QPushButton("Load…")
        self.save_button = QPushButton("Save…")
        self.status = QLabel("No model loaded: Watch agent plays the shipped one.")
        self.status.setWordWrap(True)

        form = QFormLayout(self)
        form.addRow("Board side", self.board_size)
        form.addRow("Budget", self.minutes)
        form.addRow("Device", self.device)
        buttons = QHBoxLayout()
        for b in (self.train_button, self.pause_button, self.stop_button, self.load_button, self.save_button):
            buttons.addWidget(b)
        form.addRow(buttons)
        form.addRow(self.status)

    def device_name(self) -> str:
        """The chosen device without the unavailability note."""
        return self.device.currentText().split()[0]

    def show_state(self, training: bool, paused: bool, can_save: bool) -> None:
        self.train_button.setEnabled(not training)
        self.pause_button.setEnabled(training)
        self.pause_button.setText("Resume" if paused else "Pause")
        self.stop_button.setEnabled(training)
        for w in (self.board_size, self.minutes, self.device, self.load_button):
            w.setEnabled(not training)
        self.save_button.setEnabled(can_save)


def cuda_unavailable_reason() -> str | None:
    """Why "cuda" cannot train here (NVML sees no GPU), without importing torch."""
    from hwbench_gui.engine import nvml

    reason = nvml.unavailable_reason()
    if reason is None and nvml.device_count() == 0:
        reason = "no NVIDIA GPU"
    return reason
