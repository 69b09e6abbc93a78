"""The serving family's report section and page: a llama.cpp document beside hwbench's own llm.infer figure of the
same name from the same machine, an HTTP sweep with the largest load within its preset, in the evaluation's text,
HTML and PDF tables; documents with broken fields are left out, never a traceback."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest
from recording import Recorder

from hwbench_gui.engine.reports import families, serving_section
from hwbench_gui.engine.results.document import build_document
from hwbench_gui.engine.run import registry
from hwbench_gui.engine.run.protocol import outcome_to_json
from hwbench_gui.engine.spec.benchmark import Outcome

pytest.importorskip("gguf")

T0 = datetime(2026, 12, 7, 10, 0, 0, tzinfo=timezone.utc)
MACHINE = {"inventory": {"hostname": "alpha", "gpus": [], "cpu": {"model": "CPU"}}, "inventory_reason": None,
           "software": {}, "software_reason": None}
FIXTURE = Path(__file__).parent / "fixtures" / "llama_bench" / "rtx4080_qwen2.5-7b_q4_k_m.json"


def _doc(bench_id, params, outcome, minutes=0):
    bench = registry.get(bench_id)
    return build_document(bench, bench.resolve_params(params), status="ok", started_at=T0.replace(minute=minutes),
                          duration_s=1.0, outcome=outcome_to_json(outcome), machine=MACHINE)


@pytest.fixture
def documents(tmp_path):
    from test_llm_engines import write_gguf

    from hwbench_gui.engine.benchmarks import llm_llamacpp

    gguf = write_gguf(tmp_path / "m.gguf")
    params = {"file": str(FIXTURE), "gguf": str(gguf), "bandwidth_gbps": 0.01}  # a bound of 143.9 tokens/s
    llama = _doc("llm.llamacpp", params, llm_llamacpp.run(registry.get("llm.llamacpp").resolve_params(params),
                                                          Recorder()), 2)
    infer = _doc("llm.infer", {"model": "tiny"}, Outcome(
        "tg128 @ depth 0", "tokens/s", [150.0, 151.0], precision="FP32",
        figures={"tg128 @ depth 0": {"value": 150.5, "unit": "tokens/s", "higher_is_better": True,
                                     "samples": [150.0, 151.0], "fraction_of_bound": 0.81}}), 1)
    endpoint = _doc("llm.endpoint", {"url": "http://127.0.0.1:9/v1"}, Outcome(
        "output tokens/s @ 4 sequences", "tokens/s", [400.0, 410.0],
        details={"endpoint": {"url": "http://127.0.0.1:9", "model": "tiny"}, "largest_concurrency_within_target": 4,
                 "preset": {"title": "MLPerf server"}, "summary": ["4 sequences: 405 output tokens/s"]}), 3)
    return [infer, llama, endpoint]


def test_the_section_pairs_an_engine_with_hwbench_own(documents):
    rows = serving_section.build(documents)
    assert [r.what for r in rows] == ["HTTP http://127.0.0.1:9 (tiny)", "llama.cpp Q4_K_M (llama)"]
    assert rows[0].held == "largest concurrency within MLPerf server: 4"
    assert rows[1].held == "0.83 of this machine's bandwidth bound"  # 119.03 / 143.96
    assert rows[1].beside == "hwbench llm.infer tiny FP32: 150.5 tokens/s = 0.81 of its bound"
    text = "\n".join(serving_section.text_lines(rows))
    assert "beside hwbench llm.infer tiny FP32" in text and "llama.cpp Q4_K_M: 119 tokens/s = 0.83" in text
    (table,) = serving_section.pdf_tables(rows, 9.0)
    assert len(table[2]) == 2 and table[2][1][0][3].startswith("hwbench llm.infer")


def test_the_family_is_registered_and_broken_fields_are_left_out(documents):
    assert families.family_of(documents[1]) is serving_section.FAMILY
    broken = {**documents[2], "figure": {"name": "x", "value": "fast"}}
    assert [r.what for r in serving_section.build([broken, documents[1]])] == ["llama.cpp Q4_K_M (llama)"]
