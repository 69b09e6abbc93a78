"""The "Speech" page of a speech.transcribe result: what ran (model, precision, tokens per window, step kind,
device), the summary lines the CLI prints, and two charts per batch: the real-time factor as a bar split into the
encoder's and the decoder's share of the time, and the decoding's tokens/s with its bandwidth bound drawn across
it. The figures come from the document through :mod:`hwbench_gui.engine.reports.speech_section`, as the reports
read them."""

from __future__ import annotations

from html import escape
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QVBoxLayout, QWidget

from hwbench_gui.engine.measure.stats import median
from hwbench_gui.engine.reports import speech_section
from hwbench_gui.engine.results import describe, document_check
from hwbench_gui.engine.results.formatting import figure_text, shown_lines
from hwbench_gui.ui.benchmarks.family_page import FamilyPage
from hwbench_gui.ui.scrolled_page import scroll_page
from hwbench_gui.ui.text_label import text_label

BENCH_ID = speech_section.SPEECH_ID
ENCODER_COLOR, DECODER_COLOR, TOKENS_COLOR, BOUND_COLOR = "#2563eb", "#f59e0b", "#16a34a", "#dc2626"
PLOT_MIN_HEIGHT_PX = 190
BAR_WIDTH = 0.6


def has_speech_page(document: dict[str, Any]) -> bool:
    return (document.get("benchmark") or {}).get("id") == BENCH_ID and document.get("status") == "ok"


def _key(color: str, label: str) -> str:
    return f'<span style="color:{color}">■</span>&nbsp;{escape(label)}'


class BatchBars(pg.PlotWidget):
    """Bars per batch (stacked where given two parts), optional bounds drawn across each bar."""

    def __init__(self, title: str, unit: str) -> None:
        super().__init__()
        self.setBackground("w")
        self.setTitle(title, color="k", size="9pt")
        self.setLabel("left", unit)
        self.setLabel("bottom", "windows at once (batch)")
        self.setMouseEnabled(False, False)
        self.setMinimumHeight(PLOT_MIN_HEIGHT_PX)

    def draw(self, batches: list[int], parts: list[tuple[list[float], str]],
             bounds: list[float] | None = None) -> None:
        self.clear()
        if not batches:
            return
        xs = list(range(len(batches)))
        base = [0.0] * len(batches)
        for heights, color in parts:
            self.addItem(pg.BarGraphItem(x=xs, height=heights, y0=base, width=BAR_WIDTH, brush=color))
            base = [b + h for b, h in zip(base, heights)]
        top = max(base)
        pen = pg.mkPen(BOUND_COLOR, width=2, style=Qt.PenStyle.DashLine)
        for x, bound in zip(xs, bounds or []):
            self.addItem(pg.PlotDataItem([x - 0.4, x + 0.4], [bound, bound], pen=pen))
            top = max(top, bound)
        self.getAxis("bottom").setTicks([[(x, str(b)) for x, b in zip(xs, batches)]])
        self.setXRange(-0.8, len(batches) - 0.2)
        self.setYRange(0, top * 1.15)


class SpeechView(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document: dict[str, Any] | None = None
        self.summary = text_label()
        self.rtf_key = QLabel(f"{_key(ENCODER_COLOR, 'encoder')} {_key(DECODER_COLOR, 'decoder')} (share of the time)")
        self.tokens_key = QLabel(f"{_key(TOKENS_COLOR, 'decoding tokens/s')} "
                                 f'<span style="color:{BOUND_COLOR}">╌╌</span>&nbsp;bandwidth bound')
        self.rtf = BatchBars("Real-time factor", "s of audio per s")
        self.tokens = BatchBars("Decoding", "tokens/s")
        charts = QHBoxLayout()
        for key, plot in ((self.rtf_key, self.rtf), (self.tokens_key, self.tokens)):
            column = QVBoxLayout()
            column.addWidget(key)
            column.addWidget(plot, 1)
            charts.addLayout(column)
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.summary)
        layout.addLayout(charts, 1)
        self.scroll = scroll_page(self, page)

    def set_document(self, document: dict[str, Any]) -> None:
        self.document = document
        found = document_check.problem(document)
        rows = speech_section.batch_rows(document) if not found else []
        if found or not rows:  # a document given without the load's check: said, never half drawn
            self.summary.setText(f"This run cannot be shown: {escape(found or 'it holds no batch to draw')}")
            self.rtf.draw([], [])
            self.tokens.draw([], [])
            return
        heading = (f"<b>{escape(speech_section.configuration(document))}</b>: {escape(figure_text(document))} on "
                   f"<b>{escape(str(document.get('device') or 'a device not recorded'))}</b> · "
                   f"{escape(describe.date_text(document))}")
        self.summary.setText("<br>".join([heading] + [escape(line) for line in shown_lines(document)]))
        batches = [row.batch for row in rows]
        totals = [median(row.rtf) for row in rows]
        encoder = [t * row.encoder_share_of_time for t, row in zip(totals, rows)]
        self.rtf.draw(batches, [(encoder, ENCODER_COLOR), ([t - e for t, e in zip(totals, encoder)], DECODER_COLOR)])
        self.tokens.draw(batches, [([row.tokens_per_s for row in rows], TOKENS_COLOR)],
                         [row.bound_tokens_per_s for row in rows])


PAGE = FamilyPage("Speech", SpeechView, has_speech_page, lambda page, document, _others: page.set_document(document))
