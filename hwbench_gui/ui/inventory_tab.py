"""The Inventory tab: GPUs, GPU topology, CPU, memory, disks and software as readable cards.

The figures come from ``hwbench_gui.engine.inventory``; the rows are the same ones ``hwbench inventory``
prints (``engine.inventory.text``), so the tab and the CLI never disagree. Collecting runs on a
worker (it starts a torch probe child and may wait seconds for it); the GUI thread only renders.
"""

from __future__ import annotations

import datetime as dt
import logging
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont, QGuiApplication, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QAbstractScrollArea,
    QFileDialog,
    QFormLayout,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from hwbench_gui.engine.inventory import text as inv_text
from hwbench_gui.ui.context import AppContext
from hwbench_gui.ui.tf_status import tensorflow_gpu_note
from hwbench_gui.ui.theme import WARNING_COLOR
from hwbench_gui.ui.workers import Worker, create_worker

log = logging.getLogger(__name__)

#: Says where the reason is, in rows that would repeat the GPUs section's "no GPU" reason.
SEE_GPUS = "unknown (no GPU: see GPUs above)"


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


def _without_repeated_reason(rows: list[inv_text.Row], reason: str | None) -> list[inv_text.Row]:
    """Rows whose text only repeats ``reason`` (shown once, under GPUs) point there instead."""
    if not reason:
        return rows
    return [inv_text.Row(row.label, SEE_GPUS, True) if reason in row.text else row for row in rows]


def _collect(control, use_torch_probe: bool) -> dict[str, Any]:
    """Worker body: ``inventory.collect``; aborting the worker cancels its torch probe."""
    from hwbench_gui.engine.inventory import collect

    try:
        return collect(use_torch_probe=use_torch_probe, cancel=control.abort_event)
    except Exception as exc:  # collect guards its parts; this keeps a bug from ending the worker silently
        log.exception("inventory collection failed")
        return {"error": f"inventory collection failed: {type(exc).__name__}: {exc}"}


def _section_title(text: str) -> QLabel:
    label = QLabel(text)
    font = label.font()
    font.setPointSizeF(font.pointSizeF() * 1.25)
    font.setBold(True)
    label.setFont(font)
    label.setContentsMargins(0, 8, 0, 2)
    return label


def _warning_label(text: str, prominent: bool = False) -> QLabel:
    label = QLabel(f"⚠ {text}")
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextSelectableByMouse)
    weight = "font-weight: 600;" if prominent else ""
    label.setStyleSheet(f"color: {WARNING_COLOR}; {weight}")
    label.setProperty("warning", True)
    return label


def _note_label(text: str) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    font = label.font()
    font.setItalic(True)
    label.setFont(font)
    _mute(label)
    return label


def _mute(label: QLabel) -> None:
    # A palette role, not a fixed grey, so muted text reads in light and dark themes alike.
    label.setForegroundRole(QPalette.PlaceholderText)


class _Card(QGroupBox):
    """A titled box of label/value rows in ``columns`` column pairs, then its warnings and notes."""

    def __init__(self, title: str, rows: list[inv_text.Row], columns: int = 2, parent=None) -> None:
        super().__init__(title, parent)
        title_font = QFont(self.font())
        title_font.setBold(True)
        self.setFont(title_font)
        body_font = QFont(title_font)
        body_font.setBold(False)
        layout = QVBoxLayout(self)
        # One QFormLayout per column: unlike a QGridLayout it sizes wrapped labels by their real width.
        columns_box = QHBoxLayout()
        columns_box.setSpacing(24)
        per_column = max(1, -(-len(rows) // columns))
        for start in range(0, max(len(rows), 1), per_column):
            form = QFormLayout()
            form.setLabelAlignment(Qt.AlignRight | Qt.AlignTop)
            form.setFieldGrowthPolicy(QFormLayout.AllNonFixedFieldsGrow)
            form.setRowWrapPolicy(QFormLayout.DontWrapRows)
            form.setVerticalSpacing(3)
            for row in rows[start:start + per_column]:
                name = QLabel(f"{row.label}:")
                name.setFont(body_font)
                value = QLabel(row.text)
                value.setFont(body_font)
                value.setWordWrap(True)
                value.setTextInteractionFlags(Qt.TextSelectableByMouse)
                if row.missing:
                    _mute(value)
                form.addRow(name, value)
            columns_box.addLayout(form, 1)
        layout.addLayout(columns_box)
        self.body = layout
        self.body_font = body_font

    def add_label(self, label: QLabel) -> None:
        """Add a warning or note below the rows, in the body font."""
        font = QFont(self.body_font)
        font.setItalic(label.font().italic())
        label.setFont(font)
        self.body.addWidget(label)


class _MatrixTable(QTableWidget):
    """A small read-only GPU-by-GPU table (topology, P2P)."""

    def __init__(self, matrix: list[list[Any]], parent=None) -> None:
        size = len(matrix)
        super().__init__(size, size, parent)
        labels = [f"GPU{i}" for i in range(size)]
        self.setHorizontalHeaderLabels(labels)
        self.setVerticalHeaderLabels(labels)
        for i, row in enumerate(matrix):
            for j, cell in enumerate(row):
                item = QTableWidgetItem("—" if cell == "self" else str(cell if cell is not None else "?"))
                item.setTextAlignment(Qt.AlignCenter)
                item.setToolTip(str(cell))
                self.setItem(i, j, item)
        self.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.setSelectionMode(QAbstractItemView.NoSelection)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
        self.verticalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.setSizeAdjustPolicy(QAbstractScrollArea.AdjustToContents)
        self.setSizePolicy(QSizePolicy.Maximum, QSizePolicy.Maximum)


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
        _mute(self.status)
        for widget in (self.refresh_button, self.copy_button, self.save_button, self.busy, self.status):
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
                self._set_content(_warning_label(inv["error"], prominent=True))
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
        content = QWidget()
        layout = QVBoxLayout(content)
        layout.setSpacing(6)

        warnings = inv_text.all_warnings(inv)
        if warnings:
            summary = _warning_label(f"{len(warnings)} warning{'s' if len(warnings) != 1 else ''}: "
                                     "see the highlighted lines below", prominent=True)
            summary.setToolTip("\n".join(warnings))
            layout.addWidget(summary)

        self._add_gpus(layout, inv)
        system = inv.get("gpu_system") or {}
        # Without a GPU the reason (e.g. NVML's error) is said once, under GPUs; other rows point there.
        no_gpu = None if inv.get("gpus") else system.get("reason")
        self._add_gpu_system(layout, system, no_gpu)
        cpu, memory, software = (inv.get(key) or {} for key in ("cpu", "memory", "software"))
        self._add_section(layout, "CPU", cpu, _Card(cpu.get("model") or "CPU", inv_text.cpu_rows(cpu)))
        self._add_section(layout, "Memory", memory, _Card("System memory", inv_text.memory_rows(memory)))
        self._add_disks(layout, inv.get("disks") or {})
        software_card = _Card("Versions", _without_repeated_reason(inv_text.software_rows(software), no_gpu))
        tf_note = tensorflow_gpu_note(software, no_gpu)
        if tf_note:
            software_card.add_label(_warning_label(tf_note))
        self._add_section(layout, "Software", software, software_card)
        layout.addStretch(1)

        self._set_content(content)
        self.status.setText(f"{inv.get('hostname', '?')}, collected {local_time(inv.get('collected_at'))}")
        self.status.setToolTip(f"collected_at {inv.get('collected_at', '?')} (as stored)")
        self._update_buttons()
        self.inventory_changed.emit(inv)

    def _set_content(self, widget: QWidget) -> None:
        old = self.scroll.takeWidget()
        if old is not None:
            old.deleteLater()
        self.scroll.setWidget(widget)

    @staticmethod
    def _add_section(layout: QVBoxLayout, title: str, section: dict[str, Any], card: _Card) -> None:
        for warning in section.get("warnings") or []:
            card.add_label(_warning_label(warning))
        layout.addWidget(_section_title(title))
        layout.addWidget(card)

    def _add_gpus(self, layout: QVBoxLayout, inv: dict[str, Any]) -> None:
        system = inv.get("gpu_system") or {}
        gpus = inv.get("gpus") or []
        layout.addWidget(_section_title(f"GPUs ({len(gpus)})" if gpus else "GPUs"))
        if not gpus:
            reason = system.get("reason") or "no GPU reported"
            label = _warning_label(f"No GPU available: {reason}", prominent=True)
            font = label.font()
            font.setPointSizeF(font.pointSizeF() * 1.1)
            label.setFont(font)
            layout.addWidget(label)
            layout.addWidget(_note_label("GPU figures (cores, VRAM, bandwidth, peaks, topology) are omitted."))
            return
        for gpu in gpus:
            card = _Card(inv_text.gpu_title(gpu), inv_text.gpu_rows(gpu))
            for warning in gpu.get("warnings") or []:
                card.add_label(_warning_label(warning))
            for note in (gpu.get("peaks") or {}).get("notes") or []:
                card.add_label(_note_label(f"Note: {note}"))
            layout.addWidget(card)

    def _add_gpu_system(self, layout: QVBoxLayout, system: dict[str, Any], no_gpu: str | None = None) -> None:
        layout.addWidget(_section_title("GPU system"))
        rows = inv_text.gpu_system_rows(system)
        if no_gpu:
            rows = [row for row in rows if no_gpu not in row.text]  # the Status row repeats the GPUs section
        card = _Card("Driver and interconnect", rows, columns=1)
        for title, key in (("Topology (GPU to GPU)", "topology"), ("P2P read support", "p2p")):
            if system.get(key):
                card.add_label(QLabel(f"{title}:"))
                table = _MatrixTable(system[key])
                table.setFont(card.body_font)
                card.body.addWidget(table)
        for warning in system.get("warnings") or []:
            card.add_label(_warning_label(warning))
        layout.addWidget(card)

    def _add_disks(self, layout: QVBoxLayout, disks: dict[str, Any]) -> None:
        root = disks.get("root_disk")
        layout.addWidget(_section_title(f'Disks ("/" on {root})' if root else "Disks"))
        if disks.get("error"):
            layout.addWidget(_warning_label(disks["error"]))
        reason = (disks.get("reasons") or {}).get("root_disk")
        if not root and reason:
            layout.addWidget(_note_label(f"Root disk unknown: {reason}"))
        for warning in disks.get("warnings") or []:
            layout.addWidget(_warning_label(warning))
        for disk in disks.get("devices") or []:
            layout.addWidget(_Card(inv_text.disk_title(disk), inv_text.disk_rows(disk)))
