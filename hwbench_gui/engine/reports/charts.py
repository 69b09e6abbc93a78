"""Static charts of result documents (matplotlib, no pyplot, no GUI backend).

:func:`build_charts` returns only the charts the documents hold data for:

- ``relative``: every headline figure relative to the baseline side (needs a comparison of ≥ 2 sides)
- ``throughput``: model throughput per model and framework, grouped bars (the seed's first chart)
- ``scaling``: 1 vs N GPU throughput of the same model configuration, with the ideal line
- ``gpu_util`` / ``vram`` / ``cpu_util``: the seed's telemetry per model and phase (train/infer)
- ``mixed_precision``: speed-up of each lower precision over FP32, from model runs that differ
  only in precision and from benchmarks that report one figure per precision (gpu.matmul)
- ``series:<benchmark id>``: the sweeps a benchmark stores in ``series`` (bandwidth vs size, ...)
- ``datapath``: the data-path analyzer's stage rates with the slowest link highlighted
- ``datapath_whatifs``: the configurations it measured end to end against its default, and the
  best one's code
- ``perf_per_watt``: headline figure per watt of mean GPU power, where power was sampled

Model benchmarks are the documents whose benchmark id starts with ``model.``; they are read through
their ``framework``, ``mode``, ``gpus`` and ``batch`` parameters.
"""

from __future__ import annotations

import functools
import math
import textwrap
from collections import defaultdict
from typing import Any, Sequence

from matplotlib.figure import Figure

from hwbench_gui.engine.models.common import MODELS
from hwbench_gui.engine.reports import families
from hwbench_gui.engine.reports.chart_kit import (  # noqa: F401 (PNG_DPI, to_png, to_svg: read as charts' own)
    PNG_DPI,
    Chart,
    drawn_docs,
    grouped_bars,
    legend_below,
    new_figure,
    param,
    short,
    side_hue,
    to_png,
    to_svg,
)
from hwbench_gui.engine.reports.compare import Comparison, Side, not_drawable
from hwbench_gui.engine.reports.datapath_charts import datapath_chart, datapath_whatif_chart, is_datapath
from hwbench_gui.engine.reports.power_charts import perf_per_watt_chart
from hwbench_gui.engine.results import bounded, describe
from hwbench_gui.engine.results.formatting import format_value
from hwbench_gui.engine.spec.precision import FP32, PRECISIONS, from_label
from hwbench_gui.engine.spec.precision import of_document as precision_of

PRECISION_ORDER = tuple(p.label for p in PRECISIONS)
FP32_NAMES = {"fp32"}
GIB = 1024 ** 3
#: One line style per side in sweep charts, so sides stay apart when colours run out.
LINESTYLES = ("-", "--", ":", "-.")


#: Beyond this many sides (a report of every run) charts summarise: the per-document charts draw
#: one series per machine instead of one per side, the relative chart the spread of the ratios.
MAX_CHART_SIDES = 8


def build_charts(sides: Sequence[Side], comparison: Comparison | None = None) -> list[Chart]:
    """Every chart the sides' documents hold data for, in a fixed order. A chart whose figures cannot be drawn
    (a ratio to a baseline of 1e-300 is infinite; matplotlib refuses such axes) is replaced by a page that says
    so: one chart never ends a report."""
    charts: list[Chart] = []
    if comparison is not None:
        # a run the table marks "not comparable" is never a bar beside the other side's run
        left_out = {id(doc) for doc in not_drawable(comparison)}
        sides = [Side(s.name, [d for d in s.docs if id(d) not in left_out], s.grouping) for s in sides]
    if comparison is not None and len(comparison.sides) > 1:
        # Bars while few sides have a ratio: published sides beside two machines mostly hold none of their rows.
        charts += _drawable("relative", lambda: _optional(relative_chart(comparison)
                                                          if len(_sides_with_ratios(comparison)) < MAX_CHART_SIDES
                                                          else relative_spread_chart(comparison)))
    if len(sides) > MAX_CHART_SIDES:
        from hwbench_gui.engine.reports.compare import sides_by_machine

        sides = sides_by_machine([doc for side in sides for doc in side.docs])
    charts += _drawable("throughput", lambda: _optional(throughput_chart(sides)))
    charts += _drawable("scaling", lambda: _optional(scaling_chart(sides)))
    for key, figure_name, title, scale, unit in TELEMETRY_CHARTS:
        charts += _drawable(key, lambda: _optional(telemetry_chart(sides, key, figure_name, title, scale, unit)))
    charts += _drawable("mixed_precision", lambda: _optional(mixed_precision_chart(sides)))
    charts += _drawable("series", lambda: series_charts(sides))
    for family in families.FAMILIES:
        charts += _drawable(family.name, functools.partial(family.charts, sides))
    charts += _drawable("datapath", lambda: _optional(datapath_chart(sides)))
    charts += _drawable("datapath_whatifs", lambda: _optional(datapath_whatif_chart(sides)))
    charts += _drawable("perf_per_watt", lambda: _optional(perf_per_watt_chart(sides)))
    return charts


#: An axis reaching beyond this cannot be ticked (matplotlib's arange overflows near 1e308).
MAX_AXIS_MAGNITUDE = 1e250


def _drawable(key: str, build: Any) -> list[Chart]:
    """The charts ``build`` makes, each replaced by a page saying why where it cannot be drawn."""
    try:
        built = build()
    except (ValueError, OverflowError, FloatingPointError) as exc:
        return [_not_drawn(key, key, str(exc))]
    out = []
    for chart in built:
        limits = [v for ax in chart.figure.axes for v in (*ax.get_xlim(), *ax.get_ylim())]
        if all(math.isfinite(v) and abs(v) < MAX_AXIS_MAGNITUDE for v in limits):
            out.append(chart)
        else:
            out.append(_not_drawn(chart.key, chart.title, "its figures span more than any axis can show"))
    return out


def _optional(chart: Chart | None) -> list[Chart]:
    return [chart] if chart is not None else []


def _not_drawn(key: str, title: str, why: str) -> Chart:
    figure = Figure(figsize=(6.0, 1.2))
    figure.text(0.02, 0.5, textwrap.fill(f"This chart is not drawn: {why}.", 90), fontsize=9, va="center")
    return Chart(key, title, figure, "The documents' figures are in the tables; this chart could not draw them.")


# -- helpers ---------------------------------------------------------------------------------------

def _is_model(doc: dict[str, Any]) -> bool:
    return str((doc.get("benchmark") or {}).get("id", "")).startswith("model.")


def _model_name(doc: dict[str, Any]) -> str:
    """The model alone ("ResNet-50"): every chart adds the mode itself, so the benchmark's title
    ("ResNet-50 training / inference") would name both modes on each bar."""
    bench = doc.get("benchmark") or {}
    key = str(bench.get("id", "")).removeprefix("model.")
    spec = MODELS.get(key)
    if spec is not None:
        return spec.title
    return str(bench.get("title") or key).removesuffix(" training / inference")


def _mode_word(doc: dict[str, Any]) -> str:
    mode = param(doc, "mode", "")
    return {"train": "training", "infer": "inference"}.get(mode, str(mode))


# -- comparison ------------------------------------------------------------------------------------

def _sides_with_ratios(comparison: Comparison) -> list[int]:
    """The sides, baseline apart, with a ratio to the baseline in at least one headline row."""
    return [i for i in range(len(comparison.sides)) if i != comparison.baseline
            and any(r.headline and r.cells[i].ratio is not None for r in comparison.rows)]


def relative_chart(comparison: Comparison) -> Chart | None:
    rows = [r for r in comparison.rows if r.headline
            and any(c.ratio is not None for i, c in enumerate(r.cells) if i != comparison.baseline)]
    if not rows:
        return None
    labels = [f"{r.benchmark_id} · {r.figure_name} ({r.precision})" for r in rows]
    others = _sides_with_ratios(comparison)
    # A row holds a bar only for the sides with a ratio in it, centred on its label: a published side with a figure
    # in one row leaves no gap in the others.
    in_row = [[i for i in others if r.cells[i].ratio is not None] for r in rows]
    widest = max(len(sides) for sides in in_row)
    height = max(2.5, 0.35 * len(rows) * widest + 1.2)
    figure, ax = new_figure(8.5, height)
    bar_h = 0.8 / widest
    for side_index in others:
        present = [(y + (sides.index(side_index) - (len(sides) - 1) / 2) * bar_h, r.cells[side_index].ratio,
                    r.cells[side_index].mark)
                   for y, (r, sides) in enumerate(zip(rows, in_row)) if side_index in sides]
        # Bars grow from 1 (the baseline) towards the ratio, so a loss points left of the line.
        ax.barh([y for y, _, _ in present], [v - 1.0 for _, v, _ in present], bar_h * 0.95, left=1.0,
                label=short(comparison.sides[side_index].name, 60))
        # Labels right of the bar or of the baseline line: never over the figure names on the left.
        for y, v, mark in present:
            ax.annotate(f"×{format_value(v)} {mark}", (max(v, 1.0), y), xytext=(3, 0), textcoords="offset points",
                        va="center", ha="left", fontsize=7)
    ax.axvline(1.0, color="black", linewidth=0.8)
    every = [r.cells[i].ratio for r in rows for i in others if r.cells[i].ratio]
    top = max([1.0, *every])
    if every and max(every) / min(every) > 10:  # a GPU box against a laptop: ×0.1 and ×1000 both readable
        ax.set_xscale("log")
        ax.set_xlim(min([1.0, *every]) / 2, top * 30)  # room for the labels right of the bars
    else:
        ax.set_xlim(min([0.0, *every]), top * 1.45)
    ax.set_yticks(range(len(rows)), [short(label, 60) for label in labels], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel(f"times the baseline ({short(comparison.baseline_name, 50)}); > 1 is better")
    ax.grid(axis="x", alpha=0.3)
    legend_below(ax)
    ax.set_title("Headline figures relative to the baseline", fontsize=10)
    return Chart("relative", "Each headline figure relative to the baseline", figure,
                 "Ratios above 1 are better than the baseline (lower-is-better figures inverted); the mark "
                 "says whether the difference is significant.")


def relative_spread_chart(comparison: Comparison) -> Chart | None:
    """Many sides: per headline row, the ratios of every side to the baseline as one box (median,
    quartiles, whiskers to the extremes), with the number of sides it summarises."""
    rows, ratios = [], []
    for row in comparison.rows:
        values = [c.ratio for i, c in enumerate(row.cells) if i != comparison.baseline and c.ratio is not None]
        if row.headline and values:
            rows.append(row)
            ratios.append(values)
    if not rows:
        return None
    figure, ax = new_figure(8.5, max(2.5, 0.4 * len(rows) + 1.2))
    ax.boxplot(ratios, orientation="horizontal", whis=(0, 100), widths=0.6, showfliers=False)
    ax.axvline(1.0, color="black", linewidth=0.8)
    labels = [f"{r.benchmark_id} · {r.figure_name} ({r.precision}), {len(v)} side(s)" for r, v in zip(rows, ratios)]
    ax.set_yticks(range(1, len(rows) + 1), [short(label, 60) for label in labels], fontsize=7)
    ax.invert_yaxis()
    every = [v for values in ratios for v in values]
    if max(every) / min(every) > 10:
        ax.set_xscale("log")
    ax.set_xlabel(f"times the baseline ({short(comparison.baseline_name, 50)}); > 1 is better")
    ax.grid(axis="x", alpha=0.3)
    ax.set_title(f"Headline figures of {len(_sides_with_ratios(comparison))} sides relative to the baseline",
                 fontsize=10)
    return Chart("relative", "Each headline figure relative to the baseline, summarised over the sides", figure,
                 "Box: the middle half of the sides' ratios and their median; whiskers: the lowest and highest "
                 "ratio. Each side's figure and mark are in the table.")


# -- the seed's model charts -----------------------------------------------------------------------

def throughput_chart(sides: Sequence[Side]) -> Chart | None:
    groups: list[str] = []
    series: dict[str, dict[str, float]] = defaultdict(dict)
    unit = ""
    for side in sides:
        for doc in drawn_docs(side.docs):
            if not _is_model(doc) or int(param(doc, "gpus", 1) or 1) != 1:
                continue
            group = f"{_model_name(doc)} {_mode_word(doc)}".strip()
            hue = side_hue(side, sides, param(doc, "framework"), precision_of(doc))
            if group not in groups:
                groups.append(group)
            series[hue].setdefault(group, float(doc["figure"]["value"]))
            unit = doc["figure"].get("unit") or unit
    if not groups:
        return None
    figure, ax = new_figure()
    grouped_bars(ax, groups, dict(series), unit or "throughput", "{:,.0f}")
    ax.set_title("Throughput per model and framework (1 GPU)", fontsize=10)
    return Chart("throughput", "Throughput per model and framework", figure,
                 "Images per second over the whole timed run, one GPU; newest run of each configuration.")


def scaling_chart(sides: Sequence[Side]) -> Chart | None:
    lines: dict[str, dict[int, float]] = defaultdict(dict)
    unit = ""
    for side in sides:
        for doc in drawn_docs(side.docs):
            if not _is_model(doc):
                continue
            batch = param(doc, "batch")
            label = side_hue(side, sides, _model_name(doc), param(doc, "framework"), param(doc, "mode"),
                             precision_of(doc), f"batch {batch}" if batch is not None else None)
            lines[label].setdefault(int(param(doc, "gpus", 1) or 1), float(doc["figure"]["value"]))
            unit = doc["figure"].get("unit") or unit
    lines = {k: v for k, v in lines.items() if len(v) >= 2 and 1 in v}
    if not lines:
        return None
    figure, ax = new_figure()
    for label, points in lines.items():
        gpus = sorted(points)
        line = ax.plot(gpus, [points[g] for g in gpus], marker="o", label=short(label, 60))[0]
        ax.plot(gpus, [points[1] * g for g in gpus], linestyle="--", color=line.get_color(), alpha=0.5, linewidth=1)
        last = gpus[-1]
        ax.annotate(f"{points[last] / (points[1] * last):.0%} of ideal", (last, points[last]), fontsize=7,
                    textcoords="offset points", xytext=(4, -10))
    ax.set_xlabel("GPUs")
    ax.set_ylabel(unit or "throughput")
    ax.set_xticks(sorted({g for p in lines.values() for g in p}))
    ax.grid(alpha=0.3)
    legend_below(ax)
    ax.set_title("1 vs N GPU scaling (dashed: ideal linear scaling)", fontsize=10)
    return Chart("scaling", "1 vs N GPU scaling", figure,
                 "Total throughput against the number of GPUs; dashed lines are the one-GPU figure times N.")


#: (chart key, telemetry seed figure, title, divisor, unit)
TELEMETRY_CHARTS = (
    ("gpu_util", "gpu_util_percent", "GPU utilisation per model and phase (mean over the run)", 1.0, "%"),
    ("vram", "gpu_vram_used_bytes", "GPU memory used per model (max over the run)", GIB, "GiB"),
    ("cpu_util", "cpu_util_percent", "CPU utilisation per model (mean over the run)", 1.0, "%"),
)


def telemetry_chart(sides: Sequence[Side], key: str, seed_figure: str, title: str, divisor: float,
                    unit: str) -> Chart | None:
    statistic = "max" if key == "vram" else "mean"
    groups: list[str] = []
    series: dict[str, dict[str, float]] = defaultdict(dict)
    for side in sides:
        for doc in drawn_docs(side.docs):
            telemetry = doc.get("telemetry") if isinstance(doc.get("telemetry"), dict) else {}
            entry = (telemetry.get("seed") or {}).get(seed_figure) or {}
            value = entry.get(statistic) if isinstance(entry, dict) else None
            if not _is_model(doc) or not describe.is_number(value):
                continue
            group = _model_name(doc)
            hue = side_hue(side, sides, param(doc, "framework"), param(doc, "mode"), precision_of(doc))
            if group not in groups:
                groups.append(group)
            series[hue].setdefault(group, float(value) / divisor)
    if not groups:
        return None
    figure, ax = new_figure()
    grouped_bars(ax, groups, dict(series), unit, "{:.1f}")
    ax.set_title(title, fontsize=10)
    return Chart(key, title, figure, "Sampled every telemetry interval during the run (the seed's figures).")


def _precision_name(name: str) -> str | None:
    known = from_label(name)
    return known.label if known else None


def mixed_precision_chart(sides: Sequence[Side]) -> Chart | None:
    groups: list[str] = []
    series: dict[str, dict[str, float]] = defaultdict(dict)
    for side in sides:
        docs = drawn_docs(side.docs)
        # Model runs: the same configuration at FP32 and at other precisions.
        by_config: dict[tuple, dict[str, float]] = defaultdict(dict)
        for doc in docs:
            if not _is_model(doc) or describe.is_published(doc):
                continue
            config = (_model_name(doc), param(doc, "framework"), param(doc, "mode"), param(doc, "batch"),
                      param(doc, "gpus", 1))
            by_config[config].setdefault(precision_of(doc), float(doc["figure"]["value"]))
        for (model, framework, mode, _batch, _gpus), values in by_config.items():
            if FP32.label not in values or len(values) < 2:
                continue
            group = side_hue(side, sides, model, framework, mode)
            for precision, value in values.items():
                if precision != FP32.label:
                    _add_group(groups, group)
                    series[precision][group] = value / values[FP32.label]
        # Benchmarks that store one figure per precision (gpu.matmul).
        newest: dict[str, dict[str, Any]] = {}
        for doc in docs:
            newest[(doc.get("benchmark") or {}).get("id")] = doc
        for bench_id, doc in newest.items():
            figures = {_precision_name(k): v.get("value") for k, v in (doc.get("figures") or {}).items()
                       if isinstance(v, dict) and _precision_name(k) and describe.is_number(v.get("value"))}
            if FP32.label not in figures or len(figures) < 2 or not figures[FP32.label]:
                continue
            group = side_hue(side, sides, bench_id)
            for precision, value in figures.items():
                if precision != FP32.label:
                    _add_group(groups, group)
                    series[precision][group] = value / figures[FP32.label]
    if not groups:
        return None
    ordered = {p: series[p] for p in PRECISION_ORDER if p in series}
    figure, ax = new_figure()
    grouped_bars(ax, groups, ordered, "speed-up over FP32 (×)", "×{:.2f}")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_title("Lower precision speed-up over FP32 (TF32 off)", fontsize=10)
    return Chart("mixed_precision", "Mixed precision speed-up over FP32", figure,
                 "Throughput at each precision divided by FP32 throughput of the same configuration.")


def _add_group(groups: list[str], group: str) -> None:
    if group not in groups:
        groups.append(group)


# -- sweeps and efficiency -------------------------------------------------------------------------

def series_charts(sides: Sequence[Side]) -> list[Chart]:
    """One chart per benchmark with ``series``: the newest run per side, every series as a line."""
    by_bench: dict[str, list[tuple[Side, dict[str, Any]]]] = defaultdict(list)
    for side in sides:
        newest: dict[str, dict[str, Any]] = {}
        for doc in drawn_docs(side.docs):
            # datapath stages and language-model curves get charts of their own
            if doc.get("series") and not is_datapath(doc) and not families.draws_its_series(doc):
                newest[(doc.get("benchmark") or {}).get("id")] = doc
        for bench_id, doc in newest.items():
            by_bench[bench_id].append((side, doc))
    charts = []
    for bench_id, entries in sorted(by_bench.items()):
        figure, ax = new_figure()
        x_log = False
        x_label = y_label = ""
        reduced: list[str] = []
        for side_number, (side, doc) in enumerate(entries):
            linestyle = LINESTYLES[side_number % len(LINESTYLES)]
            for s in doc["series"]:
                if not isinstance(s, dict):
                    continue
                xs, ys = s.get("x") or [], s.get("y") or []
                points = [(x, y) for x, y in zip(xs, ys) if describe.is_number(x) and describe.is_number(y)]
                if not points:
                    continue
                shown = bounded.shown_indices(len(points))
                reduced += [bounded.note(f"points of {short(str(s.get('label')), 40, 1)}", len(points), len(shown))]
                points = [points[i] for i in shown]
                label = side_hue(side, sides, s.get("label"))
                line = ax.plot([x for x, _ in points], [y for _, y in points], marker="o", markersize=3,
                               linestyle=linestyle, label=short(label, 60))[0]
                spread = s.get("y_spread") or []
                band = [(x, lo_hi) for x, lo_hi in zip(xs, spread)
                        if isinstance(lo_hi, list) and len(lo_hi) == 2 and all(map(describe.is_number, lo_hi))
                        and describe.is_number(x)]
                if band:
                    ax.fill_between([x for x, _ in band], [b[0] for _, b in band], [b[1] for _, b in band],
                                    color=line.get_color(), alpha=0.15, linewidth=0)
                x_log = x_log or bool(s.get("x_log"))
                x_label = x_label or str(s.get("x_label") or "")
                y_label = y_label or str(s.get("y_label") or "")
        if not ax.lines:
            continue
        if x_log:
            ax.set_xscale("log", base=2)
        ax.set_xlabel(x_label)
        ax.set_ylabel(y_label)
        ax.grid(alpha=0.3, which="both")
        legend_below(ax)
        title = entries[0][1].get("benchmark", {}).get("title") or bench_id
        ax.set_title(f"{title}: {y_label} vs {x_label}", fontsize=10)
        charts.append(Chart(f"series:{bench_id}", f"{title} ({bench_id})", figure,
                            "Median per point; the band is p5–p95 of the repeats."
                            + "".join(f" {note}." for note in reduced if note)))
    return charts


