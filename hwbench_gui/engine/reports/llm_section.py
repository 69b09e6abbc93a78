"""Language-model inference (llm.infer) read out of result documents: the evaluation report's section and
the two charts every view of it draws (tokens/s against context depth with each bound, and the serving
sweep as a latency-throughput curve with its target).

Documents are foreign input: every field used is checked; a document missing one is passed over, not fatal.
Whether a serving point meets its target is derived again from its p99s and the document's targets, never taken
as stated (:func:`serving_points`); a sweep of more points than a chart or table can show is shown as a bounded
selection that says so (:mod:`hwbench_gui.engine.results.bounded`).
:func:`depth_curves` and :func:`serving_curve` are plain data, so the window draws the same curves as the
reports without importing matplotlib; :func:`charts` draws them for HTML and PDF reports.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from hwbench_gui.engine.reports.family import Family, PdfTable
from hwbench_gui.engine.results import bounded, describe, formatting
from hwbench_gui.engine.spec.precision import BF16
from hwbench_gui.engine.spec.precision import of_document as precision_of

LLM_ID = "llm.infer"


def is_llm(doc: Any) -> bool:
    return isinstance(doc, dict) and (doc.get("benchmark") or {}).get("id") == LLM_ID


def _ok(doc: dict[str, Any]) -> bool:
    return doc.get("status") in ("ok", "published") and isinstance(doc.get("details"), dict)


#: What a figure above its bound shows instead of a share (the bound was not measured reliably). Followed by
#: " of <bound>" it still reads: the language-model page writes "<this> of its bound".
UNRELIABLE = "no share: limit not measured reliably here, the figure is above the measured value"


def share(row: dict[str, Any]) -> float | None:
    """A row's share of its bound, or None where it has none: a figure above its bound (a document from before
    benchmarks stopped storing one above 1 included) says the bound was not measured reliably."""
    fraction = row.get("fraction_of_bound")
    return float(fraction) if describe.is_number(fraction) and 0 <= fraction <= 1.0 else None


def _rows(doc: dict[str, Any], key: str) -> list[dict[str, Any]]:
    rows = (doc.get("details") or {}).get(key)
    if not isinstance(rows, list):
        return []
    good = []
    for row in rows:
        if isinstance(row, dict) and all(describe.is_number(row.get(k)) for k in ("depth", "bound_tokens_per_s")) \
                and isinstance(row.get("tokens_per_s"), list) \
                and (describe.is_number(row.get("fraction_of_bound")) or row.get("fraction_of_bound") is None):
            good.append(row)
    return good


def _median(values: list[Any]) -> float | None:
    numbers = sorted(v for v in values if describe.is_number(v))
    if not numbers:
        return None
    mid = len(numbers) // 2
    return numbers[mid] if len(numbers) % 2 else (numbers[mid - 1] + numbers[mid]) / 2


@dataclass
class Curve:
    label: str
    x: list[float]
    y: list[float]
    bound: bool = False  # a limit, drawn dashed


@dataclass
class CurveChart:
    title: str
    x_label: str
    y_label: str
    curves: list[Curve]
    x_log: bool = False
    target_y: float | None = None  # a horizontal target line (latency)
    target_label: str = ""
    point_labels: list[str] = field(default_factory=list)  # beside the first curve's points
    short_title: str = ""  # for a small plot without a legend


def depth_tick(depth: float) -> str:
    """A context depth as a tick label: whole multiples of 1024 as "4k", "16k"; others as they are."""
    if depth >= 1024 and depth % 1024 == 0:
        return f"{depth / 1024:g}k"
    return f"{depth:g}"


def subject(doc: dict[str, Any]) -> str:
    """What a run measured, in one line: model, precision, batch, step kind and device."""
    params = doc.get("params") or {}
    # a published figure states its load in words and has no step: only what the document holds is named
    parts = [f"batch {params['batch']}" if params.get("batch") is not None else "",
             f"step {params['step']}" if params.get("step") is not None else "",
             str(params["concurrency"]) if describe.is_published(doc) and params.get("concurrency") else ""]
    return " · ".join(filter(None, [f"{params.get('model')}", f"{precision_of(doc)}{weights_text(doc)}", *parts,
                                    str(doc.get("device") or "device not recorded")]))


def weights_text(doc: dict[str, Any]) -> str:
    """" · int4 weights" where a run's weights were quantized; "" for unquantized weights (and documents written
    before the weights were a parameter)."""
    weights = (doc.get("params") or {}).get("weights")
    return f" · {weights} weights" if isinstance(weights, str) and weights not in ("", "bf16") else ""


def depth_curves(doc: dict[str, Any]) -> list[CurveChart]:
    """One chart per figure kind (generation, prompt): tokens/s against context depth, with its bound."""
    charts = []
    params = doc.get("params") or {}
    for key, what, limit in (("tg", "generation", "measured copy bandwidth"),
                             ("pp", "prompt processing", "measured matmul rate")):
        rows = _rows(doc, key)
        if not rows:
            continue
        rows = [rows[i] for i in bounded.shown_indices(len(rows))]
        n = params.get(key, "")
        depths = [float(r["depth"]) for r in rows]
        measured = [_median(r["tokens_per_s"]) for r in rows]
        # A bound below its figure was not measured reliably: it is not drawn (nor is a share of it written).
        held = [r for r in rows if share(r) is not None]
        charts.append(CurveChart(
            f"{key}{n}: {what} tokens/s against context depth ({precision_of(doc)})", "context depth (tokens)",
            "tokens/s", [Curve(f"{key}{n} measured", depths, measured),
                         Curve(f"bound from the {limit}", [float(r["depth"]) for r in held],
                               [float(r["bound_tokens_per_s"]) for r in held], bound=True)],
            point_labels=[f"{share(r):.0%}" if share(r) is not None else "bound not reliable" for r in rows],
            short_title=f"{key}{n}: {what} tokens/s against context depth (beside each: % of its bound)"))
    return charts


@dataclass
class ServingPoint:
    """One point of the serving sweep as its own figures make it."""

    concurrency: int
    output_tokens_per_s: float
    tpot_p50_s: float
    tpot_p99_s: float
    ttft_p50_s: float | None
    ttft_p99_s: float | None
    #: Within both latency targets by its p99s; None where the document states no targets to hold it against.
    meets_target: bool | None


@dataclass
class Serving:
    points: list[ServingPoint]
    #: The largest concurrency within target, derived from the points (None: none is, or nothing to judge by).
    largest: int | None
    #: Where the document's stated verdicts differ from what its points make them, in words.
    disagreements: list[str]
    tpot_target_ms: float | None
    ttft_target_s: float | None


def serving_points(doc: dict[str, Any]) -> Serving:
    """The serving sweep's usable points with their verdicts derived again: a point meets its target when its p99
    time per output token and p99 time to first token are within the document's targets (as the benchmark
    decides it); the largest concurrency within target is the largest such point. A stated ``meets_target``
    or ``largest_concurrency_within_target`` that differs is a disagreement."""
    details = doc.get("details") if isinstance(doc.get("details"), dict) else {}
    targets = details.get("targets") if isinstance(details.get("targets"), dict) else {}
    tpot_ms = targets.get("tpot_p99_ms") if describe.is_number(targets.get("tpot_p99_ms")) else None
    ttft_s = targets.get("ttft_p99_s") if describe.is_number(targets.get("ttft_p99_s")) else None
    points, wrong = [], []
    for p in details.get("serving") or []:
        if not isinstance(p, dict):
            continue
        tpot, ttft = p.get("tpot"), p.get("ttft") if isinstance(p.get("ttft"), dict) else {}
        rate = _median(p.get("output_tokens_per_s") or [])
        if not (isinstance(tpot, dict) and describe.is_number(tpot.get("p99")) and describe.is_number(tpot.get("p50"))
                and rate is not None and describe.is_number(p.get("concurrency"))):
            continue
        ttft50, ttft99 = (ttft.get(k) if describe.is_number(ttft.get(k)) else None for k in ("p50", "p99"))
        meets = None
        if tpot_ms is not None and ttft_s is not None and ttft99 is not None:
            meets = tpot["p99"] <= tpot_ms / 1e3 and ttft99 <= ttft_s
        stated = p.get("meets_target")
        if isinstance(stated, bool) and meets is not None and stated != meets:
            wrong.append(int(p["concurrency"]))
        points.append(ServingPoint(int(p["concurrency"]), rate, tpot["p50"], tpot["p99"], ttft50, ttft99, meets))
    within = [pt.concurrency for pt in points if pt.meets_target]
    largest = max(within) if within else None
    disagreements = []
    if wrong:
        disagreements.append(f"{len(wrong)} serving point(s) state the opposite of what their p99s make them "
                             f"(first: {wrong[0]} sequences)")
    stated_largest = details.get("largest_concurrency_within_target")
    if tpot_ms is not None and ttft_s is not None and stated_largest != largest and \
            (describe.is_number(stated_largest) or largest is not None):
        disagreements.append(f"it states {stated_largest} concurrent sequences within target but its points make "
                             f"it {largest}")
    return Serving(points, largest, disagreements, tpot_ms, ttft_s)


def _shown(serving: Serving) -> tuple[list[ServingPoint], str]:
    """The points a chart or table shows (the largest within target and the first past it always among them)."""
    points = serving.points
    keep = [i for i, pt in enumerate(points) if pt.concurrency == serving.largest]
    keep += [i + 1 for i in keep]
    chosen = bounded.shown_indices(len(points), keep)
    return [points[i] for i in chosen], bounded.note("serving points", len(points), len(chosen))


def _latency_chart(sweep: Serving, name: str, short: str, unit: str, scale: float, target: float | None,
                   p50: str, p99: str) -> CurveChart | None:
    """One serving latency (its p99 and p50, in ``unit`` after ``scale``) against total output tokens/s, one point
    per concurrency shown; its target drawn where the document states one."""
    shown, _ = _shown(sweep)
    points = [p for p in shown if getattr(p, p50) is not None and getattr(p, p99) is not None]
    if not points:
        return None
    title = f"{name[0].upper()}{name[1:]} against output tokens/s"
    xs = [p.output_tokens_per_s for p in points]
    return CurveChart(f"Serving: {name} against output tokens/s", "output tokens/s (all sequences)",
                      f"{name} ({unit})",
                      [Curve(f"{short} p99", xs, [getattr(p, p99) * scale for p in points]),
                       Curve(f"{short} p50", xs, [getattr(p, p50) * scale for p in points])],
                      target_y=target, target_label=f"target p99 ≤ {target:g} {unit}" if target is not None else "",
                      point_labels=[f"{p.concurrency} seq" for p in points], short_title=title)


def serving_curve(doc: dict[str, Any], sweep: Serving | None = None) -> CurveChart | None:
    """Time per output token (p99 and p50) against total output tokens/s, one point per concurrency."""
    sweep = sweep or serving_points(doc)
    return _latency_chart(sweep, "time per output token", "TPOT", "ms", 1e3, sweep.tpot_target_ms,
                          "tpot_p50_s", "tpot_p99_s")


def ttft_curve(doc: dict[str, Any], sweep: Serving | None = None) -> CurveChart | None:
    """Time to first token (p99 and p50) against total output tokens/s, one point per concurrency: with the
    time per output token, the two latencies a concurrency must keep within their targets."""
    sweep = sweep or serving_points(doc)
    return _latency_chart(sweep, "time to first token", "TTFT", "s", 1.0, sweep.ttft_target_s,
                          "ttft_p50_s", "ttft_p99_s")


def serving_charts(doc: dict[str, Any]) -> list[CurveChart]:
    """The serving sweep's two latency charts (per output token, to first token) that ``doc`` holds data for."""
    sweep = serving_points(doc)  # read once for both
    return [chart for chart in (serving_curve(doc, sweep), ttft_curve(doc, sweep)) if chart is not None]


@dataclass
class LlmRun:
    """One run of the section: what it measured and its verdicts, as text."""

    title: str
    limits: str
    figures: list[tuple[str, str, str, str]]  # (figure, tokens/s, spread, fraction of its bound)
    # (concurrency, output tokens/s, TTFT p50/p99, TPOT p50/p99, within target; None: no target to judge by)
    serving: list[tuple[str, str, str, str, bool | None]]
    largest: str
    memory: str
    date: str
    fits: str = ""
    #: What was left out of a long sweep or depth list ("" when everything is shown).
    reduced: str = ""
    #: Where the document's stated verdicts differ from its own points.
    disagreements: list[str] = field(default_factory=list)


def _published_run(doc: dict[str, Any]) -> LlmRun:
    """A published figure: its stated figures and who published them; no bound and no share (the source states
    none, and this machine's limits are not the source's)."""
    reference = doc.get("reference") if isinstance(doc.get("reference"), dict) else {}
    named = [(str(doc["figure"].get("name")), doc["figure"])] + [
        (str(name), figure) for name, figure in (doc.get("figures") or {}).items() if isinstance(figure, dict)]
    figures = [(name, formatting.format_value(figure.get("value"), str(figure.get("unit") or "")), "", "")
               for name, figure in named if describe.is_number(figure.get("value"))]
    date = describe.date_text(doc) or "date not stated"
    return LlmRun(subject(doc), "none (a published figure: the source states no bound)", figures, [], "", "",
                  f"published by {reference.get('publisher') or 'its source'}, {date}")


def _run(doc: dict[str, Any]) -> LlmRun:
    if describe.is_published(doc) and isinstance(doc.get("figure"), dict):
        return _published_run(doc)
    details = doc["details"]
    params = doc.get("params") or {}
    limits = details.get("limits") if isinstance(details.get("limits"), dict) else {}
    bandwidth, tflops = limits.get("bandwidth_gbps_median"), limits.get("matmul_tflops_median")
    fp8_tflops = limits.get("fp8_matmul_tflops_median")
    sheet = details.get("datasheet") if isinstance(details.get("datasheet"), dict) else {}
    # precision=fp8 measures the BF16 rate (attention, the output projection) and the FP8 rate (the blocks)
    matmul_label = BF16.label if describe.is_number(fp8_tflops) else precision_of(doc)
    limit_text = ", ".join(filter(None, [
        f"copy bandwidth {bandwidth:.0f} GB/s" if describe.is_number(bandwidth) else "",
        f"{matmul_label} matmul {tflops:.1f} TFLOP/s" if describe.is_number(tflops) else "",
        f"FP8 matmul {fp8_tflops:.1f} TFLOP/s" if describe.is_number(fp8_tflops) else "",
        (f"datasheet {sheet['model']}: {sheet['memory_gb_per_s']:g} GB/s, "
         f"{sheet['peak_tflops']:g} TFLOP/s" if sheet.get("model") and describe.is_number(sheet.get("peak_tflops"))
         and describe.is_number(sheet.get("memory_gb_per_s")) else "")]))
    figures = []
    reduced = []
    for key in ("pp", "tg"):
        rows = _rows(doc, key)
        chosen = bounded.shown_indices(len(rows))
        reduced.append(bounded.note(f"{key} depths", len(rows), len(chosen)))
        for row in (rows[i] for i in chosen):
            name = f"{key}{params.get(key)} @ depth {row['depth']}"
            stats = ((doc.get("figures") or {}).get(name) or {}).get("stats")
            fraction = share(row)
            figures.append((f"{key}{params.get(key)} @ depth {int(row['depth'])}",
                            formatting.format_value(_median(row["tokens_per_s"]), "tokens/s"),
                            formatting.spread_text(stats) if isinstance(stats, dict) else "",
                            f"{fraction:.0%} of {row['bound_tokens_per_s']:,.1f}" if fraction is not None
                            else f"{UNRELIABLE} of {row['bound_tokens_per_s']:,.1f}"))
    sweep = serving_points(doc)
    shown, note = _shown(sweep)
    reduced.append(note)
    serving = [(str(p.concurrency), formatting.format_value(p.output_tokens_per_s, "tokens/s"),
                f"{p.ttft_p50_s:.3g} / {p.ttft_p99_s:.3g} s" if p.ttft_p50_s is not None and p.ttft_p99_s is not None
                else "not recorded", f"{p.tpot_p50_s * 1e3:.3g} / {p.tpot_p99_s * 1e3:.3g} ms", p.meets_target)
               for p in shown]
    largest = sweep.largest
    target_text = (f"TPOT p99 ≤ {sweep.tpot_target_ms} ms, TTFT p99 ≤ {sweep.ttft_target_s} s"
                   if sweep.tpot_target_ms is not None and sweep.ttft_target_s is not None else "")
    largest_text = (f"{largest} concurrent sequences within {target_text}" if largest is not None
                    else (f"no concurrency measured within {target_text}" if serving and target_text else
                          "no latency target stated to judge the sweep by" if serving else ""))
    memory = details.get("memory") if isinstance(details.get("memory"), dict) else {}
    plan = memory.get("plan") if isinstance(memory.get("plan"), dict) else {}
    peak = memory.get("peak_allocated_bytes")
    memory_text = ""
    if describe.is_number(plan.get("total_bytes")):
        memory_text = f"planned {plan['total_bytes'] / 2 ** 30:.2f} GiB"
        if describe.is_number(peak):
            memory_text += f", peak allocated {peak / 2 ** 30:.2f} GiB"
    return LlmRun(subject(doc), limit_text, figures, serving,
                  largest_text, memory_text, describe.date_text(doc), fits_text(details.get("what_fits")),
                  "; ".join(filter(None, reduced)), sweep.disagreements)


def fits_text(fits: Any) -> str:
    """Which built-in models fit this device (and all its GPUs together), from a document's ``what_fits``:
    a model named alone fits in every precision, otherwise the precisions that fit follow its name."""
    if not isinstance(fits, dict) or not isinstance(fits.get("models"), list):
        return ""
    by_model: dict[str, dict[str, list[str]]] = {}
    for row in fits["models"]:
        if not isinstance(row, dict):
            continue
        where = "one" if row.get("fits_one") is True else "all" if row.get("fits_all") is True else "none"
        by_model.setdefault(str(row.get("model")), {"one": [], "all": [], "none": []})[where].append(
            str(row.get("precision")))

    def names(where: str) -> str:
        parts = []
        for model, split in by_model.items():
            if not split[where]:
                continue
            every = not any(split[w] for w in ("one", "all", "none") if w != where)
            parts.append(model if every else f"{model} ({'/'.join(split[where])})")
        return ", ".join(parts)

    free = fits.get("free_bytes") if isinstance(fits.get("free_bytes"), list) else []
    text = f"Fit this device at {fits.get('positions')} positions, batch 1"
    if free and all(describe.is_number(f) for f in free):
        text += f" ({free[0] / 2 ** 30:.1f} GiB free)"
    text += ": " + (names("one") or "none")
    if names("all"):
        text += f"; only across all {len(free)} devices: " + names("all")
    if names("none"):
        text += "; do not fit: " + names("none")
    return text


def build(docs: Sequence[dict[str, Any]]) -> list[LlmRun]:
    """The newest good run of each model × precision × weights × step, newest first; [] without any."""
    chosen: dict[tuple, dict[str, Any]] = {}
    for doc in sorted((d for d in docs if is_llm(d) and _ok(d)), key=lambda d: str(d.get("started_at") or ""),
                      reverse=True):
        params = doc.get("params") or {}
        chosen.setdefault((str(params.get("model")), precision_of(doc), weights_text(doc), str(params.get("step"))),
                          doc)
    return [_run(doc) for doc in chosen.values()]


def lines(runs: Sequence[LlmRun]) -> list[str]:
    """The section as plain text (the terminal's evaluation)."""
    out = ["", "Language models (tokens/s against this machine's own measured limits):"]
    for run in runs:
        out += [f"  {run.title} ({run.date})", f"    limits: {run.limits}"]
        out += [f"    {name}: {value}" + (f" {spread}" if spread else "")
                + (f"  {fraction} (bound)" if fraction else "") for name, value, spread, fraction in run.figures]
        out += [f"    serving {c} seq: {rate}, TTFT p50/p99 {ttft}, TPOT p50/p99 {tpot}" + _missed(ok)
                for c, rate, ttft, tpot, ok in run.serving]
        out += [f"    {text}" for text in (run.largest, run.memory, run.fits, run.reduced) if text]
        out += [f"    inconsistent: {text}" for text in run.disagreements]
    return out


def _missed(ok: bool | None) -> str:
    return "" if ok else "  (misses the target)" if ok is False else "  (no target to judge by)"


def table(run: LlmRun) -> tuple[str, tuple[str, ...], list[list[str]]]:
    """(heading, column names, rows) of one run for a paginated table (the PDF evaluation)."""
    heading = f"Language model: {run.title}. Limits measured in the run: {run.limits}."
    if run.largest:
        heading += f" Serving: {run.largest}."
    if run.fits:
        heading += f" {run.fits}."
    rows = [[name, value, spread, f"{fraction} (bound)" if fraction else "—"]
            for name, value, spread, fraction in run.figures]
    rows += [[f"serving {c} sequences", rate, f"TTFT p50 / p99 {ttft}", f"TPOT p50 / p99 {tpot}" + _missed(ok)]
             for c, rate, ttft, tpot, ok in run.serving]
    heading += "".join(f" {text}." for text in [run.reduced] + [f"Inconsistent: {t}" for t in run.disagreements]
                       if text)
    return heading, ("Figure", "Tokens/s", "Spread / first token", "Of its bound / per token"), rows


def pdf_tables(runs: Sequence[LlmRun], usable_in: float) -> list[PdfTable]:
    """One table per run, its columns of equal width, for the PDF evaluation."""
    tables = []
    for run in runs:
        heading, names, rows = table(run)
        tables.append((heading, [(name, usable_in / len(names)) for name in names],
                       [(row, ["white"] * len(row)) for row in rows]))
    return tables


def newest(docs: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The newest good llm.infer document among ``docs``, or None."""
    good = sorted((d for d in docs if is_llm(d) and _ok(d)), key=lambda d: str(d.get("started_at") or ""))
    return good[-1] if good else None


def one_depth(specs: Sequence[CurveChart]) -> float | None:
    """The context depth when every chart of ``specs`` measured that one depth alone (drawn as bars, since a
    line needs two points and an axis around one point has no scale), else None."""
    depths = {x for spec in specs for curve in spec.curves for x in curve.x}
    return depths.pop() if len(depths) == 1 else None


def charts(sides: Sequence[Any]) -> list[Any]:
    """matplotlib charts (:class:`~hwbench_gui.engine.reports.chart_kit.Chart`) of each side's newest good llm.infer
    run (``sides``: :class:`~hwbench_gui.engine.reports.compare.Side`), one chart per kind of curve with every
    side on it; a side's bound is dashed in its own colour. Where every side measured one depth alone the chart
    has a bar per side with its bound across it; a chart of one side names the run under its title."""
    from hwbench_gui.engine.reports.chart_kit import Chart, new_figure, short

    by_title: dict[str, list[tuple[str, CurveChart, dict[str, Any]]]] = {}
    for number, side in enumerate(sides):
        doc = newest(side.docs)
        if doc is None:
            continue
        # sides as the report's table numbers them: names of runs of one machine differ only at their end
        name = f"[{number + 1}] {short(side.name, 30, 1)}"
        for spec in depth_curves(doc) + serving_charts(doc):
            by_title.setdefault(spec.title, []).append((name, spec, doc))
    out = []
    for number, (title, entries) in enumerate(by_title.items()):
        figure, ax = new_figure(7.0, 3.6)
        specs = [spec for _, spec, _ in entries]
        depth = one_depth(specs) if specs[0].target_y is None else None
        if depth is not None:
            _draw_bars(ax, entries, depth)
        else:
            _draw_lines(ax, entries)
        spec = specs[0]
        ax.set_ylabel(spec.y_label)
        # from zero, and room above the highest bound or target so that neither sits on the frame
        top = max([y for s in specs for c in s.curves for y in c.y if describe.is_number(y)]
                  + [s.target_y for s in specs if s.target_y is not None] + [0.0])
        ax.set_ylim(0, 1.12 * top if top > 0 else 1.0)
        ax.set_title(title if len(entries) > 1 else f"{title}\n{short(subject(entries[0][2]), 90, 1)}",
                     fontsize=10 if len(entries) > 1 else 9)
        if len(entries) > 1:  # long side names: below the plot, not over its lines
            ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.18))
        else:
            ax.legend(fontsize=7, loc="lower right" if spec.target_y is None else "upper left")
        ax.grid(alpha=0.3, axis="y" if depth is not None else "both")
        caption = ("Each side's newest llm.infer run; a bound (dashed) is what that machine's own limit, measured "
                   "in the same run, allows (see the document's method)." if spec.target_y is None else
                   "One point per number of concurrent sequences (all arriving together); the dotted line is "
                   "the latency target.")
        out.append(Chart(f"llm:{number}", title, figure, caption))
    return out


def _draw_lines(ax: Any, entries: list[tuple[str, CurveChart, dict[str, Any]]]) -> None:
    target = None
    depths: set[float] = set()
    for side_name, spec, _ in entries:
        prefix = f"{side_name}: " if len(entries) > 1 else ""
        colour = None
        for curve in spec.curves:
            # a bound of one depth is a short dash at its level: a line of one point is not drawn at all
            marker = ("_" if len(curve.x) == 1 else "") if curve.bound else "o"
            line = ax.plot(curve.x, curve.y, marker=marker, markersize=14 if marker == "_" else 4,
                           linestyle="--" if curve.bound else "-", label=prefix + curve.label,
                           color=colour if curve.bound else None)[0]
            if not curve.bound and colour is None:
                colour = line.get_color()
        for x, y, text in zip(spec.curves[0].x, spec.curves[0].y, spec.point_labels):
            ax.annotate(text, (x, y), textcoords="offset points", xytext=(4, 4), fontsize=7)
        target = spec if spec.target_y is not None else target
        if spec.target_y is None:
            depths.update(spec.curves[0].x)
    if target is not None:
        ax.axhline(target.target_y, color="crimson", linewidth=1, linestyle=":", label=target.target_label)
    if depths:  # ticks at the depths measured, 4096 as "4k"
        ax.set_xticks(sorted(depths), [depth_tick(d) for d in sorted(depths)])
    ax.set_xlabel(entries[0][1].x_label)


def _draw_bars(ax: Any, entries: list[tuple[str, CurveChart, dict[str, Any]]], depth: float) -> None:
    """One bar per side at its measured figure, its bound a dashed level across the bar."""
    for index, (side_name, spec, _) in enumerate(entries):
        measured = next(c for c in spec.curves if not c.bound)
        bars = ax.bar([index], measured.y, 0.5, color=f"C{index}",
                      label=(f"{side_name}: " if len(entries) > 1 else "") + measured.label)
        if spec.point_labels:
            ax.bar_label(bars, labels=spec.point_labels[:1], fontsize=7, padding=2)
        for curve in spec.curves:
            if curve.bound:
                ax.hlines(curve.y, index - 0.35, index + 0.35, colors=f"C{index}", linestyles="--",
                          label=(f"{side_name}: " if len(entries) > 1 else "") + curve.label)
    ax.set_xticks(range(len(entries)), [name for name, _, _ in entries] if len(entries) > 1 else [""])
    ax.set_xlim(-0.75, len(entries) - 0.25)
    ax.set_xlabel(f"at context depth {depth_tick(depth)} (the one depth measured)")


FAMILY = Family(
    name=LLM_ID, benchmark_ids=frozenset({LLM_ID}), build=build, text_lines=lines,
    html_template="llm_section.html.j2", pdf_tables=pdf_tables, charts=charts,
    disagreements=lambda doc: serving_points(doc).disagreements if is_llm(doc) else [],
    gui_page="hwbench_gui.ui.benchmarks.llm_view:PAGE", draws_its_series=True)
