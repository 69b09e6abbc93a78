"""The "Training" page of an llm.train result: its figures against their limits (tokens/s, MFU against the
datasheet peak and the measured matmul rate, peak memory beside the estimate), the estimate's parts, and
what trains on this GPU (each built-in model, full and LoRA, at the run's sequence length). The text comes
from the engine (:func:`~hwbench_gui.engine.results.formatting.shown_lines`), as the CLI prints it."""

from __future__ import annotations

from html import escape
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from hwbench_gui.engine.reports.llm_train_section import TRAIN_ID, configuration
from hwbench_gui.engine.results import document_check
from hwbench_gui.engine.results.formatting import figure_text, shown_lines
from hwbench_gui.ui.benchmarks import fit_table_view
from hwbench_gui.ui.benchmarks.family_page import FamilyPage
from hwbench_gui.ui.scrolled_page import scroll_page
from hwbench_gui.ui.text_label import text_label

BENCH_ID = TRAIN_ID
# The verdict beside the model: at 1024 px the page's right half shows four columns, and the verdict is
# what the row is read for.
FIT_COLUMNS = ("Model", "Method", "Verdict", "Parameters", "Peak at micro-batch 1", "With checkpointing")
GIB = 1 << 30
#: The what-fits table shows four of its rows at least; below that the page scrolls.
FITS_MIN_HEIGHT_PX = 150


def has_training_page(document: dict[str, Any]) -> bool:
    """Whether ``document`` is a finished llm.train run (it has a Training page)."""
    return (document.get("benchmark") or {}).get("id") == BENCH_ID and document.get("status") == "ok"


def step_kind(document: dict[str, Any]) -> str:
    """How the run built its step: the blocks compiled (torch.compile) or eager, as the result stores it."""
    compiled = (document.get("params") or {}).get("compile")
    return {"true": "blocks compiled", "false": "eager step"}.get(str(compiled).lower(), f"compile={compiled}")


def heading_text(document: dict[str, Any]) -> str:
    """What ran (model, method, precision, shape, step kind), its figure and the device, as the page's first line."""
    return (f"<b>{escape(configuration(document))} · {step_kind(document)}</b>: {escape(figure_text(document))} "
            f"on <b>{escape(str(document.get('device') or 'a device not recorded'))}</b>")


def _gib(value: Any) -> str:
    return f"{value:.1f} GiB" if isinstance(value, (int, float)) and not isinstance(value, bool) else "—"


def _bytes(value: Any) -> str:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return "—"
    return f"{value / GIB:.2f} GiB" if value >= GIB / 10 else f"{value / (1 << 20):.1f} MiB"


class TrainingView(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document: dict[str, Any] | None = None
        self.summary = text_label()
        self.memory = QLabel()
        self.memory.setWordWrap(True)
        self.memory.setAlignment(Qt.AlignmentFlag.AlignTop)
        self.fits_title = QLabel()
        self.fits_title.setWordWrap(True)
        self.fits = fit_table_view.new_table()
        fit_table_view.fill(self.fits, FIT_COLUMNS, [])
        self.fits.horizontalHeader().setStretchLastSection(True)
        right = QVBoxLayout()
        right.addWidget(self.fits_title)
        right.addWidget(self.fits, 1)
        lower = QHBoxLayout()
        lower.addWidget(self.memory, 1)
        lower.addLayout(right, 2)
        self.fits.setMinimumHeight(FITS_MIN_HEIGHT_PX)
        # The page scrolls as one in a short lower pane: the summary first, the estimate and the table below.
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.summary)
        layout.addLayout(lower, 1)
        # On a small screen the page scrolls instead of squeezing each plot to its axes.
        self.scroll = scroll_page(self, page)

    def show_machine(self, memory_bytes: float | None, gpu: str) -> None:
        """Before any run: what trains on this machine's GPU by the estimate, at each usual sequence length."""
        from hwbench_gui.engine.models.llm.what_fits import FIT_FRACTION, FIT_SEQS, fit_table, largest_summary

        if self.document is not None:
            return
        self.memory.setText("")
        if memory_bytes is None:
            self.summary.setText(f"What trains here is estimated against a GPU's memory: {gpu}.")
            self.fits_title.setText("")
            self.fits.setRowCount(0)
            return
        self.summary.setText(f"Before a run: what trains on one {gpu} ({memory_bytes / GIB:.0f} GiB, "
                             f"{FIT_FRACTION:.0%} of it usable) by the memory estimate. Mixed-precision AdamW "
                             "(16 bytes a trainable parameter); LoRA rank 16 on a BF16 base; blocks compiled "
                             "(the default on a GPU). A run checks it again, and refuses with the arithmetic what "
                             f"does not fit.<br>{largest_summary(memory_bytes)}")
        self.fits_title.setText("<b>Largest micro-batch</b> at each sequence length (0: does not fit; "
                                "'checkpointed': fits only with checkpointing=true)")
        headers = ["Model", "Method", "Parameters"] + [f"seq {seq}" for seq in FIT_SEQS]
        cells = []
        for row in fit_table(memory_bytes):
            line = [row["model"], row["method"], f"{row['params'] / 1e9:.2f} B"]
            for seq in FIT_SEQS:
                fit = row["by_seq"][seq]
                line.append(str(fit["largest_micro_batch"]) if fit["largest_micro_batch"] else
                            ("checkpointed" if fit["checkpointing"] else "does not fit"))
            cells.append(line)
        fit_table_view.fill(self.fits, headers, cells)

    def set_document(self, document: dict[str, Any]) -> None:
        self.document = document
        found = document_check.problem(document)
        if found:  # a document given without the load's check: said, never half drawn
            self.summary.setText(f"This run cannot be shown: {escape(found)}")
            self.memory.setText("")
            self.fits_title.setText("")
            self.fits.setRowCount(0)
            return
        lines = [heading_text(document)]
        lines += [line for line in shown_lines(document) if not line.startswith("largest that trains")]
        self.summary.setText("<br>".join(lines))
        details = document.get("details") if isinstance(document.get("details"), dict) else {}
        estimate = details.get("memory_estimate") if isinstance(details.get("memory_estimate"), dict) else {}
        parts = []
        for key, title in (("persistent_bytes", "held all step"), ("forward_bytes", "at the end of the forward pass"),
                           ("gradient_bytes", "at the end of the backward pass")):
            values = estimate.get(key) if isinstance(estimate.get(key), dict) else {}
            if values:
                parts.append(f"<i>{title}</i>: " + ", ".join(f"{name} {_bytes(v)}" for name, v in values.items()))
        self.memory.setText(f"<b>Memory estimate</b> ({estimate.get('scheme', '')})<br>" + "<br>".join(parts)
                            if parts else "")
        fits = details.get("what_fits") if isinstance(details.get("what_fits"), dict) else {}
        rows = [r for r in fits.get("rows") or [] if isinstance(r, dict)]
        summary = [line for line in details.get("summary") or [] if isinstance(line, str)]
        self.fits_title.setText(f"<b>What trains here</b>: {summary[0]}" if summary else
                                "What trains here: no GPU memory to hold it against (a CPU run).")
        cells = [[str(row.get("model")), str(row.get("method")), str(row.get("verdict")),
                  f"{params / 1e9:.2f} B" if isinstance(params := row.get("params"), (int, float)) else "—",
                  _gib(row.get("peak_gib_micro_batch_1")), _gib(row.get("peak_gib_checkpointed"))] for row in rows]
        fit_table_view.fill(self.fits, FIT_COLUMNS, cells)


def _show_machine(page: TrainingView) -> None:
    """What trains on this GPU, before a run (the catalogue chose llm.train)."""
    from hwbench_gui.engine.models.llm.what_fits import this_gpu_memory

    page.show_machine(*this_gpu_memory())


PAGE = FamilyPage("Training", TrainingView, has_training_page,
                  lambda page, document, _others: page.set_document(document), on_chosen=_show_machine)
