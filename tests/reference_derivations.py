"""The numbers hwbench derives from the shipped reference documents (``resources/reference``), as plain data.

Per document: the floor's findings (:func:`~hwbench_gui.engine.health.normal.judge`: value, limit, fraction, their
source, status), the ceiling's limit of each figure it checks (:func:`~hwbench_gui.engine.limits.limit_of`'s
``most``) with the impossible figures it finds, the headline and flags of its CSV row, and the numbers of its
evaluation text (``hwbench report FILE --layout evaluation``), line by line. Per folder: the numbers of the
folder's evaluation text, where the family sections (llm.infer, llm.train, health.burnin, ...) read the machine's
documents together. Only numbers and sources are kept, never the report's wording.

``tests/test_reference_derivations.py`` holds these against ``tests/fixtures/reference_derivations.json``.
Regenerate that file, after a change meant to move a figure, from the repository root:

    PYTHONPATH=. .venv/bin/python tests/reference_derivations.py
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

GOLDEN = Path(__file__).resolve().parent / "fixtures" / "reference_derivations.json"
#: A number as the evaluation text writes it: "1,608", "0.796", "1.2e-05"; not the digits inside a word ("H100").
_NUMBER = re.compile(r"(?<![\w.])[-+]?\d(?:[\d,]*\d)?(?:\.\d+)?(?:e[-+]?\d+)?")
#: The CSV row's cells that are the headline, its stats and what the flags make of them.
_CSV_CELLS = ("figure_name", "value", "unit", "median", "p5", "p95", "n", "gpu_power_mean_w", "busy", "few_repeats",
              "inconsistent")


def text_numbers(text: str) -> list[str]:
    """The numbers of each line of ``text`` that has any, one string per line (blank-separated)."""
    return [" ".join(found) for line in text.splitlines() if (found := _NUMBER.findall(line))]


def _ceiling(doc: dict[str, Any]) -> dict[str, Any]:
    from hwbench_gui.engine.limits import BENCHMARKS, limit_of
    from hwbench_gui.engine.reports import physical_limits

    checked = []
    if (doc.get("benchmark") or {}).get("id") in BENCHMARKS:
        for name, value, unit in physical_limits._figures(doc):
            limit = limit_of(doc, name)
            if limit is not None and limit.most is not None:
                checked.append([name, value, unit, limit.most])
    return {"checked": checked, "impossible": physical_limits.impossible_figures(doc)}


def _floor(doc: dict[str, Any]) -> list[dict[str, Any]]:
    from hwbench_gui.engine.health import normal

    keys = ("figure", "value", "unit", "limit", "limit_source", "fraction", "healthy", "status")
    return [{key: finding[key] for key in keys} for finding in normal.judge(doc)]


def _evaluation_numbers(found) -> list[str]:
    from hwbench_gui.engine.reports import evaluation

    built = evaluation.build_evaluation(found.docs, found.errors, with_charts=False)
    return text_numbers(evaluation.format_evaluation(built))


def derive(root: Path) -> dict[str, Any]:
    """Every document's and every folder's derived numbers under ``root``, keyed by path relative to it."""
    from hwbench_gui.engine.reports import csv_export
    from hwbench_gui.engine.results import library

    paths = sorted(root.rglob("*.json"))
    documents, folders = {}, {}
    for path in paths:
        found = library.scan([path])
        if found.errors or len(found.docs) != 1:
            documents[path.relative_to(root).as_posix()] = {"errors": library.errors_text(found.errors)}
            continue
        doc = found.docs[0]
        row = csv_export.csv_row(doc)
        documents[path.relative_to(root).as_posix()] = {
            "floor": _floor(doc), "ceiling": _ceiling(doc), "csv": {key: row[key] for key in _CSV_CELLS},
            "evaluation": _evaluation_numbers(found)}
    for folder in sorted({p.parent for p in paths}):
        found = library.scan([folder])
        folders[folder.relative_to(root).as_posix()] = _evaluation_numbers(found)
    return {"documents": documents, "folders": folders}


def main() -> int:
    from hwbench_gui.engine.results import library

    GOLDEN.write_text(json.dumps(derive(library.reference_dir()), indent=1, ensure_ascii=False, sort_keys=True)
                      + "\n", encoding="utf-8")
    print(f"wrote {GOLDEN} ({GOLDEN.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
