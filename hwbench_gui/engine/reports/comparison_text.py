"""A comparison (:mod:`.compare`) as text: each cell, each row's label, and the plain-text table the CLI prints."""

from __future__ import annotations

from hwbench_gui.engine.reports.compare import Cell, Comparison, Row, runs_to_match
from hwbench_gui.engine.reports.comparability import resolved_params
from hwbench_gui.engine.reports.marks import (
    MARK_BASELINE,
    MARK_CANCELLED,
    MARK_FAILED,
    MARK_NO_BASELINE,
    MARK_NOT_COMPARABLE,
    MARK_TOO_FEW,
    MARK_UNTESTED,
)
from hwbench_gui.engine.reports.metric import Metric
from hwbench_gui.engine.results import describe, formatting


#: Suggested like-runs listed per side in the text table (the rest counted).
SHOWN_SUGGESTIONS = 5


def suggestions_text(comparison: Comparison) -> list[str]:
    """Lines that say how to get a comparable run where a side has none, with the command."""
    lines = []
    for index, docs in runs_to_match(comparison).items():
        paths = [str(d["_path"]) for d in docs if d.get("_path")]
        if not paths:
            continue
        lines.append(f"  [{index + 1}] has no comparable run for {len(docs)} of the baseline's result(s); on that "
                     f"machine, measure what the baseline measured (the Reports tab: \"Run like this here\"):")
        lines += [f"      hwbench run --like {path}" for path in paths[:SHOWN_SUGGESTIONS]]
        if len(paths) > SHOWN_SUGGESTIONS:
            lines.append(f"      … and {len(paths) - SHOWN_SUGGESTIONS} more (compare --json lists them all)")
    return lines


def spread_text(metric: Metric | None) -> str:
    if metric is None or metric.value is None:
        return ""
    return formatting.spread_text(metric.stats, metric.published)


def older_runs_text(cell: Cell) -> str:
    """``"2 older runs: 16,122–16,310 tokens/s"``: the other runs of this configuration on this side, whose
    spread tells how much the figure moves between sittings or hosts of one machine kind; empty for none."""
    if not cell.older_runs or cell.metric is None:
        return ""
    text = f"{cell.older_runs} older run{'s' if cell.older_runs > 1 else ''}"
    if cell.older_values:
        low, high = min(cell.older_values), max(cell.older_values)
        unit = cell.metric.unit
        text += ": " + (formatting.format_value(low, unit) if low == high else
                        f"{formatting.format_value(low, '')}–{formatting.format_value(high, unit)}")
    return text


def resolved_text(cell: Cell) -> str:
    """``"micro_batch 10"``: what this cell's run chose itself where it was asked to (empty otherwise)."""
    if cell.metric is None or cell.metric.failed:
        return ""
    return ", ".join(f"{k} {describe.param_value(v)}" for k, v in resolved_params(cell.metric.doc).items())


def cell_text(cell: Cell) -> str:
    """``"2,259 img/s ×1.05 better"`` or ``"failed"`` etc. for tables; a value the run chose itself follows
    in brackets (``"16,522 tokens/s ×1.15 better [micro_batch 10]"``)."""
    metric = cell.metric
    if metric is None:
        return "—"
    if metric.failed:
        return cell.mark or MARK_FAILED
    text = formatting.format_value(metric.value, metric.unit)
    if cell.ratio is not None:
        # two decimals, but a GPU box against a laptop must not read "×0.00"
        text += f" ×{cell.ratio:.2f}" if cell.ratio >= 0.01 else f" ×{cell.ratio:.2g}"
    if cell.mark and cell.mark != MARK_BASELINE:
        text += f" {cell.mark}"
    own = [flag for flag, on in (("busy", cell.busy), ("few repeats", cell.few_repeats and cell.mark != MARK_TOO_FEW),
                                 ("inconsistent", bool(cell.inconsistent))) if on]
    if own:
        text += f" ({', '.join(own)})"
    chosen = resolved_text(cell)
    return text + (f" [{chosen}]" if chosen else "")


def row_label(row: Row) -> str:
    label = row.benchmark_id
    if row.figure_name:
        label += f" · {row.figure_name}"
    return label


def side_summary(comparison: Comparison, index: int) -> str:
    """``"vm · NVIDIA H200: geometric mean ×1.036 over 29; better 16, …"``: side ``index``'s composite and marks,
    as the PDF's header and the Compare page give them (a published side: its ratio over what it shares with the
    baseline)."""
    side, summary = comparison.sides[index], comparison.summaries[index]
    geo = "—" if summary.geomean is None else f"×{summary.geomean:.3f}"
    if index != comparison.baseline and summary.n_pair != summary.n_geomean:
        geo += (f" (×{summary.pair_geomean:.3f} over the {summary.n_pair} shared with the baseline)"
                if summary.pair_geomean is not None else " (nothing shared with the baseline)")
    tag = " (published)" if side.published and not side.name.endswith("(published)") else ""
    role = " — baseline" if index == comparison.baseline else ""
    over = f" over {summary.n_geomean}" if summary.geomean is not None else ""
    return f"{side.name}{tag}{role}: geometric mean {geo}{over}; {summary.counts_text()}"


def format_table(comparison: Comparison) -> str:
    """The comparison as plain text: sides; per benchmark a line with the parameters all its rows
    share, then one line per row with the parameters that differ in full; notes (one line per
    distinct note); then the composite per side."""
    lines = [f"Sides ({len(comparison.sides)}), baseline marked *:"]
    for i, side in enumerate(comparison.sides):
        star = "*" if i == comparison.baseline else " "
        lines.append(f" {star}[{i + 1}] {side.name}  ({len(side.docs)} result{'s' if len(side.docs) != 1 else ''})")
        if side.grouping:
            lines.append(f"      {side.grouping}")
    header = ["BENCHMARK · FIGURE", "PRECISION", "CONFIG"] + [f"[{i + 1}]" for i in range(len(comparison.sides))]
    table: list[list[str] | str] = [header]
    current = None
    for row in comparison.rows:
        if row.benchmark_id != current:
            current = row.benchmark_id
            shared = comparison.common_text(current)
            table.append(f"{current}" + (f" (every row: {shared})" if shared else ""))
        table.append([row_label(row), row.precision, row.config_text] + [cell_text(c) for c in row.cells])
    cells = [r for r in table if isinstance(r, list)]
    # The configuration is never cut (it is what tells rows apart); other columns at most 60.
    widths = [max(len(r[i]) for r in cells) if i == 2 else min(max(len(r[i]) for r in cells), 60)
              for i in range(len(header))]
    lines.append("")
    for r in table:
        if isinstance(r, str):
            lines.append(r)
            continue
        lines.append("  ".join((cell if i == 2 else cell[:60]).ljust(w)
                               for i, (cell, w) in enumerate(zip(r, widths))).rstrip())
    notes: dict[tuple[int, str, str], list[str]] = {}
    for row in comparison.rows:
        for i, cell in enumerate(row.cells):
            if cell.note and (cell.mark in (MARK_FAILED, MARK_CANCELLED, MARK_NOT_COMPARABLE, MARK_NO_BASELINE,
                                            MARK_UNTESTED) or cell.busy or cell.inconsistent):
                notes.setdefault((i, cell.mark, cell.note), []).append(row_label(row))
    if notes:
        lines += ["", "Notes:"]
        for (i, mark, note), labels in notes.items():
            where = labels[0] if len(labels) == 1 else f"{len(labels)} rows ({', '.join(dict.fromkeys(labels))})"
            lines.append(f"  [{i + 1}] {mark}: {note}: {where}" if len(labels) > 1 else
                         f"  {where} [{i + 1}]: {mark}: {note}")
    if len(comparison.sides) < 2:  # a machine against itself says nothing
        return "\n".join(lines) + "\n"
    suggestions = suggestions_text(comparison)
    if suggestions:
        lines += ["", "To make runs comparable:"] + suggestions
    lines.append("")
    lines.append(f"Composite (geometric mean of headline ratios, lower-is-better inverted) over the "
                 f"{comparison.summaries[0].n_geomean if comparison.summaries else 0} benchmark(s) "
                 f"{comparison.composite_scope}:")
    for i, s in enumerate(comparison.summaries):
        geo = "—" if s.geomean is None else f"×{s.geomean:.3f}"
        role = " (baseline)" if i == comparison.baseline else ""
        if i != comparison.baseline and s.n_pair != s.n_geomean:
            role += (f" (×{s.pair_geomean:.3f} over the {s.n_pair} it shares with the baseline)"
                     if s.pair_geomean is not None else " (nothing shared with the baseline)")
        lines.append(f"  [{i + 1}] {geo}{role}  {s.counts_text()}")
    return "\n".join(lines) + "\n"
