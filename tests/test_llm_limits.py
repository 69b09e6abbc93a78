"""A language-model figure is never shown above its own limit, and what cannot run here is refused up front with
the arithmetic: the limits are measured the way the model runs (its products, its kernel), a figure above its
limit gets no share (never a percentage over 100) in the document, the CLI and the reports, a stored share
above 1 is flagged as impossible, and llm.train / llm.infer refuse memory and time they do not have before
allocating anything."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from recording import Recorder

from hwbench_gui.engine.benchmarks import llm_infer, llm_train
from hwbench_gui.engine.measure.matmul_rate import MAX_OPERAND_ELEMENTS, Product
from hwbench_gui.engine.measure.room import GIB, Room
from hwbench_gui.engine.models.common import TimedRun
from hwbench_gui.engine.models.llm import architectures
from hwbench_gui.engine.models.llm import arithmetic as ar
from hwbench_gui.engine.models.llm import infer_limits, train_limits, train_plan
from hwbench_gui.engine.reports import llm_section, llm_train_section
from hwbench_gui.engine.reports.physical_limits import impossible_figures
from hwbench_gui.engine.results.formatting import shown_lines

torch = pytest.importorskip("torch")

TINY = architectures.builtin("tiny")
LLAMA_8B = architectures.builtin("llama-3.1-8b")
ROOT = Path(__file__).resolve().parents[1]


def _percentages(lines):
    """Every percentage written in ``lines``."""
    import re

    return [float(p) for line in lines for p in re.findall(r"(\d+(?:\.\d+)?) ?%", line)]


# --- the limit is measured the way the model multiplies --------------------------------------------------


def test_the_limit_products_are_the_model_s_own_and_run_its_kernel():
    products = infer_limits.limit_products(TINY, 512, 1024)
    # q/k/v 128 -> 4·32 + 2·2·32, out 128 -> 128, SwiGLU up 128 -> 2·256, down 256 -> 128, and a square one
    assert [(p.m, p.k, p.n, p.form) for p in products] == [
        (512, 128, 256, "linear"), (512, 128, 128, "linear"), (512, 128, 512, "linear"), (512, 256, 128, "linear"),
        (1024, 1024, 1024, "linear")]
    # and the prompt's attention at each depth, its FLOPs as the bound counts them
    attention = infer_limits.limit_products(TINY, 512, 1024, pp=512, depths=(0, 1024))[-2:]
    assert [(p.form, p.m, p.depth) for p in attention] == [("attention", 512, 0), ("attention", 512, 1024)]
    assert attention[1].flops == ar.attention_flops(TINY, 512, 1024) / TINY.layers
    train = train_limits.limit_products(TINY, {"method": "lora"}, 1024, 512)
    assert {p.form for p in train} == {"linear", "input_grad"}  # a frozen base computes no weight gradient
    assert (1024, 128, 512) in {(p.m, p.k, p.n) for p in train}  # the output projection, a loss chunk at a time
    from hwbench_gui.engine.measure import matmul_rate

    x_rows, k, n = 3, 5, 7
    for form in matmul_rate.FORMS:
        torch.manual_seed(0)
        out = matmul_rate.operands(torch, Product(x_rows, k, n, form), torch.float32, "cpu")()
        assert tuple(out.shape) == {"linear": (3, 7), "input_grad": (3, 5), "weight_grad": (7, 5)}[form]
    # the forward product calls what the model's layers call (F.linear on a [out, in] weight), not a square mm
    from torch.overrides import TorchFunctionMode

    from hwbench_gui.engine.models.llm import model

    class Calls(TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.names = set()

        def __torch_function__(self, func, types, args=(), kwargs=None):
            self.names.add(getattr(func, "__name__", str(func)))
            return func(*args, **(kwargs or {}))

    layer = model.build(TINY, torch.bfloat16, "cpu", rope_positions=16).blocks[0].qkv
    product = matmul_rate.operands(torch, Product(4, 128, 256), torch.bfloat16, "cpu")
    with Calls() as by_model:
        layer(torch.randn(4, 128, dtype=torch.bfloat16))
    with Calls() as by_limit:
        product()
    assert by_limit.names == {"linear"} and by_limit.names <= by_model.names


def test_a_product_of_any_size_is_measured_clipped_and_never_allocated_whole():
    head = Product(1 << 40, 4096, 10**12)  # a vocabulary of 1e12 and a trillion tokens: counted, not allocated
    clipped = head.clipped(1 << 35)
    assert clipped.k * clipped.n <= MAX_OPERAND_ELEMENTS and clipped.m * clipped.n <= MAX_OPERAND_ELEMENTS
    assert clipped.flops <= 1 << 35 and clipped.form == head.form
    assert Product(512, 128, 256).clipped(1 << 35) == Product(512, 128, 256)
    wide = Product(10**9, 128, 10**12, "attention", 8, 10**15).clipped(1 << 35)
    assert wide.n * (wide.m + wide.k) * (wide.depth + wide.m) <= MAX_OPERAND_ELEMENTS and wide.flops <= 1 << 35
    out = __import__("hwbench_gui.engine.measure.matmul_rate", fromlist=["operands"]).operands(
        torch, Product(8, 32, 4, "attention", 2, 16), torch.float32, "cpu")()
    assert tuple(out.shape) == (1, 2, 16, 32)  # the query heads of each key/value head as rows of one block


# --- a figure above its limit: no share, anywhere ----------------------------------------------------------


def test_a_prompt_figure_above_its_bound_gets_no_share_in_the_document_the_cli_and_the_reports():
    """A measured case: pp512 at 2,687 tokens/s against a bound of 149 tokens/s (a BF16 rate measured with
    another kernel) must not read 1803 %."""
    params = llm_infer.BENCHMARK.resolve_params({"device": "cpu", "model": "tiny", "depths": "0", "concurrency": "1",
                                                 "serve": False})
    params = {**params, "threads": 1, "step": "eager"}
    arch, held = TINY, llm_infer.storage(llm_infer.BF16)
    flops = ar.forward_flops(arch, 512, 1024, logit_tokens=1)
    rate_tflops = 149.0 * flops / 512 / 1e12  # the matmul rate that makes the bound 149 tokens/s
    limits = llm_infer.Limits([8.0] * 5, [rate_tflops] * 5, 256 << 20, 1024)
    pp = {"depth": 1024, "tokens_per_s": [2687.0] * 5, "window_seconds": [0.19] * 5, "work": flops,
          "work_unit": "FLOP"}
    tg = {"depth": 1024, "tokens_per_s": [500.0] * 5, "window_seconds": [0.25] * 5,
          "work": sum(ar.bytes_per_step(arch, held.weights, 2, 1024 + i) for i in range(128)), "work_unit": "byte"}
    llm_infer._bound(pp, tg, limits, arch, {**params, "depths": [1024]})
    assert pp["bound_tokens_per_s"] == pytest.approx(149.0)
    plan = ar.memory_plan(arch, 2, 1, 1536, 512)
    outcome = llm_infer._outcome({**params, "depths": [1024]}, arch, "BF16", limits, {"pp": [pp], "tg": [tg]}, [],
                                 {}, [], plan, 1 << 30, 0, "cpu", 0, torch, held)
    figure = outcome.figures["pp512 @ depth 1024"]
    assert figure["fraction_of_bound"] is None and figure["bound_reason"].startswith("limit not measured reliably")
    assert 0 < outcome.figures["tg128 @ depth 1024"]["fraction_of_bound"] <= 1.0
    doc = {"benchmark": {"id": "llm.infer"}, "status": "ok", "params": {**params, "depths": [1024]},
           "details": outcome.details, "figures": outcome.figures, "figure": {"value": 500.0}, "device": "cpu"}
    cli = shown_lines(doc)
    assert any("pp512 @ depth 1024: 2,687 tokens/s, limit not measured reliably here" in line for line in cli)
    assert all(p <= 100 for p in _percentages(cli))
    run = llm_section.build([doc])[0]
    report = llm_section.lines([run])
    assert all(p <= 100 for p in _percentages(report))
    assert any(llm_section.UNRELIABLE in line for line in report)
    # the page writes "<share> of its bound" from the text before " of "
    assert run.figures[0][3].split(" of ")[0] + " of its bound" == llm_section.UNRELIABLE + " of its bound"
    chart = llm_section.depth_curves(doc)[1]
    assert chart.curves[1].x == [] and chart.point_labels == ["bound not reliable"]
    assert any("pp512 @ depth 1024: limit not measured reliably" in w for w in outcome.warnings)
    assert impossible_figures(doc) == []


def test_mfu_above_its_measured_matmul_rate_gets_no_percentage():
    """A measured case: tiny trained at 212 % of a 0.0003449 TFLOP/s BF16 rate measured with another kernel."""
    params = {**llm_train.BENCHMARK.resolve_params({"model": "tiny", "device": "cpu"}), "compile": False,
              "micro_batch": 1}
    fpt = llm_train.flops_per_token(TINY, params)
    rate = 2 * 0.0003449e12 / fpt  # tokens/s that make MFU 200 % of the measured rate
    seconds = [5 * 1024 / rate] * 5
    run = TimedRun(batch=1024, steps=25, total_s=sum(seconds), step_s=[0.1] * 25, window_s=seconds,
                   window_steps=[5] * 5)
    matmul = {"value": 0.0003449, "unit": "TFLOP/s"}
    outcome = llm_train._outcome(TINY, params, [run], "cpu (2 threads)", {}, [], matmul, device_name=None)
    mfu = outcome.figures["mfu_measured_matmul"]
    assert mfu["value"] is None and mfu["above_limit"] and "samples" not in mfu
    assert mfu["reason"].startswith("limit not measured reliably here")
    doc = {"benchmark": {"id": "llm.train"}, "status": "ok", "params": params, "figures": outcome.figures,
           "figure": {"value": rate, "unit": "tokens/s"}, "details": outcome.details, "device": "cpu"}
    lines = shown_lines(doc)
    assert any("limit not measured reliably here" in line for line in lines)
    assert all(p <= 100 for p in _percentages(lines))
    row = llm_train_section.build([doc])[0]
    assert "limit not measured reliably" in row.mfu_measured
    assert impossible_figures(doc) == []
    fine = llm_train._outcome(TINY, params, [run], "cpu", {}, [], {"value": 1.0, "unit": "TFLOP/s"}, device_name=None)
    assert fine.figures["mfu_measured_matmul"]["value"] == pytest.approx(2 * 0.0003449)


def test_a_stored_share_above_one_is_flagged_as_impossible():
    """Documents written before these rules (or edited) that store a share of a limit above 1 are flagged."""
    doc = {"benchmark": {"id": "llm.infer"}, "status": "ok", "device": "cpu",
           "figures": {"pp512 @ depth 1024": {"value": 2687.0, "unit": "tokens/s", "fraction_of_bound": 18.03}},
           "details": {"pp": [{"depth": 1024, "fraction_of_bound": 18.03}],
                       "datasheet": {"measured_copy_fraction": 0.8}}}
    found = impossible_figures(doc)
    assert len(found) == 2 and all("1803.0% of its limit is above 100 %" in f for f in found)
    train = {"benchmark": {"id": "llm.train"}, "status": "ok", "device": "cpu",
             "figures": {"mfu_measured_matmul": {"value": 2.12, "unit": "fraction"},
                         "scaling_efficiency": {"value": 1.05, "unit": "fraction"}}}  # not a share of a limit
    assert impossible_figures(train) == ["mfu_measured_matmul 212.0% of its limit is above 100 % (the limit or the "
                                         "figure is wrong)"]
    train["figures"]["mfu_measured_matmul"]["value"] = 0.5
    assert impossible_figures(train) == []
    # an old document's share above 1 is never printed as a percentage
    assert "limit not measured reliably" in shown_lines(
        {"figures": {"mfu_measured_matmul": {"value": 2.12, "unit": "fraction", "show": True}}})[0]


# --- refused up front, with the arithmetic ---------------------------------------------------------------


def test_llm_train_memory_refusals_are_arithmetic_with_units():
    params = {**llm_train.BENCHMARK.resolve_params({"model": "llama-3.1-8b", "method": "lora", "device": "cpu"}),
              "compile": False}
    room = Room(int(23.5 * GIB), "23.5 GiB of RAM available")
    why = llm_train.memory_refusal(LLAMA_8B, params, 1, 1, "cpu", room)
    assert why.startswith("llama-3.1-8b lora at micro-batch 1 × 1024 tokens × grad_accum 1 needs about 2")
    assert "frozen base (BF16): 14.96 GiB" in why and "more than 92% of the 23.5 GiB of RAM available" in why
    assert "\n" not in why
    tiny = {**llm_train.BENCHMARK.resolve_params({"model": "tiny", "device": "cpu"}), "compile": False}
    assert llm_train.memory_refusal(TINY, tiny, 1, 1, "cpu", room) is None
    # micro_batch, grad_accum and ranks far beyond the machine: counted, never allocated
    big = {**tiny, "micro_batch": 4096, "grad_accum": 4096, "seq": 4096}
    why = llm_train.memory_refusal(TINY, big, 4096, 1, "cpu", room)
    assert "token ids (int64 inputs and targets, every micro-batch): 1024.00 GiB" in why
    ranks = llm_train.memory_refusal(TINY, tiny, 1, 64, "cpu", room, rank_bytes=GIB // 2)
    assert ranks and "64 ranks × (" in ranks and "0.5 GiB a rank's process" in ranks


def test_llm_train_time_refusal_counts_every_step_at_the_measured_rate():
    params = {**llm_train.BENCHMARK.resolve_params({"model": "llama-3.1-8b", "method": "lora", "device": "cpu"}),
              "compile": False}
    seconds = train_plan.least_seconds(LLAMA_8B, params, 1, 1, False, 1.0)
    steps = 3 + 5 * 5  # warm-up, then 5 windows of 5 steps on the CPU
    assert seconds == pytest.approx(steps * llm_train.flops_per_token(LLAMA_8B, params) * 1024 / 1e12)
    assert llm_train.time_refusal(LLAMA_8B, params, 1, 1, False, 1.0, "", 1200.0, "") is None  # 15.2 minutes
    why = llm_train.time_refusal(LLAMA_8B, params, 1, 1, False, 0.5, "BF16 measured now", 1200.0, "20 minutes")
    assert why and f"would take at least {2 * seconds / 60:,.1f} minutes: 28 steps ×" in why
    assert "at 0.5 TFLOP/s (BF16 measured now), more than the 20 minutes" in why
    assert llm_train.time_refusal(TINY, {**params, "model": "tiny"}, 1, 1, False, 1.0, "", 1200.0, "") is None


def _cli(args, timeout_s, ulimit_kib=None):
    import os
    import resource

    def limit():
        if ulimit_kib:
            resource.setrlimit(resource.RLIMIT_AS, (ulimit_kib << 10, ulimit_kib << 10))

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "hwbench_gui.cli", "run", *args], capture_output=True, text=True,
                          timeout=timeout_s, env=env, cwd=ROOT, preexec_fn=limit)
    return done, time.monotonic() - start


def test_llama_8b_lora_on_the_cpu_is_refused_in_one_line_within_a_minute(tmp_path):
    """Memory (the RAM available) or time (a 60-second run leaves 40 seconds: no CPU trains 28 steps of an 8B
    model in that) refuses it before the model is built, whatever the machine."""
    done, took = _cli(["llm.train", "-p", "model=llama-3.1-8b", "-p", "method=lora", "-p", "device=cpu",
                       "--timeout", "60", "--out", str(tmp_path)], timeout_s=120)
    assert done.returncode != 0 and took < 60
    refusal = [line for line in done.stderr.splitlines() if line.startswith("hwbench run: llm.train failed")]
    assert len(refusal) == 1 and "|" not in done.stderr  # one line, no traceback
    assert "llama-3.1-8b lora at micro-batch 1 × 1024 tokens × grad_accum 1" in refusal[0]
    assert ("GiB" in refusal[0] and "more than 92% of the" in refusal[0]) or " minutes: 28 steps × " in refusal[0]
    assert "building" not in done.stderr


def test_under_an_address_space_limit_huge_prompts_and_batches_are_refused_not_killed(tmp_path):
    """``ulimit -v`` 4 GiB: a prompt of 32000 tokens (its attention mask alone is 6.7 GiB for tiny) and a
    micro-batch far beyond memory are refused with the arithmetic instead of reaching the allocator."""
    infer, _ = _cli(["llm.infer", "-p", "model=tiny", "-p", "device=cpu", "-p", "pp=32000", "-p", "depths=0",
                     "-p", "serve=false", "--out", str(tmp_path)], timeout_s=120, ulimit_kib=4 << 20)
    assert infer.returncode != 0
    assert "does not fit" in infer.stderr and "address-space limit (RLIMIT_AS" in infer.stderr
    assert "attention mask and position tables 6" in infer.stderr and "can't allocate" not in infer.stderr
    train, _ = _cli(["llm.train", "-p", "model=tiny", "-p", "device=cpu", "-p", "micro_batch=4096",
                     "-p", "grad_accum=4096", "--out", str(tmp_path)], timeout_s=120, ulimit_kib=4 << 20)
    assert train.returncode != 0 and "needs about" in train.stderr and "RLIMIT_AS" in train.stderr


def test_the_attention_mask_of_a_long_prompt_is_in_the_plan():
    plan = ar.memory_plan(TINY, 2, 1, 65536, 65536, attention=(65536, 65536))
    # the comparison (1 byte a pair), the mask for 2 query heads per KV head (2), SDPA's BF16 copy (2 × 2)
    assert plan.attention_bytes == 65536 * 65536 * 7 + ar.rope_table_bytes(TINY, 0)
    assert plan.total_bytes > 28 * GIB
    huge = ar.memory_plan(TINY, 2, 1, 10**15, 10**15, attention=(10**15, 10**15))  # counted in Python ints
    assert huge.total_bytes > 10**30


def test_building_a_model_reports_each_block():
    from hwbench_gui.engine.models.llm import model

    seen = []
    model.build(TINY, torch.float32, "cpu", rope_positions=16, on_block=lambda done, total: seen.append((done, total)))
    assert seen == [(1, 2), (2, 2)]
    recorder = Recorder()
    llm_train._building(recorder, LLAMA_8B, {"method": "lora", "precision": "bf16-amp"})(4, 32)
    assert recorder.progress_calls == [(0.0, "building llama-3.1-8b (the frozen base in BF16): 4 of 32 blocks")]


def test_the_run_s_time_limit_reaches_the_child_and_its_estimates(monkeypatch):
    from hwbench_gui.engine import child

    assert child.child_env(90.0)[child.TIME_LIMIT_ENV] == "90.0"
    assert child.TIME_LIMIT_ENV not in child.child_env() or child.child_env()[child.TIME_LIMIT_ENV] == \
        __import__("os").environ[child.TIME_LIMIT_ENV]
    monkeypatch.setenv(child.TIME_LIMIT_ENV, "90.0")
    assert child.run_time_limit_s() == 90.0
    assert llm_infer.time_allowed() == (60.0, "60 seconds (two thirds of this run's time limit of 90 seconds)")
    assert llm_train.time_allowed()[0] == 60.0
    for bad in ("", "nan", "inf", "-5", "ten"):
        monkeypatch.setenv(child.TIME_LIMIT_ENV, bad)
        assert child.run_time_limit_s() is None
    assert llm_infer.time_allowed()[0] == llm_infer.TIME_LIMIT_S


def test_a_run_longer_than_its_own_time_limit_is_refused_with_that_limit(tmp_path):
    """The runner tells the child its --timeout: 100,000 steps × 1000 windows of tiny cannot fit 60 of 90 seconds."""
    done, took = _cli(["llm.train", "-p", "model=tiny", "-p", "device=cpu", "-p", "steps=100000", "-p", "repeats=1000",
                       "--timeout", "90", "--out", str(tmp_path)], timeout_s=120)
    assert done.returncode != 0 and took < 60
    assert "more than the 60 seconds (two thirds of this run's time limit of 90 seconds)" in done.stderr
