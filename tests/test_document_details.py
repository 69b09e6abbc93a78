"""What a burn-in's and a language model's own pages and report sections read is checked when the document is
loaded (types and ranges: a power limit of 0, a figure of the wrong type), and a verdict a document states is
derived again from its own rows, with the disagreement flagged. Documents start from the shipped ones."""

from __future__ import annotations

import copy
import csv
import json
from pathlib import Path

import pytest
from support import no_traceback, run_cli

from hwbench_gui.engine.health import rules
from hwbench_gui.engine.reports import evaluation, flags, health_section, llm_section
from hwbench_gui.engine.results import library
from hwbench_gui.engine.results.store import write_result

REFERENCE = Path(__file__).resolve().parents[1] / "resources" / "reference" / "h100"
BURNIN = REFERENCE / "health-2026-12-05" / "2026-12-05T15-42-54_health.burnin_1e8ab5ad.json"
INFER = REFERENCE / "llm-2026-12-05" / "2026-12-05T17-49-58_llm.infer_78443d68.json"
TRAIN = REFERENCE / "llm-2026-12-05" / "2026-12-05T18-00-04_llm.train_0324cf2e.json"


def _doc(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _zero_power_limit(doc):
    doc["details"]["health"]["gpus"][0]["timeline"]["power_limit_w"][3] = 0.0


def _tpot_text(doc):
    doc["details"]["serving"][1]["tpot"] = {"p50": "fast", "p99": 0.006}


def _zero_estimate(doc):
    doc["figures"]["memory_estimate_gib"]["value"] = 0


def _gpu_index_text(doc):
    doc["details"]["health"]["gpus"][0]["index"] = "zero"


def _negative_depth(doc):
    doc["details"]["tg"][0]["bound_tokens_per_s"] = -1.0


@pytest.mark.parametrize("source, mutate, reason", [
    (BURNIN, _zero_power_limit, "details.health.gpus[0].timeline.power_limit_w[3] 0.0 is not above 0"),
    (BURNIN, _gpu_index_text, "details.health.gpus[0].index 'zero' is not an integer"),
    (INFER, _tpot_text, "details.serving[1].tpot.p50 'fast' is not a finite number"),
    (INFER, _negative_depth, "details.tg[0].bound_tokens_per_s -1.0 is not above 0"),
    (TRAIN, _zero_estimate, "figures.memory_estimate_gib.value 0 is not above 0"),
])
def test_a_kinds_details_are_checked_on_load(tmp_path, source, mutate, reason):
    doc = _doc(source)
    assert library.check_document(doc, source) is None  # the shipped one passes
    mutate(doc)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(library.ResultFileError) as caught:
        library.load_document(bad)
    assert caught.value.reason == reason


def test_the_report_skips_a_bad_burnin_with_its_reason_and_reports_the_rest(tmp_path, cli_env):
    good = _doc(BURNIN)
    bad = copy.deepcopy(good)
    bad["id"] = bad["id"][::-1]
    _zero_power_limit(bad)
    folder = tmp_path / "results"
    write_result(good, folder)
    bad_path = write_result(bad, folder)
    out = tmp_path / "out"
    out.mkdir()
    proc = run_cli(["report", str(folder), "--html", str(out / "r.html"), "--pdf", str(out / "r.pdf"),
                    "--csv", str(out / "r.csv")], cli_env)
    no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    assert f"skipped {bad_path.name}: details.health.gpus[0].timeline.power_limit_w[3] 0.0 is not above 0" \
        in proc.stderr
    assert '<strong class="health-pass">PASS</strong> — burn-in' in (out / "r.html").read_text(encoding="utf-8")
    assert len(list(csv.DictReader(open(out / "r.csv", encoding="utf-8")))) == 1


# -- verdicts derived from the rows -------------------------------------------------------------------

def _pass_over_a_failed_gpu() -> dict:
    doc = _doc(BURNIN)
    gpu = doc["details"]["health"]["gpus"][0]
    gpu["verdict"] = "FAIL"
    gpu["reasons"].append({"level": "FAIL", "rule": "wrong_result", "scope": "gpu0", "text": "3 wrong products"})
    assert doc["details"]["health"]["verdict"] == "PASS"
    return doc


def test_a_stated_pass_over_a_failed_gpu_row_is_shown_as_fail_and_flagged():
    doc = _pass_over_a_failed_gpu()
    assert rules.verdict_of(doc) == "FAIL"
    section = health_section.build([doc])
    assert section.verdict == "FAIL"
    assert section.reasons[0] == (health_section.INCONSISTENT, "document",
                                  "the burn-in states PASS but its rows make it FAIL")
    assert section.gpus[0][1] == "FAIL"
    assert "the burn-in states PASS but its rows make it FAIL" in flags.consistency_problems(doc)
    ev = evaluation.build_evaluation([doc], with_charts=False)
    assert "Health burn-in: FAIL" in evaluation.format_evaluation(ev)
    assert "INCONSISTENT" in evaluation.render_evaluation_html(ev)


def test_a_stated_gpu_pass_whose_reasons_fail_is_fail_and_a_stated_fail_is_never_lifted():
    health = _doc(BURNIN)["details"]["health"]
    health["gpus"][0]["reasons"].append({"level": "FAIL", "rule": "x", "scope": "gpu0", "text": "wrong"})
    derived = rules.derive(health)
    assert (derived.verdict, derived.gpus) == ("FAIL", ["FAIL"])
    assert "gpu0 states PASS but its reasons make it FAIL" in derived.disagreements
    lifted = _doc(BURNIN)["details"]["health"]
    lifted["verdict"] = "FAIL"  # no row says why: still FAIL, and said
    derived = rules.derive(lifted)
    assert derived.verdict == "FAIL" and derived.disagreements == ["the burn-in states FAIL but its rows make it PASS"]
    assert rules.derive(_doc(BURNIN)["details"]["health"]).disagreements == []


def test_a_serving_point_said_within_target_whose_p99_is_not_is_judged_by_its_p99():
    doc = _doc(INFER)
    assert llm_section.serving_points(doc).disagreements == []
    slow = doc["details"]["serving"][0]
    slow["tpot"]["p99"] = 0.2  # 200 ms per token against a 50 ms target, still "meets_target": true
    assert slow["meets_target"] is True
    serving = llm_section.serving_points(doc)
    assert [p.meets_target for p in serving.points][0] is False
    assert serving.disagreements[0] == "1 serving point(s) state the opposite of what their p99s make them (first: 1 " \
                                       "sequences)"
    run = llm_section.build([doc])[0]
    assert run.serving[0][4] is False and run.disagreements == serving.disagreements
    assert any("state the opposite" in p for p in flags.consistency_problems(doc))
    doc["details"]["largest_concurrency_within_target"] = 256
    assert "it states 256 concurrent sequences within target but its points make it 64" in \
        llm_section.serving_points(doc).disagreements
