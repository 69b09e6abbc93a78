"""Side-by-side comparison of result documents, asv-style.

A *side* is a set of documents: one machine (:func:`sides_by_machine`), one run
(:func:`sides_by_run`), or a published reference. Documents from all sides are matched into
*rows*: same benchmark, unit and precision, same figure name, and parameters that agree on every
key both documents have among those that decide what is measured (each benchmark declares them on
its parameters: a GPU index, a local folder or a repeat count does not) — see
:func:`comparability_key`. Published documents only state the parameters their source states, and
their figure names are their own, so they match any measured row they agree with.

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
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any, Sequence

from hwbench_gui.engine.reports import flags
from hwbench_gui.engine.results import describe, formatting, machine_kind
from hwbench_gui.engine.spec.precision import from_label
from hwbench_gui.engine.spec.precision import of_document as precision_of

ALPHA = 0.05

MARK_BASELINE = "baseline"
MARK_BETTER = "better"
MARK_WORSE = "worse"
MARK_NOT_SIGNIFICANT = "not significant"
MARK_UNTESTED = "untested"
MARK_TOO_FEW = "too few repeats"
MARK_FAILED = "failed"
MARK_CANCELLED = "cancelled"
MARK_NOT_COMPARABLE = "not comparable"
MARK_NO_BASELINE = "no baseline"
MARK_MISSING = "missing"


@dataclass
class Side:
    name: str
    docs: list[dict[str, Any]]
    #: Why documents of several hosts are one side (:func:`machine_kind.grouping_text`); empty for one host.
    grouping: str = ""

    @property
    def published(self) -> bool:
        return bool(self.docs) and all(describe.is_published(d) for d in self.docs)


@dataclass
class Metric:
    """One figure of one document, as a comparison sees it."""

    doc: dict[str, Any]
    name: str
    value: float | None
    unit: str
    higher_is_better: bool
    samples: list[float]
    stats: dict[str, Any] | None
    headline: bool
    #: For one precision of a run that measured several (``precision=all``): its label and the
    #: document's parameters with that precision, so that it pairs with a run of that precision only.
    precision: str | None = None
    params: dict[str, Any] | None = None

    @property
    def failed(self) -> bool:
        return self.value is None

    @property
    def published(self) -> bool:
        return describe.is_published(self.doc)

    def interval(self) -> tuple[float, float] | None:
        """(p5, p95), the value as a point when there is no spread, or None without a value."""
        if self.value is None:
            return None
        s = self.stats or {}
        if (s.get("n") or 0) >= 2 and s.get("p5") is not None and s.get("p95") is not None:
            return float(s["p5"]), float(s["p95"])
        return float(self.value), float(self.value)

    def has_spread(self) -> bool:
        low_high = self.interval()
        return low_high is not None and (self.stats or {}).get("n", 0) >= 2


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


# -- sides -----------------------------------------------------------------------------------------

def sides_by_machine(docs: Sequence[dict[str, Any]], *, by_host: bool = False) -> list[Side]:
    """One side per machine, in the order the machines first appear in ``docs`` (the first machine given
    is the first side, the default baseline). A machine is what decides the figures
    (:func:`machine_kind.kind_key`: GPUs, CPU, RAM, the software that matters), so cloud loans of one
    kind or a box measured over a week are one side, its grouping said in :attr:`Side.grouping`;
    ``by_host`` tells hosts apart instead (:func:`describe.machine_key`: two boxes named alike stay apart)."""
    key_of = describe.machine_key if by_host else machine_kind.kind_key
    labels = describe.machine_labels(docs) if by_host else machine_kind.kind_labels(docs)
    sides: dict[str, Side] = {}
    for doc in docs:
        key = key_of(doc)
        sides.setdefault(key, Side(labels[key], [])).docs.append(doc)
    if not by_host:
        for side in sides.values():
            side.grouping = machine_kind.grouping_text(side.docs)
    return list(sides.values())


#: How documents become sides: one per machine (its kind), per host, or per run.
GROUPINGS = ("machine", "host", "run")


def sides_by(docs: Sequence[dict[str, Any]], by: str = "machine") -> list[Side]:
    """The sides of ``docs`` grouped ``by`` one of :data:`GROUPINGS`; ``ValueError`` for another word."""
    if by == "machine":
        return sides_by_machine(docs)
    if by == "host":
        return sides_by_machine(docs, by_host=True)
    if by == "run":
        return sides_by_run(docs)
    raise ValueError(f"group by one of {', '.join(GROUPINGS)}, not {by!r}")


def sides_by_run(docs: Sequence[dict[str, Any]]) -> list[Side]:
    """One side per document, named by machine, benchmark and date (made unique)."""
    sides = []
    used: set[str] = set()
    labels = machine_kind.kind_labels(docs)
    for doc in docs:
        bench_id = (doc.get("benchmark") or {}).get("id", "")
        name = f"{labels[machine_kind.kind_key(doc)]} · {bench_id} @ {describe.date_text(doc) or 'date not stated'}"
        base, n = name, 2
        while name in used:
            name, n = f"{base} #{n}", n + 1
        used.add(name)
        sides.append(Side(name, [doc]))
    return sides


def find_side(sides: Sequence[Side], name: str | None) -> int:
    """Index of the side called ``name`` (exact, else the only case-insensitive substring match).

    Raises ``ValueError`` naming the candidates when there is none or more than one.
    """
    if not name:
        return 0
    for i, side in enumerate(sides):
        if side.name == name:
            return i
    hits = [i for i, side in enumerate(sides) if name.lower() in side.name.lower()]
    if len(hits) == 1:
        return hits[0]
    names = "; ".join(s.name for s in sides)
    if not hits:
        raise ValueError(f"no side matches {name!r} (sides: {names})")
    raise ValueError(f"{name!r} matches several sides: {'; '.join(sides[i].name for i in hits)}")


# -- keys ------------------------------------------------------------------------------------------

def _norm(value: Any) -> Any:
    if isinstance(value, str):
        return value.strip().lower()
    if isinstance(value, list):
        return tuple(_norm(v) for v in value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def deciding_params(doc: dict[str, Any]) -> frozenset[str] | None:
    """:func:`describe.deciding_params`, with this install's declarations for older documents."""
    return describe.deciding_params(doc, _declared_params)


@functools.lru_cache(maxsize=64)
def _declared_params(bench_id: str) -> frozenset[str] | None:
    from hwbench_gui.engine.run import registry

    try:
        return frozenset(registry.get(bench_id).comparability_params())
    except KeyError:
        return None


def comparable_params(doc: dict[str, Any]) -> dict[str, Any]:
    """The document's parameters that decide what was measured, as asked (normalised for comparison): a
    value the machine chose ("largest that fits", "auto") is part of its answer, not a setting, so two
    machines that asked alike compare whatever each chose (:func:`resolved_params` says what that was)."""
    deciding = deciding_params(doc)
    asked = describe.asked_params(doc)
    later = _added_later(str((doc.get("benchmark") or {}).get("id")))
    return {str(k): _norm(v) for k, v in sorted(asked.items()) if (deciding is None or k in deciding)
            and not (k in later and _norm(v) == _norm(later[k]))}


@functools.lru_cache(maxsize=64)
def _added_later(bench_id: str) -> dict[str, Any]:
    """Defaults of the benchmark's parameters declared ``added_later`` (older documents ran at them)."""
    from hwbench_gui.engine.run import registry

    try:
        return {p.name: p.default for p in registry.get(bench_id).params if p.added_later}
    except KeyError:
        return {}


def resolved_params(doc: dict[str, Any]) -> dict[str, Any]:
    """What the run chose itself for the deciding parameters it was asked to choose: ``{"micro_batch": 10}``
    for a run asked for the largest micro-batch that fits; empty where nothing was chosen."""
    params = doc.get("params") if isinstance(doc.get("params"), dict) else {}
    requested = doc.get("params_requested") if isinstance(doc.get("params_requested"), dict) else {}
    deciding = deciding_params(doc)
    # A list asked empty is the benchmark's default list, filled in alike everywhere, not a machine's choice.
    return {str(k): params[k] for k in sorted(requested) if k in params and params[k] != requested[k]
            and (deciding is None or k in deciding) and not isinstance(params[k], list)}


def comparability_key(doc: dict[str, Any]) -> tuple:
    """What two measured documents must share to be compared: benchmark id, code version,
    precision, headline figure name and unit, and :func:`comparable_params`."""
    figure = doc.get("figure") or {}
    bench = doc.get("benchmark") or {}
    return (bench.get("id"), str(bench.get("version")), _norm(precision_of(doc)),
            figure.get("name"), figure.get("unit"), tuple(comparable_params(doc).items()))


def _params_agree(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return all(a[k] == b[k] for k in a.keys() & b.keys())


def params_difference(a: dict[str, Any], b: dict[str, Any], chosen_a: dict[str, Any] | None = None,
                      chosen_b: dict[str, Any] | None = None) -> str:
    """``"batch 256 here, 128 in the baseline"`` for each shared key that differs (and keys only one has);
    ``a`` is this side's parameters, ``b`` the baseline's. ``chosen_a`` / ``chosen_b``: what each run chose
    itself where it was asked to (:func:`resolved_params`), said beside the asked value."""
    def value(params: dict[str, Any], chosen: dict[str, Any] | None, key: str) -> str:
        text = describe.param_value(params[key])
        return f"{text} (the run chose {describe.param_value(chosen[key])})" if chosen and key in chosen else text

    parts = [f"{k} {value(a, chosen_a, k)} here, {value(b, chosen_b, k)} in the baseline"
             for k in sorted(a.keys() & b.keys()) if a[k] != b[k]]
    parts += [f"{k} only here" for k in sorted(a.keys() - b.keys())]
    parts += [f"{k} only in the baseline" for k in sorted(b.keys() - a.keys())]
    return ", ".join(parts) or "same parameters"


#: Samples a comparison reads per figure: more are reduced to this many evenly spaced order
#: statistics (the same distribution for the test, a bounded cost per document).
MAX_SAMPLES = 2000


def _bounded(values: Sequence[Any]) -> list[float]:
    numbers = [float(v) for v in values if describe.is_number(v)]
    if len(numbers) <= MAX_SAMPLES:
        return numbers
    numbers.sort()
    last = len(numbers) - 1
    return [numbers[round(i * last / (MAX_SAMPLES - 1))] for i in range(MAX_SAMPLES)]


def metrics_of(doc: dict[str, Any], all_figures: bool = False) -> list[Metric]:
    """The headline figure (and with ``all_figures`` the further named figures) of a usable
    document; a failed one gives a single metric without a value. Samples are at most
    :data:`MAX_SAMPLES` per figure."""
    figure = doc.get("figure") or {}
    samples = _bounded(doc.get("samples") or [])
    if figure.get("value") is None:
        return [Metric(doc, "", None, "", True, [], None, True)]
    per_precision = precision_metrics(doc)  # they stand for the headline and the precision figures
    out = per_precision or [Metric(doc, str(figure.get("name") or "figure"), float(figure["value"]),
                                   str(figure.get("unit") or ""), bool(figure.get("higher_is_better", True)), samples,
                                   doc.get("stats"), True)]
    if all_figures:
        for name, fig in (doc.get("figures") or {}).items():
            if not isinstance(fig, dict) or not describe.is_number(fig.get("value")):
                continue
            if per_precision and from_label(str(name)) is not None:
                continue
            fig_samples = _bounded(fig.get("samples") or [])
            stats = fig.get("stats") if isinstance(fig.get("stats"), dict) else None
            out.append(Metric(doc, str(name), float(fig["value"]), str(fig.get("unit") or ""),
                              bool(fig.get("higher_is_better", True)), fig_samples, stats, False))
    return out


#: A ``precision`` parameter value that asks one run to measure several precisions.
SEVERAL_PRECISIONS = "all"


def precision_metrics(doc: dict[str, Any]) -> list[Metric]:
    """For a run that measured several precisions (``precision=all``, one figure per precision named by
    its label, as gpu.matmul's): one headline metric per precision, named as a run of that precision
    names its headline, with that precision's parameter value, so a BF16 reference pairs with this
    run's BF16 figure and not only headline with headline. Empty for any other document."""
    params = doc.get("params") or {}
    figure = doc.get("figure") or {}
    headline_label = precision_of(doc)
    if params.get("precision") != SEVERAL_PRECISIONS or not isinstance(figure.get("name"), str):
        return []
    base = comparable_params(doc)
    out = []
    for label, fig in (doc.get("figures") or {}).items():
        precision = from_label(str(label))
        if precision is None or not isinstance(fig, dict) or not describe.is_number(fig.get("value")):
            continue
        stats = fig.get("stats") if isinstance(fig.get("stats"), dict) else None
        out.append(Metric(doc, figure["name"].replace(headline_label, precision.label), float(fig["value"]),
                          str(fig.get("unit") or figure.get("unit") or ""), bool(fig.get("higher_is_better", True)),
                          _bounded(fig.get("samples") or []), stats, True, precision=precision.label,
                          params={**base, "precision": precision.key}))
    return out


# -- statistics ------------------------------------------------------------------------------------

def geometric_mean(values: Sequence[float]) -> float | None:
    """Geometric mean of positive numbers; None for an empty list or a non-positive value."""
    if not values or any(v <= 0 for v in values):
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


def _min_two_sided_p(n1: int, n2: int) -> float:
    return 2.0 / math.comb(n1 + n2, n1)


def significance(a: Metric, b: Metric, alpha: float = ALPHA) -> tuple[bool | None, str, float | None]:
    """(differs?, test name, p-value). ``differs`` is None when no test is possible; the test name
    then says why (:data:`MARK_TOO_FEW` when two measured sides have too few samples)."""
    if not (a.published or b.published):
        n1, n2 = len(a.samples), len(b.samples)
        if n1 < 2 or n2 < 2 or _min_two_sided_p(n1, n2) >= alpha:
            return None, f"{MARK_TOO_FEW} (n={n1} vs {n2}: Mann-Whitney cannot reach p < {alpha:g})", None
        if len(set(a.samples) | set(b.samples)) == 1:
            return False, "Mann-Whitney U", 1.0
        from scipy.stats import mannwhitneyu

        p = float(mannwhitneyu(a.samples, b.samples, alternative="two-sided").pvalue)
        return p < alpha, "Mann-Whitney U", p
    if not a.has_spread() and not b.has_spread():
        return None, "none (no spread on either side)", None
    (a_low, a_high), (b_low, b_high) = a.interval(), b.interval()
    overlap = a_low <= b_high and b_low <= a_high
    return not overlap, "p5-p95 overlap", None


def ratio(metric: Metric, baseline: Metric) -> float | None:
    """Times better than the baseline (lower-is-better figures inverted)."""
    if metric.value is None or baseline.value is None or metric.value <= 0 or baseline.value <= 0:
        return None
    return metric.value / baseline.value if baseline.higher_is_better else baseline.value / metric.value


# -- building the comparison -----------------------------------------------------------------------

def _matches(row: Row, metric: Metric, params: dict[str, Any]) -> bool:
    doc = metric.doc
    if (doc.get("benchmark") or {}).get("id") != row.benchmark_id or metric.headline != row.headline:
        return False
    if metric.failed:
        return _params_agree(params, row.params)
    if metric.unit != row.unit or _norm(metric.precision or precision_of(doc)) != _norm(row.precision):
        return False
    published_either = metric.published or any(c.metric and c.metric.published for c in row.cells)
    if metric.name != row.figure_name and not published_either:
        return False
    return _params_agree(params, row.params)


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
    if all(_figure_kind(r) != _figure_kind(row) for r in others):
        kinds = list(dict.fromkeys(f"{r.figure_name} ({r.unit})" for r in others))
        return MARK_NOT_COMPARABLE, (f"the baseline's {bench_id} is another kind of figure: {row.figure_name} "
                                     f"({row.unit}) here, {' / '.join(kinds[:2])} in the baseline")
    never_keys = [k for k, v in row.params.items()
                  if k != "precision" and all(k in r.params and r.params[k] != v for r in others)]
    never = [f"with {k} {describe.param_value(row.params[k])}" for k in never_keys]
    if all(_norm(r.precision) != _norm(row.precision) for r in others):
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
        return (_figure_kind(other) == _figure_kind(row), _norm(other.precision) == _norm(row.precision),
                other.figure_name == row.figure_name, sum(other.params.get(k) == v for k, v in row.params.items()))

    closest = max(others, key=likeness)
    chosen_here = resolved_params(metric.doc)
    chosen_there = resolved_params(closest.cells[baseline].metric.doc)
    if _norm(closest.precision) != _norm(row.precision):
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


def _summaries(comparison: Comparison) -> list[SideSummary]:
    """Per side: the geometric mean over headline rows, and the marks of every row shown (the rows of
    the table, so the counts and the table agree with or without "all figures")."""
    headline = [r for r in comparison.rows if r.headline]
    common = [r for r in headline if all(c.metric is not None and not c.metric.failed for c in r.cells)
              and all(c.ratio is not None for i, c in enumerate(r.cells) if i != comparison.baseline)]
    out = []
    for index, side in enumerate(comparison.sides):
        cells = [r.cells[index] for r in comparison.rows]
        marks = [c.mark for c in cells]
        if index == comparison.baseline:
            geomean = 1.0 if common else None
            pair = [1.0] * len(common)
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


# -- text ------------------------------------------------------------------------------------------

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
                 f"{comparison.summaries[0].n_geomean if comparison.summaries else 0} benchmark(s) every side has:")
    for i, s in enumerate(comparison.summaries):
        geo = "—" if s.geomean is None else f"×{s.geomean:.3f}"
        role = " (baseline)" if i == comparison.baseline else ""
        if i != comparison.baseline and s.n_pair != s.n_geomean:
            role += (f" (×{s.pair_geomean:.3f} over the {s.n_pair} it shares with the baseline)"
                     if s.pair_geomean is not None else " (nothing shared with the baseline)")
        lines.append(f"  [{i + 1}] {geo}{role}  {s.counts_text()}")
    return "\n".join(lines) + "\n"
