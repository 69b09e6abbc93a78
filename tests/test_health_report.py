"""The evaluation report's health section: the newest burn-in's verdict, reasons and per-GPU lines (its rate
against gpu.matmul's sustained rate), and the micro-benchmark figures held against their hardware."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from hwbench_gui.engine.reports import evaluation, health_section
from tests.health_standin import burn, install

REFERENCE = Path(__file__).resolve().parents[1] / "resources" / "reference" / "h200"


def _ref(name: str) -> dict:
    return json.loads((REFERENCE / name).read_text())


@pytest.fixture
def docs(monkeypatch):
    fake, clock = install(monkeypatch)
    fake.reasons = lambda i, t: 0x4 | (0x40 if 60 <= t < 90 else 0)
    health = burn(fake, clock, {0: lambda t: 1400.0})
    matmul = _ref("2026-12-03T08-27-35_gpu.matmul_fafcfce5.json")
    burnin = {**copy.deepcopy(matmul), "benchmark": {"id": "health.burnin", "title": "Health burn-in"},
              "precision": "FP8", "details": {"health": health}, "started_at": "2026-12-05T10:00:00.000+00:00",
              "figures": {}, "params": {"minutes": 2.0}}
    sustained = copy.deepcopy(matmul)
    sustained["params"]["mode"] = "sustained"
    sustained["figures"]["FP8"]["value"] = 1450.0
    slow_copy = _ref("2026-12-03T08-27-27_gpu.d2d_52e98a7a.json")
    slow_copy["figure"]["value"] = 0.62 * 4800
    return [burnin, sustained, slow_copy, matmul]


def test_the_section_holds_the_verdict_the_gpu_lines_and_the_findings(docs):
    section = health_section.build(docs)
    assert section.verdict == "WARN" and section.duration == "2 min"
    assert section.reasons[0][:2] == ("WARN", "gpu0") and "HW thermal slowdown" in section.reasons[0][2]
    (row,) = section.gpus
    values = dict(zip(health_section.GPU_COLUMNS, row))
    assert values["GEMM rate"] == "1400 TFLOP/s FP8"
    assert values["vs gpu.matmul sustained"] == "0.97 × 1450"
    assert values["Power / limit"] == "695 / 700 W (0.99)"
    assert values["Power-capped"] == "100 %" and values["Slowed down"] == "25 %"  # 60 of 241 samples
    (burned,) = section.burns
    assert burned[:2] == ("NOTE", "gpu0") and burned[2].startswith("0.97 × gpu.matmul sustained alone; power 0.99")
    (low,) = [f for f in section.findings if f[0] == "low"]
    assert low[1].startswith("GPU memory copy 62 %")
    assert "NVIDIA H200 Tensor Core GPU product brief" in low[2] and "gpu.d2d_52e98a7a.json" in low[2]


def test_the_evaluation_prints_and_renders_it_and_keeps_the_burnin_out_of_the_micro_rows(docs):
    ev = evaluation.build_evaluation(docs, with_charts=False)
    assert all("health.burnin" not in m.title for m in ev.micro)
    text = evaluation.format_evaluation(ev)
    assert "Health burn-in: WARN (2 min" in text and "[low] GPU memory copy 62 %" in text
    assert "NOTE gpu0 whether the load burns: 0.97 × gpu.matmul sustained alone" in text
    html = evaluation.render_evaluation_html(ev)
    assert "<h2>Health</h2>" in html and "0.97 × 1450" in html and "GPU memory copy 62 %" in html
    assert "gpu0, whether the load burns: 0.97 × gpu.matmul sustained alone" in html
    assert evaluation.evaluation_pdf_bytes(ev).startswith(b"%PDF")


def test_the_section_shows_the_newest_checked_burnin_not_a_later_unchecked_one(docs):
    unchecked = copy.deepcopy(docs[0])
    unchecked["details"]["health"]["checking"] = False
    unchecked["details"]["health"]["verdict"] = "PASS"
    unchecked["started_at"] = "2026-12-05T11:00:00.000+00:00"
    section = health_section.build([unchecked, *docs])
    assert section.verdict == "WARN" and section.checked and section.runs == 2


def test_no_burnin_says_how_to_run_one(docs):
    ev = evaluation.build_evaluation(docs[1:], with_charts=False)
    assert ev.sections["health.burnin"].verdict is None
    assert "hwbench run health.burnin -p minutes=1" in evaluation.render_evaluation_html(ev)
    assert health_section.build([{"benchmark": {"id": "model.resnet50"}, "status": "ok"}]) is None
