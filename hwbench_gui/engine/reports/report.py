"""What one report holds: the documents, the comparison, the charts and the skipped files.

HTML (:mod:`.html`) and PDF (:mod:`.pdf`) render the same :class:`Report`, so they never disagree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Sequence

from hwbench_gui import __version__
from hwbench_gui.engine.reports import charts as charts_mod
from hwbench_gui.engine.reports import compare
from hwbench_gui.engine.results import describe
from hwbench_gui.engine.results.store import ResultFileError

GROUPINGS = compare.GROUPINGS


@dataclass
class Report:
    title: str
    generated_at: str
    comparison: compare.Comparison
    charts: list[charts_mod.Chart]
    docs: list[dict[str, Any]]
    errors: list[ResultFileError] = field(default_factory=list)
    hwbench_version: str = __version__
    #: Why some runs are in the table but not in the charts (empty when every run is drawn).
    charts_note: str = ""

    @property
    def published_docs(self) -> list[dict[str, Any]]:
        return [d for d in self.docs if describe.is_published(d)]


def make_report(docs: Sequence[dict[str, Any]], errors: Sequence[ResultFileError] = (), *,
                sides: Sequence[compare.Side] | None = None, group: str = "machine", baseline: str | None = None,
                title: str | None = None, all_figures: bool = False, with_charts: bool = True) -> Report:
    """Compare ``docs`` (grouped by machine or by run, unless ``sides`` are given) against the side
    named ``baseline`` (default: the first) and draw the charts. Raises ``ValueError`` for no
    documents or an unknown baseline."""
    if sides is None:
        sides = compare.sides_by(docs, group)
    if not sides:
        raise ValueError("no result documents to report on")
    comparison = compare.compare(sides, compare.find_side(sides, baseline), all_figures=all_figures)
    drawn = charts_mod.build_charts(sides, comparison) if with_charts else []
    all_docs = [d for s in sides for d in s.docs]
    return Report(title or "hwbench comparison report",
                  datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), comparison, drawn, all_docs,
                  list(errors), charts_note=charts_note(comparison))


def charts_note(comparison: compare.Comparison) -> str:
    """One sentence naming the runs the charts leave out (:func:`compare.not_drawable`), or empty."""
    left_out = compare.not_drawable(comparison)
    if not left_out:
        return ""
    names = list(dict.fromkeys(str((d.get("benchmark") or {}).get("id")) for d in left_out))
    return (f"{len(left_out)} run(s) of {', '.join(names)} are in the table but not in the charts: no other side "
            f"has a comparable run, and a bar beside another side's run with other settings would read as a "
            f"comparison.")


def side_facts(side: compare.Side) -> dict[str, str]:
    """The machine behind a side, from its newest document: GPU, CPU, RAM, driver, software."""
    doc = max(side.docs, key=lambda d: str(d.get("started_at") or ""))
    inventory = doc.get("inventory") if isinstance(doc.get("inventory"), dict) else {}
    software = doc.get("software") if isinstance(doc.get("software"), dict) else {}
    memory = inventory.get("memory") if isinstance(inventory.get("memory"), dict) else {}
    ram = memory.get("total_bytes")
    gpu_system = inventory.get("gpu_system") if isinstance(inventory.get("gpu_system"), dict) else {}
    facts = {
        "GPU": describe.gpu_summary(doc),
        "CPU": describe.cpu_summary(doc),
        "RAM": f"{ram / 1024 ** 3:.0f} GiB" if describe.is_number(ram) else "unknown",
        "Driver": str(gpu_system.get("driver_version") or software.get("driver") or "unknown"),
        "Software": ", ".join(f"{k} {software[k]}" for k in ("torch", "tensorflow", "cuda_runtime", "cudnn")
                              if software.get(k)) or "unknown",
        "Results": str(len(side.docs)),
    }
    if side.grouping:
        facts["Grouped"] = side.grouping
    if side.published:
        facts = {"Published by": ", ".join(sorted({str((d.get("reference") or {}).get("publisher")) for d in
                                                   side.docs})),
                 "System": ", ".join(sorted({str((d.get("reference") or {}).get("system") or describe.gpu_summary(d))
                                             for d in side.docs})),
                 "Results": str(len(side.docs))}
    return facts
