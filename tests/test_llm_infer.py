"""llm.infer on the CPU with ``tiny``: every figure carries its bound and the arithmetic behind it, the
windows are telemetry phases, a run that cannot fit is refused before allocating, and the serving sweep
names the largest concurrency within its target."""

from __future__ import annotations

import pytest
from recording import Recorder

from hwbench_gui.engine.benchmarks import llm_infer
from hwbench_gui.engine.models.llm import arithmetic as ar
from hwbench_gui.engine.models.llm import architectures as archs
from hwbench_gui.engine.spec.benchmark import BenchmarkUnavailable, ParamError
from hwbench_gui.engine.spec.precision import FP32

pytest.importorskip("torch")

# The serving sequences (16 + 4 positions) reach past the depths' (8 + 8): RoPE tables must cover both.
SMALL = {"device": "cpu", "model": "tiny", "precision": "fp32", "pp": 8, "tg": 6, "depths": "0,8",
         "concurrency": "1,3", "serve_prompt": 16, "serve_output": 4, "repeats": 3, "serve_repeats": 1}


@pytest.fixture(scope="module")
def small_run():
    recorder = Recorder()
    params = llm_infer.BENCHMARK.resolve_params(SMALL)
    return llm_infer.run(params, recorder), recorder


def test_every_figure_is_held_against_its_measured_bound(small_run):
    outcome, _ = small_run
    arch = archs.builtin("tiny")
    details = outcome.details
    bandwidth = details["limits"]["bandwidth_gbps_median"] * 1e9
    flops_rate = details["limits"]["matmul_tflops_median"] * 1e12
    assert [r["depth"] for r in details["tg"]] == [0, 8]
    for row in details["tg"]:
        work = sum(ar.bytes_per_step(arch, 4, 4, row["depth"] + i) for i in range(6))
        assert row["work"] == work
        assert row["bound_tokens_per_s"] == pytest.approx(6 * bandwidth / work)
        fig = outcome.figures[f"tg6 @ depth {row['depth']}"]
        assert fig["fraction_of_bound"] == pytest.approx(fig["value"] / row["bound_tokens_per_s"])
        assert len(fig["samples"]) == 3
    for row in details["pp"]:
        assert row["work"] == ar.forward_flops(arch, 8, row["depth"], logit_tokens=1)
        assert row["bound_tokens_per_s"] == pytest.approx(8 * flops_rate / row["work"])
    assert (outcome.figure_name, outcome.unit, outcome.higher_is_better) == ("tg6 @ depth 0", "tokens/s", True)
    assert outcome.samples == details["tg"][0]["tokens_per_s"]
    labels = [s.label for s in outcome.series]
    assert "tg6" in labels and any(label.startswith("tg6 bound") for label in labels)


def test_windows_are_phases_and_the_serving_sweep_is_summarised(small_run):
    outcome, recorder = small_run
    timed = [p for p in recorder.phases if p[0] == "timed" and p[1] == "start"]
    # 2 depths × (pp + tg) × 3 windows, and 1 timed scenario per concurrency.
    assert len(timed) == 2 * 2 * 3 + 2
    serving = outcome.details["serving"]
    assert [p["concurrency"] for p in serving] == [1, 3]
    assert len(serving[1]["ttft_s"]) == 3 and len(serving[1]["tpot_s"]) == 3
    # TTFT is counted from the common arrival; a sequence's TPOT from its own first token.
    assert all(t > 0 for p in serving for t in p["ttft_s"] + p["tpot_s"])
    met = [p["concurrency"] for p in serving if p["meets_target"]]
    assert outcome.details["largest_concurrency_within_target"] == (max(met) if met else None)
    assert outcome.resolved_params["step"] == "eager"


def test_largest_concurrency_rule():
    points = [{"concurrency": c, "output_tokens_per_s": [1.0], "ttft_s": [ttft], "tpot_s": [tpot]}
              for c, ttft, tpot in ((1, 0.1, 0.01), (4, 0.5, 0.04), (16, 2.5, 0.045), (64, 1.0, 0.06))]
    params = {**llm_infer.BENCHMARK.resolve_params(SMALL), "depths": [0], "concurrency": [1, 4, 16, 64],
              "step": "eager"}
    rows = {"pp": [], "tg": [{"depth": 0, "tokens_per_s": [1.0, 2.0], "bound_tokens_per_s": 4.0}]}
    limits = llm_infer.Limits([1.0], [1.0], 1, 1)
    plan = ar.memory_plan(archs.builtin("tiny"), 4, 1, 10, 10)
    torch = pytest.importorskip("torch")
    outcome = llm_infer._outcome(params, archs.builtin("tiny"), "FP32", limits, rows, points, {}, [], plan, 0, 0,
                                 "cpu", 0, torch, llm_infer.storage(FP32))
    # 16 misses the first-token target, 64 the per-token one: 4 is the largest within both.
    assert outcome.details["largest_concurrency_within_target"] == 4


def test_a_run_that_cannot_fit_is_refused_with_the_arithmetic():
    plan = ar.memory_plan(archs.builtin("llama-3.1-8b"), 2, 1, 16384 + 512, 2048)
    with pytest.raises(BenchmarkUnavailable, match=r"weights 14\.96 GiB \+ KV cache 2\.06 GiB"):
        llm_infer._refuse_unless_fits(plan, 8 << 30, "llama-3.1-8b")
    llm_infer._refuse_unless_fits(plan, 80 << 30, "llama-3.1-8b")


def test_depths_beyond_the_model_are_skipped_or_refused():
    params = llm_infer.BENCHMARK.resolve_params({**SMALL, "model": "gpt2-124m", "depths": "2048"})
    with pytest.raises(ParamError, match="no depth fits gpt2-124m"):
        llm_infer.run(params, Recorder())


def test_cpu_threads_follow_the_model_size():
    assert llm_infer.cpu_threads(archs.builtin("tiny"), 16) == 1
    assert llm_infer.cpu_threads(archs.builtin("llama-3.1-8b"), 16) == 16
    # GPT-2: 12 blocks of 7,077,888 matmul weights and a 38,597,376-weight head = 123,532,032 -> 30 threads.
    assert llm_infer.cpu_threads(archs.builtin("gpt2-124m"), 64) == 30


@pytest.fixture(scope="module")
def small_document(small_run):
    from datetime import datetime, timezone

    from hwbench_gui.engine.results.document import build_document
    from hwbench_gui.engine.run.protocol import outcome_to_json

    outcome, _ = small_run
    machine = {"inventory": {"hostname": "alpha", "gpus": [], "cpu": {"model": "CPU"}}, "inventory_reason": None,
               "software": {}, "software_reason": None}
    params = llm_infer.BENCHMARK.resolve_params(SMALL)
    return build_document(llm_infer.BENCHMARK, {**params, **outcome.resolved_params}, status="ok",
                          started_at=datetime(2026, 12, 5, tzinfo=timezone.utc), duration_s=1.0,
                          outcome=outcome_to_json(outcome), machine=machine)


def test_reports_read_the_curves_and_verdicts_of_a_document(small_document):
    from hwbench_gui.engine.reports import evaluation, llm_section

    doc = small_document
    tg, pp = llm_section.depth_curves(doc)
    rows = doc["details"]["tg"]
    assert tg.curves[1].bound and tg.curves[1].y == [r["bound_tokens_per_s"] for r in rows]
    assert tg.curves[0].x == [0.0, 8.0] and tg.point_labels == [f"{r['fraction_of_bound']:.0%}" for r in rows]
    serving = llm_section.serving_curve(doc)
    assert serving.target_y == 50.0 and serving.point_labels == ["1 seq", "3 seq"]
    report = evaluation.build_evaluation([doc], with_charts=True)
    assert [run.title.split(" · ")[0] for run in report.sections["llm.infer"]] == ["tiny"]
    assert not any("llm.infer" in m.title for m in report.micro)
    assert len([c for c in report.charts if c.key.startswith("llm:")]) == 4  # depth ×2, TPOT, TTFT
    assert not any(c.key == "series:llm.infer" for c in report.charts)  # mixed axes: its own charts instead
    text = evaluation.format_evaluation(report)
    assert "Language models" in text and "tg6 @ depth 8" in text
    # A document whose rows are not what llm.infer writes is passed over, not fatal.
    broken = {**doc, "details": {**doc["details"], "tg": [{"depth": "deep"}], "serving": [{"concurrency": 1}]}}
    assert [c.title[:3] for c in llm_section.depth_curves(broken)] == ["pp8"]
    assert llm_section.serving_curve(broken) is None


def test_the_language_model_page_draws_a_result(small_document, qtbot):
    pytest.importorskip("PySide6")
    from hwbench_gui.ui.benchmarks.llm_view import LlmView

    view = LlmView()
    qtbot.addWidget(view)
    view.set_document(small_document)
    assert [not c.isHidden() for c in view.columns] == [True, True, True, True]
    assert "of its bound" in view.summary.text() and "Serving:" in view.summary.text()
    assert "bound from the measured copy bandwidth" in view.legends[0].text()
    depths = [row["depth"] for row in small_document["details"]["tg"]]
    ticks = view.plots[0].getAxis("bottom")._tickLevels[0]
    assert [x for x, _ in ticks] == depths  # ticks at the depths measured, not pyqtgraph's round numbers
    from hwbench_gui.ui.benchmarks.llm_view import depth_tick

    assert [depth_tick(d) for d in (0, 1000, 4096, 16384)] == ["0", "1000", "4k", "16k"]


def test_what_fits_one_device_and_all_of_them():
    from hwbench_gui.engine.reports import llm_section

    gib = 1 << 30
    rows = {(r["model"], r["precision"]): r for r in llm_infer.what_fits([20 * gib, 20 * gib], 4096 + 512, 2048)}
    # Llama-3.1-8B: 14.96 GiB of BF16 weights + 0.56 GiB of KV cache + activations + 0.5 GiB margin fit 20 GiB;
    # in FP32 (29.9 GiB of weights) only both devices together hold it; in FP8 its 8.46 GiB of weights fit.
    assert rows[("llama-3.1-8b", "BF16")]["fits_one"] is True
    assert (rows[("llama-3.1-8b", "FP32")]["fits_one"], rows[("llama-3.1-8b", "FP32")]["fits_all"]) == (False, True)
    assert rows[("gpt2-124m", "BF16")]["positions"] == 1024  # its own context limit
    text = llm_section.fits_text({"free_bytes": [20 * gib, 20 * gib], "positions": 4608,
                                  "models": list(rows.values())})
    assert text.startswith("Fit this device at 4608 positions, batch 1 (20.0 GiB free): gpt2-124m, llama-3.2-1b, "
                           "llama-3.1-8b (BF16/FP16/FP8), qwen2.5-7b (BF16/FP16/FP8), tiny; only across all 2 devices: "
                           "llama-3.1-8b (FP32), qwen2.5-7b (FP32)")


def test_the_run_says_what_fits_here(small_run):
    outcome, _ = small_run
    fits = outcome.details["what_fits"]
    assert len(fits["models"]) == len(archs.BUILT_IN) * len(llm_infer.PRECISIONS)
    assert fits["free_bytes"][0] == outcome.details["memory"]["free_before_bytes"]


def test_report_charts_put_every_side_on_one_chart(small_document):
    from hwbench_gui.engine.reports import llm_section
    from hwbench_gui.engine.reports.compare import Side

    other = {**small_document, "started_at": "2026-12-06T00:00:00+00:00"}
    drawn = llm_section.charts([Side("alpha", [small_document]), Side("beta", [other])])
    assert len(drawn) == 4
    labels = [line.get_label() for line in drawn[0].figure.axes[0].get_lines()]
    assert labels == ["[1] alpha: tg6 measured", "[1] alpha: bound from the measured copy bandwidth",
                      "[2] beta: tg6 measured", "[2] beta: bound from the measured copy bandwidth"]
    lines = drawn[0].figure.axes[0].get_lines()
    assert lines[1].get_color() == lines[0].get_color() and lines[1].get_linestyle() == "--"


def test_the_least_possible_duration_of_a_run():
    arch = archs.builtin("llama-3.1-8b")
    params = {**llm_infer.BENCHMARK.resolve_params({}), "depths": [0], "serve": False}
    # 1e12 B/s and 1e15 FLOP/s: generation's 128 steps read 128 × 15.01 GB plus their KV; 7 windows of each.
    limits = llm_infer.Limits([1000.0], [1000.0], 1, 1)
    generate = sum(ar.bytes_per_step(arch, 2, 2, i) for i in range(128)) / 1e12
    prompt = ar.forward_flops(arch, 512, 0, logit_tokens=1) / 1e15
    assert llm_infer.minimum_seconds(arch, 2, params, [0], limits) == pytest.approx(7 * (generate + prompt))
    # A CPU at 20 GB/s and 1 TFLOP/s would need hours for the default run: refused before it starts.
    slow = llm_infer.Limits([20.0], [1.0], 1, 1)
    defaults = {**llm_infer.BENCHMARK.resolve_params({}), "depths": [0, 1024], "concurrency": [1, 4]}
    assert llm_infer.minimum_seconds(arch, 2, defaults, [0, 1024], slow) > llm_infer.TIME_LIMIT_S


def test_fp8_weights_run_here_with_their_bytes_and_rates_in_the_bounds():
    from hwbench_gui.engine.models.llm import fp8

    if fp8.unavailable_reason("cpu"):
        pytest.skip(fp8.unavailable_reason("cpu"))
    params = llm_infer.BENCHMARK.resolve_params({**SMALL, "precision": "fp8", "depths": "4", "serve": False,
                                                 "repeats": 2})
    outcome = llm_infer.run(params, Recorder())
    arch, details = archs.builtin("tiny"), outcome.details
    assert outcome.precision == "FP8"
    assert details["precision"] == fp8.PRECISION_DETAILS
    assert details["precision"]["block_matmul_weights"].startswith("FP8 e4m3")
    assert details["precision"]["kv_cache"] == details["precision"]["output_projection"] == "BF16"
    assert details["model"]["weights_read_per_step_bytes"] == ar.FP8_BLOCKS.read_per_step(arch)
    assert details["memory"]["plan"]["weights_bytes"] == ar.FP8_BLOCKS.stored(arch)
    tg = details["tg"][0]
    assert tg["work"] == sum(ar.bytes_per_step(arch, ar.FP8_BLOCKS, 2, 4 + i) for i in range(6))
    # The prompt's bound: block matmuls at the measured FP8 rate, attention and the head at the BF16 rate.
    limits = details["limits"]
    least_s = (ar.block_matmul_flops(arch, 8) / (limits["fp8_matmul_tflops_median"] * 1e12)
               + (ar.forward_flops(arch, 8, 4, logit_tokens=1) - ar.block_matmul_flops(arch, 8))
               / (limits["matmul_tflops_median"] * 1e12))
    assert details["pp"][0]["bound_tokens_per_s"] == pytest.approx(8 / least_s)
    assert "FP8 e4m3" in outcome.method and "output projection" in outcome.method


def test_fp8_is_refused_on_a_gpu_without_fp8_tensor_cores(monkeypatch):
    torch = pytest.importorskip("torch")
    from hwbench_gui.engine.models.llm import fp8

    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: (8, 0))
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: "NVIDIA A100-SXM4-80GB")
    assert fp8.unavailable_reason("cuda:0") == ("FP8 needs compute capability 8.9 or newer (FP8 tensor cores); "
                                                "NVIDIA A100-SXM4-80GB is 8.0")
