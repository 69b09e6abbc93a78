"""The window's result pages of a burn-in and of the language models show the verdict the document's rows make
and say so where the stated one differs; a document they cannot use (given without the load's check) is said in
one line, never half drawn."""

from __future__ import annotations

from test_document_details import BURNIN, INFER, TRAIN, _doc, _pass_over_a_failed_gpu, _tpot_text, _zero_estimate, \
    _zero_power_limit

from hwbench_gui.ui.benchmarks.health_view import HealthView
from hwbench_gui.ui.benchmarks.llm_train_view import TrainingView
from hwbench_gui.ui.benchmarks.llm_view import LlmView


def test_the_health_page_shows_fail_over_a_stated_pass_and_says_why(qtbot):
    view = HealthView()
    qtbot.addWidget(view)
    view.set_document(_pass_over_a_failed_gpu())
    text = view.verdict.text()
    assert ">FAIL</span>&nbsp;&nbsp;machine" in text and "gpu0 <span style='color:" in text
    assert "Inconsistent: the burn-in states PASS but its rows make it FAIL" in text
    assert view.plots.ci.items  # drawn


def test_the_pages_say_why_a_document_cannot_be_shown(qtbot):
    health = HealthView()
    qtbot.addWidget(health)
    health.set_document(_doc(BURNIN))
    bad = _doc(BURNIN)
    _zero_power_limit(bad)
    health.set_document(bad)
    assert health.verdict.text() == ("<b>This burn-in cannot be shown</b>: "
                                     "details.health.gpus[0].timeline.power_limit_w[3] 0.0 is not above 0")
    assert not health.plots.ci.items and health.reasons.text() == ""
    llm = LlmView()
    qtbot.addWidget(llm)
    doc = _doc(INFER)
    _tpot_text(doc)
    llm.set_document(doc)
    assert llm.summary.text() == "This run cannot be shown: details.serving[1].tpot.p50 &#x27;fast&#x27; is not a " \
                                 "finite number"
    assert not any(column.isVisibleTo(llm) for column in llm.columns)
    train = TrainingView()
    qtbot.addWidget(train)
    doc = _doc(TRAIN)
    _zero_estimate(doc)
    train.set_document(doc)
    assert train.summary.text() == "This run cannot be shown: figures.memory_estimate_gib.value 0 is not above 0"
    assert train.fits.rowCount() == 0
