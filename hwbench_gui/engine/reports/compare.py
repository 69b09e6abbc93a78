"""Side-by-side comparison of result documents, asv-style.

A *side* is a set of documents: one machine (:func:`sides_by_machine`), one run
(:func:`sides_by_run`), or a published reference. Documents from all sides are matched into
*rows*: same benchmark, unit and precision, same figure name, and parameters that agree on every
key both documents have among those that decide what is measured (each benchmark declares them on
its parameters: a GPU index, a local folder or a repeat count does not) — see
:func:`comparability_key`. Published documents only state the parameters their source states, as their
source ran them (BF16, 1024 px), so they match a measured row whose run asked for or ran those values
(:func:`.comparability.agrees_with_published`: precision auto that ran BF16); their headline's name is their own,
a further figure of theirs pairs only under the measured figure's name.

Each cell gets a mark against the baseline side's cell:

- ``better`` / ``worse``: the figure differs and a test says so: Mann–Whitney U on the raw samples
  (scipy) when both sides have enough samples for the test to reach ``alpha``; against a published
  figure (no samples), the measured p5–p95 interval must not hold it.
- ``not significant``: the test could not tell them apart (overlapping spreads).
- ``untested``: neither side has a spread, so no test is possible (e.g. two published figures).
- ``too few repeats``: this side was measured with so few samples that Mann–Whitney cannot reach
  ``alpha`` whatever the values (3 vs 3 samples: p >= 0.1); non-overlapping p5–p95 ranges of a
  handful of samples are not a test, so no better/worse is claimed. When only the baseline has too
  few, the cell is ``untested`` and the note says so.
- ``failed`` / ``cancelled``: this side's own run failed or was cancelled; the reason is in ``note``.
  A side that measured is never called failed because the baseline failed: its cell is
  ``no baseline`` and the note says the baseline's run failed.
- ``not comparable``: the baseline has this benchmark only with other parameters, or with another
  version of the benchmark's code, or in another unit.
- ``no baseline`` / ``missing``: nothing to compare with / this side did not run it.

Flags (:mod:`.flags`: a busy machine, too few repeats, an inconsistent document) are each cell's
own document's, the baseline's cell included; a side's summary counts only its own.

Ratios are "times better than the baseline": ``value / baseline`` for higher-is-better figures,
``baseline / value`` for lower-is-better ones, so a ratio above 1 is always a win. The composite
is the geometric mean of the headline figures' ratios over the rows every side has.

This module builds the comparison (rows, cells, marks, summaries) and is what callers import; its parts live
beside it: :mod:`.sides` (grouping documents), :mod:`.comparability` (which parameters decide),
:mod:`.metric` (a figure as compared), :mod:`.significance` (the test, the ratio, the geometric mean),
:mod:`.marks`, and :mod:`.comparison_text` (cells and the table as text).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from hwbench_gui.engine.reports import flags
from hwbench_gui.engine.reports.comparability import (
    comparability_key as comparability_key,
    comparable_params as comparable_params,
    deciding_params as deciding_params,
    normalised,
    agrees_with_published,
    params_agree,
    params_difference as params_difference,
    ran_params,
    resolved_params as resolved_params,
)
from hwbench_gui.engine.reports.marks import (
    MARK_BASELINE as MARK_BASELINE,
    MARK_BETTER as MARK_BETTER,
    MARK_CANCELLED as MARK_CANCELLED,
    MARK_FAILED as MARK_FAILED,
    MARK_MISSING as MARK_MISSING,
    MARK_NO_BASELINE as MARK_NO_BASELINE,
    MARK_NOT_COMPARABLE as MARK_NOT_COMPARABLE,
    MARK_NOT_SIGNIFICANT as MARK_NOT_SIGNIFICANT,
    MARK_TOO_FEW as MARK_TOO_FEW,
    MARK_UNTESTED as MARK_UNTESTED,
    MARK_WORSE as MARK_WORSE,
)
from hwbench_gui.engine.reports.metric import MAX_SAMPLES as MAX_SAMPLES
from hwbench_gui.engine.reports.metric import Metric as Metric
from hwbench_gui.engine.reports.metric import metrics_of as metrics_of
from hwbench_gui.engine.reports.metric import precision_metrics as precision_metrics
from hwbench_gui.engine.reports.sides import GROUPINGS as GROUPINGS
from hwbench_gui.engine.reports.sides import Side as Side
from hwbench_gui.engine.reports.sides import find_side as find_side
from hwbench_gui.engine.reports.sides import sides_by as sides_by
from hwbench_gui.engine.reports.sides import sides_by_machine as sides_by_machine
from hwbench_gui.engine.reports.sides import sides_by_run as sides_by_run
from hwbench_gui.engine.reports.significance import ALPHA as ALPHA
from hwbench_gui.engine.reports.significance import geometric_mean as geometric_mean
from hwbench_gui.engine.reports.significance import ratio as ratio
from hwbench_gui.engine.reports.significance import significance as significance
from hwbench_gui.engine.results import describe
from hwbench_gui.engine.spec.precision import from_label
from hwbench_gui.engine.spec.precision import of_document as precision_of


@dataclass
class Cell:
    metric: Metric | None
    mark: str
    ratio: float | None = None
    test: str | None = None
    p_value: float | None = None
    note: str = ""
    older_runs: int = 0
    #: The figures of those older runs of this configuration on this side (its repeats across sittings).
    older_values: list[float] = field(default_factory=list)
    #: This cell's own run ran on a busy machine (the baseline's cell carries the baseline's).
    busy: bool = False
    #: This cell's own run has fewer than ``flags.MIN_REPEATS`` samples.
    few_repeats: bool = False
    #: What in this cell's own document does not agree with itself (``flags.consistency_problems``).
    inconsistent: list[str] = field(default_factory=list)


@dataclass
class Row:
    benchmark_id: str
    title: str
    figure_name: str
    unit: str
    higher_is_better: bool
    precision: str
    params: dict[str, Any]
    headline: bool
    cells: list[Cell]
    #: The parameters in which this row differs from other rows of its benchmark (what the
    #: Configuration column shows); set by :func:`compare`. The rest are the benchmark's
    #: :attr:`Comparison.common_params`.
    shown_params: dict[str, Any] | None = None

    @property
    def config_text(self) -> str:
        """The parameters that tell this row from the other rows of its benchmark, in full."""
        return describe.params_text(self.params if self.shown_params is None else self.shown_params)

    @property
    def all_params_text(self) -> str:
        return describe.params_text(self.params)


@dataclass
class SideSummary:
    name: str
    geomean: float | None
    n_geomean: int
    wins: int
    losses: int
    not_significant: int
    untested: int
    failed: int
    not_comparable: int
    too_few: int = 0
    busy: int = 0
    cancelled: int = 0
    inconsistent: int = 0
    #: Geometric mean over the headline rows this side and the baseline both have (more rows than
    #: ``geomean`` when some third side lacks a benchmark).
    pair_geomean: float | None = None
    n_pair: int = 0

    def counts_text(self) -> str:
        """The marks of this side's cells, one wording for the CLI, the GUI and the reports."""
        text = (f"better {self.wins}, worse {self.losses}, not significant {self.not_significant}, "
                f"too few repeats {self.too_few}, untested {self.untested}, failed {self.failed}, "
                + (f"cancelled {self.cancelled}, " if self.cancelled else "") +
                f"not comparable {self.not_comparable}")
        text += f"; {self.busy} on a busy machine" if self.busy else ""
        return text + (f"; {self.inconsistent} from an inconsistent document" if self.inconsistent else "")


@dataclass
class Comparison:
    sides: list[Side]
    baseline: int
    rows: list[Row]
    summaries: list[SideSummary]
    alpha: float = ALPHA
    notes: list[str] = field(default_factory=list)
    #: Per benchmark id: the parameters every row of that benchmark shares (shown once, in the
    #: benchmark's header line or a tooltip, not in each row).
    common_params: dict[str, dict[str, Any]] = field(default_factory=dict)

    def common_text(self, benchmark_id: str) -> str:
        return describe.params_text(self.common_params.get(benchmark_id))

    @property
    def baseline_name(self) -> str:
        return self.sides[self.baseline].name

    @property
    def composite_scope(self) -> str:
        """Which sides the composite's benchmarks are common to (:func:`_composite_sides`), in words."""
        if len(_composite_sides(self.sides, self.baseline)) == len(self.sides):
            return "every side has"
        return "every measured side has (a published reference: its ratio over what it shares with the baseline)"


# -- building the comparison -----------------------------------------------------------------------

def _matches(row: Row, metric: Metric, params: dict[str, Any]) -> bool:
    doc = metric.doc
    if (doc.get("benchmark") or {}).get("id") != row.benchmark_id or metric.headline != row.headline:
        return False
    if metric.failed:
        return params_agree(params, row.params)
    if metric.unit != row.unit or normalised(metric.precision or precision_of(doc)) != normalised(row.precision):
        return False
    published_either = metric.published or any(c.metric and c.metric.published for c in row.cells)
    # a published headline names itself as its source does; a further figure pairs only under the same name (a
    # published "image_time" in s must not land beside a measured step time, also in s)
    if metric.name != row.figure_name and not (published_either and metric.headline):
        return False
    if not published_either:
        return params_agree(params, row.params)
    if not metric.published:  # a measured run joins a row a published figure is in
        return agrees_with_published(row.params, params, ran_params(metric.doc))
    # a published figure joins a row: it agrees with the row as asked, or as one of its measured runs ran
    measured = [c.metric for c in row.cells if c.metric is not None and not c.metric.published and not c.metric.failed]
    return params_agree(params, row.params) or any(
        agrees_with_published(params, row.params, ran_params(m.doc)) for m in measured)


def compare(sides: Sequence[Side], baseline: int = 0, *, alpha: float = ALPHA,
            all_figures: bool = False) -> Comparison:
    """Match the sides' documents into rows and mark each cell against side ``baseline``.

    Within a side the newest run of a configuration is used; older ones are counted in
    ``Cell.older_runs``. Failed runs fill cells the side has no good run for.
    """
    sides = list(sides)
    if not sides:
        raise ValueError("nothing to compare: no sides")
    if not 0 <= baseline < len(sides):
        raise ValueError(f"baseline index {baseline} out of range")
    order = [baseline] + [i for i in range(len(sides)) if i != baseline]
    rows: list[Row] = []
    pending_failed: list[tuple[int, Metric]] = []
    for side_index in order:
        docs = sorted(sides[side_index].docs, key=lambda d: str(d.get("started_at") or ""), reverse=True)
        for doc in docs:
            for metric in metrics_of(doc, all_figures):
                if metric.failed:
                    pending_failed.append((side_index, metric))
                    continue
                _place(rows, sides, side_index, metric)
    for side_index, metric in pending_failed:
        _place(rows, sides, side_index, metric)
    for row in rows:
        _mark(row, sides, baseline, rows, alpha)
    common = _split_params(rows)
    rows.sort(key=lambda r: (r.benchmark_id, not r.headline, r.figure_name, r.precision, r.config_text))
    comparison = Comparison(sides, baseline, rows, [], alpha, common_params=common)
    comparison.summaries = _summaries(comparison)
    return comparison


def _split_params(rows: Sequence[Row]) -> dict[str, dict[str, Any]]:
    """Set each row's ``shown_params`` (what differs between the rows of its benchmark, the
    parameters that decide comparability first) and return each benchmark's shared ones."""
    by_bench: dict[str, list[Row]] = {}
    for row in rows:
        by_bench.setdefault(row.benchmark_id, []).append(row)
    common_by_bench = {}
    for bench_id, group in by_bench.items():
        keys = [k for row in group for k in row.params]
        common = {k: group[0].params[k] for k in dict.fromkeys(keys)
                  if all(k in row.params and row.params[k] == group[0].params[k] for row in group)}
        deciding = _deciding_of(group)
        for row in group:
            # the precision parameter has its own column
            differing = [k for k in row.params if k not in common and k != "precision"]
            differing.sort(key=lambda k: (deciding is not None and k not in deciding))
            row.shown_params = {k: row.params[k] for k in differing}
        common_by_bench[bench_id] = {k: v for k, v in common.items() if k != "precision"}
    return common_by_bench


def _deciding_of(group: Sequence[Row]) -> frozenset[str] | None:
    for row in group:
        for cell in row.cells:
            if cell.metric is not None:
                return deciding_params(cell.metric.doc)
    return None


def _place(rows: list[Row], sides: Sequence[Side], side_index: int, metric: Metric) -> None:
    params = metric.params if metric.params is not None else comparable_params(metric.doc)
    placed = False
    for row in rows:
        if not _matches(row, metric, params):
            continue
        cell = row.cells[side_index]
        if cell.metric is None:
            row.cells[side_index] = Cell(metric, "")
            row.params = {**params, **row.params}
            placed = True
            if not metric.failed:
                return
        elif cell.metric.doc is not metric.doc and not metric.failed:
            cell.older_runs += 1
            if metric.value is not None:
                cell.older_values.append(metric.value)
            return
        elif metric.failed:
            placed = True
    if placed:
        return
    if metric.failed:
        cells = [Cell(None, MARK_MISSING) for _ in sides]
        cells[side_index] = Cell(metric, "")
        bench = metric.doc.get("benchmark") or {}
        rows.append(Row(bench.get("id", ""), bench.get("title", ""), "(run failed)", "", True,
                        precision_of(metric.doc), params, True, cells))
        return
    bench = metric.doc.get("benchmark") or {}
    cells = [Cell(None, MARK_MISSING) for _ in sides]
    cells[side_index] = Cell(metric, "")
    rows.append(Row(bench.get("id", ""), bench.get("title", ""), metric.name, metric.unit, metric.higher_is_better,
                    metric.precision or precision_of(metric.doc), params, metric.headline, cells))


def _mark(row: Row, sides: Sequence[Side], baseline: int, rows: Sequence[Row], alpha: float) -> None:
    base_cell = row.cells[baseline]
    base = base_cell.metric
    for index, cell in enumerate(row.cells):
        metric = cell.metric
        if metric is None:
            cell.mark = MARK_MISSING
            continue
        own_busy = flags.busy_reasons(metric.doc)
        cell.busy = bool(own_busy)
        cell.few_repeats = not metric.failed and not metric.published and len(metric.samples) < flags.MIN_REPEATS
        if metric.failed:
            cancelled = metric.doc.get("status") == "cancelled"
            cell.mark = MARK_CANCELLED if cancelled else MARK_FAILED
            cell.note = str(metric.doc.get("reason") or metric.doc.get("status") or "")
            continue
        cell.inconsistent = flags.consistency_problems(metric.doc)
        if index == baseline:
            cell.mark = MARK_BASELINE
        elif base is None:
            cell.mark, cell.note = _no_baseline(row, metric, baseline, rows)
        elif base.failed:
            what = "was cancelled" if base.doc.get("status") == "cancelled" else "failed"
            cell.mark = MARK_NO_BASELINE
            cell.note = f"the baseline's run {what}: " + str(base.doc.get("reason") or "")
        else:
            _mark_against(cell, metric, base, alpha)
        if own_busy:
            cell.note = "; ".join(filter(None, [cell.note, "busy machine during this run: " + "; ".join(own_busy)]))
        if cell.inconsistent:
            cell.note = "; ".join(filter(None, [cell.note, "inconsistent document: " + "; ".join(cell.inconsistent)]))


def _mark_against(cell: Cell, metric: Metric, base: Metric, alpha: float) -> None:
    version_a = str((metric.doc.get("benchmark") or {}).get("version"))
    version_b = str((base.doc.get("benchmark") or {}).get("version"))
    if version_a != version_b and not (metric.published or base.published):
        cell.mark, cell.note = MARK_NOT_COMPARABLE, f"benchmark version {version_a} vs {version_b}"
        return
    if metric.unit != base.unit:
        cell.mark, cell.note = MARK_NOT_COMPARABLE, f"unit {metric.unit} vs {base.unit}"
        return
    cell.ratio = ratio(metric, base)
    differs, cell.test, cell.p_value = significance(metric, base, alpha)
    if differs is None:
        if not cell.test.startswith(MARK_TOO_FEW):
            cell.mark = MARK_UNTESTED
        elif len(metric.samples) >= flags.MIN_REPEATS or metric.published:
            cell.mark = MARK_UNTESTED
            cell.note = f"too few repeats in the baseline (n={len(base.samples)}): no test is possible"
        else:
            cell.mark = MARK_TOO_FEW
    elif not differs or cell.ratio is None or cell.ratio == 1.0:
        cell.mark = MARK_NOT_SIGNIFICANT
    else:
        cell.mark = MARK_BETTER if cell.ratio > 1 else MARK_WORSE
    if metric.published or base.published:
        cell.note = "; ".join(filter(None, [cell.note, "published figure: its configuration is only what the "
                                            "source states"]))


def _figure_kind(row: Row) -> tuple[str, str]:
    """What a row's figure is, precision aside: its name without precision labels, and its unit."""
    words = [w for w in row.figure_name.split() if from_label(w) is None]
    return " ".join(words).lower(), row.unit


def _no_baseline(row: Row, metric: Metric, baseline: int, rows: Sequence[Row]) -> tuple[str, str]:
    """The mark and the true reason of a cell whose row the baseline has no figure in: the baseline never
    ran the benchmark, measured another kind of figure, never ran it with one of this row's values, or
    ran it with other settings (named, with what each run chose itself)."""
    bench_id = row.benchmark_id
    others = [r for r in rows if r is not row and r.benchmark_id == bench_id and r.headline == row.headline
              and r.cells[baseline].metric is not None and not r.cells[baseline].metric.failed]
    if not others:
        return MARK_NO_BASELINE, f"the baseline never ran {bench_id}"
    # a published headline names itself as its source does: what keeps it apart is its settings, not its name
    published = metric.published or any(r.cells[baseline].metric.published for r in others)
    if not (published and row.headline) and all(_figure_kind(r) != _figure_kind(row) for r in others):
        kinds = list(dict.fromkeys(f"{r.figure_name} ({r.unit})" for r in others))
        return MARK_NOT_COMPARABLE, (f"the baseline's {bench_id} is another kind of figure: {row.figure_name} "
                                     f"({row.unit}) here, {' / '.join(kinds[:2])} in the baseline")
    never_keys = [k for k, v in row.params.items()
                  if k != "precision" and all(k in r.params and r.params[k] != v for r in others)
                  and not (published and any(ran_params(r.cells[baseline].metric.doc).get(k) == v for r in others))]
    never = [f"with {k} {describe.param_value(row.params[k])}" for k in never_keys]
    if all(normalised(r.precision) != normalised(row.precision) for r in others):
        never.insert(0, f"at {row.precision}")
    if never:
        ran = []
        for key in never_keys[:2]:
            values = []
            alike = [r for r in others if all(r.params.get(k) == v for k, v in row.params.items() if k != key)]
            for other in alike or others:
                chosen = resolved_params(other.cells[baseline].metric.doc).get(key)
                text = describe.param_value(other.params[key])
                values.append(text + (f" (the run chose {describe.param_value(chosen)})" if chosen is not None else ""))
            ran.append(f"{key} {' / '.join(dict.fromkeys(values))}")
        said = f"the baseline never ran {bench_id} {', '.join(never[:2])}"
        return MARK_NOT_COMPARABLE, said + (f" (it ran {'; '.join(ran)})" if ran else "")

    def likeness(other: Row) -> tuple:
        return (_figure_kind(other) == _figure_kind(row), normalised(other.precision) == normalised(row.precision),
                other.figure_name == row.figure_name, sum(other.params.get(k) == v for k, v in row.params.items()))

    closest = max(others, key=likeness)
    chosen_here = resolved_params(metric.doc)
    chosen_there = resolved_params(closest.cells[baseline].metric.doc)
    if normalised(closest.precision) != normalised(row.precision):
        detail = f"precision {row.precision} here, {closest.precision} in the baseline"
        # the precision parameter says the same again: said once
        diff = params_difference({k: v for k, v in row.params.items() if k != "precision"},
                                 {k: v for k, v in closest.params.items() if k != "precision"},
                                 chosen_here, chosen_there)
        if diff != "same parameters":
            detail += ", " + diff
    elif closest.figure_name != row.figure_name and closest.params == row.params:
        detail = f"figure {row.figure_name!r} here, {closest.figure_name!r} in the baseline"
    else:
        detail = params_difference(row.params, closest.params, chosen_here, chosen_there)
    return MARK_NOT_COMPARABLE, f"the baseline ran it with other settings: {detail}"


def _composite_sides(sides: list[Side], baseline: int) -> list[int]:
    """The sides whose benchmarks decide the composite's common set: every side, except that published references
    (a source's few figures) are left out when two measured sides or more are compared, else the composite of
    two machines would shrink to nothing beside a reference with one figure."""
    measured = [i for i, side in enumerate(sides) if i == baseline or not side.published]
    return measured if len(measured) >= 2 else list(range(len(sides)))


def _summaries(comparison: Comparison) -> list[SideSummary]:
    """Per side: the geometric mean over headline rows, and the marks of every row shown (the rows of
    the table, so the counts and the table agree with or without "all figures")."""
    headline = [r for r in comparison.rows if r.headline]
    counted = _composite_sides(comparison.sides, comparison.baseline)
    common = [r for r in headline
              if all(r.cells[i].metric is not None and not r.cells[i].metric.failed for i in counted)
              and all(r.cells[i].ratio is not None for i in counted if i != comparison.baseline)]
    out = []
    for index, side in enumerate(comparison.sides):
        cells = [r.cells[index] for r in comparison.rows]
        marks = [c.mark for c in cells]
        if index == comparison.baseline:
            geomean = 1.0 if common else None
            pair = [1.0] * len(common)
        elif index not in counted:  # a published reference: its ratio over what it shares with the baseline only
            geomean = None
            pair = [r.cells[index].ratio for r in headline if r.cells[index].ratio is not None]
        else:
            geomean = geometric_mean([r.cells[index].ratio for r in common])
            pair = [r.cells[index].ratio for r in headline if r.cells[index].ratio is not None]
        out.append(SideSummary(side.name, geomean, len(common), marks.count(MARK_BETTER), marks.count(MARK_WORSE),
                               marks.count(MARK_NOT_SIGNIFICANT), marks.count(MARK_UNTESTED),
                               marks.count(MARK_FAILED), marks.count(MARK_NOT_COMPARABLE),
                               sum(c.few_repeats for c in cells), sum(c.busy for c in cells),
                               marks.count(MARK_CANCELLED), sum(bool(c.inconsistent) for c in cells),
                               geometric_mean(pair), len(pair)))
    return out


busy_reasons = flags.busy_reasons


def not_drawable(comparison: Comparison) -> list[dict[str, Any]]:
    """The documents a chart of several sides must leave out: a run whose figures no other side has a
    comparable figure for, while another side did run that benchmark (with other settings). Drawn as bars
    beside the other side's run it would read as a comparison the table marks "not comparable"; a
    benchmark only one side ran stays drawable (there is nothing to misread it against)."""
    if len(comparison.sides) < 2:
        return []
    sides_of_bench: dict[str, set[int]] = {}
    for row in comparison.rows:
        for index, cell in enumerate(row.cells):
            if cell.metric is not None and not cell.metric.failed:
                sides_of_bench.setdefault(row.benchmark_id, set()).add(index)
    compared: set[int] = set()
    alone: dict[int, dict[str, Any]] = {}
    for row in comparison.rows:
        present = [(i, c.metric) for i, c in enumerate(row.cells) if c.metric is not None and not c.metric.failed]
        for index, metric in present:
            if len(present) > 1:
                compared.add(id(metric.doc))
            elif len(sides_of_bench.get(row.benchmark_id, ())) > 1:
                alone[id(metric.doc)] = metric.doc
    return [doc for key, doc in alone.items() if key not in compared]


def runs_to_match(comparison: Comparison) -> dict[int, list[dict[str, Any]]]:
    """Per measured side other than the baseline: the baseline's documents it has no comparable figure for,
    newest first, each one ``hwbench run --like`` (the GUI's "Run like this here") measures on that side's
    machine so that the two compare."""
    out: dict[int, list[dict[str, Any]]] = {}
    for index, side in enumerate(comparison.sides):
        if index == comparison.baseline or side.published:
            continue
        wanted: dict[int, dict[str, Any]] = {}
        for row in comparison.rows:
            base = row.cells[comparison.baseline].metric
            if base is None or base.failed or row.cells[index].metric is not None:
                continue
            wanted.setdefault(id(base.doc), base.doc)
        if wanted:
            out[index] = sorted(wanted.values(), key=lambda d: str(d.get("started_at") or ""), reverse=True)
    return out
