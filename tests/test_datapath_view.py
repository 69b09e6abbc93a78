"""The pipeline view and the report chart drawn from a recorded datapath.analyze document (a real CPU run)."""

from __future__ import annotations

import copy
import json

import pytest
from conftest import FIXTURES

DOC = json.loads((FIXTURES / "datapath_cpu.json").read_text())


def _decode_bound(doc):
    """The recorded document with its verdict moved to decode, as a decode-bound run stores it."""
    doc = copy.deepcopy(doc)
    doc["details"].update(bottleneck="decode", bottleneck_name="JPEG decode on the CPU", limiting_stage="cpu_n")
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
    from hwbench_gui.engine.reports.compare import Side

    chart = datapath_chart([Side("this machine", [DOC])])
    assert chart is not None and chart.key == "datapath"
    assert DOC["details"]["verdict"] in chart.caption
    ax = chart.figure.axes[0]
    reds = [p for p in ax.patches if p.get_facecolor()[:3] == pytest.approx((220 / 255, 38 / 255, 38 / 255), abs=0.01)]
    assert len(reds) == 1
    assert to_png(chart.figure)[:4] == b"\x89PNG"
    keys = [c.key for c in build_charts([Side("this machine", [DOC])])]
    assert "datapath" in keys and "series:datapath.analyze" not in keys
