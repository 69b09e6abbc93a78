"""Writing a comparison out: HTML and PDF reports, and the compared documents as CSV.

The writers are the engine's (:mod:`hwbench_gui.engine.reports`), imported when first used.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

from hwbench_gui.engine.reports.report import Report
from hwbench_gui.ui.start_folder import start_path

KINDS = ("html", "pdf", "csv")


class ExportRefused(Exception):
    """The chosen file is one of the compared results or another result document."""

_FILTERS = {"html": "HTML (*.html)", "pdf": "PDF (*.pdf)", "csv": "CSV (*.csv)"}
_WHAT = {"html": "HTML report", "pdf": "PDF report", "csv": "CSV"}


def is_evaluation(report: Report) -> bool:
    """Whether ``report`` compares one measured machine with itself: its HTML and PDF are then the
    machine's evaluation (:mod:`hwbench_gui.engine.reports.evaluation`)."""
    from hwbench_gui.engine.reports.evaluation import is_one_machine

    return len(report.comparison.sides) == 1 and is_one_machine(report.docs)


def write(report: Report, kind: str, path: str | Path) -> Path:
    """Write ``report`` as ``kind`` (one of :data:`KINDS`) to ``path``; returns the path written.
    One machine's HTML and PDF are its evaluation report."""
    if kind in ("html", "pdf") and is_evaluation(report):
        from hwbench_gui.engine.atomic import write_atomic
        from hwbench_gui.engine.reports import evaluation

        built = evaluation.build_evaluation(report.docs, report.errors)
        data = (evaluation.render_evaluation_html(built).encode("utf-8") if kind == "html"
                else evaluation.evaluation_pdf_bytes(built))
        return write_atomic(Path(path), data)
    if kind == "html":
        from hwbench_gui.engine.reports.html import write_html

        return write_html(report, path)
    if kind == "pdf":
        from hwbench_gui.engine.reports.pdf import write_pdf

        return write_pdf(report, path)
    if kind == "csv":
        from hwbench_gui.engine.reports.csv_export import write_csvs

        # the families' own tables are written beside it (report.csv → report.<family>.csv)
        return write_csvs(report.docs, path)[0]
    raise ValueError(f"unknown export kind {kind!r}; one of {', '.join(KINDS)}")


def written_message(kind: str, path: Path) -> str:
    return f"{_WHAT[kind]} written to {path}"


def ask_path(parent: QWidget, kind: str) -> str:
    """The file the user chose to export ``kind`` to ("" if cancelled)."""
    path, _ = QFileDialog.getSaveFileName(parent, f"Export {kind.upper()}",
                                          start_path(f"hwbench-report.{kind}"), _FILTERS[kind])
    return path


def warn_not_written(parent: QWidget, path: str, exc: Exception) -> None:
    detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    QMessageBox.warning(parent, "Export", f"Could not write {path}: {detail}")
