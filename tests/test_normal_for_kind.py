"""Normal for its kind: micro-benchmark figures against their limits and the fraction healthy machines reach.

The healthy fractions held for the H200 are recomputed here from the reference documents they cite, so a
fact and its source cannot drift apart; the judgement is fed known figures with known answers."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from hwbench_gui.engine.health import normal
from hwbench_gui.engine.inventory import datasheets

REFERENCE = Path(__file__).resolve().parents[1] / "resources" / "reference" / "h200"


def _doc(name: str) -> dict:
    return json.loads((REFERENCE / name).read_text())


D2D, PCIE, MATMUL = ("2026-12-03T08-27-27_gpu.d2d_52e98a7a.json", "2026-12-03T08-26-59_gpu.pcie_bac6fd02.json",
                     "2026-12-03T08-27-35_gpu.matmul_fafcfce5.json")


def test_the_h200_fractions_are_what_their_reference_runs_measured():
    sheet = datasheets.lookup("NVIDIA H200")
    d2d = _doc(D2D)
    assert datasheets.healthy(sheet, "memory_copy").low == pytest.approx(d2d["figure"]["value"] / 4800, abs=5e-4)
    pcie = _doc(PCIE)
    link = pcie["details"]["pcie_link"]["max_theoretical_gbps"]
    h2d, d2h = pcie["figure"]["value"] / link, pcie["figures"]["pinned D2H, 1 GiB"]["value"] / link
    held = datasheets.healthy(sheet, "pcie_pinned")
    assert (held.low, held.high) == (pytest.approx(h2d, abs=5e-4), pytest.approx(d2h, abs=5e-4))
    matmul = _doc(MATMUL)
    assert matmul["params"]["mode"] == "burst"
    for label in ("FP32", "TF32", "FP16", "BF16", "FP8"):
        fraction = matmul["figures"][label]["value"] / sheet.peak_tflops(label)
        assert datasheets.healthy(sheet, "matmul_burst", label).low == pytest.approx(fraction, abs=5e-4), label
    for entry in datasheets.HEALTHY["H200 SXM"]:
        assert entry.figure in datasheets.HEALTHY_FIGURES
        assert entry.low <= entry.high and "resources/reference/h200/" in entry.source


def test_the_reference_h200_is_normal():
    for name in (D2D, PCIE, MATMUL):
        findings = normal.judge(_doc(name))
        assert findings and {f["status"] for f in findings} == {normal.NORMAL}, name


def test_a_slow_memory_copy_is_a_finding_with_its_limit_and_healthy_span():
    doc = _doc(D2D)
    doc["figure"]["value"] = 0.62 * 4800  # 62 % of the datasheet
    (finding,) = normal.judge(doc)
    assert finding["status"] == normal.LOW and finding["fraction"] == pytest.approx(0.62)
    assert finding["text"].startswith("GPU memory copy 62 % of the H200 SXM datasheet (4800 GB/s); healthy H200 SXMs "
                                      "give 89 %")
    normal.annotate(doc)
    assert doc["normal_for_kind"][0]["status"] == "low"
    assert doc["warnings"][-1].startswith("not normal for its kind: GPU memory copy 62 %")


def test_the_finding_starts_ten_percent_below_the_healthy_low_end():
    doc = _doc(D2D)
    doc["figure"]["value"] = 0.889 * 0.91 * 4800
    assert normal.judge(doc)[0]["status"] == normal.NORMAL
    doc["figure"]["value"] = 0.889 * 0.89 * 4800
    assert normal.judge(doc)[0]["status"] == normal.LOW


def test_a_pcie_link_half_as_fast_is_low_against_its_maximum():
    doc = _doc(PCIE)
    doc["figure"]["value"] = 27.0  # what a Gen4 link gives, on a Gen5 x16 slot
    h2d, d2h = normal.judge(doc)
    assert h2d["status"] == normal.LOW and d2h["status"] == normal.NORMAL
    assert "Gen5 x16" in h2d["text"]


def test_matmul_healthy_fractions_hold_for_burst_mode_only():
    doc = _doc(MATMUL)
    doc["params"]["mode"] = "sustained"
    findings = normal.judge(doc)
    assert {f["status"] for f in findings} == {normal.NO_REFERENCE}
    assert "burst mode" in findings[0]["text"]


def test_a_gpu_without_healthy_figures_is_held_against_its_datasheet_alone():
    doc = _doc(D2D)
    doc["details"]["gpu"] = "Quadro RTX 8000"
    doc["figure"]["value"] = 336.0
    (finding,) = normal.judge(doc)
    assert finding["status"] == normal.NO_REFERENCE and finding["fraction"] == pytest.approx(0.5)
    assert "no healthy fraction for the Quadro RTX 8000" in finding["text"]


def test_host_memory_against_dimm_speed_times_channels():
    doc = _doc("2026-12-03T08-28-08_host.membw_8dfb21b2.json")
    (finding,) = normal.judge(doc)
    assert finding["status"] == normal.NO_LIMIT and "dmidecode not installed" in finding["text"]
    doc = copy.deepcopy(doc)
    doc["inventory"]["memory"].update(channels=8, configured_speed_mts=4800)
    (finding,) = normal.judge(doc)
    assert finding["limit"] == pytest.approx(307.2)  # 8 × 4800 MT/s × 8 bytes
    assert finding["fraction"] == pytest.approx(83.50759733167035 / 307.2)


def test_other_documents_and_broken_ones_give_nothing():
    assert normal.judge({"status": "ok", "benchmark": {"id": "model.resnet50"}}) == []
    assert normal.judge({"status": "failed", "benchmark": {"id": "gpu.d2d"}}) == []
    assert normal.judge({"status": "ok", "benchmark": {"id": "gpu.d2d"}, "figure": "x", "details": []}) == []
    cpu = {"status": "ok", "benchmark": {"id": "gpu.matmul"}, "device": "cpu (2 threads)",
           "figures": {"FP32": {"value": 0.1}}}
    assert normal.judge(cpu) == []
