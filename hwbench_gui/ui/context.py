"""State the tabs share, owned by the main window and handed to every tab.

Tabs get the context in ``__init__``; they never reach into each other. Long-lived workers a tab
starts must be stopped in its ``shutdown()``, which the window calls from ``closeEvent``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from PySide6.QtCore import QSettings


@dataclass
class AppContext:
    settings: QSettings
    results_dir: Path
    #: The telemetry sampler shared by the Monitor tab and the benchmark runs (None until started).
    sampler: Any = None
    #: Shows a message in the window's status bar for ``timeout_ms`` (0 = until replaced).
    show_status: Callable[[str, int], None] = lambda message, timeout_ms=0: None
    extras: dict[str, Any] = field(default_factory=dict)
