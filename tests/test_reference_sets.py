"""The shipped reference folders, one per GPU kind the device lends, compare as a user expects: two sides, a
composite over most of what they ran, and the 8B LoRA rows paired with each GPU's own micro-batch shown."""

from __future__ import annotations

from hwbench_gui.engine.reports import compare, comparison_text
from hwbench_gui.engine.results import library

MIN_COMMON = 20


def _comparison():
    found = library.scan([library.reference_dir() / "h100", library.reference_dir() / "h200"])
    assert not found.errors
    sides = compare.sides_by(found.docs, "machine")
    return compare.compare(sides, 0)


def test_the_two_gpu_kinds_are_two_sides_with_a_composite_over_most_benchmarks():
    comparison = _comparison()
    assert [s.name.split(" · ")[-1] for s in comparison.sides] == ["NVIDIA H100 80GB HBM3", "NVIDIA H200"]
    h200 = comparison.summaries[1]
    assert h200.n_geomean >= MIN_COMMON and h200.geomean is not None
    assert f"over the {h200.n_geomean} benchmark(s) every side has" in comparison_text.format_table(comparison)


def test_the_8b_lora_rows_are_paired_with_each_sides_chosen_micro_batch():
    comparison = _comparison()
    (row,) = [r for r in comparison.rows if r.benchmark_id == "llm.train" and r.params.get("model") == "llama-3.1-8b"
              and r.params.get("micro_batch") == 0]
    h100, h200 = row.cells
    assert h100.metric is not None and h200.metric is not None and h200.ratio is not None
    text = comparison_text.format_table(comparison)
    line = next(ln for ln in text.splitlines() if "llama-3.1-8b LoRA" in ln and "micro_batch=0" in ln)
    assert "[compile true, micro_batch 5]" in line and "micro_batch 10]" in line
