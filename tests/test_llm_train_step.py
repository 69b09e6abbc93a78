"""llm.train on the CPU: the fused loss equals the textbook one, LoRA changes only its adapters, ``tiny``
learns a fixed batch, the activation estimate is what the decoder saves, and the run's document states MFU
against the datasheet and the measured matmul rate."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from hwbench_gui.engine.benchmarks import llm_train  # noqa: E402
from hwbench_gui.engine.models.common import TimedRun  # noqa: E402
from hwbench_gui.engine.models.llm import architectures, training  # noqa: E402
from hwbench_gui.engine.models.llm import training_arithmetic as ta  # noqa: E402
from hwbench_gui.engine.models.llm.linear_cross_entropy import linear_cross_entropy  # noqa: E402
from hwbench_gui.engine.models.llm.lora import LoRALinear  # noqa: E402
from hwbench_gui.engine.spec.precision import from_key  # noqa: E402
from recording import Recorder  # noqa: E402

TINY = architectures.builtin("tiny")
CPU = torch.device("cpu")
BF16 = from_key("bf16-amp")


def _params(**extra):
    return {**llm_train.BENCHMARK.resolve_params({"model": "tiny", "device": "cpu", **extra}), "compile": False}


def test_fused_chunked_loss_equals_the_textbook_loss_and_gradients():
    torch.manual_seed(0)
    # small logits: the 24 padding rows (1000 -> 1024 inside) would change the loss by about ln(1024/1000)
    hidden = (0.1 * torch.randn(300, 32)).requires_grad_()
    weight = torch.randn(1000, 32, requires_grad=True)
    targets = torch.randint(0, 1000, (300,))
    loss = linear_cross_entropy(hidden, weight, targets, chunk=64)
    (2.0 * loss).backward()
    h2, w2 = hidden.detach().clone().requires_grad_(), weight.detach().clone().requires_grad_()
    reference = torch.nn.functional.cross_entropy(h2 @ w2.t(), targets)
    (2.0 * reference).backward()
    assert loss.item() == pytest.approx(reference.item(), rel=1e-6)
    assert torch.allclose(hidden.grad, h2.grad, atol=1e-6) and torch.allclose(weight.grad, w2.grad, atol=1e-6)


def test_lora_leaves_the_base_bit_identical_and_trains_only_the_adapters():
    params = _params(method="lora", seq=32, lora_rank=4)
    built = training.build(TINY, params, CPU, BF16, None, "none")
    base = {name: p.detach().clone() for name, p in built.decoder.named_parameters() if not p.requires_grad}
    adapters = {name: p.detach().clone() for name, p in built.decoder.named_parameters() if p.requires_grad}
    assert set(adapters) == {f"blocks.{i}.{m}.lora_{ab}" for i in range(2) for m in ta.LORA_TARGETS for ab in "ab"}
    assert sum(isinstance(m, LoRALinear) for m in built.decoder.modules()) == 8
    step = training.make_step(built, BF16, CPU, training.synthetic_tokens(TINY.vocab, 1, 1, 16, CPU, 0), None)
    for _ in range(2):  # the first step moves B from zero; A moves from the second on (and by weight decay)
        step()
    now = dict(built.decoder.named_parameters())
    assert all(torch.equal(now[name], value) for name, value in base.items())
    assert all(not torch.equal(now[name], value) for name, value in adapters.items())


def test_tiny_learns_a_fixed_batch():
    params = _params(seq=32)
    built = training.build(TINY, params, CPU, BF16, None, "none")
    batches = training.synthetic_tokens(TINY.vocab, 1, 1, 32, CPU, 0)
    step = training.make_step(built, BF16, CPU, batches, None)
    losses = [float(step().detach()) for _ in range(21)]
    assert losses[20] < losses[0] - 0.5, losses  # ln 512 = 6.24 at the start


@pytest.mark.parametrize("method", ["full", "lora"])
def test_activation_estimate_is_what_the_decoder_saves(method):
    """Bytes of the tensors autograd saves, per token (the difference of two lengths cancels the weights and
    autocast's weight copies), equal the estimate's per-token activations exactly."""
    params = _params(method=method, seq=64, lora_rank=8)
    built = training.build(TINY, params, CPU, BF16, None, "none")

    def saved(length):
        storages = {}

        def pack(t):
            storages[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
            return t

        ids = torch.randint(0, TINY.vocab, (1, length))
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t), torch.autocast("cpu", dtype=torch.bfloat16):
            built.decoder(ids, hidden_only=True)
        return sum(storages.values())

    per_token = (saved(64) - saved(32)) / 32
    dims = ta.dims_of(TINY, method, 8, "cpu")
    assert per_token == TINY.layers * dims.saved_bytes_per_token_layer + dims.outside_bytes_per_token


def test_document_figures_state_mfu_against_the_datasheet_and_warn_above_one():
    params = {**_params(seq=1024, micro_batch=16), "model": "gpt2-124m"}
    gpt2 = architectures.builtin("gpt2-124m")
    tokens = 16 * 1024
    # five windows of 10 steps: 463,000 tokens/s in the middle one (the median), others around it
    seconds = [10 * tokens / r for r in (400_000, 450_000, 463_000, 470_000, 480_000)]
    run = TimedRun(batch=tokens, steps=50, total_s=sum(seconds), step_s=[0.03] * 50, window_s=seconds,
                   window_steps=[10] * 5, peak_allocated_bytes=10 * ta.GIB)
    matmul = {"value": 800.0, "unit": "TFLOP/s"}
    outcome = llm_train._outcome(gpt2, params, [run], "cuda:0", {}, [], matmul,
                                 device_name="NVIDIA H100 80GB HBM3")
    figures = outcome.figures
    assert figures["mfu_datasheet"]["value"] == pytest.approx(0.399803, abs=1e-6)
    assert figures["mfu_datasheet"]["peak_tflops"] == 989.5
    assert figures["mfu_measured_matmul"]["value"] == pytest.approx(463_000 * 854_438_400 / 800e12)
    assert outcome.resolved_params["micro_batch"] == 16
    assert not any("above 100 %" in w for w in outcome.warnings)
    a100 = llm_train._outcome(gpt2, params, [run], "cuda:0", {}, [], matmul, device_name="NVIDIA A100-SXM4-80GB")
    # 126.8 % of the A100's peak: no share above 100 % is stored, the reason is
    assert a100.figures["mfu_datasheet"]["value"] is None and a100.figures["mfu_datasheet"]["above_limit"]
    assert "above 100 % of the datasheet peak" in a100.figures["mfu_datasheet"]["reason"]
    assert any("above 100 %" in w for w in a100.warnings)
    cpu = llm_train._outcome(gpt2, params, [run], "cpu", {}, [], matmul, device_name=None)
    assert cpu.figures["mfu_datasheet"]["value"] is None and cpu.figures["mfu_datasheet"]["reason"]


def test_the_benchmark_runs_tiny_on_the_cpu():
    rec = Recorder()
    params = llm_train.BENCHMARK.resolve_params({"model": "tiny", "device": "cpu", "seq": 16, "steps": 1,
                                                 "warmup": 1, "method": "lora"})
    outcome = llm_train.run(params, rec)
    assert len(outcome.samples) == 5 and all(s > 0 for s in outcome.samples)
    assert (outcome.unit, outcome.higher_is_better) == ("tokens/s", True)
    assert outcome.resolved_params["compile"] == "false"
    assert outcome.figures["mfu_measured_matmul"]["value"] > 0
    assert outcome.details["flops_per_token"] == ta.lora_flops_per_token(ta.dims_of(TINY, "lora"), 16, 16)
    assert [p for p in rec.phases if p[0] == "timed"] == [("timed", s, r) for r in range(5) for s in ("start", "end")]


def _h100_document():
    """The document of a known gpt2-124m run on an H100 (463,000 tokens/s median), built as the runner builds it."""
    from datetime import datetime, timezone

    from hwbench_gui.engine.results.document import build_document
    from hwbench_gui.engine.run.protocol import outcome_to_json

    params = llm_train.BENCHMARK.resolve_params({"model": "gpt2-124m", "micro_batch": 16})
    gpt2 = architectures.builtin("gpt2-124m")
    tokens = 16 * 1024
    seconds = [10 * tokens / r for r in (400_000, 450_000, 463_000, 470_000, 480_000)]
    run = TimedRun(batch=tokens, steps=50, total_s=sum(seconds), step_s=[0.03] * 50, window_s=seconds,
                   window_steps=[10] * 5, peak_allocated_bytes=10 * ta.GIB, total_memory_bytes=80 * ta.GIB)
    outcome = llm_train._outcome(gpt2, {**params, "compile": True}, [run], "cuda:0 (NVIDIA H100 80GB HBM3)", {}, [],
                                 {"value": 800.0, "unit": "TFLOP/s"}, device_name="NVIDIA H100 80GB HBM3")
    machine = {"inventory": {"hostname": "box", "gpus": [{"name": "NVIDIA H100 80GB HBM3"}]}, "inventory_reason": None,
               "software": {}, "software_reason": None}
    return build_document(llm_train.BENCHMARK, params, status="ok",
                          started_at=datetime(2026, 12, 5, tzinfo=timezone.utc), duration_s=60.0,
                          outcome=outcome_to_json(outcome), machine=machine)


def test_the_document_reads_the_same_in_the_cli_and_the_report():
    from hwbench_gui.engine.reports import llm_train_section
    from hwbench_gui.engine.results.formatting import shown_lines

    doc = _h100_document()
    assert doc["params"]["compile"] == "true" and doc["params_requested"] == {"compile": "auto"}
    lines = shown_lines(doc)
    assert "MFU against the H100 SXM's dense BF16 peak 989.5 TFLOP/s (datasheet): 40.0%" in lines
    assert any(line.startswith("largest that trains on one 80 GiB GPU at seq 1024 (estimate): GPT-2: full gpt2-124m")
               for line in lines)
    rows = llm_train_section.build([doc])
    assert len(rows) == 1 and rows[0].mfu_datasheet == "40.0% of 989.5 TFLOP/s (datasheet)"
    assert rows[0].configuration.startswith("gpt2-124m · full · BF16-AMP · seq 1024 · micro-batch 16")
    assert "(100% of the estimate)" not in rows[0].memory and rows[0].memory.startswith("estimate ")
    groups = llm_train_section.groups([doc])
    assert groups[0].tokens_per_s == 463_000 and groups[0].mfu_datasheet == pytest.approx(0.399803, abs=1e-6)


def test_full_training_keeps_the_residual_stream_in_fp32_under_autocast():
    """Mixed precision as torch.amp trains: the matmuls in BF16, the residual stream (and so the norms'
    inputs) in the FP32 of the master weights; a fused residual matmul under autocast would round it."""
    built = training.build(TINY, _params(seq=16), CPU, BF16, None, "none")
    ids = torch.randint(0, TINY.vocab, (1, 16))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        hidden = built.decoder(ids, hidden_only=True)
        block_out = built.decoder.blocks[0](built.decoder.embed(ids), None, None)
    assert hidden.dtype == torch.float32 and block_out.dtype == torch.float32
