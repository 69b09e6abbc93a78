"""Image generation (diffusion.infer) read out of result documents: the evaluation report's rows (images per
minute with its bound, seconds per denoising step, MFU against the datasheet peak and the measured matmul rate,
memory estimate beside the measured peak), the CSV rows of the same, and the chart of images per minute against
its bound per configuration.

Documents are foreign input: every field used is checked; a document missing one is passed over, not fatal.
:func:`groups` is plain data (what the chart and the GUI page draw); :func:`chart` draws it for HTML and PDF.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from hwbench_gui.engine.reports.family import Family, PdfTable, figure_value, fraction_of_limit, has_figures
from hwbench_gui.engine.results import describe, formatting
from hwbench_gui.engine.spec.precision import of_document as precision_of

DIFFUSION_ID = "diffusion.infer"
#: The CSV rows' columns (one row per configuration's newest run).
CSV_COLUMNS = ("machine", "model", "size", "steps", "precision", "batch", "step_time_s", "images_per_minute",
               "images_per_minute_bound", "share_of_bound", "mfu_datasheet", "mfu_measured_matmul",
               "memory_estimate_gib", "memory_peak_gib", "started_at")


def is_diffusion(doc: Any) -> bool:
    return isinstance(doc, dict) and (doc.get("benchmark") or {}).get("id") == DIFFUSION_ID


def configuration(doc: dict[str, Any]) -> str:
    """``"sdxl · 1024² · 30 steps · BF16 · batch 1"``: the parameters that decide comparability."""
    p = doc.get("params") or {}
    compiled = "" if p.get("compile") in (None, "true") else " · eager"
    return (f"{p.get('model')} · {p.get('size')}² · {p.get('steps')} steps · {precision_of(doc)} · "
            f"batch {p.get('batch')}{compiled}")


def _newest(docs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The newest good run of each configuration on each machine, newest first."""
    chosen: dict[tuple[str, str], dict[str, Any]] = {}
    for doc in sorted((d for d in docs if is_diffusion(d) and has_figures(d)),
                      key=lambda d: str(d.get("started_at") or ""), reverse=True):
        chosen.setdefault((describe.machine_name(doc), configuration(doc)), doc)
    return list(chosen.values())


@dataclass
class Row:
    """One run of the section, as text."""

    configuration: str
    images_per_minute: str
    step_time: str
    mfu_datasheet: str
    mfu_measured: str
    memory: str
    device: str
    date: str


def _fraction(doc: dict[str, Any], name: str) -> str:
    entry = (doc.get("figures") or {}).get(name)
    if not isinstance(entry, dict):
        return "—"
    value = entry.get("value")
    if not describe.is_number(value) or value > 1.0:
        return f"not measured: {entry.get('reason') or 'no limit'}"
    return f"{value:.1%}"


def _row(doc: dict[str, Any]) -> Row:
    figure = doc["figure"]
    bound = figure_value(doc, "images_per_minute_bound")
    per_minute = formatting.format_value(figure.get("value"), str(figure.get("unit") or ""))
    if bound is not None:
        per_minute += f" (bound {bound:.4g} at the measured matmul rate)"
    step = figure_value(doc, "step_time")
    estimate, peak = figure_value(doc, "memory_estimate_gib"), figure_value(doc, "memory_peak_gib")
    memory = f"estimate {estimate:.3g} GiB" if estimate is not None else ""
    if peak is not None:
        memory += f", measured peak {peak:.3g} GiB"
    date = describe.date_text(doc)
    if describe.is_published(doc):  # a published figure has no run date: who published it is what places it
        publisher = str((doc.get("reference") or {}).get("publisher") or "its source")
        date = f"published by {publisher}" + (f", {date}" if date else "")
    return Row(configuration(doc), per_minute, f"{step:.4g} s" if step is not None else "—",
               _fraction(doc, "mfu_datasheet"), _fraction(doc, "mfu_measured_matmul"), memory,
               str(doc.get("device") or ""), date)


def build(docs: Sequence[dict[str, Any]]) -> list[Row]:
    """The section's rows: the newest good run of each configuration; [] without any."""
    return [_row(doc) for doc in _newest(docs)]


def lines(rows: Sequence[Row]) -> list[str]:
    """The section as plain text (the terminal's evaluation)."""
    out = ["", "Image generation (images per minute with its bound; MFU against the datasheet and the measured "
               "matmul):"]
    for row in rows:
        out += [f"  {row.configuration} on {row.device} ({row.date})",
                f"    {row.images_per_minute}; step {row.step_time}; MFU vs the datasheet: {row.mfu_datasheet}; "
                f"vs the measured matmul: {row.mfu_measured}"]
        if row.memory:
            out.append(f"    memory: {row.memory}")
    return out


def pdf_tables(rows: Sequence[Row], usable_in: float) -> list[PdfTable]:
    """The section's one table for the PDF evaluation."""
    widths = [2.8, 2.0, 0.9, 1.5, 1.5]
    widths.append(usable_in - sum(widths))
    names = ("Configuration", "Images/min", "Step", "MFU (datasheet)", "MFU (measured matmul)", "Memory · device")
    return [("Image generation: images per minute, step time and model FLOPs utilisation", list(zip(names, widths)),
             [([r.configuration, r.images_per_minute, r.step_time, r.mfu_datasheet, r.mfu_measured,
                f"{r.memory}; {r.device} ({r.date})"], ["white"] * 6) for r in rows])]


def csv_rows(docs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per configuration's newest run: step time, images per minute with its bound and the shares; a
    missing figure is None (an empty cell), never text in a number's column."""
    out = []
    for doc in _newest(docs):
        p = doc.get("params") or {}
        out.append({"machine": describe.machine_name(doc), "model": p.get("model"), "size": p.get("size"),
                    "steps": p.get("steps"), "precision": precision_of(doc), "batch": p.get("batch"),
                    "step_time_s": figure_value(doc, "step_time"),
                    "images_per_minute": float(doc["figure"]["value"]),
                    "images_per_minute_bound": figure_value(doc, "images_per_minute_bound"),
                    "share_of_bound": fraction_of_limit(doc, "images_per_minute_share"),
                    "mfu_datasheet": fraction_of_limit(doc, "mfu_datasheet"),
                    "mfu_measured_matmul": fraction_of_limit(doc, "mfu_measured_matmul"),
                    "memory_estimate_gib": figure_value(doc, "memory_estimate_gib"),
                    "memory_peak_gib": figure_value(doc, "memory_peak_gib"), "started_at": doc.get("started_at")})
    return out


@dataclass
class Group:
    """One bar of the chart: a configuration's images per minute, its bound, its step time and MFUs."""

    label: str
    images_per_minute: float
    bound: float | None
    step_s: float | None
    mfu_datasheet: float | None
    mfu_measured: float | None


def groups(docs: Sequence[dict[str, Any]]) -> list[Group]:
    out = []
    for doc in reversed(_newest(docs)):
        machine = describe.machine_name(doc)
        out.append(Group(f"{configuration(doc)}\n{machine}", float(doc["figure"]["value"]),
                         figure_value(doc, "images_per_minute_bound"), figure_value(doc, "step_time"),
                         fraction_of_limit(doc, "mfu_datasheet"), fraction_of_limit(doc, "mfu_measured_matmul")))
    return out


def draw(axes: Any, drawn: Sequence[Group]) -> None:
    """Images per minute per configuration as bars, each with its bound (the same image at the measured matmul
    rate) drawn as a tick: what the chart of the reports and the GUI page both show."""
    positions = list(range(len(drawn)))
    axes.barh(positions, [g.images_per_minute for g in drawn], color="#4c72b0", label="images per minute")
    bounded = [(y, g.bound) for y, g in zip(positions, drawn) if g.bound is not None]
    if bounded:
        axes.scatter([b for _, b in bounded], [y for y, _ in bounded], marker="|", s=400, color="crimson",
                     label="bound: every step at the measured matmul rate", zorder=3)
    for y, g in zip(positions, drawn):
        step = f", step {g.step_s:.3g} s" if g.step_s is not None else ""
        mfu = f", MFU {g.mfu_datasheet:.0%}" if g.mfu_datasheet is not None else ""
        axes.annotate(f"{g.images_per_minute:.3g}/min{step}{mfu}", (g.images_per_minute, y), xytext=(3, 6),
                      textcoords="offset points", va="center", fontsize=7)
    axes.set_yticks(positions, [g.label for g in drawn], fontsize=7)
    axes.invert_yaxis()
    axes.set_xlabel("images per minute (at the run's step count)")
    axes.grid(axis="x", alpha=0.3)
    axes.legend(fontsize=7, loc="lower right")


def chart(docs: Sequence[dict[str, Any]]) -> Any | None:
    """The section's chart as a :class:`~hwbench_gui.engine.reports.chart_kit.Chart`; None without a good run."""
    from hwbench_gui.engine.reports.chart_kit import Chart, new_figure

    drawn = groups(docs)
    if not drawn:
        return None
    figure, axes = new_figure(9.0, 2.0 + 0.55 * len(drawn))
    draw(axes, drawn)
    figure.suptitle("Image generation: images per minute against the bound", fontsize=10)
    return Chart("diffusion", "Image generation: images per minute and step time", figure,
                 "Newest run of each configuration. Image time = text encoders + steps × the median denoising step + "
                 "VAE decode, each timed apart; the bound is the same image with every step at the matmul rate the "
                 "run measured at the denoiser's shapes. MFU = FLOPs per step (PyTorch's FLOP counter) ÷ step time ÷ "
                 "the datasheet's dense peak.")


def charts(sides: Sequence[Any]) -> list[Any]:
    """The chart of the last side's runs (a report's newest side; an evaluation's one machine)."""
    drawn = chart([doc for side in sides[-1:] for doc in side.docs])
    return [drawn] if drawn is not None else []


FAMILY = Family(
    name=DIFFUSION_ID, benchmark_ids=frozenset({DIFFUSION_ID}), build=build, text_lines=lines,
    html_template="diffusion_section.html.j2", pdf_tables=pdf_tables, charts=charts,
    gui_page="hwbench_gui.ui.benchmarks.diffusion_view:PAGE", csv_columns=CSV_COLUMNS, csv_rows=csv_rows)
