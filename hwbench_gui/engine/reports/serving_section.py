"""The report section of language models served over HTTP (llm.endpoint) and of the engines users run (llm.llamacpp,
llm.ollama): per run, what was measured, its headline figure, what it is held against (the largest load within the
preset's latency limits, or the share of this machine's bandwidth bound) and, for an engine, hwbench's own llm.infer
figure of the same name on the same machine beside it. Read from the documents' own fields, each checked
(documents are foreign input)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from hwbench_gui.engine.reports.family import Family, PdfTable
from hwbench_gui.engine.results import describe

BENCHMARK_IDS = frozenset({"llm.endpoint", "llm.llamacpp", "llm.ollama"})
MAX_SUMMARY_LINES = 12  # a document's summary shown at most this long


@dataclass
class ServingRow:
    """One run: ``what`` ran, its ``figure`` (name and value), ``held`` (what it is held against) and where."""

    what: str
    figure: str
    held: str
    device: str
    date: str
    summary: list[str]
    #: hwbench's own llm.infer figure of the same name on this machine ("" where none was run)
    beside: str = ""


def _text(value: Any, limit: int = 160) -> str:
    return " ".join(str(value).split())[:limit] if isinstance(value, (str, int, float)) else ""


def _dict(node: Any, key: str) -> dict[str, Any]:
    value = node.get(key) if isinstance(node, dict) else None
    return value if isinstance(value, dict) else {}


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _share_of(doc: dict[str, Any], name: str) -> float | None:
    share = _number(_dict(_dict(doc, "figures"), name).get("fraction_of_bound"))
    return share if share is not None and 0 <= share <= 1 else None


def _own(infer_docs: Sequence[dict[str, Any]], name: str) -> str:
    """The newest llm.infer figure called ``name`` (tg128 @ depth 0) with its share of its bound, in words."""
    for doc in infer_docs:
        value = _number(_dict(_dict(doc, "figures"), name).get("value"))
        if value is not None:
            share = _share_of(doc, name)
            model = _text(_dict(doc, "params").get("model"))
            return (f"hwbench llm.infer {model} {_text(doc.get('precision'))}: {value:,.1f} tokens/s"
                    + (f" = {share:.2f} of its bound" if share is not None else ""))
    return ""


def _row(doc: dict[str, Any], infer_docs: Sequence[dict[str, Any]]) -> ServingRow | None:
    bench_id = _dict(doc, "benchmark").get("id")
    figure, details = _dict(doc, "figure"), _dict(doc, "details")
    value = _number(figure.get("value"))
    if doc.get("status") != "ok" or value is None:
        return None
    summary = [_text(line, 300) for line in (details.get("summary") or [])[:MAX_SUMMARY_LINES]
               if isinstance(line, str)] if isinstance(details.get("summary"), list) else []
    shown = f"{_text(figure.get('name'))}: {value:,.1f} {_text(figure.get('unit'))}"
    if bench_id == "llm.endpoint":
        endpoint, preset = _dict(details, "endpoint"), _dict(details, "preset")
        largest = details.get("largest_concurrency_within_target")
        largest = largest if isinstance(largest, int) and not isinstance(largest, bool) else None
        what = f"HTTP {_text(endpoint.get('url'))} ({_text(endpoint.get('model'))})"
        held = (f"largest concurrency within {_text(preset.get('title')) or 'the preset'}: "
                + (str(largest) if largest else "none measured"))
    else:
        gguf = _dict(details, "gguf")
        engine = "llama.cpp" if bench_id == "llm.llamacpp" else "Ollama"
        what = f"{engine} {_text(gguf.get('file_type')) or ''} ({_text(gguf.get('architecture'))})".replace("  ", " ")
        share = _share_of(doc, _text(figure.get("name")))
        held = f"{share:.2f} of this machine's bandwidth bound" if share is not None else \
            "no share of a bound (the document says why)"
    beside = _own(infer_docs, _text(figure.get("name"))) if bench_id != "llm.endpoint" else ""
    return ServingRow(what, shown, held, _text(doc.get("device")), describe.date_text(doc) or "date not stated",
                      summary, beside)


def _newest_first(docs: Sequence[dict[str, Any]], ids: frozenset[str]) -> list[dict[str, Any]]:
    ours = [d for d in docs if isinstance(d, dict) and _dict(d, "benchmark").get("id") in ids
            and d.get("status") == "ok"]
    return sorted(ours, key=lambda d: str(d.get("started_at") or ""), reverse=True)


def build(docs: Sequence[dict[str, Any]]) -> list[ServingRow]:
    """One row per good run of the family (one machine's documents), newest first; an engine's beside the newest
    llm.infer figure of the same name among the same documents."""
    infer = _newest_first(docs, frozenset({"llm.infer"}))
    return [row for row in (_row(d, infer) for d in _newest_first(docs, BENCHMARK_IDS)) if row is not None]


def text_lines(rows: Sequence[ServingRow] | None) -> list[str]:
    if not rows:
        return []
    lines = ["", "Serving over HTTP and the engines you run"]
    for row in rows:
        lines.append(f"  {row.what}: {row.figure}; {row.held} — {row.device} ({row.date})")
        if row.beside:
            lines.append(f"    beside {row.beside}")
        lines += [f"    {line}" for line in row.summary]
    return lines


def pdf_tables(rows: Sequence[ServingRow] | None, usable_in: float) -> list[PdfTable]:
    if not rows:
        return []
    widths = [2.2, 2.0, 2.0, 2.4]
    widths.append(usable_in - sum(widths))
    names = ("What ran", "Headline", "Held against", "hwbench's own", "Device · date")
    return [("Serving over HTTP and the engines you run", list(zip(names, widths)),
             [([r.what, r.figure, r.held, r.beside or "—", f"{r.device} ({r.date})"], ["white"] * 5) for r in rows])]


FAMILY = Family(
    name="llm.endpoint",
    benchmark_ids=BENCHMARK_IDS,
    build=build,
    text_lines=text_lines,
    html_template="serving_section.html.j2",
    pdf_tables=pdf_tables,
    gui_page="hwbench_gui.ui.benchmarks.serving_view:PAGE",
)
