"""The language-model pages and charts name what they show and draw what can be read, from the shipped H100 and
H200 documents of 2026-12-05: the page's heading names model, precision, step kind and device; the serving
sweep's two latencies each have a legend and their target (the H100's 64 sequences within both, 256 beyond the
first token's); a run of one depth is a bar with its bound across it, on an axis of that depth; the per-watt
chart puts each benchmark on its own scale; no chart warns while it is drawn."""

from __future__ import annotations

import io
import json
import warnings

import pytest

from hwbench_gui.engine.paths import resources_dir
from hwbench_gui.engine.reports import charts, llm_section
from hwbench_gui.engine.reports.compare import Side, sides_by_machine
from hwbench_gui.engine.results import library

FOLDERS = [resources_dir() / "reference" / gpu / "llm-2026-12-05" for gpu in ("h100", "h200")]


def _docs(folder) -> dict[str, dict]:
    return {path.name: json.loads(path.read_text()) for path in sorted(folder.glob("*.json"))}


H100 = _docs(FOLDERS[0])
SERVING = H100["2026-12-05T17-49-58_llm.infer_78443d68.json"]  # BF16, three depths and the serving sweep
ONE_DEPTH = H100["2026-12-05T17-53-34_llm.infer_3d570474.json"]  # FP8, depth 0 alone, no serving


def _drawn_without_warnings(figure) -> None:
    """As the reports draw it: a PNG (HTML, the Reports tab) and a PDF page."""
    from matplotlib.backends.backend_pdf import PdfPages

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        charts.to_png(figure)
        with PdfPages(io.BytesIO()) as pdf:
            pdf.savefig(figure, bbox_inches="tight")


def test_the_time_to_first_token_is_drawn_with_its_target():
    tpot, ttft = llm_section.serving_charts(SERVING)
    assert (tpot.target_y, ttft.target_y) == (50.0, 2.0)
    p99 = dict(zip(ttft.point_labels, ttft.curves[0].y))
    # what "64 concurrent sequences within target" reads off the chart: 64 below the dotted line, 256 above it
    assert p99["64 seq"] == pytest.approx(0.937, abs=1e-3) and p99["64 seq"] < ttft.target_y < p99["256 seq"]
    assert max(tpot.curves[0].y) < tpot.target_y  # every TPOT p99 is within its own target
    assert SERVING["details"]["largest_concurrency_within_target"] == 64


def test_report_charts_name_the_run_draw_one_depth_as_bars_and_never_warn():
    drawn = llm_section.charts([Side("h100", [ONE_DEPTH])])
    assert len(drawn) == 2
    ax = drawn[0].figure.axes[0]
    assert "llama-3.1-8b · FP8 · batch 1 · step fused · cuda:0 (NVIDIA H100 80GB HBM3)" in ax.get_title()
    assert len(ax.patches) == 1 and ax.patches[0].get_height() == pytest.approx(193.38, abs=0.01)
    lo, hi = ax.get_xlim()
    assert hi - lo < 2 and "depth 0" in ax.get_xlabel()  # the bar's own axis, not ±0.04 tokens around one point
    bound = ONE_DEPTH["details"]["tg"][0]["bound_tokens_per_s"]
    assert [list(c.get_segments()[0][:, 1]) for c in ax.collections] == [[bound, bound]]
    assert ax.get_ylim()[1] > bound  # the bound is inside the frame
    for chart in drawn + llm_section.charts([Side("h100", [SERVING])]):
        _drawn_without_warnings(chart.figure)
    serving = llm_section.charts([Side("h100", [SERVING])])
    legends = [[t.get_text() for t in c.figure.axes[0].get_legend().get_texts()] for c in serving[2:]]
    assert legends == [["TPOT p99", "TPOT p50", "target p99 ≤ 50 ms"], ["TTFT p99", "TTFT p50", "target p99 ≤ 2 s"]]


def test_the_per_watt_chart_puts_each_benchmark_and_model_on_its_own_scale():
    docs = [doc for folder in FOLDERS for doc in _docs(folder).values()]
    chart = charts.perf_per_watt_chart(sides_by_machine(docs))
    panels = {ax.get_title(loc="left"): ax for ax in chart.figure.axes}
    # 0.28 tokens/s/W of inference beside 633 of training on one axis was a row of invisible bars
    assert "llm.infer llama-3.1-8b (BF16): tokens/s/W" in panels
    assert "llm.train gpt2-124m full (BF16-AMP): tokens/s/W" in panels
    assert "llm.train llama-3.1-8b lora (BF16-AMP): tokens/s/W" in panels  # not beside GPT-2's 633
    for ax in panels.values():
        widest = max(patch.get_width() for patch in ax.patches)
        assert ax.get_xlim()[1] == pytest.approx(1.15 * widest)  # each panel scaled to its own bars
    _drawn_without_warnings(chart.figure)


def test_no_chart_of_the_shipped_references_warns():
    """Every chart of the H200 references (the data-path what-ifs with its 40-line code among them)."""
    docs = library.scan([resources_dir() / "reference" / "h200", resources_dir() / "reference" / "archive"]).docs
    built = charts.build_charts(sides_by_machine(docs))
    assert "datapath_whatifs" in [c.key for c in built]
    for chart in built:
        _drawn_without_warnings(chart.figure)


def test_the_language_model_page_names_the_run_and_draws_its_four_charts(qtbot):
    from hwbench_gui.ui.benchmarks.llm_view import LlmView

    view = LlmView()
    qtbot.addWidget(view)
    view.set_document(SERVING)
    heading = view.heading.text()
    for part in ("llama-3.1-8b", "BF16", "step fused", "NVIDIA H100 80GB HBM3"):
        assert part in heading
    assert [not c.isHidden() for c in view.columns] == [True] * 4
    assert "TPOT p99" in view.legends[2].text() and "TPOT p50" in view.legends[2].text()
    assert "target p99 ≤ 50 ms" in view.legends[2].text()
    assert "TTFT p99" in view.legends[3].text() and "target p99 ≤ 2 s" in view.legends[3].text()
    ttft_plot = view.plots[3]
    lines = [item for item in ttft_plot.getPlotItem().items if type(item).__name__ == "InfiniteLine"]
    assert [line.value() for line in lines] == [2.0]
    assert ttft_plot.getViewBox().viewRange()[1][1] > 3.79  # 256 sequences' 3.8 s p99 is inside the frame


def test_a_page_of_one_depth_draws_a_bar_on_an_axis_of_that_depth(qtbot):
    import pyqtgraph as pg

    from hwbench_gui.ui.benchmarks.llm_view import LlmView

    view = LlmView()
    qtbot.addWidget(view)
    view.set_document(SERVING)
    view.set_document(ONE_DEPTH)  # a page reused for another run draws only that run
    assert [not c.isHidden() for c in view.columns] == [True, True, False, False]
    plot = view.plots[0]
    bars = [item for item in plot.getPlotItem().items if isinstance(item, pg.BarGraphItem)]
    assert len(bars) == 1 and bars[0].opts["height"][0] == pytest.approx(193.38, abs=0.01)
    x_lo, x_hi = plot.getViewBox().viewRange()[0]
    assert x_hi - x_lo < 2
    assert plot.getAxis("bottom")._tickLevels[0] == [(0.0, "depth 0")]
    bound = ONE_DEPTH["details"]["tg"][0]["bound_tokens_per_s"]
    assert plot.getViewBox().viewRange()[1][1] > bound
    assert "FP8" in view.heading.text()
    assert "of its bound). Limits measured in the run" in view.summary.text()  # no serving: the figures end


def test_the_training_page_names_its_step_kind_and_device(qtbot):
    from hwbench_gui.ui.benchmarks.llm_train_view import TrainingView

    doc = H100["2026-12-05T22-37-00_llm.train_29d1945b.json"]
    view = TrainingView()
    qtbot.addWidget(view)
    view.set_document(doc)
    first = view.summary.text().split("<br>")[0]
    for part in ("llama-3.1-8b", "LoRA r16", "BF16-AMP", "blocks compiled", "NVIDIA H100 80GB HBM3"):
        assert part in first
