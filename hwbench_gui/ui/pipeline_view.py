"""The Data path page of a ``datapath.analyze`` result, top to bottom: the chain of stage cards
(:mod:`hwbench_gui.ui.datapath_chain`), the end-to-end rate and the verdict, what to change, then
the what-ifs measured end to end as bars (:mod:`hwbench_gui.ui.datapath_whatifs`) beside the best
configuration found as code with a copy button (under it when the page is narrow).

Every part takes the height its text needs at the page's width and the page scrolls, so no text
is cut or drawn over another at any window size; the verdict and the advice are word-wrapped
labels the user can select and copy."""

from __future__ import annotations

from html import escape
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontDatabase, QGuiApplication, QPalette
from PySide6.QtWidgets import (QBoxLayout, QFrame, QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QScrollArea,
                               QSizePolicy, QVBoxLayout, QWidget)

from hwbench_gui.engine.datapath.reread import verdict_details
from hwbench_gui.ui.datapath_chain import Box, ChainView, boxes_of, format_rate
from hwbench_gui.ui.datapath_whatifs import WhatIfBars
from hwbench_gui.ui.theme import ERROR_COLOR

__all__ = ["BENCH_ID", "Box", "PipelineView", "best_found_code", "boxes_of", "format_rate"]

BENCH_ID = "datapath.analyze"
#: From this page width the what-ifs and the code sit side by side; below it, one under the other.
SIDE_BY_SIDE_PX = 900
#: Under a verdict whose text differs from the one the run stored.
REDERIVED_NOTE = ("Derived again from the run's stored figures with this version's rules; the text the run wrote "
                  "with its own rules differs (it stays in the document).")
#: Lines of code the code box shows before it scrolls.
CODE_LINES = 16


def best_found_code(document: dict[str, Any]) -> tuple[str, str]:
    """(heading, code) of the best configuration the document's run measured ('' code when none)."""
    best = (document.get("details") or {}).get("best_found") or {}
    code = best.get("code") if isinstance(best.get("code"), str) else ""
    rate = best.get("rate_images_per_s")
    if not code or not isinstance(rate, (int, float)):
        return "No best configuration recorded (a result of an older version).", ""
    gain = best.get("gain")
    head = f"Best configuration measured: {format_rate(rate)}"
    head += f" (×{gain:.2f} the default)" if isinstance(gain, (int, float)) else ""
    share = best.get("of_slowest_stage")
    head += f", {share:.0%} of its slowest stage alone" if isinstance(share, (int, float)) else ""
    return head + f" — {best.get('describe', '')}", code


def summary_text(document: dict[str, Any]) -> str:
    """'End-to-end training: 2,274 img/s · waited for data 0% of the time · GPU busy 51 %'."""
    details = document.get("details") or {}
    e2e = (document.get("figure") or {}).get("value")
    summary = f"End-to-end training: {format_rate(e2e if isinstance(e2e, (int, float)) else None)}"
    wait, util = details.get("data_wait_fraction"), details.get("gpu_util_percent")
    if isinstance(wait, (int, float)):
        summary += f"  ·  waited for data {wait:.0%} of the time"
    if isinstance(util, (int, float)):
        summary += f"  ·  GPU busy {util:.0f} % of the time"
    return summary


def advice_html(details: dict[str, Any]) -> str:
    """The advice as a list: each action with the rate it should reach, then its detail; an
    unmeasured one says why it has no figure."""
    items = []
    for item in details.get("advice") or []:
        if not isinstance(item, dict):
            continue
        gain, expected = item.get("expected_gain"), item.get("expected_images_per_s")
        head = escape(str(item.get("action", "")))
        if isinstance(gain, (int, float)) and isinstance(expected, (int, float)):
            head += f" → {format_rate(expected)} (×{gain:.1f})"
        body = escape(str(item.get("detail", "")))
        if expected is None and item.get("basis"):
            body += f" <i>({escape(str(item['basis']))})</i>"
        items.append(f"<p style='margin-bottom:6px'><b>• {head}</b><br>{body}</p>")
    return "".join(items) or "No advice for this run."


def _wrapped(parent: QWidget, font: QFont | None = None) -> QLabel:
    label = QLabel(parent)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextSelectableByMouse)
    label.setSizePolicy(QSizePolicy.Preferred, QSizePolicy.Minimum)
    if font is not None:
        label.setFont(font)
    return label


class _Page(QWidget):
    """The scrolled page: puts the what-ifs beside the code when it is wide enough."""

    def __init__(self) -> None:
        super().__init__()
        self.lower: QBoxLayout | None = None

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        if self.lower is not None:
            wide = self.width() >= SIDE_BY_SIDE_PX
            direction = QBoxLayout.LeftToRight if wide else QBoxLayout.TopToBottom
            if self.lower.direction() != direction:
                self.lower.setDirection(direction)


class PipelineView(QScrollArea):
    """The Data path page of one datapath document (:meth:`set_document`)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._document: dict[str, Any] | None = None
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAsNeeded)
        page = _Page()
        bold = QFont(self.font())
        bold.setBold(True)
        big = QFont(bold)
        big.setPointSizeF(self.font().pointSizeF() * 1.25)
        self.chain = ChainView(page)
        self.summary = _wrapped(page, big)
        self.verdict_name = _wrapped(page, bold)
        self.verdict_name.setStyleSheet(f"color: {ERROR_COLOR}")
        self.verdict_text = _wrapped(page)
        self.verdict_note = _wrapped(page)
        self.verdict_note.setForegroundRole(QPalette.PlaceholderText)
        self.advice_heading = QLabel("What to change", page)
        self.advice_heading.setFont(bold)
        self.advice = _wrapped(page)
        self.advice.setTextFormat(Qt.RichText)
        advice_box = QFrame(page)
        advice_box.setFrameShape(QFrame.StyledPanel)
        advice_layout = QVBoxLayout(advice_box)
        advice_layout.addWidget(self.advice_heading)
        advice_layout.addWidget(self.advice)
        self.what_ifs = WhatIfBars(page)
        self.best_label = _wrapped(page)
        self.code = QPlainTextEdit(page)
        self.code.setReadOnly(True)
        self.code.setLineWrapMode(QPlainTextEdit.NoWrap)
        self.code.setFont(QFontDatabase.systemFont(QFontDatabase.FixedFont))
        self.copy_button = QPushButton("Copy code", page)
        self.copy_button.clicked.connect(self.copy_code)
        head = QHBoxLayout()
        head.addWidget(self.best_label, 1)
        head.addWidget(self.copy_button, 0, Qt.AlignTop)
        code_box = QVBoxLayout()
        code_box.addLayout(head)
        code_box.addWidget(self.code)
        lower = QBoxLayout(QBoxLayout.LeftToRight)
        lower.addWidget(self.what_ifs, 1, Qt.AlignTop)
        lower.addLayout(code_box, 1)
        page.lower = lower
        layout = QVBoxLayout(page)
        layout.setContentsMargins(8, 8, 8, 8)
        for widget in (self.chain, self.summary, self.verdict_name, self.verdict_text, self.verdict_note, advice_box):
            layout.addWidget(widget)
        layout.addLayout(lower)
        layout.addStretch(1)
        self.setWidget(page)
        self.set_document(None)

    def set_document(self, document: dict[str, Any] | None) -> None:
        """Show ``document`` with its verdict derived again from its figures (what the reports show too)."""
        self._document = document
        details = verdict_details(document) if document else {}
        shown = {**document, "details": details} if document else None
        self.chain.set_document(shown)
        self.what_ifs.set_document(shown)
        for widget in (self.summary, self.verdict_name, self.verdict_text, self.advice.parentWidget(),
                       self.what_ifs, self.best_label, self.code, self.copy_button):
            widget.setVisible(document is not None)
        self.summary.setText(summary_text(document) if document else "")
        name = details.get("bottleneck_name") or details.get("bottleneck") or "?"
        self.verdict_name.setText(f"Verdict: {name}")
        self.verdict_text.setText(str(details.get("verdict") or ""))
        self.verdict_note.setText(REDERIVED_NOTE if details.get("verdict_rederived") else "")
        self.verdict_note.setVisible(bool(details.get("verdict_rederived")))
        self.advice.setText(advice_html(details))
        head, code = best_found_code(document) if document else ("", "")
        self.best_label.setText(head)
        self.code.setPlainText(code)
        lines = min(CODE_LINES, max(4, code.count("\n") + 1))
        self.code.setFixedHeight(self.code.fontMetrics().lineSpacing() * lines + 12)
        self.copy_button.setEnabled(bool(code))

    def document(self) -> dict[str, Any] | None:
        return self._document

    def page(self) -> QWidget:
        return self.widget()

    def boxes(self) -> list[Box]:
        return self.chain.boxes()

    def box_texts(self) -> list[list[str]]:
        return self.chain.box_texts()

    def labels(self) -> list[QLabel]:
        """The page's text labels, top to bottom (for tests)."""
        return [self.summary, self.verdict_name, self.verdict_text, self.verdict_note, self.advice_heading, self.advice,
                self.best_label]

    def copy_code(self) -> None:
        """Put the best configuration's code on the clipboard."""
        QGuiApplication.clipboard().setText(self.code.toPlainText())
