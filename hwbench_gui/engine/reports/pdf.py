"""PDF report with matplotlib's ``PdfPages``: a title page with the sides, the composite and the
side-by-side table with each value's spread and note (rows wrapped and measured, pages filled by
height, a row taller than a page split across pages, the header repeated), a page with the
machine behind each side (GPU, CPU, RAM, driver, software, as the HTML report's "Sides" table),
then one page per chart.

matplotlib is already used for the charts, so the PDF needs no further library; charts stay
vector graphics.
"""

from __future__ import annotations

import io
import os
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from matplotlib import rc_context
from matplotlib.backends.backend_pdf import PdfPages
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from hwbench_gui.engine.atomic import write_atomic
from hwbench_gui.engine.reports import compare, comparison_text
from hwbench_gui.engine.reports.report import Report, side_facts

A4_LANDSCAPE_IN = (11.69, 8.27)
MARK_COLOURS = {
    compare.MARK_BETTER: "#dff3e3", compare.MARK_WORSE: "#f9e0e0", compare.MARK_NOT_SIGNIFICANT: "#f3f3f3",
    compare.MARK_UNTESTED: "#f3f3f3", compare.MARK_TOO_FEW: "#f3f3f3", compare.MARK_FAILED: "#fbe3c8",
    compare.MARK_CANCELLED: "#fbe3c8", compare.MARK_NOT_COMPARABLE: "#e7e4f5",
    compare.MARK_NO_BASELINE: "#e7e4f5", compare.MARK_BASELINE: "#e3eefa",
}


def _wrap(text: str, width: int) -> str:
    return "\n".join(textwrap.wrap(text, width)) or text


def _header_lines(report: Report) -> list[str]:
    c = report.comparison
    lines = [f"Generated {report.generated_at} by hwbench {report.hwbench_version}; "
             f"{len(report.docs)} result document(s); baseline [{c.baseline + 1}]."]
    if _long_layout(report):
        lines.append(f"{len(c.sides)} sides: each is named, with its marks, in the table of sides below; the "
                     f"side-by-side table has one line per side that has the row.")
    if not _long_layout(report):
        lines += [f"[{i + 1}] {comparison_text.side_summary(c, i)}" for i in range(len(c.summaries))]
    if report.errors:
        lines.append(f"{len(report.errors)} file(s) skipped: " +
                     "; ".join(f"{e.path.name} ({e.reason})" for e in report.errors[:3]) +
                     (" …" if len(report.errors) > 3 else ""))
    return lines


# -- the side-by-side table, laid out by measured row height ---------------------------------------

FONT_PT = 7.0
LINE_IN = FONT_PT * 1.32 / 72  # one text line, with the leading matplotlib's DejaVu Sans needs
PAD_IN = 0.035
MARGIN_IN = 0.4
#: An average DejaVu Sans glyph at 1 pt is about this wide (digits 0.64): wrap at the width it fills.
GLYPH_EM = 0.62
#: Side columns per page band: more sides continue in further bands, each with the row labels.
SIDES_PER_BAND = 6


@dataclass
class _Column:
    header: str
    width_in: float

    @property
    def chars(self) -> int:
        return max(6, int((self.width_in - 2 * PAD_IN) * 72 / (FONT_PT * GLYPH_EM)))


def wrap_lines(text: str, chars: int) -> list[str]:
    """``text`` wrapped at ``chars`` (its own line breaks kept; long words broken): what a cell shows."""
    lines: list[str] = []
    for paragraph in str(text).split("\n"):
        lines += textwrap.wrap(paragraph, chars, break_long_words=True, break_on_hyphens=False) or [""]
    return lines


def _table_rows(report: Report, sides: Sequence[int],
                columns: Sequence[_Column]) -> list[tuple[list[list[str]], list[str]]]:
    """Each comparison row as its cells' wrapped lines, with each cell's background colour."""
    c = report.comparison
    out = []
    for number, row in enumerate(c.rows, 1):
        label = comparison_text.row_label(row) + ("" if row.headline else " (further figure)")
        texts = [str(number), label, row.precision, row.config_text] + [_cell_text(row.cells[i]) for i in sides]
        colours = ["white"] * 4 + [MARK_COLOURS.get(row.cells[i].mark, "white") for i in sides]
        out.append(([wrap_lines(t, col.chars) for t, col in zip(texts, columns)], colours))
    return out


def _cell_text(cell: compare.Cell) -> str:
    """The value, ratio, mark and flags, then the spread, then the note: what the HTML cell holds."""
    parts = [comparison_text.cell_text(cell)]
    spread = comparison_text.spread_text(cell.metric)
    if spread:
        parts.append(spread)
    if cell.note:
        parts.append(cell.note)
    if cell.older_runs:
        parts.append(comparison_text.older_runs_text(cell))
    return "\n".join(parts)


def _columns(report: Report, sides: Sequence[int]) -> list[_Column]:
    usable = A4_LANDSCAPE_IN[0] - 2 * MARGIN_IN
    # "#": the row's number, the same in the HTML report, so a row can be found in either
    fixed = [_Column("#", 0.32), _Column("Benchmark · figure", 1.85), _Column("Prec.", 0.6),
             _Column("Configuration", 1.9)]
    side_width = (usable - sum(col.width_in for col in fixed)) / max(len(sides), 1)
    return fixed + [_Column(f"[{i + 1}]", side_width) for i in sides]


#: Beyond this many sides (a report of every run) the PDF lists the sides in a table of their own
#: and gives each row one line per side that has it, instead of a column per side.
LONG_LAYOUT_SIDES = 12


def _long_layout(report: Report) -> bool:
    return len(report.comparison.sides) > LONG_LAYOUT_SIDES


def _long_table_pages(report: Report) -> list[Figure]:
    c = report.comparison
    usable = A4_LANDSCAPE_IN[0] - 2 * MARGIN_IN
    pages: list[Figure] = []
    page = _new_page(report, first=True, pages=pages)
    side_rows = []
    for i, (side, summary) in enumerate(zip(c.sides, c.summaries)):
        geo = "—" if summary.geomean is None else f"×{summary.geomean:.3f}"
        role = " (baseline)" if i == c.baseline else ""
        side_rows.append(([f"[{i + 1}]", side.name + role, f"geometric mean {geo}; {summary.counts_text()}"],
                          [MARK_COLOURS[compare.MARK_BASELINE] if i == c.baseline else "white", "white", "white"]))
    page = paginate_table(report.title, pages, page, [_Column("#", 0.5), _Column("Side", 4.0),
                                                      _Column("Marks", usable - 4.5)], side_rows, "Sides")
    fixed = [_Column("#", 0.32), _Column("Benchmark · figure", 1.85), _Column("Prec.", 0.6),
             _Column("Configuration", 1.9), _Column("Side", 2.2)]
    columns = fixed + [_Column("Value, spread, mark", usable - sum(col.width_in for col in fixed))]
    rows = []
    for number, row in enumerate(c.rows, 1):
        label = comparison_text.row_label(row) + ("" if row.headline else " (further figure)")
        order = [c.baseline] + [i for i in range(len(c.sides)) if i != c.baseline]
        for i in order:
            cell = row.cells[i]
            if cell.metric is None:
                continue
            rows.append(([str(number), label, row.precision, row.config_text, f"[{i + 1}] {c.sides[i].name}",
                          _cell_text(cell)], ["white"] * 5 + [MARK_COLOURS.get(cell.mark, "white")]))
    paginate_table(report.title, pages, page, columns, rows, "Side by side: one line per side that has the row")
    return pages


def _table_pages(report: Report) -> list[Figure]:
    """Title page and table pages. Rows are wrapped, measured, and placed while they fit; a row
    taller than a whole page is split across pages (its remaining lines continue under the
    repeated header), so no row is ever cut off."""
    if _long_layout(report):
        return _long_table_pages(report)
    c = report.comparison
    bands = [list(range(c.baseline, c.baseline + 1)) + [i for i in range(len(c.sides)) if i != c.baseline]]
    everyone = bands[0]
    if len(everyone) > SIDES_PER_BAND:  # the baseline leads every band, so each band compares with it
        others = everyone[1:]
        step = SIDES_PER_BAND - 1
        bands = [[c.baseline] + others[i:i + step] for i in range(0, len(others), step)]
    pages: list[Figure] = []
    page = _new_page(report, first=True, pages=pages)
    if not c.rows:
        page.figure.text(MARGIN_IN / A4_LANDSCAPE_IN[0], page.y_frac(), "No rows to compare.", fontsize=9, va="top")
        return pages
    for band_number, band in enumerate(bands):
        columns = _columns(report, band)
        if band_number:
            page = _new_page(report, first=False, pages=pages,
                             note=f"sides {', '.join(f'[{i + 1}]' for i in band)}")
        page.header(columns)
        current = None
        for row, (lines, colours) in zip(c.rows, _table_rows(report, band, columns)):
            if row.benchmark_id != current:  # the benchmark's line: what all its rows share, said once
                current = row.benchmark_id
                shared = c.common_text(current)
                width_in = sum(col.width_in for col in columns)
                group = wrap_lines(current + (f" (every row: {shared})" if shared else ""), _Column("", width_in).chars)
                first_row = min(max(len(cell) for cell in lines), 6)  # the header stays with its first row
                if page.lines_left() < len(group) + first_row + 2 and page.rows_on_page:
                    page = _new_page(report, first=False, pages=pages)
                    page.header(columns)
                page.band(width_in, group)
            start, height = 0, max(len(cell) for cell in lines)
            while start < height:
                remaining = height - start
                if page.lines_left() < min(remaining, 3) and page.rows_on_page:
                    page = _new_page(report, first=False, pages=pages)
                    page.header(columns)
                take = min(remaining, max(page.lines_left(), 1))
                part = [cell[start:start + take] for cell in lines]
                if start:  # the continued part of a tall row still says whose it is
                    part[0] = [lines[0][0]]
                    part[1] = part[1] if any(part[1]) else [f"{lines[1][0]} (continued)"]
                page.row(columns, part, colours, take)
                start += take
    return pages


class _Page:
    def __init__(self, figure: Figure, top_in: float) -> None:
        self.figure = figure
        self.y_in = top_in  # distance of the next row's top from the page's top
        self.rows_on_page = 0

    def y_frac(self) -> float:
        return 1 - self.y_in / A4_LANDSCAPE_IN[1]

    def lines_left(self) -> int:
        return int((A4_LANDSCAPE_IN[1] - MARGIN_IN - self.y_in - 2 * PAD_IN) / LINE_IN)

    def header(self, columns: Sequence[_Column]) -> None:
        """The columns' titles, wrapped to their widths (bold glyphs are about a tenth wider)."""
        lines = [wrap_lines(col.header, max(6, int(col.chars * 0.9))) for col in columns]
        self._draw(columns, lines, ["#f2f2f5"] * len(columns), max(len(cell) for cell in lines), bold=True)

    def band(self, width_in: float, lines: list[str]) -> None:
        """A line across the whole table (a benchmark's header)."""
        self._draw([_Column("", width_in)], [lines], ["#fafafc"], len(lines), bold=False)

    def row(self, columns, lines, colours, count: int) -> None:
        self._draw(columns, lines, colours, count)
        self.rows_on_page += 1

    def _draw(self, columns, lines, colours, count: int, bold: bool = False) -> None:
        width_in, height_in = A4_LANDSCAPE_IN
        row_h = count * LINE_IN + 2 * PAD_IN
        x_in = MARGIN_IN
        for col, cell_lines, colour in zip(columns, lines, colours):
            self.figure.patches.append(Rectangle(
                (x_in / width_in, 1 - (self.y_in + row_h) / height_in), col.width_in / width_in, row_h / height_in,
                transform=self.figure.transFigure, facecolor=colour, edgecolor="#c8c8d0", linewidth=0.4))
            for n, line in enumerate(cell_lines[:count]):
                if line:
                    self.figure.text((x_in + PAD_IN) / width_in, 1 - (self.y_in + PAD_IN + n * LINE_IN) / height_in,
                                     line, fontsize=FONT_PT, va="top", ha="left",
                                     weight="bold" if bold else "normal")
            x_in += col.width_in
        self.y_in += row_h


def _new_page(report: Report, *, first: bool, pages: list[Figure], note: str = "") -> _Page:
    return _titled_page(report.title, _header_lines(report) if first else None, pages, note)


def _titled_page(title: str, header_lines: Sequence[str] | None, pages: list[Figure], note: str = "") -> _Page:
    """A new page: the title and ``header_lines`` on a first page (``header_lines`` given), else
    "title (continued)"."""
    first = header_lines is not None
    figure = Figure(figsize=A4_LANDSCAPE_IN)
    pages.append(figure)
    width_in, height_in = A4_LANDSCAPE_IN
    y_in = MARGIN_IN
    if first:
        figure.text(MARGIN_IN / width_in, 1 - y_in / height_in, title, fontsize=16, weight="bold", va="top")
        y_in += 0.4
        for line in header_lines:
            for wrapped in wrap_lines(line, 190):
                figure.text(MARGIN_IN / width_in, 1 - y_in / height_in, wrapped, fontsize=7.5, va="top")
                y_in += 7.5 * 1.35 / 72
        y_in += 0.1
    else:
        continued = f"{title} (continued{', ' + note if note else ''})"
        figure.text(MARGIN_IN / width_in, 1 - y_in / height_in, continued, fontsize=10, va="top")
        y_in += 0.3
    return _Page(figure, y_in)


def paginate_table(title: str, pages: list[Figure], page: _Page | None, columns: Sequence[_Column],
                   rows: Sequence[tuple[list[str], list[str]]], heading: str = "") -> _Page:
    """Lay ``rows`` (each: its cells' texts, its cells' colours) out under ``heading`` as the
    side-by-side table is: wrapped, measured, split across pages when taller than one."""
    if page is None or page.lines_left() < 6:
        page = _titled_page(title, None, pages)
    if heading:
        width_in = sum(col.width_in for col in columns)
        page.band(width_in, wrap_lines(heading, _Column("", width_in).chars))
    if not rows:
        return page
    page.header(columns)
    for texts, colours in rows:
        lines = [wrap_lines(t, col.chars) for t, col in zip(texts, columns)]
        start, height = 0, max(len(cell) for cell in lines)
        while start < height:
            remaining = height - start
            if page.lines_left() < min(remaining, 3) and page.rows_on_page:
                page = _titled_page(title, None, pages)
                page.header(columns)
            take = min(remaining, max(page.lines_left(), 1))
            part = [cell[start:start + take] for cell in lines]
            if start and not any(part[0]):
                part[0] = [f"{lines[0][0]} (continued)"]
            page.row(columns, part, colours, take)
            start += take
    page.y_in += 0.15
    return page


def evaluation_pdf(evaluation) -> bytes:
    """The one-machine evaluation (:mod:`.evaluation`): the model matrix, the reasons runs did not
    measure, the data-path verdict, the micro-benchmarks, then the charts."""
    usable = A4_LANDSCAPE_IN[0] - 2 * MARGIN_IN
    pages: list[Figure] = []
    header = [f"Generated {evaluation.generated_at} by hwbench {evaluation.hwbench_version}; "
              f"{len(evaluation.docs)} result document(s) {evaluation.of_machines}."]
    header += [f"{key}: {value}" for key, value in evaluation.facts.items()]
    page = _titled_page(evaluation.title, header, pages)
    if evaluation.columns and evaluation.rows:
        model_in = 1.5
        width = (usable - model_in) / len(evaluation.columns)
        columns = [_Column("Model", model_in)] + [_Column(col.title, width) for col in evaluation.columns]
        rows = [([row.title] + ["\n".join(cell.lines()) for cell in row.cells],
                 ["white"] + ["white" if cell.measured else "#f3f3f3" for cell in row.cells])
                for row in evaluation.rows]
        page = paginate_table(evaluation.title, pages, page, columns, rows,
                              "Models: images/s (median), spread, GPU utilisation · GPU memory · GPU power "
                              "during the timed phase")
    if evaluation.not_measured:
        columns = [_Column("#", 0.4), _Column("Not measured: reason and cells", usable - 0.4)]
        page = paginate_table(evaluation.title, pages, page, columns,
                              [([f"[{i + 1}]", item.text], ["white", "#fbe3c8"])
                               for i, item in enumerate(evaluation.not_measured)])
    if evaluation.datapath:
        dp = evaluation.datapath
        heading = f"Data path: {dp['verdict']}" + (f" Slowest link: {dp['bottleneck']}." if dp["bottleneck"] else "")
        columns = [_Column("Data-path stage (alone)", 3.0), _Column("Rate", 2.0)]
        page = paginate_table(evaluation.title, pages, page, columns,
                              [([title, rate], ["#f9e0e0" if limiting else "white"] * 2)
                               for title, rate, limiting in dp["stages"]], heading)
    for family, section in evaluation.shown_sections():
        for heading, columns, rows in family.pdf_tables(section, usable):
            page = paginate_table(evaluation.title, pages, page, [_Column(name, w) for name, w in columns], rows,
                                  heading)
    if evaluation.micro:
        widths = [2.6, 1.9, 1.2, 1.6, 0.7, 2.0]
        widths.append(usable - sum(widths))
        names = ("Benchmark", "Figure", "Median", "Spread", "Prec.", "Configuration", "Flags")
        columns = [_Column(name, w) for name, w in zip(names, widths)]
        page = paginate_table(evaluation.title, pages, page, columns,
                              [([m.title, m.figure, m.value, m.spread, m.precision, m.configuration, m.flags],
                                ["white"] * 7) for m in evaluation.micro], "Micro-benchmarks")
    buffer = io.BytesIO()
    with rc_context({"pdf.fonttype": 42}), \
            PdfPages(buffer, metadata={"Title": evaluation.title,
                                       "Creator": f"hwbench {evaluation.hwbench_version}"}) as pdf:
        for figure in pages:
            pdf.savefig(figure)
        for chart in evaluation.charts:
            pdf.savefig(chart.figure, bbox_inches="tight")
    return buffer.getvalue()


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


def _machines_page(report: Report) -> list[Figure]:
    """Many sides: the machines behind them, one line each (paginated)."""
    pages: list[Figure] = []
    page = _titled_page("Machines compared", [], pages)
    usable = A4_LANDSCAPE_IN[0] - 2 * MARGIN_IN
    rows = [([machine.name, "; ".join(f"{k}: {v}" for k, v in side_facts(machine).items())], ["white", "white"])
            for machine in compare.sides_by_machine(report.docs)]
    paginate_table("Machines compared", pages, page, [_Column("Machine", 3.0), _Column("Details", usable - 3.0)],
                   rows)
    return pages


def pdf_bytes(report: Report) -> bytes:
    buffer = io.BytesIO()
    # TrueType (Type 42) fonts: the PDF's text can be searched, copied and extracted (pdftotext).
    with rc_context({"pdf.fonttype": 42}), \
            PdfPages(buffer, metadata={"Title": report.title, "Creator": f"hwbench {report.hwbench_version}"}) as pdf:
        for page in _table_pages(report):
            pdf.savefig(page)
        for page in _machines_page(report) if _long_layout(report) else [_systems_page(report)]:
            pdf.savefig(page)
        if report.charts and report.charts_note:
            notes: list[Figure] = []
            _titled_page("Charts", [report.charts_note], notes)
            pdf.savefig(notes[0])
        for chart in report.charts:
            pdf.savefig(chart.figure, bbox_inches="tight")
    return buffer.getvalue()


def write_pdf(report: Report, path: str | os.PathLike) -> Path:
    """Write the report as PDF: 1+ table pages, the machines page, then one page per chart."""
    return write_atomic(Path(path), pdf_bytes(report))
