"""Language-model training (llm.train) read out of result documents: the evaluation report's rows (tokens/s,
MFU against the datasheet peak and against the matmul rate measured in the run, peak memory beside the
estimate) and the chart of tokens/s and MFU per model and method.

Documents are foreign input: every field used is checked; a document missing one is passed over, not fatal.
:func:`groups` is plain data (what the chart draws); :func:`chart` draws it for HTML and PDF reports.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from hwbench_gui.engine.reports.family import Family, PdfTable, figure_value, fraction_of_limit, has_figures
from hwbench_gui.engine.results import describe, formatting
from hwbench_gui.engine.spec.precision import BF16, FP8
from hwbench_gui.engine.spec.precision import of_document as precision_of

TRAIN_ID = "llm.train"


def is_llm_train(doc: Any) -> bool:
    return isinstance(doc, dict) and (doc.get("benchmark") or {}).get("id") == TRAIN_ID


def configuration(doc: dict[str, Any]) -> str:
    """``"llama-3.1-8b · LoRA r16 · BF16-AMP · seq 2048 · 4×2048 tokens/step"``: what decides comparability."""
    p = doc.get("params") or {}
    method = f"LoRA r{p.get('lora_rank')}" if p.get("method") == "lora" else "full"
    steps = (doc.get("figures") or {}).get("tokens_per_step") or {}
    per_step = steps.get("value") if isinstance(steps, dict) else None
    extra = [f"micro-batch {p.get('micro_batch')}"]
    if p.get("grad_accum", 1) != 1:
        extra.append(f"accumulation {p.get('grad_accum')}")
    if p.get("checkpointing"):
        extra.append("checkpointing")
    if (p.get("gpus") or 1) != 1:
        where = "GPUs" if str(doc.get("device") or "").startswith("cuda") else "CPU ranks"
        extra.append(f"{p.get('gpus')} {where} ({p.get('sharding')})")
    if describe.is_number(per_step):
        extra.append(f"{int(per_step):,} tokens/step")
    return f"{p.get('model')} · {method} · {precision_of(doc)} · seq {p.get('seq')} · " + ", ".join(extra)


@dataclass
class TrainRow:
    """One run of the section, as text."""

    configuration: str
    tokens_per_s: str
    spread: str
    mfu_datasheet: str
    mfu_measured: str
    memory: str
    device: str
    date: str


def _fraction(doc: dict[str, Any], name: str, limit_key: str, limit_unit: str) -> str:
    """``"41.2% of 989.5 TFLOP/s (datasheet)"``; an FP8 run's names both limits its FLOPs were split between."""
    entry = (doc.get("figures") or {}).get(name)
    if not isinstance(entry, dict):
        return "—"
    value = entry.get("value")
    if describe.is_number(value) and value > 1.0:  # a document from before benchmarks stopped storing these
        return "limit not measured reliably here: the figure is above it (no share above 100 %)"
    if not describe.is_number(value):
        return f"not measured: {entry.get('reason') or 'no limit'}"
    limit, fp8_limit = entry.get(limit_key), entry.get(f"fp8_{limit_key}")
    if describe.is_number(limit) and describe.is_number(fp8_limit):
        return (f"{value:.1%} of {fp8_limit:.4g} {FP8.label} (block matmuls) and {limit:.4g} {BF16.label} (the rest) "
                f"{limit_unit}")
    return f"{value:.1%}" + (f" of {limit:.4g} {limit_unit}" if describe.is_number(limit) else "")


def _row(doc: dict[str, Any]) -> TrainRow:
    figure = doc["figure"]
    peak, estimate = figure_value(doc, "peak_allocated_gib"), figure_value(doc, "memory_estimate_gib")
    memory = f"estimate {estimate:.3g} GiB" if estimate is not None else ""
    if peak is not None:
        memory += f", peak {peak:.3g} GiB" + (f" ({peak / estimate:.0%} of the estimate)" if estimate else "")
    return TrainRow(configuration(doc), formatting.format_value(figure.get("value"), str(figure.get("unit") or "")),
                    formatting.spread_text(doc.get("stats")) if isinstance(doc.get("stats"), dict) else "",
                    _fraction(doc, "mfu_datasheet", "peak_tflops", "TFLOP/s (datasheet)"),
                    _fraction(doc, "mfu_measured_matmul", "matmul_tflops", "TFLOP/s (measured)"),
                    memory, str(doc.get("device") or ""), describe.date_text(doc))


def _newest(docs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The newest good run of each configuration, in the order of their first appearance (newest first)."""
    chosen: dict[str, dict[str, Any]] = {}
    for doc in sorted((d for d in docs if is_llm_train(d) and has_figures(d)),
                      key=lambda d: str(d.get("started_at") or ""), reverse=True):
        chosen.setdefault(configuration(doc), doc)
    return list(chosen.values())


def build(docs: Sequence[dict[str, Any]]) -> list[TrainRow]:
    """The section's rows: the newest good run of each configuration; [] without any."""
    return [_row(doc) for doc in _newest(docs)]


def lines(rows: Sequence[TrainRow]) -> list[str]:
    """The section as plain text (the terminal's evaluation)."""
    out = ["", "Language-model training (tokens/s; MFU against the datasheet and the measured matmul):"]
    for row in rows:
        out += [f"  {row.configuration} on {row.device} ({row.date})",
                f"    {row.tokens_per_s} {row.spread}; MFU vs the datasheet: {row.mfu_datasheet}; "
                f"vs the measured matmul: {row.mfu_measured}"]
        if row.memory:
            out.append(f"    memory: {row.memory}")
    return out


def pdf_tables(rows: Sequence[TrainRow], usable_in: float) -> list[PdfTable]:
    """The section's one table for the PDF evaluation."""
    widths = [3.2, 1.1, 1.5, 1.6, 1.6]
    widths.append(usable_in - sum(widths))
    names = ("Configuration", "Tokens/s", "Spread", "MFU (datasheet)", "MFU (measured matmul)", "Memory · device")
    return [("Language-model training: tokens/s and model FLOPs utilisation", list(zip(names, widths)),
             [([r.configuration, r.tokens_per_s, r.spread, r.mfu_datasheet, r.mfu_measured,
                f"{r.memory}; {r.device} ({r.date})"], ["white"] * 6) for r in rows])]


@dataclass
class Group:
    """One bar group of the chart: a model and method at one precision and sequence."""

    label: str
    tokens_per_s: float
    mfu_datasheet: float | None
    mfu_measured: float | None


def groups(docs: Sequence[dict[str, Any]]) -> list[Group]:
    """What :func:`chart` draws: per configuration, tokens/s and both MFUs (single-GPU and multi-GPU alike)."""
    out = []
    for doc in reversed(_newest(docs)):
        p = doc.get("params") or {}
        method = f"LoRA r{p.get('lora_rank')}" if p.get("method") == "lora" else "full"
        where = "GPUs" if str(doc.get("device") or "").startswith("cuda") else "CPU ranks"
        gpus = f" ×{p.get('gpus')} {where}" if (p.get("gpus") or 1) != 1 else ""
        out.append(Group(f"{p.get('model')}\n{method} · {precision_of(doc)} · seq {p.get('seq')}{gpus}",
                         float(doc["figure"]["value"]), fraction_of_limit(doc, "mfu_datasheet"),
                         fraction_of_limit(doc, "mfu_measured_matmul")))
    return out


def chart(docs: Sequence[dict[str, Any]]) -> Any | None:
    """Tokens/s (left) and MFU against the datasheet peak and the measured matmul rate (right) per model and
    method, as a :class:`~hwbench_gui.engine.reports.chart_kit.Chart`; None without a good llm.train run."""
    from hwbench_gui.engine.reports.chart_kit import Chart, new_figure

    drawn = groups(docs)
    if not drawn:
        return None
    figure, _ = new_figure(9.0, 2.0 + 0.45 * len(drawn))
    figure.clear()
    rates, mfus = figure.subplots(1, 2, sharey=True)
    positions = list(range(len(drawn)))
    rates.barh(positions, [g.tokens_per_s for g in drawn], color="#4c72b0")
    for y, g in zip(positions, drawn):
        rates.annotate(f"{g.tokens_per_s:,.0f}", (g.tokens_per_s, y), xytext=(3, 0), textcoords="offset points",
                       va="center", fontsize=7)
    rates.set_yticks(positions, [g.label for g in drawn], fontsize=7)
    rates.invert_yaxis()
    rates.set_xlabel("tokens/s (all GPUs)")
    rates.grid(axis="x", alpha=0.3)
    height = 0.38
    for offset, key, label, color in ((-height / 2, "mfu_datasheet", "MFU, datasheet dense peak", "#dd8452"),
                                      (height / 2, "mfu_measured", "MFU, measured matmul rate", "#55a868")):
        values = [getattr(g, key) for g in drawn]
        ys = [y + offset for y, v in zip(positions, values) if v is not None]
        xs = [v for v in values if v is not None]
        if not xs:
            continue
        mfus.barh(ys, xs, height=height, color=color, label=label)
        for x, y in zip(xs, ys):
            mfus.annotate(f"{x:.0%}" if x >= 0.1 else f"{x:.1%}", (x, y), xytext=(3, 0), textcoords="offset points",
                          va="center", fontsize=7)
    mfus.axvline(1.0, color="crimson", linewidth=1, linestyle=":")
    mfus.set_xlabel("model FLOPs utilisation (per GPU)")
    mfus.set_xlim(0, 1.05)
    mfus.grid(axis="x", alpha=0.3)
    mfus.legend(fontsize=7, loc="lower right")
    figure.suptitle("Language-model training: tokens/s and MFU per model and method", fontsize=10)
    return Chart("llm_train", "Language-model training: tokens/s and MFU", figure,
                 "Newest run of each configuration. MFU = tokens/s per GPU × model FLOPs per token (6N + attention; "
                 "a frozen-base LoRA step 4N + attention + the adapters') ÷ the peak: the datasheet's dense peak in "
                 f"the run's precision, and the matmul rate the same run measured ({FP8.label} runs: the block "
                 f"matmuls' FLOPs against the {FP8.label} peak or rate, the rest against the {BF16.label} one). A bar "
                 "missing: "
                 "that limit is not known here (the CPU has no datasheet peak).")


def charts(sides: Sequence[Any]) -> list[Any]:
    """The chart of the last side's runs (a report's newest side; an evaluation's one machine)."""
    drawn = chart([doc for side in sides[-1:] for doc in side.docs])
    return [drawn] if drawn is not None else []


FAMILY = Family(
    name=TRAIN_ID, benchmark_ids=frozenset({TRAIN_ID}), build=build, text_lines=lines,
    html_template="llm_train_section.html.j2", pdf_tables=pdf_tables, charts=charts,
    gui_page="hwbench_gui.ui.benchmarks.llm_train_view:PAGE")
