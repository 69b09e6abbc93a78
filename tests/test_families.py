"""A benchmark family plugs into the reports and the Benchmarks tab through its one registration.

The registered families each name a template, a GUI page and benchmarks that exist; a stand-in family added to the
list alone gets its section into the evaluation's text and PDF, its documents out of the micro-benchmark rows, its
disagreements into the flags, its charts into the report and its page into the Benchmarks tab, with no other edit.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from PySide6.QtWidgets import QLabel

from hwbench_gui.engine.paths import resources_dir
from hwbench_gui.engine.reports import charts, evaluation, families, flags, pdf
from hwbench_gui.engine.reports.family import Family
from hwbench_gui.engine.run import registry
from hwbench_gui.ui.benchmarks.family_page import FamilyPage, declared_pages

TEMPLATES = Path(evaluation.__file__).parent / "templates"
REFERENCE = resources_dir() / "reference" / "h200" / "2026-12-03T08-27-27_gpu.d2d_52e98a7a.json"
TOY_ID = "toy.count"


def test_every_registered_family_names_benchmarks_a_template_and_a_page_that_exist():
    known = {bench.id for bench in registry.all_benchmarks()}
    claimed: list[str] = []
    for family in families.FAMILIES:
        assert family.benchmark_ids <= known, family.name
        assert (TEMPLATES / family.html_template).is_file(), family.name
        claimed += family.benchmark_ids
    assert len(claimed) == len(set(claimed)), "a benchmark belongs to one family"
    pages = declared_pages()
    assert [f.name for f, _ in pages] == [f.name for f in families.FAMILIES]
    assert all(isinstance(page, FamilyPage) for _, page in pages)


def test_a_document_belongs_to_its_family_only():
    assert families.family_of({"benchmark": {"id": "llm.train"}}).name == "llm.train"
    assert families.family_of({"benchmark": {"id": "gpu.d2d"}}) is None
    assert families.family_of("not a document") is None
    with pytest.raises(KeyError):
        families.by_name("no.such.family")


def _toy_build(docs):
    return [f"{doc['figure']['value']:.0f} counted" for doc in docs if TOY.owns(doc)]


def _toy_chart(sides):
    from hwbench_gui.engine.reports.chart_kit import Chart, new_figure

    counted = [doc for side in sides for doc in side.docs if TOY.owns(doc)]
    if not counted:
        return []
    figure, ax = new_figure()
    ax.bar([0], [counted[0]["figure"]["value"]])
    return [Chart("toy", "Toy counts", figure, "One bar per count.")]


class ToyPage(QLabel):
    def show_document(self, document):
        self.setText(f"counted {document['figure']['value']:.0f}")


TOY = Family(
    name=TOY_ID, benchmark_ids=frozenset({TOY_ID}), build=_toy_build,
    text_lines=lambda rows: ["", "Toy counts:"] + [f"  {row}" for row in rows],
    html_template="llm_train_section.html.j2",
    pdf_tables=lambda rows, width: [("Toy counts", [("Count", width)], [([row], ["white"]) for row in rows])],
    charts=_toy_chart, disagreements=lambda doc: ["the toy disagrees"] if TOY.owns(doc) else [],
    gui_page=f"{__name__}:TOY_PAGE", csv_columns=("count", "half"),
    csv_rows=lambda docs: [{"count": d["figure"]["value"], "half": None, "extra": 1} for d in docs if TOY.owns(d)])
TOY_PAGE = FamilyPage("Toy", ToyPage, TOY.owns, lambda page, document, _others: page.show_document(document))


@pytest.fixture
def toy_registered(monkeypatch):
    monkeypatch.setattr(families, "FAMILIES", families.FAMILIES + (TOY,))
    reference = json.loads(REFERENCE.read_text())
    toy = copy.deepcopy(reference)
    toy["benchmark"]["id"] = TOY_ID
    toy["figure"]["value"] = 42.0
    return [reference, toy]


def test_a_registered_family_gets_its_section_in_the_evaluation(toy_registered, monkeypatch):
    ev = evaluation.build_evaluation(toy_registered, with_charts=True)
    assert ev.sections[TOY_ID] == ["42 counted"]
    assert "Toy counts:\n  42 counted\n" in evaluation.format_evaluation(ev)
    assert [m.title for m in ev.micro] == [m.title for m in ev.micro if TOY_ID not in m.title] != []
    assert "Toy counts" in [c.title for c in ev.charts]
    assert flags.stated_verdicts(toy_registered[1]) == ["the toy disagrees"]
    assert flags.stated_verdicts(toy_registered[0]) == []
    headings = []
    real = pdf.paginate_table

    def spy(title, pages, page, columns, rows, heading=None):
        headings.append((heading, [c.header for c in columns], [cells for cells, _ in rows]))
        return real(title, pages, page, columns, rows, heading)

    monkeypatch.setattr(pdf, "paginate_table", spy)
    pdf.evaluation_pdf(ev)
    assert ("Toy counts", ["Count"], [["42 counted"]]) in headings


def test_a_registered_family_without_runs_is_left_out_of_the_report(toy_registered):
    ev = evaluation.build_evaluation(toy_registered[:1], with_charts=False)
    assert ev.sections[TOY_ID] == []
    assert TOY not in [family for family, _ in ev.shown_sections()]
    assert "Toy counts" not in evaluation.format_evaluation(ev)
    assert "Toy counts" not in [c.title for c in charts.build_charts([])]


def test_a_registered_family_gets_its_page_in_the_benchmarks_tab(toy_registered, qtbot, qsettings, tmp_path):
    from hwbench_gui.ui.benchmarks import BenchmarksTab
    from hwbench_gui.ui.context import AppContext

    context = AppContext(settings=qsettings, results_dir=tmp_path)
    tab = BenchmarksTab(context)
    qtbot.addWidget(tab)
    try:
        assert tab.family_page(TOY_ID) is None
        reference, toy = toy_registered
        tab._add_result_row(reference, select=True)
        assert tab.family_page(TOY_ID) is None and tab.page_of(reference) is None
        tab._add_result_row(toy, select=True)
        page = tab.family_page(TOY_ID)
        assert isinstance(page, ToyPage) and page.text() == "counted 42"
        assert tab.page_of(toy) is page and page in tab.reading_pages()
        assert tab.bottom.tabText(tab.bottom.indexOf(page)) == "Toy"
    finally:
        tab.shutdown()
        context.workers.shutdown(timeout_s=10)


def test_a_registered_family_gets_its_own_csv_table_beside_the_results(toy_registered, tmp_path):
    from hwbench_gui.engine.reports.csv_export import write_csvs

    written = write_csvs(toy_registered, tmp_path / "report.csv")
    assert written == [tmp_path / "report.csv", tmp_path / f"report.{TOY_ID}.csv"]
    assert written[1].read_text() == "count,half\n42.0,\n"
    assert len(written[0].read_text().splitlines()) == 3  # header and both results
    assert write_csvs(toy_registered[:1], tmp_path / "alone.csv") == [tmp_path / "alone.csv"]
