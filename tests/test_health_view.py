"""The Health page draws what the burn-in decided: the verdict and its reasons on top, a timeline per reading
with the clock-event reasons as shaded bands, the host's rates; the results table flags verdicts and figures
that are not normal for their kind. The document comes from the stand-in NVML's burn-in (tests/health_standin.py)."""

from __future__ import annotations

import pyqtgraph as pg

from hwbench_gui.ui.benchmarks.health_view import HealthView
from tests.health_standin import burn, install


def _document(health):
    return {"benchmark": {"id": "health.burnin"}, "status": "ok", "details": {"health": health},
            "figure": {"name": "GEMM rate per GPU under burn-in", "value": 700.0, "unit": "TFLOP/s"}}


def _items(view, kind):
    return [item for plot in view.plots.ci.items if isinstance(plot, pg.PlotItem)
            for item in plot.items if isinstance(item, kind)]


def test_the_page_shows_the_verdict_reasons_timelines_and_bands(qtbot, monkeypatch):
    fake, clock = install(monkeypatch, gpus=2)
    fake.reasons = lambda i, t: 0x4 | (0x40 if i == 1 and 30 <= t < 40 else 0)
    health = burn(fake, clock, {0: lambda t: 700.0, 1: lambda t: 700.0})
    view = HealthView()
    qtbot.addWidget(view)
    view.set_document(_document(health))
    assert ">WARN<" in view.verdict.text() and "2 GPUs" in view.verdict.text() and "· 2 min ·" in view.verdict.text()
    assert "HW thermal slowdown" in view.reasons.text()
    titles = [plot.titleLabel.text for plot in view.plots.ci.items if isinstance(plot, pg.PlotItem)]
    assert titles[:4] == ["SM clock (MHz)", "GPU temperature (°C; memory dashed)", "Power (W; limit dashed)",
                          "GEMM rate (TFLOP/s)"]
    regions = _items(view, pg.LinearRegionItem)
    # per plot: gpu0 one power-cap band; gpu1 a slowdown band and a power-cap band
    assert len(regions) == 4 * 3
    slow = [r.getRegion() for r in regions if "slowdown" in r.toolTip()]
    assert slow[0] == (29.75, 39.75)
    assert not view.grab().isNull()


def test_a_running_burnin_shows_progress_and_time_left(qtbot):
    view = HealthView()
    qtbot.addWidget(view)
    view.start(10.0)
    view.on_event({"type": "progress", "fraction": 0.25, "message": "burn-in: 7 min 30 s left"})
    assert not view.progress.isHidden() and view.progress.value() == 250
    assert "7 min 30 s left" in view.progress.format()


def test_a_cpu_only_document_says_why_no_gpu_and_draws_the_host(qtbot):
    from hwbench_gui.engine.health.rules import HostEvidence, verdict

    health = verdict([], HostEvidence(), no_gpu_reason="No NVIDIA GPU or driver found")
    health.update(duration_s=3.0, watch_interval_s=0.5, host={**health["host"], "loads": [
        {"name": "cpu-matmul", "unit": "GFLOP/s", "rate_t": [0.25, 0.75], "rate": [5.0, 6.0]}]})
    view = HealthView()
    qtbot.addWidget(view)
    view.set_document(_document(health))
    assert ">PASS<" in view.verdict.text() and "GPU part not run: No NVIDIA GPU" in view.verdict.text()
    titles = [plot.titleLabel.text for plot in view.plots.ci.items if isinstance(plot, pg.PlotItem)]
    assert titles == ["Host checked float64 matmul, all cores (GFLOP/s)"]


def test_the_benchmarks_tab_adds_a_health_tab_and_flags_the_results(qtbot, tmp_path, qsettings, monkeypatch):
    import json
    from pathlib import Path

    from hwbench_gui.ui.benchmarks import BenchmarksTab
    from hwbench_gui.ui.benchmarks.results_table import COLUMN
    from hwbench_gui.ui.context import AppContext

    fake, clock = install(monkeypatch)
    health = burn(fake, clock, {0: lambda t: 700.0}, errors={0: ((5.0, "2 elements differ"),)})
    context = AppContext(settings=qsettings, results_dir=tmp_path / "results")
    tab = BenchmarksTab(context)
    qtbot.addWidget(tab)
    assert tab.family_page("health.burnin") is None
    tab._add_result_row(_document(health), select=True)
    health = tab.family_page("health.burnin")
    assert health is not None and ">FAIL<" in health.verdict.text()
    status = tab.results.item(0, COLUMN["Status"]).text()
    assert status == "ok · health FAIL"
    ref = Path(__file__).resolve().parents[1] / "resources/reference/h200/2026-12-03T08-27-27_gpu.d2d_52e98a7a.json"
    slow = json.loads(ref.read_text())
    slow["figure"]["value"] = 0.62 * 4800
    tab._add_result_row(slow)
    item = tab.results.item(1, COLUMN["Status"])
    assert item.text() == "ok · not normal for its kind"
    assert "GPU memory copy 62 % of the H200 SXM datasheet" in item.toolTip()


def test_the_h100_burnins_are_both_in_the_table_and_say_whether_the_load_burns(qtbot, tmp_path, qsettings):
    import json
    from pathlib import Path

    from hwbench_gui.ui.benchmarks import BenchmarksTab
    from hwbench_gui.ui.benchmarks.results_table import COLUMN
    from hwbench_gui.ui.context import AppContext

    folder = Path(__file__).resolve().parents[1] / "resources/reference/h100/health-2026-12-05"
    docs = [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))]  # checked, unchecked, matmul
    tab = BenchmarksTab(AppContext(settings=qsettings, results_dir=tmp_path / "results"))
    qtbot.addWidget(tab)
    for doc in docs:
        tab._add_result_row(doc)
    statuses = [tab.results.item(row, COLUMN["Status"]).text() for row in range(2)]
    assert statuses == ["ok · health PASS", "ok · health PASS (results not checked)"]
    tab.results.selectRow(0)
    health = tab.family_page("health.burnin")
    burned = health.burns.text()
    assert "gpu0 <span" in burned and ">burns</span>: 0.95 × gpu.matmul sustained alone; held by the power cap " \
        "(SwPowerCap 99 % of samples, 0.98 of the limit)" in burned
    assert "results checked" in health.verdict.text()
    tab.results.selectRow(1)
    assert "results NOT checked" in health.verdict.text() and "0.98 × gpu.matmul" in health.burns.text()
