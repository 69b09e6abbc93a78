"""The Health page of a ``health.burnin`` run: the verdict and its reasons at the top, progress with the time
left while it runs, and the timelines of the document (SM clock, temperature, power against its limit, the
load's rate, the host's rates) with the clock-event reasons drawn as shaded bands (slowdowns in the
warning colour, the power cap faintly). It draws what :mod:`hwbench_gui.engine.health` decided."""

from __future__ import annotations

import html
from typing import Any, Sequence

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QLabel, QProgressBar, QScrollArea, QVBoxLayout, QWidget

from hwbench_gui.engine.health import burns
from hwbench_gui.engine.health.bands import reason_bands
from hwbench_gui.engine.health.rules import FAIL, NOTE, PASS, WARN, derive
from hwbench_gui.engine.results import document_check
from hwbench_gui.ui.benchmarks.family_page import FamilyPage
from hwbench_gui.ui.theme import ERROR_COLOR, OK_COLOR, WARNING_COLOR

BENCH_ID = "health.burnin"
NOTE_COLOR = "#64748b"
VERDICT_COLORS = {PASS: OK_COLOR, WARN: WARNING_COLOR, FAIL: ERROR_COLOR}
#: Curve colours per GPU (up to eight; more repeat).
GPU_COLORS = ("#2563eb", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#be123c", "#4d7c0f", "#a16207")
PLOT_HEIGHT_PX = 150
AXIS_WIDTH_PX = 56
#: Reasons listed on the page; the rest are in the tooltip.
REASONS_SHOWN = 8
#: The host loads' plot titles (by load name).
HOST_TITLES = {"cpu-matmul": "Host checked float64 matmul, all cores (GFLOP/s)",
               "ram-pattern": "Host RAM pattern test (GB/s written or read back)"}
#: (title, timeline key, dashed companion key or None)
GPU_PLOTS = (("SM clock (MHz)", "sm_clock_mhz", None), ("GPU temperature (°C; memory dashed)", "temp_c", "mem_temp_c"),
             ("Power (W; limit dashed)", "power_w", "power_limit_w"))
#: A GPU at full load is power-capped nearly all the time: its band only tints the plot.
BAND_BRUSH = {WARN: (WARNING_COLOR, 90), NOTE: (NOTE_COLOR, 14)}


def has_health(document: dict[str, Any]) -> bool:
    """Whether ``document`` holds a burn-in's health section to show."""
    details = document.get("details") if isinstance(document.get("details"), dict) else {}
    return isinstance(details.get("health"), dict)


def reasons_html(reasons: list[dict[str, Any]]) -> tuple[str, str]:
    """The reasons as short HTML (FAIL, then WARN, then notes; at most :data:`REASONS_SHOWN`) and all as text."""
    order = {FAIL: 0, WARN: 1, NOTE: 2}
    ranked = sorted((r for r in reasons if isinstance(r, dict)), key=lambda r: order.get(r.get("level"), 3))
    rows = []
    for r in ranked[:REASONS_SHOWN]:
        color = VERDICT_COLORS.get(r.get("level"), NOTE_COLOR)
        rows.append(f"<span style='color:{color}; font-weight:600'>{html.escape(str(r.get('level')))}</span> "
                    f"{html.escape(str(r.get('scope')))}: {html.escape(str(r.get('text')))}")
    if len(ranked) > REASONS_SHOWN:
        rows.append(f"… and {len(ranked) - REASONS_SHOWN} more (hover for all)")
    full = "\n".join(f"{r.get('level')} {r.get('scope')}: {r.get('text')}" for r in ranked)
    return "<br>".join(rows), full


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.3g} min"


class HealthView(QScrollArea):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(True)
        body = QWidget()
        layout = QVBoxLayout(body)
        layout.setContentsMargins(6, 6, 6, 6)
        self.verdict = QLabel("No burn-in yet: run health.burnin (1 minute = quick, 10 = standard).")
        self.verdict.setWordWrap(True)
        self.verdict.setTextFormat(Qt.RichText)
        self.burns = QLabel("")  # whether each GPU's load burned, against gpu.matmul sustained where measured
        self.burns.setWordWrap(True)
        self.burns.setTextFormat(Qt.RichText)
        self.burns.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.reasons = QLabel("")
        self.reasons.setWordWrap(True)
        self.reasons.setTextFormat(Qt.RichText)
        self.reasons.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.hide()
        self.plots = pg.GraphicsLayoutWidget()
        self.plots.setBackground(None)
        layout.addWidget(self.verdict)
        layout.addWidget(self.progress)
        layout.addWidget(self.burns)
        layout.addWidget(self.reasons)
        layout.addWidget(self.plots, 1)
        self.setWidget(body)
        self.document: dict[str, Any] | None = None

    # -- while it runs --------------------------------------------------------------------------
    def start(self, minutes: float | None) -> None:
        self.document = None
        self.plots.clear()
        self.plots.setMinimumHeight(0)
        self.reasons.setText("")
        self.burns.setText("")
        self.verdict.setText("<b>Burn-in running</b>" + (f" for {minutes:g} min" if minutes else "")
                             + ": the verdict comes when it ends.")
        self.progress.setValue(0)
        self.progress.setFormat("starting")
        self.progress.show()

    def on_event(self, event: dict[str, Any]) -> None:
        if event.get("type") == "progress":
            fraction = max(0.0, min(1.0, float(event.get("fraction") or 0.0)))
            self.progress.setValue(int(fraction * 1000))
            self.progress.setFormat(f"{fraction * 100:.0f}%  {event.get('message', '')}")
        elif event.get("type") == "metric" and isinstance(event.get("value"), (int, float)):
            self.reasons.setText(f"latest: {html.escape(str(event.get('name')))} {event['value']:.4g} "
                                 f"{html.escape(str(event.get('unit', '')))}")

    # -- a finished document ---------------------------------------------------------------------
    def set_document(self, document: dict[str, Any], others: Sequence[dict[str, Any]] = ()) -> None:
        """Show a finished burn-in; ``others`` (the results at hand) give gpu.matmul's sustained rate to hold
        its load against."""
        self.document = document
        self.progress.hide()
        self.plots.clear()
        self.plots.setMinimumHeight(0)
        self.burns.setText("")
        self.reasons.setText("")
        found = document_check.problem(document) if has_health(document) else "it holds no burn-in (details.health)"
        if found:  # a document given without the load's check (a live run's, a test's): said, never half drawn
            self.verdict.setText(f"<b>This burn-in cannot be shown</b>: {html.escape(found)}")
            return
        health = document["details"]["health"]
        derived = derive(health)  # the verdicts its rows make, never the stated ones as written
        verdict = derived.verdict
        color = VERDICT_COLORS.get(verdict, NOTE_COLOR)
        gpus = [g for g in health.get("gpus") or [] if isinstance(g, dict)]
        parts = [f"{len(gpus)} GPU{'s' if len(gpus) != 1 else ''}" if gpus else "no GPU",
                 _duration(float(health.get("duration_s") or 0)),
                 "results checked" if health.get("checking", True) else "results NOT checked"]
        per_gpu = "  ".join(f"gpu{g.get('index')} <span style='color:"
                            f"{VERDICT_COLORS.get(v, NOTE_COLOR)}'>{html.escape(v)}</span>"
                            for g, v in zip(gpus, derived.gpus))
        self.verdict.setText(
            f"<span style='font-size:18pt; font-weight:700; color:{color}'>{html.escape(str(verdict))}</span>"
            f"&nbsp;&nbsp;machine · {' · '.join(parts)}"
            + (f"&nbsp;&nbsp;|&nbsp;&nbsp;{per_gpu}" if per_gpu else "")
            + (f"<br>GPU part not run: {html.escape(str(health['no_gpu_reason']))}"
               if health.get("no_gpu_reason") else "")
            + ("" if health.get("checking", True) else
               "<br>This run measured the load alone (what checking costs); the burn-in is a checked run "
               "(Results lists both).")
            + "".join(f"<br><span style='color:{ERROR_COLOR}'>Inconsistent: {html.escape(text)}</span>"
                      for text in derived.disagreements))
        self.burns.setText("<br>".join(
            f"gpu{j['index']} <span style='color:{VERDICT_COLORS.get(j['level'], NOTE_COLOR)}; font-weight:600'>"
            f"{'burns' if j['burns'] else 'does not burn'}</span>: {html.escape(j['text'])}"
            for j in burns.judge_document(document, others)))
        # the banner says why there was no GPU part; the list keeps what the verdict rests on
        shown, full = reasons_html([r for r in health.get("reasons") or [] if r.get("rule") != "no_gpu"])
        self.reasons.setText(shown or "No reason to note.")
        self.reasons.setToolTip(full)
        self._draw(gpus, (health.get("host") or {}).get("loads") or [], float(health.get("watch_interval_s") or 0.5))

    def _draw(self, gpus: list[dict[str, Any]], host_loads: list[dict[str, Any]], interval_s: float) -> None:
        self.plots.clear()
        rows: list[pg.PlotItem] = []
        if gpus:
            for title, key, companion in GPU_PLOTS:
                item = self._plot(title)
                for g in gpus:
                    tl = g.get("timeline") or {}
                    pen = GPU_COLORS[int(g.get("index") or 0) % len(GPU_COLORS)]
                    self._curve(item, tl.get("t"), tl.get(key), pen, f"gpu{g.get('index')}")
                    if companion:
                        self._curve(item, tl.get("t"), tl.get(companion), pen, None, dashed=True)
                rows.append(item)
            item = self._plot("GEMM rate (TFLOP/s)")
            for g in gpus:
                load = g.get("load") or {}
                self._curve(item, load.get("rate_t"), load.get("rate"),
                            GPU_COLORS[int(g.get("index") or 0) % len(GPU_COLORS)], f"gpu{g.get('index')}")
            rows.append(item)
            for item in rows:
                for g in gpus:
                    tl = g.get("timeline") or {}
                    step = tl.get("step") if isinstance(tl.get("step"), int) and tl.get("step") > 0 else 1
                    for band in reason_bands(tl.get("t") or [], tl.get("reasons") or [], interval_s * step):
                        color, alpha = BAND_BRUSH[band["level"]]
                        brush = QColor(color)
                        brush.setAlpha(alpha)
                        region = pg.LinearRegionItem((band["start"], band["end"]), movable=False, brush=brush,
                                                     pen=pg.mkPen(None))
                        region.setZValue(-10)
                        region.setToolTip(f"gpu{g.get('index')}: {band['label']}"
                                          + (f" ({', '.join(band['names'])})" if band["names"] else ""))
                        item.addItem(region)
        for load in host_loads:
            if not isinstance(load, dict) or not load.get("rate"):
                continue
            item = self._plot(HOST_TITLES.get(load.get("name"), f"Host {load.get('name')} ({load.get('unit')})"))
            self._curve(item, load.get("rate_t"), load.get("rate"), "#475569", None)
            rows.append(item)
        for item in rows[1:]:
            item.setXLink(rows[0])
        if rows:
            rows[-1].setLabel("bottom", "seconds since the load began")
        self.plots.setMinimumHeight(PLOT_HEIGHT_PX * len(rows))

    def _plot(self, title: str) -> pg.PlotItem:
        item = self.plots.addPlot(title=title)
        item.showGrid(x=True, y=True, alpha=0.25)
        item.setMenuEnabled(False)
        # a long timeline draws each pixel column's extremes (spikes stay); the document keeps every sample
        item.setDownsampling(auto=True, mode="peak")
        item.setClipToView(True)
        item.getAxis("left").enableAutoSIPrefix(False)
        item.getAxis("left").setWidth(AXIS_WIDTH_PX)  # the plots' x axes line up, and "1,755" fits
        item.addLegend(offset=(-4, 4), labelTextSize="8pt")
        self.plots.nextRow()
        return item

    @staticmethod
    def _curve(item: pg.PlotItem, t: Any, y: Any, color: str, name: str | None, dashed: bool = False) -> None:
        if not isinstance(t, list) or not isinstance(y, list) or len(t) != len(y):
            return
        points = [(a, b) for a, b in zip(t, y) if isinstance(a, (int, float)) and isinstance(b, (int, float))]
        if not points:
            return

        pen = pg.mkPen(color, width=1.5, style=Qt.DashLine if dashed else Qt.SolidLine)
        item.plot([a for a, _ in points], [b for _, b in points], pen=pen, name=name)


PAGE = FamilyPage("Health", HealthView, has_health, lambda page, document, others: page.set_document(document, others),
                  live=True, on_run_started=lambda page, run: page.start(run.params.get("minutes")),
                  on_run_event=lambda page, event: page.on_event(event))
