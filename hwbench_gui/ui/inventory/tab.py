"""The Inventory tab: GPUs, GPU topology, CPU, memory, disks and software as readable cards.

The figures come from ``hwbench_gui.engine.inventory``; the page is built by :mod:`.sections` from
the cards of :mod:`.cards`. Collecting runs on a worker (it starts a torch probe child and may wait
seconds for it); the GUI thread only renders.
"""

from __future__ import annotations

import datetime as dt
import logging
from pathlib import Path
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from hwbench_gui.engine.inventory import text as inv_text
from hwbench_gui.ui.context import AppContext
from hwbench_gui.ui.inventory.cards import mute, warning_label
from hwbench_gui.ui.inventory.sections import build_page
from hwbench_gui.ui.workers import Worker, create_worker

log = logging.getLogger(__name__)


def local_time(stamp: str | None) -> str:
    """An ISO timestamp (UTC in the documents) as local time with its zone: "2026-12-02 13:52:44 CET"."""
    if not stamp:
        return "?"
    try:
        moment = dt.datetime.fromisoformat(str(stamp))
    except ValueError:
        return str(stamp)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.timezone.utc)
    return moment.astimezone().strftime("%Y-%m-%d %H:%M:%S %Z")


def _collect(control, use_torch_probe: bool) -> dict[str, Any]:
    """Worker body: ``inventory.collect``; aborting the worker cancels its torch probe."""
    from hwbench_gui.engine.inventory import collect

    try:
        return collect(use_torch_probe=use_torch_probe, cancel=control.abort_event)
    except Exception as exc:  # collect guards its parts; this keeps a bug from ending the worker silently
        log.exception("inventory collection failed")
        return {"error": f"inventory collection failed: {type(exc).__name__}: {exc}"}


class InventoryTab(QWidget):
    """Shows an inventory dict; ``refresh()`` collects a new one in the background.

    The first time the tab is shown it collects on its own. ``set_inventory`` renders any dict of the
    engine's schema (tests feed recorded fixtures). The window calls ``shutdown()`` on close.
    """

    #: Emitted on the GUI thread whenever a new inventory has been rendered.
    inventory_changed = Signal(dict)

    def __init__(self, context: AppContext, parent=None) -> None:
        super().__init__(parent)
        self.context = context
        self.inventory: dict[str, Any] | None = None
        self._worker: Worker | None = None
        self._auto_refreshed = False

        outer = QVBoxLayout(self)
        bar = QHBoxLayout()
        self.refresh_button = QPushButton("Refresh")
        self.refresh_button.setToolTip("Collect the inventory again (runs a torch probe in a child process)")
        self.refresh_button.clicked.connect(self.refresh)
        # shown only when the torch probe timed out (a busy machine): the one thing to do about it
        self.retry_button = QPushButton("Retry torch probe")
        self.retry_button.clicked.connect(self.refresh)
        self.retry_button.hide()
        self.copy_button = QPushButton("Copy as text")
        self.copy_button.clicked.connect(self.copy_as_text)
        self.save_button = QPushButton("Save JSON…")
        self.save_button.clicked.connect(self._save_dialog)
        self.busy = QProgressBar()
        self.busy.setRange(0, 0)  # indeterminate
        self.busy.setMaximumWidth(140)
        self.busy.setTextVisible(False)
        self.busy.hide()
        self.status = QLabel("Not collected yet")
        mute(self.status)
        for widget in (self.refresh_button, self.retry_button, self.copy_button, self.save_button, self.busy,
                       self.status):
            bar.addWidget(widget)
        bar.addStretch(1)
        outer.addLayout(bar)

        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.NoFrame)
        outer.addWidget(self.scroll, 1)
        self._set_content(QLabel("Collecting the inventory starts when this tab is first shown."))
        self._update_buttons()

    # --- collecting ---------------------------------------------------------------------------
    def refresh(self) -> None:
        """Collect in a background thread; a no-op while a collection is running."""
        if self.is_busy():
            return
        worker = create_worker(_collect, use_torch_probe=True)
        worker.returned.connect(self._on_collected)
        worker.finished.connect(self._on_worker_finished)
        self._worker = worker
        self.busy.show()
        self.status.setText("Collecting… (the torch probe may take several seconds)")
        if self.inventory is None:  # the first time, the page says what is happening, not what will
            self._set_content(QLabel("Collecting the inventory… (the torch probe may take several seconds)"))
        self._update_buttons()
        self.context.workers.start(worker)

    def is_busy(self) -> bool:
        """True from ``refresh()`` until the collection has finished (or ``shutdown()``)."""
        return self._worker is not None

    def _on_collected(self, inv: dict[str, Any]) -> None:
        if inv.get("error") and "schema_version" not in inv:
            self.status.setText(inv["error"])
            if self.inventory is None:
                self._set_content(warning_label(inv["error"], prominent=True))
            self.context.show_status(inv["error"], 10000)
            return
        self._render(inv)
        self.context.show_status("Inventory collected", 5000)

    def _on_worker_finished(self) -> None:
        if self._worker is not None and self._worker.is_finished():
            self._collection_ended()

    def _collection_ended(self) -> None:
        self._worker = None
        self.busy.hide()
        self._update_buttons()

    def shutdown(self) -> None:
        """Cancel a running collection (kills its torch probe child); the window waits for its worker."""
        if self._worker is None:
            return
        self._drop_running_collection()
        self._collection_ended()

    def showEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        super().showEvent(event)
        if not self._auto_refreshed and self.inventory is None:
            self._auto_refreshed = True
            self.refresh()

    # --- actions ------------------------------------------------------------------------------
    def copy_as_text(self) -> None:
        if self.inventory is None:
            return
        QGuiApplication.clipboard().setText(inv_text.render_text(self.inventory))
        self.context.show_status("Inventory copied to the clipboard as text", 4000)

    def _save_dialog(self) -> None:
        if self.inventory is None:
            return
        stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        default = Path(self.context.results_dir) / f"inventory-{self.inventory.get('hostname', 'host')}-{stamp}.json"
        path, _ = QFileDialog.getSaveFileName(self, "Save inventory as JSON", str(default), "JSON (*.json)")
        if path:
            self.save_json(path)

    def save_json(self, path: str | Path) -> Path | None:
        """Write the shown inventory to ``path`` atomically; reports errors in a message box."""
        from hwbench_gui.engine.inventory import write_json

        if self.inventory is None:
            return None
        try:
            written = write_json(self.inventory, path)
        except OSError as exc:
            QMessageBox.warning(self, "Save inventory", f"Could not write {path}:\n{exc}")
            return None
        self.context.show_status(f"Inventory saved to {written}", 6000)
        return written

    def _update_buttons(self) -> None:
        self.refresh_button.setEnabled(not self.is_busy())
        self.retry_button.setEnabled(not self.is_busy())
        self.copy_button.setEnabled(self.inventory is not None)
        self.save_button.setEnabled(self.inventory is not None)

    # --- rendering ----------------------------------------------------------------------------
    def _drop_running_collection(self) -> None:
        """Cancel a running collection and make sure its result is never shown."""
        worker = self._worker
        if worker is None:
            return
        worker.abort()
        try:
            worker.returned.disconnect(self._on_collected)
        except (RuntimeError, TypeError):  # already disconnected
            pass

    def set_inventory(self, inv: dict[str, Any]) -> None:
        """Show ``inv`` (a dict from ``engine.inventory.collect`` or a saved JSON file).

        A collection still running is cancelled, so it cannot replace what was set here.
        """
        self._drop_running_collection()
        self._render(inv)

    def _render(self, inv: dict[str, Any]) -> None:
        self.inventory = inv
        self._set_content(build_page(inv))
        self.status.setText(f"{inv.get('hostname', '?')}, collected {local_time(inv.get('collected_at'))}")
        self.status.setToolTip(f"collected_at {inv.get('collected_at', '?')} (as stored)")
        system = inv.get("gpu_system") if isinstance(inv.get("gpu_system"), dict) else {}
        probe = system.get("torch_probe") or {}
        timed_out = isinstance(probe, dict) and probe.get("timed_out") is True
        self.retry_button.setVisible(timed_out)
        if timed_out:  # short in the bar (a long label would widen the window); the reason in the tooltips
            reason = str(probe.get("reason") or "the torch probe timed out")
            self.retry_button.setToolTip(reason)
            self.status.setText(f"{self.status.text()} · torch probe timed out (busy machine?)")
            self.status.setToolTip(reason)
        self._update_buttons()
        self.inventory_changed.emit(inv)

    def _set_content(self, widget: QWidget) -> None:
        old = self.scroll.takeWidget()
        if old is not None:
            old.deleteLater()
        self.scroll.setWidget(widget)
