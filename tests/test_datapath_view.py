"""The pipeline view and the report chart drawn from a recorded datapath.analyze document (a real CPU run)."""

from __future__ import annotations

import copy
import json

import pytest
from support import FIXTURES

DOC = json.loads((FIXTURES / "datapath_cpu.json").read_text())


def _decode_bound(doc):
    """The recorded document with decode + augment the slowest stage (the page derives the verdict
    again from the stage rates: a stored bottleneck alone does not move it)."""
    doc = copy.deepcopy(doc)
    for stage in doc["details"]["stages"]:
        if stage["key"] == "cpu_n":
            stage["rate_images_per_s"] = 20.0
    return doc


def test_pipeline_view_draws_the_chain_and_highlights_the_bottleneck(qtbot):
    from hwbench_gui.ui.pipeline_view import PipelineView

    view = PipelineView()
    qtbot.addWidget(view)
    view.resize(1100, 420)
    view.set_document(DOC)
    image = view.grab().toImage()
    assert not image.isNull() and image.width() == 1100
    colours = {image.pixel(x, y) for x in range(0, 1100, 25) for y in range(0, 420, 25)}
    assert len(colours) > 3  # something was painted besides the background
    texts = view.box_texts()
    assert [t[0] for t in texts][:2] == ["Disk", "RAM (page cache)"] and len(texts) == 5
    hot = [b for b in view.boxes() if b.bottleneck]
    assert [b.key for b in hot] == [DOC["details"]["limiting_stage"]]
    assert "BOTTLENECK" in texts[[b.key for b in view.boxes()].index(hot[0].key)]
    rate = DOC["details"]["stages"][[s["key"] for s in DOC["details"]["stages"]].index(hot[0].key)]
    assert f"{rate['rate_images_per_s']:,.0f} img/s" in texts[[b.key for b in view.boxes()].index(hot[0].key)]

    view.set_document(_decode_bound(DOC))
    assert [b.key for b in view.boxes() if b.bottleneck] == ["cpu_n"]
    assert not view.grab().isNull()


def test_data_path_page_shows_the_what_ifs_and_the_best_found_code(qtbot):
    from PySide6.QtGui import QGuiApplication

    from hwbench_gui.ui.pipeline_view import PipelineView

    view = PipelineView()
    qtbot.addWidget(view)
    view.resize(1100, 700)
    view.set_document(DOC)
    details = DOC["details"]
    rows = view.what_ifs.rows()
    measured = [t for t in details["tried"] if t["rate_images_per_s"] is not None]
    assert rows[0].label == "default configuration" and rows[0].rate == DOC["figure"]["value"]
    assert len(rows) == 1 + len(details["tried"]) and [r.rate for r in rows[1:len(measured) + 1]] == \
        sorted((t["rate_images_per_s"] for t in measured), reverse=True)
    best = [r for r in rows if r.best]
    assert len(best) == 1 and (best[0].rate == details["best_found"]["rate_images_per_s"]
                               or details["best_found"]["key"] == "default")
    assert view.code.toPlainText() == details["best_found"]["code"] and view.copy_button.isEnabled()
    assert f"{details['best_found']['rate_images_per_s']:,.0f} img/s" in view.best_label.text()
    view.copy_code()
    assert QGuiApplication.clipboard().text() == details["best_found"]["code"]
    assert not view.grab().isNull()
    older = copy.deepcopy(DOC)
    for key in ("tried", "best_found"):
        older["details"].pop(key)
    view.set_document(older)  # a document from before the what-ifs: the page says so
    assert view.code.toPlainText() == "" and not view.copy_button.isEnabled()
    assert "older version" in view.best_label.text() and len(view.what_ifs.rows()) == 1
    assert not view.grab().isNull()


def test_benchmarks_tab_shows_a_pipeline_tab_for_datapath_results(qtbot, tmp_path, qsettings):
    from hwbench_gui.ui.benchmarks import BenchmarksTab
    from hwbench_gui.ui.context import AppContext

    context = AppContext(settings=qsettings, results_dir=tmp_path / "results")
    tab = BenchmarksTab(context)
    qtbot.addWidget(tab)
    assert tab.pipeline is None
    tab._add_result_row(DOC, select=True)
    assert tab.pipeline is not None and tab.pipeline.document() is DOC
    labels = [tab.bottom.tabText(i) for i in range(tab.bottom.count())]
    assert labels.count("Pipeline") == 1


def test_report_chart_highlights_the_slowest_link():
    pytest.importorskip("matplotlib")
    from hwbench_gui.engine.reports.charts import build_charts, datapath_chart, to_png
    from hwbench_gui.engine.datapath.reread import verdict_details
    from hwbench_gui.engine.reports.compare import Side

    chart = datapath_chart([Side("this machine", [DOC])])
    assert chart is not None and chart.key == "datapath"
    assert verdict_details(DOC)["verdict"] in chart.caption  # what the Pipeline page shows
    ax = chart.figure.axes[0]
    reds = [p for p in ax.patches if p.get_facecolor()[:3] == pytest.approx((220 / 255, 38 / 255, 38 / 255), abs=0.01)]
    assert len(reds) == 1
    assert to_png(chart.figure)[:4] == b"\x89PNG"
    keys = [c.key for c in build_charts([Side("this machine", [DOC])])]
    assert "datapath" in keys and "series:datapath.analyze" not in keys


def test_report_chart_draws_the_measured_what_ifs_and_the_best_code():
    pytest.importorskip("matplotlib")
    from hwbench_gui.engine.reports.charts import build_charts, datapath_whatif_chart, to_png
    from hwbench_gui.engine.reports.compare import Side

    chart = datapath_whatif_chart([Side("this machine", [DOC])])
    details = DOC["details"]
    measured = [t for t in details["tried"] if t["rate_images_per_s"] is not None]
    ax = chart.figure.axes[0]
    bars = [p for p in ax.patches]
    assert len(bars) == 1 + len(measured)
    assert [round(b.get_width(), 6) for b in bars[1:]] == \
        sorted((round(t["rate_images_per_s"], 6) for t in measured), reverse=True)
    green = [b for b in bars if b.get_facecolor()[:3] == pytest.approx((0x16 / 255, 0xA3 / 255, 0x4A / 255), abs=0.01)]
    assert len(green) == 1 and green[0].get_width() == pytest.approx(details["best_found"]["rate_images_per_s"])
    assert details["best_found"]["code"] in [t.get_text() for a in chart.figure.axes for t in a.texts]  # below the bars
    assert details["best_found"]["text"] in chart.caption
    assert to_png(chart.figure)[:4] == b"\x89PNG"
    assert "datapath_whatifs" in [c.key for c in build_charts([Side("this machine", [DOC])])]
    older = copy.deepcopy(DOC)
    older["details"].pop("tried")
    assert datapath_whatif_chart([Side("this machine", [older])]) is None
