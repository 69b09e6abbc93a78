"""The "Image generation" page of a diffusion.infer result: what ran (model, size, steps, precision, batch,
device), how one image's time adds up (text encoders + steps × step + VAE decode), and two bars each with its
bound across it: images per minute against the same image with every step at the matmul rate the run measured,
and seconds per denoising step against the least time of its FLOPs at that rate and at the datasheet's peak.
The figures come from the document through :mod:`hwbench_gui.engine.reports.diffusion_section`, as the reports
read them."""

from __future__ import annotations

from html import escape
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QVBoxLayout, QWidget

from hwbench_gui.engine.reports import diffusion_section
from hwbench_gui.engine.results import describe, document_check
from hwbench_gui.engine.results.formatting import figure_text, shown_lines
from hwbench_gui.ui.benchmarks.family_page import FamilyPage
from hwbench_gui.ui.scrolled_page import scroll_page
from hwbench_gui.ui.text_label import text_label

BENCH_ID = diffusion_section.DIFFUSION_ID
BAR_COLOR = "#2563eb"
BOUND_COLOR = "#dc2626"
SHEET_COLOR = "#6b7280"
PLOT_MIN_HEIGHT_PX = 190


def has_diffusion_page(document: dict[str, Any]) -> bool:
    return (document.get("benchmark") or {}).get("id") == BENCH_ID and document.get("status") == "ok"


def _number(document: dict[str, Any], figure: str, key: str = "value") -> float | None:
    entry = (document.get("figures") or {}).get(figure)
    value = entry.get(key) if isinstance(entry, dict) else None
    return float(value) if describe.is_number(value) else None


def step_bounds(document: dict[str, Any]) -> dict[str, float]:
    """The least seconds of one step's FLOPs, as the run stored them beside its MFUs: at the matmul rate measured
    in the run, and at the datasheet's dense peak where it is known (an FP8 run: its linear layers' FLOPs at the
    FP8 rate or peak, the rest at BF16's)."""
    out: dict[str, float] = {}
    for name, label in (("mfu_measured_matmul", "measured matmul rate"), ("mfu_datasheet", "datasheet peak")):
        least = _number(document, name, "least_step_s")
        if least is not None and least > 0:
            out[label] = least
    return out


def time_text(document: dict[str, Any]) -> str:
    """``"one image: encoders 0.05 s + 30 × 0.081 s + VAE 0.12 s = 2.6 s"``, from the figures."""
    figures = document.get("figures") or {}
    encoders = sum(v.get("value") or 0 for k, v in figures.items()
                   if k.startswith("text_encoder ") and isinstance(v, dict) and describe.is_number(v.get("value")))
    step, vae = _number(document, "step_time"), _number(document, "vae_decode")
    steps = (document.get("params") or {}).get("steps")
    if step is None or vae is None or not isinstance(steps, int):
        return ""
    batch = (document.get("params") or {}).get("batch")
    return (f"The batch of {batch}: text encoders {encoders:.3g} s + {steps} × {step:.3g} s a step + VAE decode "
            f"{vae:.3g} s = {encoders + steps * step + vae:.3g} s")


def key_text(bar: str, bounds: dict[str, str]) -> str:
    """The key above a chart: the bar's colour and name, then each bound's dashes in its colour and its name (the
    lines carry no labels: one written on a line runs into the bar wherever the line crosses it)."""
    parts = [f'<span style="color:{BAR_COLOR}">■</span>&nbsp;{escape(bar)}']
    parts += [f'<span style="color:{color}">╌╌</span>&nbsp;{escape(label)}' for label, color in bounds.items()]
    return " &nbsp; ".join(parts)


class BarWithBound(pg.PlotWidget):
    """One measured bar with its bounds drawn across it as horizontal lines (named in the key above the chart)."""

    def __init__(self, title: str, unit: str) -> None:
        super().__init__()
        self.setBackground("w")
        self.setTitle(title, color="k", size="9pt")
        # seconds in SI steps (ms, µs) as pyqtgraph scales them; a rate's unit as written
        self.setLabel("left", "", units=unit) if unit == "s" else self.setLabel("left", unit)
        self.getAxis("bottom").setTicks([[]])
        self.setMouseEnabled(False, False)
        self.setMinimumHeight(PLOT_MIN_HEIGHT_PX)

    def draw(self, value: float | None, bounds: dict[str, tuple[float, str]]) -> None:
        self.clear()
        if value is None:
            return
        self.addItem(pg.BarGraphItem(x=[0], height=[value], width=0.6, brush=BAR_COLOR))
        top = value
        for bound, color in bounds.values():
            self.addItem(pg.InfiniteLine(pos=bound, angle=0, pen=pg.mkPen(color, width=2, style=Qt.PenStyle.DashLine)))
            top = max(top, bound)
        self.setXRange(-1, 1)
        self.setYRange(0, top * 1.15, padding=0)


class DiffusionView(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document: dict[str, Any] | None = None
        self.summary = text_label()
        self.per_minute = BarWithBound("Images per minute", "images/min")
        self.step = BarWithBound("Seconds per denoising step", "s")
        self.per_minute_key, self.step_key = QLabel(), QLabel()
        charts = QHBoxLayout()
        for key, plot in ((self.per_minute_key, self.per_minute), (self.step_key, self.step)):
            key.setWordWrap(True)
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
        if found:  # a document given without the load's check: said, never half drawn
            self.summary.setText(f"This run cannot be shown: {escape(found)}")
            for plot, key in ((self.per_minute, self.per_minute_key), (self.step, self.step_key)):
                plot.draw(None, {})
                key.setText("")
            return
        heading = (f"<b>{escape(diffusion_section.configuration(document))}</b>: {escape(figure_text(document))} on "
                   f"<b>{escape(str(document.get('device') or 'a device not recorded'))}</b> · "
                   f"{escape(describe.date_text(document))}")
        lines = [heading, escape(time_text(document))] + [escape(line) for line in shown_lines(document)]
        self.summary.setText("<br>".join(line for line in lines if line))
        bound = _number(document, "images_per_minute_bound")
        value = (document.get("figure") or {}).get("value")
        per_minute = {"bound: every step at the measured matmul rate": (bound, BOUND_COLOR)} if bound else {}
        self.per_minute.draw(float(value) if describe.is_number(value) else None, per_minute)
        self.per_minute_key.setText(key_text("images per minute", {k: c for k, (_, c) in per_minute.items()}))
        colors = {"measured matmul rate": BOUND_COLOR, "datasheet peak": SHEET_COLOR}
        step = {f"bound: the step’s FLOPs at the {k}": (v, colors[k]) for k, v in step_bounds(document).items()}
        self.step.draw(_number(document, "step_time"), step)
        self.step_key.setText(key_text("seconds per step", {k: c for k, (_, c) in step.items()}))


PAGE = FamilyPage("Image generation", DiffusionView, has_diffusion_page,
                  lambda page, document, _others: page.set_document(document))
