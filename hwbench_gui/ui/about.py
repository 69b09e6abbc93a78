"""Help → About: what hwbench is and the versions it runs with (for bug reports)."""

from __future__ import annotations

import platform

from PySide6 import __version__ as pyside_version
from PySide6.QtCore import Qt, qVersion
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QPlainTextEdit, QVBoxLayout, QWidget

from hwbench_gui import __version__
from hwbench_gui.engine.paths import log_file_path


def version_lines() -> list[str]:
    """Versions as "name: version" lines, read without importing torch or TensorFlow."""
    lines = [
        f"hwbench: {__version__}",
        f"Python: {platform.python_version()} ({platform.python_implementation()})",
        f"Qt: {qVersion()}  PySide6: {pyside_version}",
        f"OS: {platform.platform()}",
    ]
    try:
        from hwbench_gui.engine.inventory import software_versions

        versions = software_versions()
    except Exception as exc:  # the About box must open even if inventory code breaks
        lines.append(f"(other versions unavailable: {exc})")
        return lines
    for key, value in versions.items():
        if key in ("python", "os", "pyside6") or isinstance(value, (dict, list)):
            continue
        lines.append(f"{key}: {value if value is not None else 'not installed'}")
    return lines


class AboutDialog(QDialog):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("About hwbench")
        layout = QVBoxLayout(self)
        title = QLabel(f"<h2>hwbench {__version__}</h2>"
                       "<p>What a deep-learning workstation really delivers, and where its data path "
                       "chokes: inventory, benchmarks from the disk to the tensor cores, live telemetry, "
                       "demos and comparison reports.</p>")
        title.setWordWrap(True)
        layout.addWidget(title)
        self.versions = QPlainTextEdit("\n".join(version_lines()))
        self.versions.setReadOnly(True)
        self.versions.setMinimumSize(520, 220)
        layout.addWidget(self.versions)
        self.log_label = QLabel(f"Warnings and errors are logged to <code>{log_file_path()}</code>")
        self.log_label.setWordWrap(True)
        self.log_label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        layout.addWidget(self.log_label)
        buttons = QDialogButtonBox(QDialogButtonBox.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
