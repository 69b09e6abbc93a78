"""Benchmarks → Data path → Pipeline reads at 1024x700, 1366x768 and 1920x1080, and in a window a user
resized to 1280x820: with the shipped H200 document and a CPU run's, every text drawn fits
its rectangle (QFontMetrics), no two texts or widgets overlap, and nothing lies off the page's right
edge (the page scrolls down, never sideways)."""

from __future__ import annotations

import itertools
import json

import pytest
from PySide6.QtCore import QPoint, QRectF, Qt
from PySide6.QtGui import QFontMetricsF
from PySide6.QtWidgets import QApplication
from support import FIXTURES

from hwbench_gui.engine.datapath.reread import verdict_details
from hwbench_gui.ui.app import build_window
from hwbench_gui.ui.main_window import FRAME_ALLOWANCE

DOCS = {name: json.loads((FIXTURES / file).read_text())
        for name, file in (("h200", "h200_datapath_2026-12-04.json"), ("cpu", "datapath_cpu.json"))}
#: (window size, resized from): maximized on three screens, and a window a user dragged smaller.
SIZES = [((1024 - FRAME_ALLOWANCE[0], 700 - FRAME_ALLOWANCE[1]), None),
         ((1366 - FRAME_ALLOWANCE[0], 768 - FRAME_ALLOWANCE[1]), None),
         ((1920 - FRAME_ALLOWANCE[0], 1080 - FRAME_ALLOWANCE[1]), None),
         ((1280, 820), (1700, 1000))]


def _settle() -> None:
    for _ in range(4):
        QApplication.processEvents()


def _overlap(a: QRectF, b: QRectF) -> bool:
    inter = a.intersected(b)
    return inter.width() > 0.5 and inter.height() > 0.5


def _painted(widget, page) -> list[tuple[QRectF, str]]:
    """The widget's drawn texts in page coordinates, each checked to fit its rectangle."""
    origin = widget.mapTo(page, QPoint(0, 0))
    out = []
    for item in widget.text_items():
        needed = QFontMetricsF(item.font).boundingRect(item.rect, item.flags, item.text)
        assert needed.width() <= item.rect.width() + 0.5 and needed.height() <= item.rect.height() + 0.5, \
            (item.text, needed, item.rect)
        assert item.rect.left() >= -0.5 and item.rect.right() <= widget.width() + 0.5, (item.text, widget.width())
        assert item.rect.bottom() <= widget.height() + 0.5, (item.text, widget.height())
        out.append((item.rect.translated(origin.x(), origin.y()), item.text))
    return out


def _label_fits(label) -> None:
    room = label.contentsRect()
    if label.wordWrap():
        assert label.heightForWidth(label.width()) <= label.height(), (label.text()[:60], label.size())
        assert label.minimumSizeHint().width() <= label.width(), (label.text()[:60], label.width())
    else:
        assert QFontMetricsF(label.font()).horizontalAdvance(label.text()) <= room.width(), label.text()


@pytest.mark.parametrize("size, resized_from", SIZES, ids=lambda v: "x".join(map(str, v)) if v else "maximized")
def test_data_path_page_reads_at_every_size(qtbot, qsettings, size, resized_from):
    win = build_window(qsettings, start_sampler=False, build_hidden_tabs=False)
    qtbot.addWidget(win)
    with qtbot.waitSignal(win.ready, timeout=10000):
        win.show()
    if resized_from:
        win.resize(*resized_from)
        _settle()
    win.resize(*size)
    win.tabs.setCurrentIndex([win.tabs.tabText(i) for i in range(win.tabs.count())].index("Benchmarks"))
    tab = win.tab_widget("Benchmarks")
    _settle()
    split = tab.run_splitter.sizes()
    for name, doc in DOCS.items():
        assert tab.show_pipeline(doc)
        _settle()
        view = tab.pipeline
        page = view.widget()
        assert view.isVisible() and view.viewport().height() >= 180, (name, view.viewport().size())
        assert page.width() <= view.viewport().width(), name  # nothing off to the right
        texts = _painted(view.chain, page) + _painted(view.what_ifs, page)
        # every stage card's rate is whole (never cut, as ",465 img/" or "9,094 img")
        rates = [t for _, t in texts if t.endswith("img/s")]
        assert len(rates) >= 5, rates
        blocks = [(QRectF(w.geometry()) if w.parent() is page else
                   QRectF(w.mapTo(page, QPoint(0, 0)), QRectF(w.rect()).size()), w.objectName() or repr(w))
                  for w in (view.chain, view.what_ifs, view.code, view.copy_button, *view.labels())
                  if w.isVisibleTo(page)]
        for label in view.labels():
            if label.isVisibleTo(page) and label.text():
                _label_fits(label)
        for (a, what_a), (b, what_b) in itertools.combinations(texts, 2):
            assert not _overlap(a, b), (name, what_a, what_b)
        for (a, what_a), (b, what_b) in itertools.combinations(blocks, 2):
            assert not _overlap(a, b), (name, what_a[:40], what_b[:40])
        for block, what in blocks:
            assert block.right() <= page.width() + 0.5, (name, what[:40])
        # the verdict and the advice are there to read, in full
        assert view.verdict_text.text() == verdict_details(doc)["verdict"]
        assert view.advice.textFormat() == Qt.RichText and doc["details"]["advice"][0]["action"].split()[0] in \
            view.advice.text()
    # the page read in the lower pane's share: the form above kept its rows
    assert tab.run_splitter.sizes() == split
    tab.bottom.setCurrentIndex(0)
    _settle()
    assert tab.run_splitter.sizes() == split


def test_stage_cards_never_cut_a_number_at_any_width(qtbot):
    """Between the three screens' widths too: a card is never narrower than its widest rate or word."""
    from hwbench_gui.ui.datapath_chain import ChainView

    view = ChainView()
    qtbot.addWidget(view)
    for doc in DOCS.values():
        view.set_document(doc)
        for width in range(300, 1500, 20):
            view.resize(width, 400)
            for item in view.text_items():
                needed = QFontMetricsF(item.font).boundingRect(item.rect, item.flags, item.text)
                assert needed.width() <= item.rect.width() + 0.5, (width, item.text, item.rect.width())
                assert item.rect.right() <= max(width, view.minimumSizeHint().width()) + 0.5, (width, item.text)
