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


def test_published_references_beside_the_two_gpus_keep_the_composite_over_what_the_measured_sides_share():
    """A published source gives one to four figures: counted in the common set, it shrank the two machines'
    composite to "0 benchmark(s) every side has". It now stands beside them with its own ratio to the baseline."""
    found = library.scan([library.reference_dir() / "h100", library.reference_dir() / "h200"])
    published = library.scan([library.reference_dir()], recursive=False)
    sides = compare.sides_by(found.docs + [d for d in published.docs if d.get("status") == "published"], "machine")
    assert sum(s.published for s in sides) >= 5
    comparison = compare.compare(sides, 0)
    alone = _comparison().summaries[1]
    h200 = next(s for side, s in zip(comparison.sides, comparison.summaries) if side.name.endswith("NVIDIA H200"))
    assert (h200.n_geomean, h200.geomean) == (alone.n_geomean, alone.geomean)
    for side, summary in zip(comparison.sides, comparison.summaries):
        if side.published:
            assert summary.geomean is None and summary.n_pair <= 4
    text = comparison_text.format_table(comparison)
    assert f"over the {alone.n_geomean} benchmark(s) every measured side has" in text
