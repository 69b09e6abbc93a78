"""The evaluation report of one machine, laid out as the seed evaluation reads.

Model benchmarks form a matrix: one row per model and configuration (batch, memory format and the other
parameters that decide what was measured, as asked: a suite's "auto" is one configuration), one column per
framework × mode × precision, each cell with images/s, its spread, and the timed phase's GPU utilisation,
GPU memory and power. A cell names the batch and memory format it ran with where its row's cells differ
(the seed suite's "auto" runs FP32 as NCHW and mixed precision as NHWC). Of several runs of one cell a
clean one (machine not busy, enough repeats, GPU kept busy) is shown before a newer one that is not, and a
cell with no clean run says so.
Beside it the micro-benchmarks (one line each) and the data-path analyzer's verdict. Runs that
did not measure collapse into one line per reason ("TensorFlow is not installed: 12 cells"), and a
column no run measured is left out of the matrix. There is no composite: a machine against itself
says nothing.

:func:`write_evaluation_report` is the plain entry point (the seed suite calls it when it ends);
:func:`build_evaluation` gives the laid-out data for other front ends.
"""

from __future__ import annotations

import base64
import os
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

from jinja2 import Environment, PackageLoader, select_autoescape

from hwbench_gui import __version__
from hwbench_gui.engine.datapath.reread import verdict_details
from hwbench_gui.engine.atomic import write_atomic
from hwbench_gui.engine.reports import charts as charts_mod
from hwbench_gui.engine.reports import compare, datapath_charts, families, flags, power_charts
from hwbench_gui.engine.reports.report import side_facts
from hwbench_gui.engine.results import describe, formatting, machine_kind
from hwbench_gui.engine.results.store import ResultFileError
from hwbench_gui.engine.spec.precision import PRECISIONS
from hwbench_gui.engine.spec.precision import of_document as precision_of

FRAMEWORK_ORDER = ("torch", "tf")
FRAMEWORK_NAMES = {"torch": "PyTorch", "tf": "TensorFlow"}
MODE_ORDER = ("train", "infer")
MODE_NAMES = {"train": "training", "infer": "inference"}
PRECISION_ORDER = tuple(p.label for p in PRECISIONS)
DATAPATH_ID = "datapath.analyze"
#: The seed evaluation's order of its models (others follow by id).
SEED_MODEL_ORDER = ("model.resnet50", "model.vgg16", "model.fasterrcnn", "model.unet")


@dataclass(frozen=True)
class Column:
    framework: str
    mode: str
    precision: str

    @property
    def title(self) -> str:
        return f"{FRAMEWORK_NAMES.get(self.framework, self.framework)} · {MODE_NAMES.get(self.mode, self.mode)} · " \
               f"{self.precision}"


@dataclass
class MatrixCell:
    """One measured run of the matrix (``doc``), or the reason number of a run that did not measure."""

    doc: dict[str, Any] | None = None
    reason_index: int | None = None
    other_runs: int = 0
    #: "NHWC · batch 128": what the shown run ran with, where the row's cells differ in it; else empty.
    configuration: str = ""

    @property
    def measured(self) -> bool:
        return self.doc is not None

    def lines(self) -> list[str]:
        """The cell as text lines: figure, spread, GPU utilisation, memory, power, flags."""
        if self.doc is None:
            return [f"not measured [{self.reason_index + 1}]"] if self.reason_index is not None else ["—"]
        doc = self.doc
        figure = doc.get("figure") or {}
        value = formatting.format_value(figure.get("value"), str(figure.get("unit") or ""))
        if describe.is_published(doc):  # a stated figure: no spread, telemetry or repeats to show
            publisher = (doc.get("reference") or {}).get("publisher") or "its source"
            return [value, f"published by {publisher}"] + ([self.configuration] if self.configuration else [])
        out = [value, formatting.spread_text(doc.get("stats"))]
        util = _seed(doc, "gpu_util_percent", "mean")
        vram = _seed(doc, "gpu_vram_used_bytes", "max")
        power = power_charts.mean_gpu_power_w(doc)
        out.append(" · ".join(filter(None, [
            f"GPU {util:.0f} %" if util is not None else "GPU util n/a",
            f"{vram / 1024 ** 3:.1f} GiB" if vram is not None else "",
            f"{power:.0f} W" if power is not None else ""])))
        if self.configuration:
            out.append(self.configuration)
        unclean = unclean_marks(doc)
        if unclean:
            out.append("(no clean run: " + ", ".join(unclean) + ")")
        if flags.consistency_problems(doc):
            out.append("(inconsistent)")
        if self.other_runs:
            out.append(f"+{self.other_runs} other run(s) of this cell")
        return out


def unclean_marks(doc: dict[str, Any]) -> list[str]:
    """Why a run's figure is not a clean measurement: the machine was busy, too few repeats, its GPU idle
    most of the timed phase. Empty for a clean run."""
    low = flags.low_gpu_use(doc)
    return [m for m, on in (("busy machine", bool(flags.busy_reasons(doc))),
                            ("few repeats", flags.few_repeats(doc)),
                            (f"GPU under {flags.LOW_GPU_USE_PERCENT:.0f} % busy", low is not None)) if on]


@dataclass
class MatrixRow:
    title: str
    cells: list[MatrixCell]


@dataclass
class NotMeasured:
    reason: str
    cells: int
    runs: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return f"{self.reason}: {self.cells} cell{'s' if self.cells != 1 else ''}"


@dataclass
class MicroRow:
    title: str
    figure: str
    value: str
    spread: str
    precision: str
    configuration: str
    flags: str


@dataclass
class Evaluation:
    title: str
    generated_at: str
    machine: str
    facts: dict[str, str]
    columns: list[Column]
    rows: list[MatrixRow]
    not_measured: list[NotMeasured]
    micro: list[MicroRow]
    datapath: dict[str, Any] | None
    docs: list[dict[str, Any]]
    charts: list[charts_mod.Chart]
    errors: list[ResultFileError] = field(default_factory=list)
    hwbench_version: str = __version__
    #: Machines the documents come from (:func:`machine_kind.kind_key`): one, unless several were given.
    machines: int = 1
    #: Each registered family's section (:mod:`.families`), by family name, in registration order.
    sections: dict[str, Any] = field(default_factory=dict)

    @property
    def of_machines(self) -> str:
        return "of one machine" if self.machines == 1 else f"of {self.machines} machines"

    def shown_sections(self) -> list[tuple[families.Family, Any]]:
        """``(family, section)`` of each family section the report shows: those with runs, and those that say
        how to get one."""
        return [(family, self.sections.get(family.name)) for family in families.FAMILIES
                if self.sections.get(family.name) or family.shown_without_runs]


def is_one_machine(docs: Sequence[dict[str, Any]]) -> bool:
    """Whether ``docs`` are measured documents of a single machine (:func:`machine_kind.kind_key`: cloud loans
    of one kind are one machine), what this report is for."""
    return bool(docs) and not any(describe.is_published(d) for d in docs) and \
        len({machine_kind.kind_key(d) for d in docs}) == 1


def _seed(doc: dict[str, Any], name: str, statistic: str) -> float | None:
    telemetry = doc.get("telemetry") if isinstance(doc.get("telemetry"), dict) else {}
    entry = (telemetry.get("seed") or {}).get(name)
    value = entry.get(statistic) if isinstance(entry, dict) else None
    return float(value) if describe.is_number(value) else None


def _is_model(doc: dict[str, Any]) -> bool:
    return str((doc.get("benchmark") or {}).get("id", "")).startswith("model.")


def _param(doc: dict[str, Any], key: str, default: Any = None) -> Any:
    return (doc.get("params") or {}).get(key, default)


def _reason(doc: dict[str, Any]) -> str:
    """The first line of a run's reason: the cause, without the traceback that follows it."""
    text = str(doc.get("reason") or doc.get("status") or "not measured")
    first = next((line.strip() for line in text.splitlines() if line.strip()), text.strip())
    return first if len(first) <= 200 else first[:199] + "…"


def _rank(value: str, known: Sequence[str]) -> int:
    return known.index(value) if value in known else len(known)


def _model_title(doc: dict[str, Any]) -> str:
    bench = doc.get("benchmark") or {}
    title = str(bench.get("title") or bench.get("id", "").removeprefix("model."))
    gpus = _param(doc, "gpus", 1)
    return f"{title} ({gpus} GPUs)" if isinstance(gpus, int) and gpus > 1 else title


def _newest_first(docs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(docs, key=lambda d: str(d.get("started_at") or ""), reverse=True)


def _shown(doc: dict[str, Any]) -> bool:
    """A cell shows a run that measured, or a published figure (which states a value and was not run here)."""
    return doc.get("status") == "ok" or (describe.is_published(doc) and
                                          describe.is_number((doc.get("figure") or {}).get("value")))


def _clean_first(docs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Clean runs before the others, each newest first (the sort is stable)."""
    return sorted(_newest_first(docs), key=lambda d: bool(unclean_marks(d)))


#: The matrix's columns; every other parameter that decides comparability makes the row's configuration.
_COLUMN_PARAMS = ("framework", "mode", "precision")
#: What a cell names where its row's cells differ: the configuration hwbench resolves per run ("auto").
_RESOLVED_PARAMS = ("channels_last", "batch")


def _configuration(doc: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """The row a model run belongs in: its comparability parameters as asked (``params_requested`` over
    ``params``, so a suite's "auto" batch and memory format are one configuration), less the columns'."""
    asked = describe.asked_params(doc)
    keys = [k for k in compare.comparable_params(doc) if k not in _COLUMN_PARAMS]
    return tuple((k, describe.param_value(asked.get(k))) for k in sorted(keys))


def _value_text(key: str, value: str) -> str:
    if key == "channels_last":
        return {"True": "NHWC", "False": "NCHW", "true": "NHWC", "false": "NCHW"}.get(value, "memory format auto")
    if key == "batch":
        return "batch auto" if value in ("0", "auto") else f"batch {value}"
    if key == "compile":
        return {"True": "compiled", "true": "compiled"}.get(value, "not compiled" if value in ("False", "false")
                                                            else f"compile {value}")
    return f"{key} {value}"


def _resolved_text(doc: dict[str, Any]) -> str:
    params = doc.get("params") if isinstance(doc.get("params"), dict) else {}
    return " · ".join(_value_text(k, describe.param_value(params.get(k))) for k in _RESOLVED_PARAMS if k in params)


def build_evaluation(docs: Sequence[dict[str, Any]], errors: Sequence[ResultFileError] = (), *,
                     title: str | None = None, with_charts: bool = True) -> Evaluation:
    """Lay ``docs`` (one machine's) out as the seed evaluation. Raises ``ValueError`` for none."""
    docs = list(docs)
    if not docs:
        raise ValueError("no result documents to report on")
    models = [d for d in docs if _is_model(d)]
    by_cell: dict[tuple[str, tuple, Column], list[dict[str, Any]]] = {}
    for doc in models:
        column = Column(str(_param(doc, "framework", "")), str(_param(doc, "mode", "")), precision_of(doc))
        by_cell.setdefault((_model_title(doc), _configuration(doc), column), []).append(doc)
    measured_columns = {col for (_, _, col), cell_docs in by_cell.items()
                        if any(_shown(d) for d in cell_docs)}
    columns = sorted(measured_columns, key=lambda c: (_rank(c.framework, FRAMEWORK_ORDER), _rank(c.mode, MODE_ORDER),
                                                      _rank(c.precision, PRECISION_ORDER), c.framework, c.mode,
                                                      c.precision))
    reasons: Counter[str] = Counter()
    reason_runs: dict[str, list[str]] = {}
    reason_order: list[str] = []
    model_titles = list(dict.fromkeys(_model_title(d) for d in sorted(
        models, key=lambda d: (_rank(str((d.get("benchmark") or {}).get("id")), SEED_MODEL_ORDER),
                               str((d.get("benchmark") or {}).get("id")), _param(d, "gpus", 1) or 1))))
    rows = []
    for model in model_titles:
        configurations = _model_configurations(model, by_cell)
        for configuration in configurations:
            cells = []
            for column in columns:
                cell_docs = by_cell.get((model, configuration, column), [])
                ok = _clean_first([d for d in cell_docs if _shown(d)])
                if ok:
                    cells.append(MatrixCell(ok[0], other_runs=len(ok) - 1))
                elif cell_docs:
                    reason = _reason(_newest_first(cell_docs)[0])
                    if reason not in reason_order:
                        reason_order.append(reason)
                    cells.append(MatrixCell(None, reason_order.index(reason)))
                else:
                    cells.append(MatrixCell())
            shown = [cell for cell in cells if cell.measured]
            if len({_resolved_text(cell.doc) for cell in shown}) > 1:
                for cell in shown:
                    cell.configuration = _resolved_text(cell.doc)
            row_title = model if len(configurations) == 1 else \
                f"{model} · {_configuration_text(configuration, configurations)}"
            rows.append(MatrixRow(row_title, cells))
    # Every run that did not measure, counted once per cell, whether its column is shown or not.
    for (model, _configuration_key, column), cell_docs in by_cell.items():
        if any(_shown(d) for d in cell_docs):
            continue
        reason = _reason(_newest_first(cell_docs)[0])
        if reason not in reason_order:
            reason_order.append(reason)
        reasons[reason] += 1
        reason_runs.setdefault(reason, []).append(f"{model} · {column.title}")
    not_measured = [NotMeasured(r, reasons[r], reason_runs.get(r, [])) for r in reason_order if reasons[r]]
    micro = _micro_rows([d for d in docs if not _is_model(d) and families.family_of(d) is None and
                         (d.get("benchmark") or {}).get("id") != DATAPATH_ID])
    datapath = _datapath([d for d in docs if (d.get("benchmark") or {}).get("id") == DATAPATH_ID])
    machines = compare.sides_by_machine(docs)
    side = compare.Side(machines[0].name, docs, machines[0].grouping) if len(machines) == 1 else \
        compare.Side(_machines_name(docs, len(machines)), docs)
    drawn = charts_mod.build_charts([side]) if with_charts else []
    return Evaluation(title or f"hwbench evaluation of {side.name}",
                      datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), side.name, side_facts(side),
                      columns, rows, not_measured, micro, datapath, docs, drawn, list(errors),
                      machines=len(machines), sections={f.name: f.build(docs) for f in families.FAMILIES})


def _machines_name(docs: Sequence[dict[str, Any]], count: int) -> str:
    """What an evaluation of several machines' documents is of: "3 machines named vm · NVIDIA H200" (the
    host name and hardware alike, the GPUs or boards not), else the machines' names."""
    names = list(dict.fromkeys(describe.machine_name(d) for d in docs))
    return f"{count} machines named {names[0]}" if len(names) == 1 else f"{count} machines: {'; '.join(names)}"


def _model_configurations(model: str, by_cell: dict[tuple[str, tuple, Column], list[dict[str, Any]]]) -> list[tuple]:
    """The configurations ``model`` ran with, the one with the most measured cells first (then the newest)."""
    measured: Counter[tuple] = Counter()
    newest: dict[tuple, str] = {}
    for (title, configuration, _column), cell_docs in by_cell.items():
        if title != model:
            continue
        measured[configuration] += any(_shown(d) for d in cell_docs)
        starts = [str(d.get("started_at") or "") for d in cell_docs]
        newest[configuration] = max([newest.get(configuration, ""), *starts])
    by_newest = sorted(measured, key=lambda c: newest[c], reverse=True)
    return sorted(by_newest, key=lambda c: -measured[c])


def _configuration_text(configuration: tuple, configurations: Sequence[tuple]) -> str:
    """What sets ``configuration`` apart from the model's others: the values that differ among them."""
    differing = [k for k, v in configuration if len({dict(c).get(k) for c in configurations}) > 1]
    return ", ".join(_value_text(k, v) for k, v in configuration if k in differing)


def _micro_rows(docs: Sequence[dict[str, Any]]) -> list[MicroRow]:
    """The newest good run of each benchmark configuration; failed ones only where none is good."""
    chosen: dict[tuple, dict[str, Any]] = {}
    for doc in _newest_first(docs):
        key = (describe.row(doc)["benchmark"], precision_of(doc), describe.params_text(compare.comparable_params(doc)))
        current = chosen.get(key)
        if current is None or (current.get("status") != "ok" and doc.get("status") == "ok"):
            chosen[key] = doc
    out = []
    for doc in sorted(chosen.values(), key=lambda d: str((d.get("benchmark") or {}).get("id"))):
        figure = doc.get("figure") or {}
        bench = doc.get("benchmark") or {}
        marks = [m for m, on in (("busy machine", bool(flags.busy_reasons(doc))),
                                 ("few repeats", flags.few_repeats(doc)),
                                 ("inconsistent", bool(flags.consistency_problems(doc)))) if on]
        ok = doc.get("status") == "ok"
        value = formatting.format_value(figure.get("value"), str(figure.get("unit") or ""))
        out.append(MicroRow(
            f"{bench.get('title') or bench.get('id')} ({bench.get('id')})", str(figure.get("name") or ""),
            value if ok else str(doc.get("status")),
            formatting.spread_text(doc.get("stats")) if ok else _reason(doc), precision_of(doc),
            describe.params_text(compare.comparable_params(doc)), ", ".join(marks)))
    return out


def _datapath(docs: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    good = [d for d in _newest_first(docs) if d.get("status") == "ok"]
    if not good:
        return None
    doc = good[0]
    details = verdict_details(doc)  # the verdict the Pipeline page shows, from the same figures
    rates = {s.get("key"): s.get("rate_images_per_s") for s in details.get("stages") or [] if isinstance(s, dict)}
    stages = [(title, formatting.format_value(rates.get(key), "images/s"), key == details.get("limiting_stage"))
              for key, title in datapath_charts.datapath_stages([doc]) if describe.is_number(rates.get(key))]
    return {"verdict": str(details.get("verdict") or ""),
            "bottleneck": str(details.get("bottleneck_name") or details.get("bottleneck") or ""),
            "stages": stages, "date": describe.date_text(doc), "runs": len(good)}


# -- output ----------------------------------------------------------------------------------------

_env = Environment(loader=PackageLoader("hwbench_gui.engine.reports", "templates"),
                   autoescape=select_autoescape(["html", "j2"]), trim_blocks=True, lstrip_blocks=True)


def render_evaluation_html(evaluation: Evaluation) -> str:
    from hwbench_gui.engine.reports.charts import to_png
    from hwbench_gui.engine.results import library

    charts = [{"title": c.title, "caption": c.caption,
               "src": "data:image/png;base64," + base64.b64encode(to_png(c.figure)).decode("ascii")}
              for c in evaluation.charts]
    return _env.get_template("evaluation.html.j2").render(ev=evaluation, charts=charts,
                                                           errors=library.errors_text(evaluation.errors))


def evaluation_pdf_bytes(evaluation: Evaluation) -> bytes:
    from hwbench_gui.engine.reports.pdf import evaluation_pdf

    return evaluation_pdf(evaluation)


def write_evaluation_report(docs: Sequence[dict[str, Any]], folder: str | os.PathLike, *,
                            errors: Sequence[ResultFileError] = (), title: str | None = None) -> list[Path]:
    """Write the evaluation of ``docs`` (one machine's result documents, as loaded by
    :func:`hwbench_gui.engine.results.library.load_document`) into ``folder`` as
    ``evaluation-<UTC time>.html`` and ``.pdf``; returns the two paths. Raises ``ValueError``
    for no documents and ``OSError`` when the folder cannot be written. Never writes over a file:
    a name in use gets a ``-N`` suffix."""
    evaluation = build_evaluation(docs, errors, title=title)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    stem = "evaluation-" + datetime.now(timezone.utc).strftime("%Y-%m-%dT%H-%M-%S")
    suffix = ""
    n = 1
    while (folder / f"{stem}{suffix}.html").exists() or (folder / f"{stem}{suffix}.pdf").exists():
        n += 1
        suffix = f"-{n}"
    html = write_atomic(folder / f"{stem}{suffix}.html", render_evaluation_html(evaluation).encode("utf-8"))
    pdf = write_atomic(folder / f"{stem}{suffix}.pdf", evaluation_pdf_bytes(evaluation))
    return [html, pdf]


def format_evaluation(evaluation: Evaluation) -> str:
    """The evaluation as plain text for a terminal: the matrix (one block per model), the reasons
    runs did not measure, the data-path verdict and the micro-benchmarks."""
    lines = [evaluation.title, ""]
    lines += [f"  {key}: {value}" for key, value in evaluation.facts.items()]
    if evaluation.rows and evaluation.columns:
        lines += ["", "Models (images/s, spread, GPU utilisation · memory · power in the timed phase):"]
        width = max(len(col.title) for col in evaluation.columns)
        for row in evaluation.rows:
            lines.append(f"  {row.title}")
            for col, cell in zip(evaluation.columns, row.cells):
                lines.append(f"    {col.title.ljust(width)}  {' | '.join(cell.lines())}")
    if evaluation.not_measured:
        lines += ["", "Not measured:"] + [f"  [{i + 1}] {item.text}" for i, item in enumerate(evaluation.not_measured)]
    if evaluation.datapath:
        lines += ["", f"Data path: {evaluation.datapath['verdict']}"]
        lines += [f"  {title}: {rate}{'  <- slowest' if limiting else ''}"
                  for title, rate, limiting in evaluation.datapath["stages"]]
    for family, section in evaluation.shown_sections():
        lines += family.text_lines(section)
    if evaluation.micro:
        lines += ["", "Micro-benchmarks:"]
        lines += [f"  {m.title} · {m.figure}: {m.value} ({m.spread}; {m.precision})"
                  + (f" [{m.flags}]" if m.flags else "") for m in evaluation.micro]
    return "\n".join(lines) + "\n"
