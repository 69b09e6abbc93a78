"""A long series is shown as a bounded selection that keeps its meaning and says so; the record keeps every
point. A 10,000-point serving sweep (7 MB) kept report and window busy for minutes: each point was a labelled
marker, a table row and a candidate for the legend's placement."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pyqtgraph as pg

from hwbench_gui.engine.reports import evaluation, llm_section
from hwbench_gui.engine.results import bounded, library
from hwbench_gui.ui.benchmarks.llm_view import LlmView

INFER = (Path(__file__).resolve().parents[1] / "resources" / "reference" / "h100" /
         "llm-2026-12-05" / "2026-12-05T17-49-58_llm.infer_78443d68.json")
POINTS = 10_000


def _long_sweep(tmp_path: Path) -> dict:
    """The shipped H100 run with its five serving points repeated to 10,000 concurrencies, slower as they grow:
    within the 50 ms target up to 5,995 sequences."""
    doc = json.loads(INFER.read_text(encoding="utf-8"))
    base = doc["details"]["serving"]
    sweep = []
    for i in range(POINTS):
        point = copy.deepcopy(base[i % len(base)])
        point.pop("plan")
        point["ttft_s"], point["tpot_s"] = point["ttft_s"][:4], point["tpot_s"][:4]
        point["concurrency"] = i + 1
        point["tpot"] = {"p50": 0.005 + i * 0.00001, "p99": 0.006 + i * 0.00000734}
        point["ttft"] = {"p50": 0.02, "p99": 0.04}
        point["meets_target"] = point["tpot"]["p99"] <= 0.05
        sweep.append(point)
    doc["details"]["serving"] = sweep
    doc["details"]["largest_concurrency_within_target"] = max(p["concurrency"] for p in sweep if p["meets_target"])
    path = tmp_path / "long.json"
    path.write_text(json.dumps(doc, separators=(",", ":")), encoding="utf-8")  # 5 MB: under the file bound
    return library.load_document(path)


def test_shown_indices_keep_the_ends_and_the_points_asked_for():
    assert bounded.shown_indices(10) == list(range(10))
    chosen = bounded.shown_indices(POINTS, keep=[5995, 5996])
    assert chosen[0] == 0 and chosen[-1] == POINTS - 1 and {5995, 5996} <= set(chosen)
    assert len(chosen) <= bounded.MAX_SHOWN_POINTS + 2 and chosen == sorted(set(chosen))
    assert bounded.note("serving points", POINTS, len(chosen)).startswith(f"10,000 serving points: {len(chosen)} shown")
    assert bounded.note("serving points", 5, 5) == ""


def test_a_10000_point_sweep_is_reported_as_a_bounded_selection_that_says_so(tmp_path):
    doc = _long_sweep(tmp_path)
    assert len(doc["details"]["serving"]) == POINTS  # the record keeps every point
    run = llm_section.build([doc])[0]
    concurrencies = [int(row[0]) for row in run.serving]
    assert len(concurrencies) <= bounded.MAX_SHOWN_POINTS + 2
    assert concurrencies[0] == 1 and concurrencies[-1] == POINTS and {5995, 5996} <= set(concurrencies)
    assert run.largest.startswith("5995 concurrent sequences within") and run.disagreements == []
    assert run.reduced.startswith(f"10,000 serving points: {len(concurrencies)} shown")
    curve = llm_section.serving_curve(doc)
    assert len(curve.curves[0].x) == len(curve.point_labels) == len(concurrencies)
    ev = evaluation.build_evaluation([doc], with_charts=False)
    html = evaluation.render_evaluation_html(ev)
    assert html.count('<tr class="llmserve">') == len(concurrencies) and "10,000 serving points: " in html
    assert f"10,000 serving points: {len(concurrencies)} shown" in evaluation.format_evaluation(ev)


def test_the_language_model_page_draws_a_bounded_selection(qtbot, tmp_path):
    doc = _long_sweep(tmp_path)
    view = LlmView()
    qtbot.addWidget(view)
    view.set_document(doc)
    serving = view.plots[2]
    labels = [item for item in serving.plotItem.items if isinstance(item, pg.TextItem)]
    assert 0 < len(labels) <= bounded.MAX_SHOWN_POINTS + 2
    assert all(len(c.getData()[0]) <= bounded.MAX_SHOWN_POINTS + 2 for c in serving.plotItem.listDataItems()
               if c.getData()[0] is not None)
    assert "10,000 serving points: " in view.summary.text()


def test_a_10000_point_sweep_in_a_documents_series_is_charted_as_a_bounded_selection(tmp_path):
    from hwbench_gui.engine.reports import charts, compare

    source = INFER.parents[2] / "h200" / "2026-12-03T08-26-59_gpu.pcie_bac6fd02.json"
    doc = json.loads(source.read_text(encoding="utf-8"))
    series = doc["series"][0]
    series["x"] = [float(2 ** 12 + i) for i in range(POINTS)]
    series["y"] = [1.0 + i / POINTS for i in range(POINTS)]
    series["y_spread"] = None
    path = tmp_path / "sweep.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    loaded = library.load_document(path)
    (chart,) = charts.series_charts(compare.sides_by_machine([loaded]))
    line = chart.figure.axes[0].lines[0]
    assert len(line.get_xdata()) <= bounded.MAX_SHOWN_POINTS and line.get_xdata()[-1] == 2 ** 12 + POINTS - 1
    assert f"10,000 points of {series['label']}: {len(line.get_xdata())} shown" in chart.caption
