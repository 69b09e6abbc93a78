"""Whether the burn-in burned: at or above 0.95 × gpu.matmul's sustained rate and 0.85 × the
power limit, or held lower by a clock-event reason (a NOTE: the load burns); below with no reason, a WARN (the
burn-in does not burn). Known readings with known answers, and the H100 reference documents."""

from __future__ import annotations

import json

import pytest

from hwbench_gui.engine.health import burns
from hwbench_gui.engine.health.rules import NOTE, POWER_CAP_BIT, WARN
from hwbench_gui.engine.paths import resources_dir

CAP, THERMAL = POWER_CAP_BIT, 0x20


def test_a_load_at_the_targets_burns():
    j = burns.judge(960.0, 1000.0, [700.0] * 4, [700.0] * 4, [0] * 4, 2048)
    assert j["level"] == NOTE and j["burns"] and j["text"].startswith("0.96 × gpu.matmul sustained alone; power 1.00")


def test_a_load_under_the_rate_target_held_by_the_power_cap_burns():
    # 0.92 of the sustained rate, the cap set in 3 of 4 samples, 693 of 700 W: what the H100 showed
    j = burns.judge(920.0, 1000.0, [693.0] * 4, [700.0] * 4, [CAP, CAP, CAP, 0], 2048)
    assert j["level"] == NOTE and j["burns"]
    assert j["text"] == ("0.92 × gpu.matmul sustained alone; held by the power cap (SwPowerCap 75 % of samples, "
                         "0.99 of the limit) with 2048 MiB of memory traffic beside it: the load burns")


def test_a_thermal_slowdown_holds_it_too():
    j = burns.judge(800.0, 1000.0, [500.0] * 2, [700.0] * 2, [THERMAL, THERMAL])
    assert j["burns"] and "held by SW thermal slowdown (100 % of samples)" in j["text"]


@pytest.mark.parametrize("masks", [[0, 0, 0, 0], [CAP, 0, 0, 0]])  # no reason, or one set in under half the samples
def test_a_load_under_the_rate_target_with_no_reason_does_not_burn(masks):
    j = burns.judge(920.0, 1000.0, [693.0] * 4, [700.0] * 4, masks)
    assert j["level"] == WARN and not j["burns"]
    assert j["text"].startswith("0.92 × gpu.matmul sustained alone; power 0.99 of the limit and no clock-event "
                                "reason holds it lower: the burn-in does not burn")


def test_low_power_at_full_rate_with_no_reason_does_not_burn():
    j = burns.judge(990.0, 1000.0, [500.0] * 2, [700.0] * 2, [0, 0])
    assert j["level"] == WARN and "power 0.71 of the limit" in j["text"]


def test_without_a_matmul_run_the_power_decides():
    assert burns.judge(900.0, None, [690.0], [700.0], [0])["burns"]
    j = burns.judge(900.0, None, [300.0], [700.0], [0])
    assert not j["burns"] and j["text"].startswith("no gpu.matmul sustained run to hold the rate against; power 0.43")


def test_the_settled_rate_leaves_out_the_first_seconds():
    load = {"rate_t": [1.0, 5.0, 11.0, 20.0], "rate": [1300.0, 1250.0, 1150.0, 1160.0]}
    assert burns.settled_rate(load) == pytest.approx(1155.0)
    assert burns.settled_rate({"rate_t": [1.0, 3.0], "rate": [10.0, 20.0]}) == pytest.approx(15.0)


def test_the_h100_references_are_judged_against_the_matmul_run_among_them():
    folder = resources_dir() / "reference" / "h100" / "health-2026-12-05"
    docs = [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))]
    checked, unchecked = (d for d in docs if d["benchmark"]["id"] == "health.burnin")
    assert checked["params"]["check"] and not unchecked["params"]["check"]
    (j,) = burns.judge_document(checked, docs)
    assert j["burns"] and j["text"].startswith("0.95 × gpu.matmul sustained alone; held by the power cap "
                                               "(SwPowerCap 99 % of samples, 0.98 of the limit)")
    (j,) = burns.judge_document(unchecked, docs)
    assert j["burns"] and j["text"].startswith("0.98 × gpu.matmul sustained alone; power 0.99 of the limit")
    matmul = next(d for d in docs if d["benchmark"]["id"] == "gpu.matmul")
    assert burns.sustained_matmul(docs, "FP8", 16384)[1] is matmul
    assert burns.sustained_matmul(docs, "FP8", 8192) is None and burns.sustained_matmul(docs, "BF16") is None



def test_the_burnin_document_says_what_the_run_alone_can(monkeypatch):
    from tests.health_standin import burn, install

    fake, clock = install(monkeypatch)
    section = burn(fake, clock, {0: lambda t: 1400.0})  # at its power cap, 695 of 700 W
    j = section["gpus"][0]["burn"]
    assert j["burns"] and j["text"].startswith("no gpu.matmul sustained run to hold the rate against; power 0.99")
    fake, clock = install(monkeypatch)
    fake.nvmlDeviceGetPowerUsage = lambda h: 400_000
    fake.reasons = lambda i, t: 0
    j = burn(fake, clock, {0: lambda t: 1400.0})["gpus"][0]["burn"]
    assert j["level"] == WARN and "power 0.57 of the limit and no clock-event reason" in j["text"]
