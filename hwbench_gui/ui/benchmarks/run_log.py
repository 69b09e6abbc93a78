"""The Log tab: the benchmark's own lines, and behind a toggle what its frameworks printed.

A child's protocol ``log`` events are the benchmark's words (its steps, metrics, warnings). Lines the
child printed outside the protocol that are TensorFlow's and CUDA's start-up chatter or library warnings
(:func:`~hwbench_gui.engine.run.framework_noise.is_framework_noise`: oneDNN notices, cuDNN factory
registrations, absl lines) would bury them: they are kept, counted and shown on request. A failed run's
last lines are in its document and shown in the log all the same.
"""

from __future__ import annotations

from PySide6.QtWidgets import QCheckBox, QPlainTextEdit, QVBoxLayout, QWidget

#: Lines kept in each pane (the oldest go first).
MAX_LINES = 5000


class RunLog(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.log = QPlainTextEdit()
        self.log.setReadOnly(True)
        self.log.setMaximumBlockCount(MAX_LINES)
        self.framework_log = QPlainTextEdit()
        self.framework_log.setReadOnly(True)
        self.framework_log.setMaximumBlockCount(MAX_LINES)
        self.framework_log.hide()
        self.framework_lines = 0
        self.framework_toggle = QCheckBox()
        self.framework_toggle.toggled.connect(self.framework_log.setVisible)
        self._label_toggle()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.log, 3)
        layout.addWidget(self.framework_toggle)
        layout.addWidget(self.framework_log, 2)

    def add_framework_line(self, text: str) -> None:
        """A line the child printed outside the protocol (a framework's, a library's)."""
        self.framework_lines += 1
        self.framework_log.appendPlainText(text)
        self._label_toggle()

    def _label_toggle(self) -> None:
        self.framework_toggle.setText(f"Show what the frameworks printed ({self.framework_lines} "
                                      f"line{'s' if self.framework_lines != 1 else ''}: TensorFlow, CUDA, "
                                      "library warnings)")
