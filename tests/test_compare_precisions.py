"""A run that measured several precisions (gpu.matmul precision=all) pairs each precision's figure with
a run of that precision: a BF16 reference against this run's BF16 figure, not headline against headline."""

from __future__ import annotations

import copy
from pathlib import Path

from hwbench_gui.engine.reports import compare
from hwbench_gui.engine.results.library import load_document

ALL = Path(__file__).resolve().parents[1] / "resources/reference/h200/2026-12-03T08-27-35_gpu.matmul_fafcfce5.json"


def _one_precision(doc, label, key, value):
    """``doc`` as a run of one precision would be: that precision's figure its headline."""
    one = copy.deepcopy(doc)
    one.update(id=f"{key}-only", hostname="elsewhere", precision=label,
               params={**doc["params"], "precision": key},
               figure={**doc["figure"], "name": f"{label} matmul (best size)", "value": value},
               figures={label: {**doc["figures"][label], "value": value, "samples": [], "stats": None}},
               samples=[value] * 5, stats={"n": 5, "median": value, "p5": value * 0.99, "p95": value * 1.01})
    return one


def _rows(comparison):
    return {row.precision: [c.metric.value if c.metric else None for c in row.cells] for row in comparison.rows}


def test_each_precision_of_an_all_run_pairs_with_a_run_of_that_precision():
    every = load_document(ALL)
    assert every["params"]["precision"] == "all" and every["precision"] == "BF16"
    fp8 = every["figures"]["FP8"]["value"]
    references = [_one_precision(every, "BF16", "bf16", 700.0), _one_precision(every, "FP8", "fp8", 1300.0)]
    rows = _rows(compare.compare([compare.Side("reference", references), compare.Side("here", [every])]))
    assert rows["BF16"] == [700.0, every["figures"]["BF16"]["value"]]
    assert rows["FP8"] == [1300.0, fp8]  # not the headline (BF16): the FP8 figure
    assert rows["FP32"] == [None, every["figures"]["FP32"]["value"]]
    assert set(rows) == {"FP32", "TF32", "FP16", "BF16", "FP8"}


def test_two_all_runs_pair_precision_by_precision():
    every = load_document(ALL)
    other = copy.deepcopy(every)
    other.update(id="other", hostname="elsewhere")
    rows = _rows(compare.compare([compare.Side("a", [every]), compare.Side("b", [other])]))
    assert all(values[0] == values[1] is not None for values in rows.values()) and len(rows) == 5


def test_a_one_precision_run_is_compared_as_before():
    every = load_document(ALL)
    bf16 = _one_precision(every, "BF16", "bf16", 700.0)
    assert compare.precision_metrics(bf16) == []
    assert [m.name for m in compare.metrics_of(bf16)] == ["BF16 matmul (best size)"]
