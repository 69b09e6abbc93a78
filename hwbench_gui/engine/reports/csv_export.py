"""CSV of result documents: one row per document, the figures a spreadsheet needs; beside it, one table per
benchmark family that declares its own (a row per configuration, with the columns of that family)."""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path
from typing import Any, Sequence

from hwbench_gui.engine.atomic import write_atomic
from hwbench_gui.engine.csv_cells import safe_cell
from hwbench_gui.engine.reports import families, flags
from hwbench_gui.engine.reports.power_charts import mean_gpu_power_w
from hwbench_gui.engine.results import describe
from hwbench_gui.engine.spec.precision import of_document as precision_of

COLUMNS = (
    "provenance", "machine", "hostname", "gpu", "cpu", "benchmark_id", "benchmark_title", "benchmark_version",
    "params_json", "precision", "figure_name", "value", "unit", "higher_is_better", "median", "p5", "p95",
    "stdev", "n", "status", "reason", "started_at", "duration_s", "gpu_util_mean_percent",
    "gpu_vram_used_max_bytes", "cpu_util_mean_percent", "ram_used_mean_bytes", "gpu_power_mean_w",
    "source_url", "warnings", "busy", "busy_reasons", "few_repeats", "inconsistent", "id",
    "file",
)


def _seed(doc: dict[str, Any], name: str, statistic: str) -> Any:
    telemetry = doc.get("telemetry") if isinstance(doc.get("telemetry"), dict) else {}
    entry = (telemetry.get("seed") or {}).get(name)
    return entry.get(statistic) if isinstance(entry, dict) else None


def csv_row(doc: dict[str, Any]) -> dict[str, Any]:
    figure = doc.get("figure") or {}
    stats = doc.get("stats") or {}
    bench = doc.get("benchmark") or {}
    reference = doc.get("reference") or {}
    return {
        "provenance": "published" if describe.is_published(doc) else "measured",
        "machine": describe.machine_name(doc),
        "hostname": doc.get("hostname") or "",
        "gpu": describe.gpu_summary(doc),
        "cpu": describe.cpu_summary(doc),
        "benchmark_id": bench.get("id"),
        "benchmark_title": bench.get("title"),
        "benchmark_version": bench.get("version"),
        "params_json": json.dumps(doc.get("params") or {}, sort_keys=True, ensure_ascii=False),
        "precision": precision_of(doc),
        "figure_name": figure.get("name"),
        "value": figure.get("value"),
        "unit": figure.get("unit"),
        "higher_is_better": figure.get("higher_is_better"),
        "median": stats.get("median"),
        "p5": stats.get("p5"),
        "p95": stats.get("p95"),
        "stdev": stats.get("stdev"),
        "n": stats.get("n"),
        "status": doc.get("status"),
        "reason": doc.get("reason"),
        "started_at": doc.get("started_at"),
        "duration_s": doc.get("duration_s"),
        "gpu_util_mean_percent": _seed(doc, "gpu_util_percent", "mean"),
        "gpu_vram_used_max_bytes": _seed(doc, "gpu_vram_used_bytes", "max"),
        "cpu_util_mean_percent": _seed(doc, "cpu_util_percent", "mean"),
        "ram_used_mean_bytes": _seed(doc, "ram_used_bytes", "mean"),
        "gpu_power_mean_w": mean_gpu_power_w(doc),
        "source_url": reference.get("source_url"),
        "warnings": "; ".join(str(w) for w in doc.get("warnings") or []),
        "busy": bool(flags.busy_reasons(doc)),
        "busy_reasons": "; ".join(flags.busy_reasons(doc)),
        "few_repeats": flags.few_repeats(doc),
        "inconsistent": "; ".join(flags.consistency_problems(doc)),
        "id": doc.get("id"),
        "file": Path(doc["_path"]).name if doc.get("_path") else "",
    }


def csv_text(docs: Sequence[dict[str, Any]]) -> str:
    """Header plus one row per document; a missing value is an empty cell, never "N/A"; text that
    a spreadsheet would run as a formula is quoted (:func:`~hwbench_gui.engine.csv_cells.safe_cell`)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    for doc in docs:
        writer.writerow({k: ("" if v is None else safe_cell(v)) for k, v in csv_row(doc).items()})
    return buffer.getvalue()


def write_csv(docs: Sequence[dict[str, Any]], path: str | os.PathLike) -> Path:
    return write_atomic(Path(path), csv_text(docs).encode("utf-8"))


def table_text(columns: Sequence[str], rows: Sequence[dict[str, Any]]) -> str:
    """Header plus ``rows``, each cell as :func:`csv_text` writes it (empty for None, formulas quoted)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(columns), lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: ("" if row.get(k) is None else safe_cell(row[k])) for k in columns})
    return buffer.getvalue()


def family_csv_path(path: str | os.PathLike, family_name: str) -> Path:
    """``report.csv`` → ``report.diffusion.infer.csv``: a family's table beside the results' CSV."""
    path = Path(path)
    return path.with_name(f"{path.stem}.{family_name}{path.suffix or '.csv'}")


def write_csvs(docs: Sequence[dict[str, Any]], path: str | os.PathLike) -> list[Path]:
    """The CSV of every result at ``path`` and, beside it, each registered family's own table where it has
    rows; the paths written, the results' CSV first."""
    written = [write_csv(docs, path)]
    for family in families.FAMILIES:
        rows = family.csv_rows(docs) if family.csv_rows is not None else []
        if rows:
            text = table_text(family.csv_columns, rows)
            written.append(write_atomic(family_csv_path(path, family.name), text.encode("utf-8")))
    return written
