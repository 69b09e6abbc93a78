"""The Inventory page built from an inventory dict: a warnings summary, then GPUs, GPU system, CPU,
memory, disks and software, each a titled section of cards.

The rows are the ones ``hwbench inventory`` prints (``engine.inventory.text``), so the tab and the
CLI never disagree.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from hwbench_gui.engine.inventory import text as inv_text
from hwbench_gui.ui.inventory.cards import Card, MatrixTable, note_label, section_title, warning_label
from hwbench_gui.ui.tf_status import tensorflow_gpu_note

SEE_GPUS = inv_text.SEE_GPUS


def build_page(inv: dict[str, Any]) -> QWidget:
    """The whole page for ``inv`` (a dict of the engine's inventory schema)."""
    content = QWidget()
    layout = QVBoxLayout(content)
    layout.setSpacing(6)

    warnings = inv_text.all_warnings(inv)
    if warnings:
        summary = warning_label(f"{len(warnings)} warning{'s' if len(warnings) != 1 else ''}: "
                                "see the highlighted lines below", prominent=True)
        summary.setToolTip("\n".join(warnings))
        layout.addWidget(summary)

    _add_gpus(layout, inv)
    system = inv.get("gpu_system") or {}
    # Without a GPU the reason (e.g. NVML's error) is said once, under GPUs; other rows point there.
    no_gpu = inv_text.no_gpu_reason(inv)
    _add_gpu_system(layout, system, no_gpu)
    cpu, memory, software = (inv.get(key) or {} for key in ("cpu", "memory", "software"))
    _add_section(layout, "CPU", cpu, Card(cpu.get("model") or "CPU", inv_text.cpu_rows(cpu)))
    _add_section(layout, "Memory", memory, Card("System memory", inv_text.memory_rows(memory)))
    _add_disks(layout, inv.get("disks") or {})
    software_card = Card("Versions", inv_text.without_repeated_reason(inv_text.software_rows(software), no_gpu))
    tf_note = tensorflow_gpu_note(software, no_gpu)
    if tf_note:
        software_card.add_label(warning_label(tf_note))
    _add_section(layout, "Software", software, software_card)
    layout.addStretch(1)
    return content


def _add_section(layout: QVBoxLayout, title: str, section: dict[str, Any], card: Card) -> None:
    for warning in section.get("warnings") or []:
        card.add_label(warning_label(warning))
    layout.addWidget(section_title(title))
    layout.addWidget(card)


def _add_gpus(layout: QVBoxLayout, inv: dict[str, Any]) -> None:
    gpus = inv.get("gpus") or []
    layout.addWidget(section_title(f"GPUs ({len(gpus)})" if gpus else "GPUs"))
    if not gpus:
        plain, detail = inv_text.no_gpu_text(inv_text.no_gpu_reason(inv))
        label = warning_label(plain, prominent=True)
        font = label.font()
        font.setPointSizeF(font.pointSizeF() * 1.1)
        label.setFont(font)
        label.setToolTip(detail or "")
        layout.addWidget(label)
        if detail:
            layout.addWidget(note_label(f"Detail: {detail}"))
        layout.addWidget(note_label("GPU figures (cores, VRAM, bandwidth, peaks, topology) are omitted."))
        return
    for gpu in gpus:
        card = Card(inv_text.gpu_title(gpu), inv_text.gpu_rows(gpu))
        for warning in gpu.get("warnings") or []:
            card.add_label(warning_label(warning))
        for note in (gpu.get("peaks") or {}).get("notes") or []:
            card.add_label(note_label(f"Note: {note}"))
        layout.addWidget(card)


def _add_gpu_system(layout: QVBoxLayout, system: dict[str, Any], no_gpu: str | None = None) -> None:
    layout.addWidget(section_title("GPU system"))
    rows = inv_text.without_repeated_reason(inv_text.gpu_system_rows(system), no_gpu)
    card = Card("Driver and interconnect", rows, columns=1)
    for title, key in (("Topology (GPU to GPU)", "topology"), ("P2P read support", "p2p")):
        if system.get(key):
            card.add_label(QLabel(f"{title}:"))
            table = MatrixTable(system[key])
            table.setFont(card.body_font)
            card.body.addWidget(table)
    for warning in system.get("warnings") or []:
        card.add_label(warning_label(warning))
    layout.addWidget(card)


def _add_disks(layout: QVBoxLayout, disks: dict[str, Any]) -> None:
    root = disks.get("root_disk")
    layout.addWidget(section_title(f'Disks ("/" on {root})' if root else "Disks"))
    if disks.get("error"):
        layout.addWidget(warning_label(disks["error"]))
    reason = (disks.get("reasons") or {}).get("root_disk")
    if not root and reason:
        layout.addWidget(note_label(f"Root disk unknown: {reason}"))
    for warning in disks.get("warnings") or []:
        layout.addWidget(warning_label(warning))
    for disk in disks.get("devices") or []:
        layout.addWidget(Card(inv_text.disk_title(disk), inv_text.disk_rows(disk)))
