"""What a benchmark family declares once for the reports and the GUI: its benchmarks, its report section and the
name of its result page.

A family (language-model inference, language-model training, the burn-in; image generation and speech next)
keeps its section in one module of this package that declares a module-level ``FAMILY``; the list in
:mod:`hwbench_gui.engine.reports.families` registers it. The evaluation report (text, HTML, PDF), the charts,
the flags and the GUI's Benchmarks tab read that list and never name a family. ``docs/add-a-family.md`` lists the
files a family adds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from hwbench_gui.engine.results import describe

#: A PDF table: ``(heading, [(column, width in inches)], [(cells, background colours)])``.
PdfTable = tuple[str, list[tuple[str, float]], list[tuple[list[str], list[str]]]]


def has_figures(doc: dict[str, Any]) -> bool:
    """A run a section can read figures from: it ended (or was published) with named figures and a headline."""
    return (doc.get("status") in ("ok", "published") and isinstance(doc.get("figures"), dict)
            and describe.is_number((doc.get("figure") or {}).get("value")))


def figure_value(doc: dict[str, Any], name: str) -> float | None:
    """The value of the document's named figure, or None where it is missing or not a number."""
    entry = (doc.get("figures") or {}).get(name)
    value = entry.get("value") if isinstance(entry, dict) else None
    return float(value) if describe.is_number(value) else None


def fraction_of_limit(doc: dict[str, Any], name: str) -> float | None:
    """A named figure that is a fraction of a limit, or None where it is missing or outside 0..1: a figure above
    its limit means the limit was not measured reliably, and is never shown as a share above 100 %."""
    value = figure_value(doc, name)
    return value if value is not None and 0 <= value <= 1.0 else None


def _no_charts(_sides: Sequence[Any]) -> list[Any]:
    return []


def _no_disagreements(_doc: dict[str, Any]) -> list[str]:
    return []


@dataclass(frozen=True)
class Family:
    """One benchmark family's report section and GUI page, declared once.

    ``build(docs)`` turns one machine's documents into the section's data; an empty or None section is left out
    of the report unless ``shown_without_runs`` (the section then says how to get one). The section's data is
    read by ``text_lines`` (the terminal's evaluation, a blank line and a heading first), the Jinja template
    ``html_template`` (under ``reports/templates``; it reads the data as ``section``) and ``pdf_tables(section,
    usable width in inches)``. ``charts(sides)`` draws its charts (:class:`~.chart_kit.Chart`, each side a
    :class:`~.compare.Side`); ``disagreements(doc)`` lists where a document's stated verdict differs from what
    its own rows make it. ``gui_page`` names, as ``"module:attribute"``, the GUI's page declaration
    (a :class:`hwbench_gui.ui.benchmarks.family_page.FamilyPage`): the engine names it and never imports it.
    """

    #: The family's name, the key of its section in an evaluation (its main benchmark's id).
    name: str
    #: Every benchmark id whose documents this family reads: they are not micro-benchmark rows.
    benchmark_ids: frozenset[str]
    build: Callable[[Sequence[dict[str, Any]]], Any]
    text_lines: Callable[[Any], list[str]]
    html_template: str
    pdf_tables: Callable[[Any, float], list[PdfTable]]
    charts: Callable[[Sequence[Any]], list[Any]] = _no_charts
    disagreements: Callable[[dict[str, Any]], list[str]] = _no_disagreements
    gui_page: str = ""
    shown_without_runs: bool = False
    #: Whether its charts draw the documents' ``series`` (the generic sweep chart then leaves them out).
    draws_its_series: bool = False
    #: Its own CSV table, written beside the one row per result (``hwbench report --csv``, Export CSV):
    #: ``csv_rows(docs)`` gives one dict per row with :attr:`csv_columns`; a missing value is None.
    csv_columns: tuple[str, ...] = ()
    csv_rows: Callable[[Sequence[dict[str, Any]]], list[dict[str, Any]]] | None = None

    def owns(self, doc: Any) -> bool:
        """Whether ``doc`` is a run of one of this family's benchmarks."""
        return isinstance(doc, dict) and (doc.get("benchmark") or {}).get("id") in self.benchmark_ids
