"""Writing a comparison out: HTML and PDF reports, and the compared documents as CSV.

The writers are the engine's (:mod:`hwbench_gui.engine.reports`), imported when first used.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

from hwbench_gui.engine.reports.report import Report

KINDS = ("html", "pdf", "csv")


class ExportRefused(Exception):
    """The chosen file is one of the compared results or another result document."""

_FILTERS = {"html": "HTML (*.html)", "pdf": "PDF (*.pdf)", "csv": "CSV (*.csv)"}
_WHAT = {"html": "HTML report", "pdf": "PDF report", "csv": "CSV"}


def write(report: Report, kind: str, path: str | Path) -> Path:
    """Write ``report`` as ``kind`` (one of :data:`KINDS`) to ``path``; returns the path written."""
    if kind == "html":
        from hwbench_gui.engine.reports.html import write_html

        return write_html(report, path)
    if kind == "pdf":
        from hwbench_gui.engine.reports.pdf import write_pdf

        return write_pdf(report, path)
    if kind == "csv":
        from hwbench_gui.engine.reports.csv_export import write_csv

        return write_csv(report.docs, path)
    raise ValueError(f"unknown export kind {kind!r}; one of {', '.join(KINDS)}")


def written_message(kind: str, path: Path) -> str:
    return f"{_WHAT[kind]} written to {path}"


def ask_path(parent: QWidget, kind: str) -> str:
    """The file the user chose to export ``kind`` to ("" if cancelled)."""
    path, _ = QFileDialog.getSaveFileName(parent, f"Export {kind.upper()}", f"hwbench-report.{kind}", _FILTERS[kind])
    return path


def warn_not_written(parent: QWidget, path: str, exc: Exception) -> None:
    detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    QMessageBox.warning(parent, "Export", f"Could not write {path}: {detail}")
