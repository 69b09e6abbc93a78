"""The evaluation report's health section: the newest burn-in's verdict, its reasons and a line per GPU
(rate, against gpu.matmul's sustained rate where one was measured, temperature, power against the
limit, time under each clock-event reason), and every micro-benchmark figure held against what its
hardware should give (:mod:`hwbench_gui.engine.health.normal`)."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any, Sequence

from hwbench_gui.engine.health import burns, normal
from hwbench_gui.engine.health.rules import FAIL, NOTE, POWER_CAP_BIT, SLOWDOWN_BITS, WARN, derive
from hwbench_gui.engine.reports.family import Family, PdfTable
from hwbench_gui.engine.results import describe

BENCH_ID = "health.burnin"
#: The level of a reason row that says the document's stated verdict disagrees with its own rows.
INCONSISTENT = "INCONSISTENT"
GPU_COLUMNS = ("GPU", "Verdict", "GEMM rate", "vs gpu.matmul sustained", "Max temp", "Power / limit",
               "Power-capped", "Slowed down")


@dataclass
class HealthSection:
    verdict: str | None = None
    date: str = ""
    duration: str = ""
    runs: int = 0
    checked: bool = True
    no_gpu_reason: str | None = None
    reasons: list[tuple[str, str, str]] = field(default_factory=list)  # (level, scope, text)
    #: Whether each GPU's load burned (:mod:`hwbench_gui.engine.health.burns`): (level, scope, text).
    burns: list[tuple[str, str, str]] = field(default_factory=list)
    gpus: list[list[str]] = field(default_factory=list)  # one row of GPU_COLUMNS each
    host: list[str] = field(default_factory=list)
    findings: list[tuple[str, str, str]] = field(default_factory=list)  # (status, text, sources)
    #: The headings of :attr:`gpus`' columns.
    gpu_columns: tuple[str, ...] = GPU_COLUMNS


def _numbers(values: Any) -> list[float]:
    return [float(v) for v in values if describe.is_number(v)] if isinstance(values, list) else []


def _share(masks: Any, bits: int) -> str:
    masks = [int(m) for m in masks if describe.is_number(m)] if isinstance(masks, list) else []
    return f"{sum(1 for m in masks if m & bits) / len(masks) * 100:.0f} %" if masks else "not available"


def _sustained_matmul(docs: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Newest gpu.matmul sustained-mode rate per precision label (TFLOP/s)."""
    out: dict[str, float] = {}
    for doc in sorted(docs, key=lambda d: str(d.get("started_at") or "")):
        params = doc.get("params") if isinstance(doc.get("params"), dict) else {}
        if (doc.get("benchmark") or {}).get("id") != "gpu.matmul" or doc.get("status") != "ok" \
                or params.get("mode") != "sustained" or str(doc.get("device") or "").startswith("cpu"):
            continue
        for label, fig in (doc.get("figures") or {}).items():
            if isinstance(fig, dict) and describe.is_number(fig.get("value")):
                out[str(label)] = float(fig["value"])
    return out


def build(docs: Sequence[dict[str, Any]]) -> HealthSection | None:
    """The section for one machine's documents; None when they hold neither a burn-in nor a figure to hold
    against its hardware."""
    section = HealthSection()
    for doc in docs:
        section.findings += [(f["status"], f["text"], normal.sources(f)) for f in normal.judge(doc)]
    # the newest checked burn-in; one run with check=false (what checking costs) only when there is no other
    burnins = sorted((d for d in docs if (d.get("benchmark") or {}).get("id") == BENCH_ID and d.get("status") == "ok"
                      and isinstance((d.get("details") or {}).get("health"), dict)),
                     key=lambda d: (d["details"]["health"].get("checking", True) is not False,
                                    str(d.get("started_at") or "")), reverse=True)
    if not burnins and not section.findings:
        return None
    if burnins:
        _burnin(section, burnins[0], _sustained_matmul(docs))
        section.burns = [(j["level"], f"gpu{j['index']}", j["text"]) for j in burns.judge_document(burnins[0], docs)]
        section.runs = len(burnins)
    return section


def _burnin(section: HealthSection, doc: dict[str, Any], sustained: dict[str, float]) -> None:
    health = doc["details"]["health"]
    derived = derive(health)  # a stated verdict is never shown as written
    section.verdict = derived.verdict
    section.date = describe.date_text(doc)
    seconds = health.get("duration_s")
    section.duration = (("" if not describe.is_number(seconds) else f"{float(seconds):.0f} s" if seconds < 120
                         else f"{float(seconds) / 60:.3g} min"))
    section.checked = bool(health.get("checking", True))
    section.no_gpu_reason = health.get("no_gpu_reason")
    order = {FAIL: 0, WARN: 1, NOTE: 2}
    # the no-GPU reason is said once, beside the verdict
    reasons = [r for r in health.get("reasons") or [] if isinstance(r, dict) and r.get("rule") != "no_gpu"]
    section.reasons = [(INCONSISTENT, "document", text) for text in derived.disagreements]
    section.reasons += [(str(r.get("level")), str(r.get("scope")), str(r.get("text")))
                        for r in sorted(reasons, key=lambda r: order.get(r.get("level"), 3))]
    precision = str(doc.get("precision") or "")
    for gpu, gpu_verdict in zip((g for g in health.get("gpus") or [] if isinstance(g, dict)), derived.gpus):
        tl = gpu.get("timeline") if isinstance(gpu.get("timeline"), dict) else {}
        rate = _numbers((gpu.get("load") or {}).get("rate"))
        mean = statistics.fmean(rate) if rate else None
        power, limit, temps = _numbers(tl.get("power_w")), _numbers(tl.get("power_limit_w")), _numbers(tl.get("temp_c"))
        reference = sustained.get(precision)
        section.gpus.append([
            f"gpu{gpu.get('index')} {gpu.get('name') or ''}".strip(), gpu_verdict,
            f"{mean:.4g} TFLOP/s {precision}" if mean else "not measured",
            f"{mean / reference:.2f} × {reference:.4g}" if mean and reference else
            f"no gpu.matmul mode=sustained {precision} run among these results",
            f"{max(temps):.0f} °C" if temps else "not available",
            f"{statistics.fmean(power):.0f} / {statistics.fmean(limit):.0f} W "
            f"({statistics.fmean(power) / statistics.fmean(limit):.2f})" if power and limit else "not available",
            _share(tl.get("reasons"), POWER_CAP_BIT), _share(tl.get("reasons"), sum(SLOWDOWN_BITS))])
    for load in (health.get("host") or {}).get("loads") or []:
        if isinstance(load, dict):
            rate = _numbers(load.get("rate"))
            errors = load.get("check_errors") or []
            section.host.append(f"{load.get('name')}: {statistics.fmean(rate):.4g} {load.get('unit')} mean, "
                                f"{load.get('results_compared')} results compared, {len(errors)} wrong"
                                if rate else f"{load.get('name')}: no rate ({load.get('load_error')})")


def text_lines(section: HealthSection | None) -> list[str]:
    """The section as plain text lines (the terminal's evaluation)."""
    if section is None:
        return []
    lines = [""]
    if section.verdict:
        lines.append(f"Health burn-in: {section.verdict} ({section.duration}, {section.date}"
                     + ("" if section.checked else ", results NOT checked") + ")")
        lines += [f"  {level} {scope}: {text}" for level, scope, text in section.reasons]
        lines += [f"  {level} {scope} whether the load burns: {text}" for level, scope, text in section.burns]
        lines += ["  " + " · ".join(f"{name} {value}" for name, value in zip(GPU_COLUMNS, row)) for row in section.gpus]
        lines += [f"  host {line}" for line in section.host]
    if section.findings:
        lines.append("Normal for its kind:")
        lines += [f"  [{status}] {text}" for status, text, _ in section.findings]
    return lines


def pdf_tables(section: HealthSection | None, usable_in: float) -> list[PdfTable]:
    """``(heading, [(column, width in inches)], [(cells, colours)])`` per table of the section, for the PDF."""
    if section is None:
        return []
    shade = {FAIL: "#f9e0e0", WARN: "#fbe3c8", INCONSISTENT: "#f9e0e0"}
    tables = []
    if section.verdict:
        heading = f"Health burn-in: {section.verdict} ({section.duration}, {section.date}" + \
                  ("" if section.checked else ", results NOT checked") + ")"
        rows = [([level, scope, text], [shade.get(level, "white")] * 3) for level, scope, text in section.reasons]
        rows += [([level, scope, f"whether the load burns: {text}"], [shade.get(level, "white")] * 3)
                 for level, scope, text in section.burns]
        rows += [(["host", "", line], ["white"] * 3) for line in section.host]
        tables.append((heading, [("Level", 0.7), ("Scope", 0.8), ("Reason", usable_in - 1.5)], rows))
        if section.gpus:
            width = usable_in / len(GPU_COLUMNS)
            tables.append(("Health burn-in per GPU", [(name, width) for name in GPU_COLUMNS],
                           [(row, ["white"] * len(row)) for row in section.gpus]))
    if section.findings:
        tables.append(("Normal for its kind", [("Status", 1.0), ("Figure against its hardware", usable_in - 1.0)],
                       [([status, f"{text}\n{where}" if where else text],
                         ["#fbe3c8" if status == normal.LOW else "white"] * 2)
                        for status, text, where in section.findings]))
    return tables


def disagreements(doc: dict[str, Any]) -> list[str]:
    """Where a burn-in's stated verdict differs from what its own rows make it."""
    details = doc.get("details") if isinstance(doc.get("details"), dict) else {}
    return derive(details["health"]).disagreements if isinstance(details.get("health"), dict) else []


FAMILY = Family(
    name=BENCH_ID, benchmark_ids=frozenset({BENCH_ID}), build=build, text_lines=text_lines,
    html_template="health_section.html.j2", pdf_tables=pdf_tables, disagreements=disagreements,
    gui_page="hwbench_gui.ui.benchmarks.health_view:PAGE", shown_without_runs=True)
