"""Light and dark palettes on the Fusion style, so the window looks the same on every desktop.

Widgets that paint with colours of their own (pyqtgraph plots, tree items with a set foreground)
do not follow a palette change by themselves: they call :func:`on_theme_changed` and repaint
when :func:`apply_theme` switches the palette.
"""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QWidget

THEMES = ("system", "light", "dark")

#: Colour for warnings that reads on both palettes.
WARNING_COLOR = "#d97706"
ERROR_COLOR = "#dc2626"
OK_COLOR = "#16a34a"


def _dark_palette() -> QPalette:
    p = QPalette()
    base, window, text = QColor(30, 31, 34), QColor(43, 45, 48), QColor(223, 225, 229)
    disabled = QColor(120, 122, 126)
    p.setColor(QPalette.Window, window)
    p.setColor(QPalette.WindowText, text)
    p.setColor(QPalette.Base, base)
    p.setColor(QPalette.AlternateBase, window)
    p.setColor(QPalette.ToolTipBase, window)
    p.setColor(QPalette.ToolTipText, text)
    p.setColor(QPalette.PlaceholderText, disabled)
    p.setColor(QPalette.Text, text)
    p.setColor(QPalette.Button, window)
    p.setColor(QPalette.ButtonText, text)
    p.setColor(QPalette.BrightText, QColor(255, 85, 85))
    p.setColor(QPalette.Link, QColor(88, 166, 255))
    p.setColor(QPalette.Highlight, QColor(53, 116, 240))
    p.setColor(QPalette.HighlightedText, QColor(255, 255, 255))
    p.setColor(QPalette.Mid, QColor(70, 72, 76))
    p.setColor(QPalette.Dark, QColor(25, 26, 28))
    for role in (QPalette.Text, QPalette.WindowText, QPalette.ButtonText):
        p.setColor(QPalette.Disabled, role, disabled)
    return p


def _light_palette() -> QPalette:
    p = QPalette()
    window, base, text = QColor(246, 246, 247), QColor(255, 255, 255), QColor(28, 28, 30)
    p.setColor(QPalette.Window, window)
    p.setColor(QPalette.WindowText, text)
    p.setColor(QPalette.Base, base)
    p.setColor(QPalette.AlternateBase, QColor(240, 241, 243))
    p.setColor(QPalette.ToolTipBase, base)
    p.setColor(QPalette.ToolTipText, text)
    p.setColor(QPalette.Text, text)
    p.setColor(QPalette.Button, QColor(236, 237, 239))
    p.setColor(QPalette.ButtonText, text)
    p.setColor(QPalette.Link, QColor(0, 102, 204))
    p.setColor(QPalette.Highlight, QColor(38, 110, 230))
    p.setColor(QPalette.HighlightedText, QColor(255, 255, 255))
    disabled = QColor(150, 150, 154)
    for role in (QPalette.Text, QPalette.WindowText, QPalette.ButtonText):
        p.setColor(QPalette.Disabled, role, disabled)
    return p


class _ThemeNotifier(QObject):
    #: The application's palette after a theme change.
    changed = Signal(QPalette)


_notifier: _ThemeNotifier | None = None


def theme_notifier() -> _ThemeNotifier:
    """The one object whose ``changed`` signal :func:`apply_theme` emits."""
    global _notifier
    if _notifier is None:
        _notifier = _ThemeNotifier()
    return _notifier


class _Relay(QObject):
    """A child of the listening widget: the connection ends when the widget is destroyed."""

    def __init__(self, parent: QWidget, callback: Callable[[QPalette], None]) -> None:
        super().__init__(parent)
        self._callback = callback

    @Slot(QPalette)
    def relay(self, palette: QPalette) -> None:
        self._callback(palette)


def on_theme_changed(widget: QWidget, callback: Callable[[QPalette], None]) -> None:
    """Call ``callback(palette)`` after every theme change while ``widget`` lives."""
    relay = _Relay(widget, callback)
    theme_notifier().changed.connect(relay.relay)


def apply_theme(app: QApplication, name: str) -> None:
    """Apply ``name`` (one of :data:`THEMES`); "system" keeps the platform's own palette.

    Widgets registered with :func:`on_theme_changed` are told afterwards.
    """
    app.setStyle("Fusion")
    if name == "dark":
        app.setPalette(_dark_palette())
    elif name == "light":
        app.setPalette(_light_palette())
    else:
        app.setPalette(app.style().standardPalette())
    theme_notifier().changed.emit(app.palette())


def plot_colors(palette: QPalette) -> tuple[str, str]:
    """(background, foreground) for a pyqtgraph plot on ``palette``: the base and text colours."""
    return palette.color(QPalette.Base).name(), palette.color(QPalette.Text).name()


def is_dark(palette: QPalette) -> bool:
    """Whether the palette's window colour is dark (plots pick their background from this)."""
    return palette.color(QPalette.Window).lightness() < 128
