"""PDF report with matplotlib's ``PdfPages``: a title page with the sides, the composite and the
side-by-side table (continued on further pages when long) with each value's spread, a page with the
machine behind each side (GPU, CPU, RAM, driver, software, as the HTML report's "Sides" table),
then one page per chart.

matplotlib is already used for the charts, so the PDF needs no further library; charts stay
vector graphics.
"""

from __future__ import annotations

import io
import os
import textwrap
from pathlib import Path

from matplotlib.backends.backend_pdf import PdfPages
from matplotlib.figure import Figure

from hwbench_gui.engine.atomic import write_atomic
from hwbench_gui.engine.reports import compare
from hwbench_gui.engine.reports.report import Report, side_facts

A4_LANDSCAPE_IN = (11.69, 8.27)
ROWS_PER_PAGE = 22
MARK_COLOURS = {
    compare.MARK_BETTER: "#dff3e3", compare.MARK_WORSE: "#f9e0e0", compare.MARK_NOT_SIGNIFICANT: "#f3f3f3",
    compare.MARK_UNTESTED: "#f3f3f3", compare.MARK_TOO_FEW: "#f3f3f3", compare.MARK_FAILED: "#fbe3c8", compare.MARK_NOT_COMPARABLE: "#e7e4f5",
    compare.MARK_NO_BASELINE: "#e7e4f5", compare.MARK_BASELINE: "#e3eefa",
}


def _wrap(text: str, width: int) -> str:
    return "\n".join(textwrap.wrap(text, width)) or text


def _header_lines(report: Report) -> list[str]:
    c = report.comparison
    lines = [f"Generated {report.generated_at} by hwbench {report.hwbench_version}; "
             f"{len(report.docs)} result document(s); baseline [{c.baseline + 1}]."]
    for i, (side, summary) in enumerate(zip(c.sides, c.summaries)):
        geo = "—" if summary.geomean is None else f"×{summary.geomean:.3f}"
        if i != c.baseline and summary.n_pair != summary.n_geomean and summary.pair_geomean is not None:
            geo += f" (×{summary.pair_geomean:.3f} over the {summary.n_pair} shared with the baseline)"
        tag = " [published]" if side.published and not side.name.endswith("(published)") else ""
        lines.append(f"[{i + 1}] {side.name}{tag}: geometric mean {geo} over {summary.n_geomean}; "
                     f"{summary.counts_text()}")
    if report.errors:
        lines.append(f"{len(report.errors)} file(s) skipped: " +
                     "; ".join(f"{e.path.name} ({e.reason})" for e in report.errors[:3]) +
                     (" …" if len(report.errors) > 3 else ""))
    return lines


def _table_pages(report: Report) -> list[Figure]:
    c = report.comparison
    rows = c.rows or []
    pages = []
    chunks = [rows[i:i + ROWS_PER_PAGE] for i in range(0, len(rows), ROWS_PER_PAGE)] or [[]]
    for page_index, chunk in enumerate(chunks):
        figure = Figure(figsize=A4_LANDSCAPE_IN)
        top = 0.95
        if page_index == 0:
            figure.text(0.04, top, report.title, fontsize=16, weight="bold", va="top")
            top -= 0.05
            for line in _header_lines(report):
                wrapped = _wrap(line, 170)
                figure.text(0.04, top, wrapped, fontsize=7.5, va="top")
                top -= 0.022 * (wrapped.count("\n") + 1)
        else:
            figure.text(0.04, top, f"{report.title} (continued)", fontsize=11, va="top")
            top -= 0.04
        ax = figure.add_axes((0.03, 0.03, 0.94, max(top - 0.05, 0.1)))
        ax.axis("off")
        if not chunk:
            ax.text(0, 1, "No rows to compare.", va="top")
            pages.append(figure)
            continue
        header = ["Benchmark · figure", "Prec.", "Configuration"] + [f"[{i + 1}]" for i in range(len(c.sides))]
        # Fixed column widths (fractions of the page) so any number of sides fits across it.
        side_width = 0.52 / len(c.sides)
        widths = [0.2, 0.07, 0.21] + [side_width] * len(c.sides)
        side_chars = max(12, int(side_width * 190))
        cells = [[_wrap(compare.row_label(r), 40), r.precision, _wrap(r.config_text, 42)] +
                 [_cell_with_spread(cell, side_chars) for cell in r.cells] for r in chunk]
        colours = [["white"] * 3 + [MARK_COLOURS.get(cell.mark, "white") for cell in r.cells] for r in chunk]
        table = ax.table(cellText=cells, colLabels=header, cellColours=colours, colWidths=widths, loc="upper left",
                         cellLoc="left")
        table.auto_set_font_size(False)
        table.set_fontsize(7)
        celld = table.get_celld()
        row_lines: dict[int, int] = {}
        for (row_index, _col), cell in celld.items():
            lines = cell.get_text().get_text().count("\n") + 1
            row_lines[row_index] = max(row_lines.get(row_index, 1), lines)
        for (row_index, _col), cell in celld.items():  # one height per row, or the texts sit askew
            cell.set_height(0.032 * row_lines[row_index] + 0.008)
        pages.append(figure)
    return pages


def _cell_with_spread(cell, width: int) -> str:
    """The value, ratio and mark, and below them the spread the value comes with."""
    text = _wrap(compare.cell_text(cell), width)
    spread = compare.spread_text(cell.metric)
    return f"{text}\n{_wrap(spread, width)}" if spread else text


def _systems_page(report: Report) -> Figure:
    """The machine behind each side: the HTML report's "Sides" table."""
    c = report.comparison
    figure = Figure(figsize=A4_LANDSCAPE_IN)
    figure.text(0.04, 0.95, "Machines compared", fontsize=13, weight="bold", va="top")
    ax = figure.add_axes((0.03, 0.03, 0.94, 0.86))
    ax.axis("off")
    cells, colours = [], []
    for i, side in enumerate(c.sides):
        facts = side_facts(side)
        details = "\n".join(_wrap(f"{key}: {value}", 120) for key, value in facts.items())
        name = _wrap(side.name, 40) + (" (baseline)" if i == c.baseline else "")
        cells.append([f"[{i + 1}]", name, details])
        colours.append(["white", MARK_COLOURS[compare.MARK_BASELINE] if i == c.baseline else "white", "white"])
    table = ax.table(cellText=cells, colLabels=["#", "Side", "Machine"], cellColours=colours,
                     colWidths=[0.04, 0.26, 0.70], loc="upper left", cellLoc="left")
    table.auto_set_font_size(False)
    table.set_fontsize(7.5)
    lines_per_row: dict[int, int] = {}
    for (row_index, _col), cell in table.get_celld().items():
        lines = cell.get_text().get_text().count("\n") + 1
        lines_per_row[row_index] = max(lines_per_row.get(row_index, 1), lines)
    for (row_index, _col), cell in table.get_celld().items():
        cell.set_height(0.026 * lines_per_row[row_index] + 0.01)
    return figure


def pdf_bytes(report: Report) -> bytes:
    buffer = io.BytesIO()
    with PdfPages(buffer, metadata={"Title": report.title, "Creator": f"hwbench {report.hwbench_version}"}) as pdf:
        for page in _table_pages(report):
            pdf.savefig(page)
        pdf.savefig(_systems_page(report))
        for chart in report.charts:
            pdf.savefig(chart.figure, bbox_inches="tight")
    return buffer.getvalue()


def write_pdf(report: Report, path: str | os.PathLike) -> Path:
    """Write the report as PDF: 1+ table pages, the machines page, then one page per chart."""
    return write_atomic(Path(path), pdf_bytes(report))
