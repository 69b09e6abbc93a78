"""The data-path analyzer's charts: each stage's rate alone with the slowest link highlighted, and the
configurations it measured end to end against its default with the best one's code."""

from __future__ import annotations

import textwrap
from typing import Any, Sequence

from matplotlib.figure import Figure
from matplotlib.transforms import blended_transform_factory

from hwbench_gui.engine.datapath.reread import verdict_details
from hwbench_gui.engine.reports.chart_kit import Chart, drawn_docs, legend_below, new_figure, short, side_hue
from hwbench_gui.engine.reports.sides import Side
from hwbench_gui.engine.results import describe

#: The data path's links in chain order, as datapath.analyze names its stages.
DATAPATH_STAGES = (("disk_cold", "Disk (cache bypassed)"), ("disk_cached", "RAM (page cache)"),
                   ("cpu_n", "CPU decode + augment"), ("transfer", "PCIe copy"), ("compute", "GPU compute"),
                   ("end_to_end", "End-to-end training"))
#: The links named otherwise when the CPU trains (no copy to a device, no GPU), and on a chart of
#: runs of both kinds.
DATAPATH_CPU_STAGES = {"transfer": "Collate", "compute": "CPU compute"}
DATAPATH_MIXED_STAGES = {"transfer": "PCIe copy / collate", "compute": "GPU / CPU compute"}


def trains_on_cpu(doc: dict[str, Any]) -> bool:
    details = doc.get("details")
    context = details.get("context") if isinstance(details, dict) else None
    return isinstance(context, dict) and context.get("device") == "cpu"


def datapath_stages(docs: Sequence[dict[str, Any]]) -> list[tuple[str, str]]:
    """(stage key, title) of the chain for runs ``docs``: no GPU word where none ran on one."""
    cpu = {trains_on_cpu(doc) for doc in docs}
    names = DATAPATH_CPU_STAGES if cpu == {True} else DATAPATH_MIXED_STAGES if cpu == {True, False} else {}
    return [(key, names.get(key, title)) for key, title in DATAPATH_STAGES]


def is_datapath(doc: dict[str, Any]) -> bool:
    return (doc.get("benchmark") or {}).get("id") == "datapath.analyze"


def datapath_chart(sides: Sequence[Side]) -> Chart | None:
    """Each side's newest datapath.analyze run: stage rates as horizontal bars (log scale), the
    limiting stage in red, end-to-end hatched."""
    runs = []
    for side in sides:
        docs = [d for d in drawn_docs(side.docs) if is_datapath(d)]
        if docs:
            runs.append((side, docs[-1]))
    if not runs:
        return None
    figure, ax = new_figure(8.5, 1.2 + 0.45 * len(DATAPATH_STAGES) * len(runs))
    height = 0.8 / len(runs)
    for n, (side, doc) in enumerate(runs):
        details = verdict_details(doc)
        rates = {s.get("key"): s.get("rate_images_per_s") for s in details.get("stages") or [] if isinstance(s, dict)}
        ys, values, colors, hatches = [], [], [], []
        for y, (key, _) in enumerate(DATAPATH_STAGES):
            if not describe.is_number(rates.get(key)):
                continue
            ys.append(y + (n - (len(runs) - 1) / 2) * height)
            values.append(float(rates[key]))
            colors.append("#dc2626" if key == details.get("limiting_stage") else f"C{n}")
            hatches.append("//" if key == "end_to_end" else "")
        bars = ax.barh(ys, values, height * 0.9, color=colors, label=short(
            side_hue(side, sides, f"verdict: {details.get('bottleneck_name') or details.get('bottleneck')}"), 70))
        for bar, hatch in zip(bars, hatches):
            bar.set_hatch(hatch)
        ax.bar_label(bars, labels=[f"{v:,.0f}" for v in values], fontsize=7, padding=2)
    ax.set_xscale("log")
    titles = datapath_stages([doc for _, doc in runs])
    ax.set_yticks(range(len(titles)), [title for _, title in titles], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("images/s, each stage alone (log scale); red: the slowest link")
    ax.grid(axis="x", alpha=0.3, which="both")
    legend_below(ax)
    ax.set_title("Data path: where training waits", fontsize=10)
    texts = [f"{side.name}: {verdict_details(doc).get('verdict', '')}" if len(runs) > 1 else
             str(verdict_details(doc).get("verdict", "")) for side, doc in runs]
    return Chart("datapath", "Data path bottleneck", figure, " ".join(texts))



#: Characters of a code line in the what-ifs chart before it wraps (6-point monospace across 8.5 inches).
CODE_COLUMNS = 150


def datapath_whatif_chart(sides: Sequence[Side]) -> Chart | None:
    """The newest datapath.analyze run that tried its advice: each configuration it measured end to
    end as a bar against the default's rate (a line), the best one green, its code below."""
    runs = [d for side in sides for d in drawn_docs(side.docs)
            if is_datapath(d) and (d.get("details") or {}).get("tried")]
    if not runs:
        return None
    doc = runs[-1]
    details = verdict_details(doc)
    default = (doc.get("figure") or {}).get("value")
    best = details.get("best_found") or {}
    tried = [t for t in details["tried"] if isinstance(t, dict) and describe.is_number(t.get("rate_images_per_s"))]
    tried.sort(key=lambda t: -t["rate_images_per_s"])
    actions = {a.get("expected_images_per_s"): a.get("action") for a in details.get("advice") or []
               if isinstance(a, dict) and a.get("measured")}
    labels = ["default configuration"] + [short(str(actions.get(t["rate_images_per_s"]) or t.get("key")), 60, 2)
                                          for t in tried]
    values = [float(default) if describe.is_number(default) else 0.0] + [float(t["rate_images_per_s"]) for t in tried]
    # 6-point monospace across the page: long lines wrap under themselves instead of running off the chart
    code = "\n".join(wrapped for line in str(best.get("code") or "").splitlines()
                     for wrapped in (textwrap.wrap(line, CODE_COLUMNS, subsequent_indent="      ",
                                                   drop_whitespace=False) or [""]))
    code_lines = code.count("\n") + 1 if code else 0
    bars_in, code_in = 1.2 + 0.3 * len(labels), (0.35 + 0.118 * code_lines if code else 0.0)
    figure = Figure(figsize=(8.5, bars_in + code_in), layout="constrained")
    if code:  # an axes of its own below the bars, sized for its lines
        ax, code_ax = figure.subplots(2, 1, height_ratios=[bars_in, code_in])
        code_ax.axis("off")
        text = code_ax.text(0.01, 1.0, code, transform=blended_transform_factory(figure.transFigure, code_ax.transAxes),
                            family="monospace", fontsize=6, va="top", ha="left")
        # out of the layout: a code line wider than the figure would collapse the bars to nothing (the saved
        # image's tight box still takes it in whole)
        text.set_in_layout(False)
    else:
        ax = figure.add_subplot()
    colors = ["#16a34a" if key == best.get("key") else ("0.6" if i == 0 else "C0")
              for i, key in enumerate(["default"] + [t.get("key") for t in tried])]
    bars = ax.barh(range(len(labels)), values, 0.7, color=colors)
    ax.bar_label(bars, labels=[f"{v:,.0f}" for v in values], fontsize=7, padding=2)
    if describe.is_number(default):
        ax.axvline(float(default), color="0.2", linewidth=1)
    ax.set_yticks(range(len(labels)), labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("images/s end to end (line: the default configuration, the headline)")
    ax.grid(axis="x", alpha=0.3)
    ax.set_title("Data path: the analyzer's advice, measured", fontsize=10)
    return Chart("datapath_whatifs", "Data path what-ifs", figure,
                 str(best.get("text") or "") + (f" Code: {best.get('describe')}." if code else ""))
