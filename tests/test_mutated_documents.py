"""Property: a mutated document of any kind (tests/mutated_documents.py) never raises out of compare, the report
(HTML, PDF, CSV, both layouts) or the window's result pages. It is skipped with a one-line reason, or loaded,
reported and shown; a burn-in or a serving sweep whose stated verdict its rows contradict is shown with the
verdict the rows make and flagged. Derandomized: CI sees the same few dozen examples every run."""

from __future__ import annotations

import contextlib
import csv
import io
import warnings

import pytest

pytest.importorskip("hypothesis", reason="the dev extras' hypothesis (pip install -e .[dev]) runs these properties")
from hypothesis import HealthCheck, example, given, settings  # noqa: E402
from mutated_documents import KNOWN, mutated, write  # noqa: E402

from hwbench_gui import cli  # noqa: E402
from hwbench_gui.engine.health.rules import derive  # noqa: E402
from hwbench_gui.engine.reports import (  # noqa: E402
    charts, compare, evaluation, flags, health_section, html, llm_section, pdf)
from hwbench_gui.engine.reports.report import make_report  # noqa: E402
from hwbench_gui.engine.results import library  # noqa: E402


def _known(test):
    """``test`` run first on each mutation found by hand (``KNOWN``), then on the generated ones."""
    for known in KNOWN:
        test = example(case=known)(test)
    return test


FEW = settings(max_examples=25, deadline=None, derandomize=True, database=None,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                      HealthCheck.data_too_large])


def _cli(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = cli.main(args)
    return code, out.getvalue(), err.getvalue()


def _loaded_or_skipped(folder, path):
    found = library.scan([folder])
    loaded = [d for d in found.docs if d["_path"] == str(path)]
    skipped = [e for e in found.errors if e.path == path]
    assert len(loaded) + len(skipped) == 1
    for error in skipped:
        assert error.reason and "\n" not in error.reason
    return found, (loaded[0] if loaded else None)


@FEW
@_known
@given(case=mutated())
def test_compare_and_the_report_skip_or_report_a_mutated_document(tmp_path_factory, case):
    seed, doc, done = case
    folder = tmp_path_factory.mktemp("docs")
    path = write(folder, seed, doc)
    found, loaded = _loaded_or_skipped(folder, path)
    code, out, err = _cli(["compare", str(folder)])
    assert code == 0, (done, err)
    if loaded is None:
        assert f"skipped {path.name}: " in err, done
    for layout in ("evaluation", "comparison"):
        target = folder / f"{layout}.csv"
        code, out, err = _cli(["report", str(folder), "--layout", layout, "--csv", str(target)])
        assert code == 0, (done, err)
        rows = list(csv.DictReader(open(target, encoding="utf-8")))
        assert len(rows) == len(found.docs), done
    ev = evaluation.build_evaluation(found.docs, found.errors, with_charts=False)
    assert evaluation.render_evaluation_html(ev) and evaluation.evaluation_pdf_bytes(ev).startswith(b"%PDF")
    assert evaluation.format_evaluation(ev)
    report = make_report(found.docs, found.errors, group="run", with_charts=False)
    assert html.render_html(report) and pdf.pdf_bytes(report).startswith(b"%PDF")
    if loaded is not None:
        _verdicts_are_the_rows(loaded)


def _verdicts_are_the_rows(doc):
    """The verdict shown is the one the rows make; a stated one that differs is flagged."""
    problems = flags.consistency_problems(doc)
    health = (doc.get("details") or {}).get("health")
    if isinstance(health, dict) and doc.get("status") == "ok":
        derived = derive(health)
        assert health_section.build([doc]).verdict == derived.verdict
        assert all(text in problems for text in derived.disagreements)
    if llm_section.is_llm(doc):
        assert all(text in problems for text in llm_section.serving_points(doc).disagreements)


@settings(FEW, max_examples=10)
@_known
@given(case=mutated())
def test_the_charts_of_a_mutated_document_draw_or_are_left_out(tmp_path_factory, case):
    seed, doc, done = case
    folder = tmp_path_factory.mktemp("docs")
    write(folder, seed, doc)
    found = library.scan([folder])
    for sides in (compare.sides_by_machine(found.docs), compare.sides_by_run(found.docs)):
        comparison = compare.compare(sides, 0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for chart in charts.build_charts(sides, comparison):
                assert charts.to_png(chart.figure, dpi=30).startswith(b"\x89PNG"), (done, chart.key)


@settings(FEW, max_examples=25)
@_known
@given(case=mutated(("health.burnin", "llm.infer", "llm.train")))
def test_the_windows_result_pages_show_a_mutated_document_or_say_why_not(qtbot, tmp_path_factory, case):
    """Each page is given the document twice: as loaded (a refused one never reaches it) and as it is, unchecked
    (a live run's document takes that way): drawn, or one line saying why not; never an exception."""
    from hwbench_gui.ui.benchmarks.health_view import HealthView, has_health
    from hwbench_gui.ui.benchmarks.llm_train_view import TrainingView
    from hwbench_gui.ui.benchmarks.llm_view import LlmView

    seed, doc, done = case
    folder = tmp_path_factory.mktemp("docs")
    path = write(folder, seed, doc)
    _, loaded = _loaded_or_skipped(folder, path)
    kind = seed["benchmark"]["id"]
    page = {"health.burnin": HealthView, "llm.infer": LlmView, "llm.train": TrainingView}[kind]
    view = page()
    qtbot.addWidget(view)
    text = (lambda: view.verdict.text()) if page is HealthView else (lambda: view.summary.text())
    for given_doc in ([loaded] if loaded is not None else []) + [doc]:
        if page is HealthView and not has_health(given_doc):
            continue  # the window opens the Health page only for a document with a burn-in
        view.set_document(given_doc)
        shown = text()
        assert shown, done
        if given_doc is loaded:
            assert "cannot be shown" not in shown, done
