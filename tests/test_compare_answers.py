"""A comparison answers on what the user asked: a value a run chose itself (the largest micro-batch that fits, an
auto memory format) is part of its answer and shown beside its figure; runs that are not comparable are never
drawn as bars of one chart; each note gives the true reason; and the way to a comparable run is named."""

from __future__ import annotations

import copy

from reports_data import make_doc, on_other_machine, sweep_series

from hwbench_gui.engine.reports import charts, compare, comparison_text
from hwbench_gui.engine.reports.report import make_report
from hwbench_gui.engine.results import describe
from hwbench_gui.engine.run.rerun import run_like


def _train(micro_batch_asked, micro_batch_chosen, samples, *, model="llama-3.1-8b", host="h100", gpu="H100"):
    doc = make_doc("t.train", samples, host=host, gpu=gpu, unit="tokens/s",
                   params={"model": model, "micro_batch": micro_batch_chosen, "repeats": 5})
    doc["benchmark"]["comparability_params"] = ["model", "micro_batch"]
    if micro_batch_asked != micro_batch_chosen:
        doc["params_requested"] = {"micro_batch": micro_batch_asked}
    return doc


def test_a_value_the_machine_chose_compares_and_is_shown_beside_each_figure():
    h100 = _train(0, 6, [100.0, 101.0, 102.0, 103.0, 104.0])
    h200 = _train(0, 10, [120.0, 121.0, 122.0, 123.0, 124.0], host="h200", gpu="H200")
    result = compare.compare(compare.sides_by_machine([h100, h200]))
    (row,) = result.rows
    assert row.params == {"micro_batch": 0, "model": "llama-3.1-8b"}
    assert row.cells[1].mark == compare.MARK_BETTER
    assert comparison_text.cell_text(row.cells[0]) == "102 tokens/s [micro_batch 6]"
    assert comparison_text.cell_text(row.cells[1]).endswith("better [micro_batch 10]")
    assert compare.resolved_params(h200) == {"micro_batch": 10}
    # asked explicitly, the same value is a setting: 6 asked is not "the largest that fits"
    asked_six = _train(6, 6, [100.0, 101.0, 102.0, 103.0, 104.0])
    result = compare.compare(compare.sides_by_machine([h200, asked_six]))
    cell = next(c for r in result.rows for c in r.cells[1:] if c.metric is not None)
    assert cell.mark == compare.MARK_NOT_COMPARABLE
    assert cell.note == ("the baseline never ran t.train with micro_batch 6 "
                         "(it ran micro_batch 0 (the run chose 10))")


def test_run_like_asks_what_the_reference_asked_not_what_its_machine_chose():
    from hwbench_gui.engine.run import registry

    bench = registry.get("llm.train")
    reference = make_doc("llm.train", params=dict(bench.resolve_params({"model": "tiny", "micro_batch": 10})))
    reference["benchmark"]["comparability_params"] = bench.comparability_params()
    reference["params_requested"] = {"micro_batch": 0, "compile": "auto"}
    bench_id, params = run_like(reference)
    assert bench_id == "llm.train" and params["micro_batch"] == 0 and params["model"] == "tiny"


def test_notes_name_the_true_reason():
    base_gpt2 = _train(0, 64, [100.0] * 5, model="gpt2-124m", host="a", gpu="A")
    here_8b = _train(0, 6, [50.0] * 5, model="llama-3.1-8b", host="b", gpu="B")
    result = compare.compare(compare.sides_by_machine([base_gpt2, here_8b]))
    note = next(c.note for r in result.rows for c in r.cells[1:] if c.metric is not None)
    # not "model llama-3.1-8b here, gpt2-124m in the baseline": the baseline never ran the 8B at all
    assert note == "the baseline never ran t.train with model llama-3.1-8b (it ran model gpt2-124m)"
    never_ran = make_doc("t.other", host="b", gpu="B")
    result = compare.compare(compare.sides_by_machine([base_gpt2, never_ran]))
    assert [c.note for r in result.rows for c in r.cells[1:] if c.metric is not None] == [
        "the baseline never ran t.other"]
    # another kind of figure (a GPU GEMM rate against a host matmul rate) is said as such, not as a precision
    gpu_rate = make_doc("t.burn", figure_name="GEMM rate per GPU", unit="TFLOP/s", precision="FP8",
                        params={"size": 1}, host="a", gpu="A")
    host_rate = make_doc("t.burn", figure_name="host matmul rate", unit="GFLOP/s", precision="FP8",
                         params={"size": 1}, host="b", gpu=None)
    host_rate["params"]["size"] = 2
    result = compare.compare(compare.sides_by_machine([gpu_rate, host_rate]))
    note = next(c.note for r in result.rows for c in r.cells[1:] if c.metric is not None)
    assert note == ("the baseline's t.burn is another kind of figure: host matmul rate (GFLOP/s) here, "
                    "GEMM rate per GPU (TFLOP/s) in the baseline")


def test_an_empty_list_and_a_published_date_are_never_blank():
    assert describe.param_value([]) == "(default)" and describe.param_value([1, 2]) == "1,2"
    published = make_doc("t.rate")
    published["provenance"] = published["status"] = "published"
    published["reference"] = {"publisher": "P", "system": "S"}
    (side,) = compare.sides_by_run([published])
    assert side.name.endswith("@ date not stated")


def test_runs_that_do_not_compare_are_left_out_of_the_charts_and_the_way_to_compare_is_named(tmp_path):
    fused = make_doc("gpu.pcie", params={"step": "fused"}, host="h100", gpu="H100", unit="GB/s",
                     series=sweep_series())
    compiled = make_doc("gpu.pcie", params={"step": "compile"}, host="h200", gpu="H200", unit="GB/s",
                        series=sweep_series())
    both = make_doc("host.membw", host="h100", gpu="H100", unit="GB/s")
    both_other = on_other_machine(both, "h200", "H200", 1.2)
    compiled["_path"] = str(tmp_path / "compiled.json")
    for doc in (fused, compiled):
        doc["benchmark"]["comparability_params"] = ["step"]
    docs = [compiled, both_other, fused, both]
    sides = compare.sides_by_machine(docs)
    comparison = compare.compare(sides)
    left_out = compare.not_drawable(comparison)
    assert {id(d) for d in left_out} == {id(fused), id(compiled)}
    report = make_report(docs, with_charts=False)
    assert report.charts_note.startswith("2 run(s) of gpu.pcie are in the table but not in the charts")
    # the charts draw from what is left: no gpu.pcie series beside another side's other configuration
    drawn = charts.build_charts(sides, comparison)
    assert not any(c.key == "series:gpu.pcie" for c in drawn)
    # a benchmark only one side ran is drawn: there is nothing to misread it against
    alone = compare.sides_by_machine([copy.deepcopy(fused), both, both_other])
    assert any(c.key == "series:gpu.pcie" for c in charts.build_charts(alone, compare.compare(alone)))
    assert compare.runs_to_match(comparison) == {1: [compiled]}
    text = comparison_text.format_table(comparison)
    assert f"hwbench run --like {tmp_path / 'compiled.json'}" in text
    assert "[2] has no comparable run for 1 of the baseline's result(s)" in text


def test_older_runs_of_a_configuration_are_its_repeats_and_their_range_is_said():
    newest = make_doc("t.rate", [200.0] * 5, minutes=30)
    older = [make_doc("t.rate", [v] * 5, minutes=m) for m, v in ((0, 180.0), (10, 210.0), (20, 190.0))]
    (row,) = compare.compare(compare.sides_by_machine([*older, newest])).rows
    cell = row.cells[0]
    assert cell.metric.value == 200.0 and cell.older_runs == 3
    assert comparison_text.older_runs_text(cell) == "3 older runs: 180–210 items/s"
