"""llm.train with precision=fp8 on the CPU (PyTorch emulates torch._scaled_mm there): the FP8 matmul's
forward and gradients are the products of the operands cast as the recipe says (e4m3 values, e5m2 gradient,
one scale per tensor) and within FP8's error of FP32, compiled as eager; ``tiny`` learns a fixed batch with
checkpointing; what cannot run is refused with its reason; FLOPs, MFU and memory are split as declared."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from hwbench_gui.engine.benchmarks import llm_train  # noqa: E402
from hwbench_gui.engine.models.common import TimedRun  # noqa: E402
from hwbench_gui.engine.models.llm import architectures, fp8, training  # noqa: E402
from hwbench_gui.engine.models.llm import training_arithmetic as ta  # noqa: E402
from hwbench_gui.engine.spec.benchmark import BenchmarkUnavailable, ParamError  # noqa: E402
from hwbench_gui.engine.spec.precision import FP8  # noqa: E402

if fp8.unavailable_reason("cpu"):
    pytest.skip(fp8.unavailable_reason("cpu"), allow_module_level=True)

from hwbench_gui.engine.models.llm import fp8_training  # noqa: E402

TINY = architectures.builtin("tiny")
CPU = torch.device("cpu")
#: Smaller than tiny: the CPU's emulated FP8 product runs at some 25 MFLOP/s, so tiny's 21 steps would take 45 s.
MINI = architectures.Architecture("mini", vocab=128, hidden=64, layers=1, heads=4, kv_heads=2, head_dim=16,
                                  intermediate=128, norm="rmsnorm", mlp="swiglu", positional="rope",
                                  tied_embeddings=False, bias="qkv", max_positions=64, norm_eps=1e-5,
                                  rope_theta=10000.0, source="test")


def _operands():
    """Asymmetric operands: 32 tokens × 48 inputs → 64 outputs, columns of x spanning 0.1 to 3 in scale, one
    large weight, a gradient with a large row (so each tensor's scale is set by a different element)."""
    gen = torch.Generator().manual_seed(3)
    x = (torch.randn(32, 48, generator=gen) * torch.linspace(0.1, 3.0, 48)).bfloat16()
    w = torch.randn(64, 48, generator=gen) * 0.05
    w[5, 7] = 0.9
    g = torch.randn(32, 64, generator=gen).bfloat16()
    g[3] *= 20
    return x, w, g


def _as_cast(t: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """``t`` rounded through FP8 ``dtype`` with one scale, amax ↦ the type's largest finite value (FP32)."""
    scale = t.float().abs().max() / torch.finfo(dtype).max
    return (t.float() / scale).to(dtype).float() * scale


def _rel(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a.detach().float() - b.float()).norm() / b.float().norm())


def test_fp8_matmul_is_the_product_of_its_casts_forward_and_backward():
    x, w, g = _operands()
    xv, wv = x.clone().requires_grad_(), w.clone().requires_grad_()
    y = fp8_training.Fp8Matmul.apply(xv, wv)
    y.backward(g)
    assert (y.dtype, xv.grad.dtype, wv.grad.dtype) == (torch.bfloat16, torch.bfloat16, torch.float32)
    x8, w8, g8 = _as_cast(x, torch.float8_e4m3fn), _as_cast(w, torch.float8_e4m3fn), _as_cast(g, torch.float8_e5m2)
    # The products of the cast operands, FP32-accumulated and rounded once to BF16: within BF16's rounding.
    assert _rel(y, x8 @ w8.t()) < 4e-3
    assert _rel(xv.grad, g8 @ w8) < 4e-3
    assert _rel(wv.grad, g8.t() @ x8) < 4e-3
    # Against FP32 the error is FP8's (e5m2's 2 mantissa bits in the gradients): a few percent, never zero.
    truth_y, truth_gx, truth_gw = x.float() @ w.t(), g.float() @ w, g.float().t() @ x.float()
    assert 1e-3 < _rel(y, truth_y) < 0.05
    assert 1e-2 < _rel(xv.grad, truth_gx) < 0.12
    assert 1e-2 < _rel(wv.grad, truth_gw) < 0.12


def test_fp8_matmul_compiles_to_the_eager_result():
    x, w, g = _operands()
    eager_x, eager_w = x.clone().requires_grad_(), w.clone().requires_grad_()
    fp8_training.Fp8Matmul.apply(eager_x, eager_w).backward(g)
    compiled_x, compiled_w = x.clone().requires_grad_(), w.clone().requires_grad_()
    compiled = torch.compile(fp8_training.Fp8Matmul.apply, fullgraph=True)
    y = compiled(compiled_x, compiled_w)
    y.backward(g)
    assert _rel(y, fp8_training.Fp8Matmul.apply(x, w)) < 1e-2
    assert _rel(compiled_x.grad, eager_x.grad) < 1e-2 and _rel(compiled_w.grad, eager_w.grad) < 1e-2


def test_a_small_decoder_learns_a_fixed_batch_in_fp8_with_checkpointing():
    params = {**llm_train.BENCHMARK.resolve_params({"model": "tiny", "device": "cpu", "precision": "fp8",
                                                    "checkpointing": True, "seq": 16}), "compile": False}
    built = training.build(MINI, params, CPU, FP8, None, "none")
    block = built.decoder.blocks[0].block
    assert all(type(getattr(block, n)) is fp8_training.Fp8TrainingLinear for n in fp8_training.BLOCK_MATMULS)
    assert block.qkv.weight.dtype == torch.float32 and block.qkv.weight.requires_grad  # the FP32 master
    batches = training.synthetic_tokens(MINI.vocab, 1, 1, 16, CPU, 0)
    step = training.make_step(built, FP8, CPU, batches, None)
    losses = [float(step().detach()) for _ in range(21)]
    assert losses[20] < losses[0] - 0.5, losses  # ln 128 = 4.85 at the start


def _resolved(**extra):
    return llm_train.BENCHMARK.resolve_params({"model": "tiny", "precision": "fp8", "steps": 1, "warmup": 1,
                                               "repeats": 1, **extra})


def test_what_fp8_cannot_train_is_refused_with_its_reason():
    with pytest.raises(ParamError, match="method=full"):
        llm_train.run(_resolved(device="cpu", method="lora"), None)
    with pytest.raises(ParamError, match="seq 24.*multiple of 16"):
        llm_train.run(_resolved(device="cpu", seq=24), None)
    odd = architectures.Architecture("odd", vocab=64, hidden=40, layers=1, heads=2, kv_heads=2, head_dim=20,
                                     intermediate=96, norm="rmsnorm", mlp="swiglu", positional="rope",
                                     tied_embeddings=True, bias="none", max_positions=64, norm_eps=1e-5,
                                     rope_theta=10000.0, source="test")
    with pytest.raises(ParamError, match="qkv: in 40, qkv: out 120"):
        llm_train.check_fp8(odd, _resolved(seq=32))
    with pytest.raises(ValueError, match="24 tokens"):
        fp8_training.Fp8TrainingLinear(torch.nn.Linear(16, 16))(torch.randn(1, 24, 16))


def test_fp8_on_a_machine_without_a_gpu_needs_device_cpu(monkeypatch):
    from hwbench_gui.engine.spec import device

    monkeypatch.setattr(llm_train, "resolve_auto", lambda asked: device.parse("cpu"))
    with pytest.raises(BenchmarkUnavailable, match="give device=cpu"):
        llm_train.run(_resolved(device="auto"), None)


def test_gpt2_fp8_flops_mfu_and_memory_are_split_as_declared():
    gpt2 = architectures.builtin("gpt2-124m")
    params = {**_resolved(seq=1024, micro_batch=16), "model": "gpt2-124m", "compile": False}
    # 12 layers × (768·2304 + 768·768 + 768·3072 + 3072·768) = 84,934,656 block weights, 6 FLOPs each a token.
    assert ta.block_matmul_params(ta.dims_of(gpt2, "full")) == 84_934_656
    assert llm_train.fp8_flops_per_token(gpt2, params) == 509_607_936
    assert llm_train.flops_per_token(gpt2, params) == 854_438_400
    tokens = 16 * 1024
    seconds = [10 * tokens / r for r in (400_000, 450_000, 463_000, 470_000, 480_000)]
    run = TimedRun(batch=tokens, steps=50, total_s=sum(seconds), step_s=[0.03] * 50, window_s=seconds,
                   window_steps=[10] * 5, peak_allocated_bytes=10 * ta.GIB)
    outcome = llm_train._outcome(gpt2, params, [run], "cuda:0", {}, [], {"value": 800.0, "unit": "TFLOP/s"},
                                 device_name="NVIDIA H100 80GB HBM3",
                                 fp8_matmul={"value": 1500.0, "unit": "TFLOP/s"})
    figures = outcome.figures
    # H100 SXM: 509,607,936 FLOPs at 1979 TFLOP/s (FP8 dense) + 344,830,464 at 989.5 (BF16 dense), per token.
    assert figures["mfu_datasheet"]["value"] == pytest.approx(463_000 * (509_607_936 / 1979e12
                                                                         + 344_830_464 / 989.5e12))
    assert (figures["mfu_datasheet"]["peak_tflops"], figures["mfu_datasheet"]["fp8_peak_tflops"]) == (989.5, 1979.0)
    assert figures["mfu_measured_matmul"]["value"] == pytest.approx(463_000 * (509_607_936 / 1500e12
                                                                               + 344_830_464 / 800e12))
    assert figures["fp8_matmul_tflops"]["value"] == 1500.0
    assert outcome.details["fp8_flops_per_token"] == 509_607_936
    assert "509,607,936 FLOPs per token" in outcome.method and "e5m2" in outcome.method


def test_fp8_memory_drops_the_block_copies_and_counts_the_casts():
    dims, compiled = ta.dims_of(TINY, "full"), ta.dims_of(TINY, "full", compiled=True)
    # tiny, 32 tokens: the MLP up matrix (128 → 512) is the widest: FP8 gradient 32·512, input 32·128 and weight
    # 512·128, each twice (one transposed) = 172,032 bytes; eager also one FP32 temporary of the weight, 262,144.
    assert ta.fp8_cast_bytes(dims, 32) == 172_032 + 262_144
    assert ta.fp8_cast_bytes(compiled, 32) == 172_032
    common = {"method": "full", "micro_batch": 2, "seq": 16, "checkpointing": False, "chunk_tokens": 64}
    bf16, fp8_memory = ta.training_memory(dims, **common), ta.training_memory(dims, **common, fp8=True)
    blocks = ta.block_matmul_params(dims)
    assert blocks == 2 * (128 * 256 + 128 * 128 + 128 * 512 + 256 * 128)
    assert sum(bf16.forward.values()) - sum(fp8_memory.forward.values()) == 2 * blocks - (172_032 + 262_144)
    with pytest.raises(ValueError):
        ta.training_memory(dims, **{**common, "method": "lora"}, fp8=True)
    # What fits keeps working: full training of Llama 3.2 1B in FP8 fits more than in BF16 on 80 GB.
    llama = architectures.builtin("llama-3.2-1b")
    by = {fp8: {f.method: f for f in ta.what_fits([llama], 80 * ta.GIB, 2048, 16, 0.92, fp8=fp8)}
          for fp8 in (False, True)}
    assert by[True]["full"].largest_micro_batch >= by[False]["full"].largest_micro_batch > 0
    assert by[True]["lora"] == by[False]["lora"]


def test_the_benchmark_runs_tiny_in_fp8_on_the_cpu_when_asked():
    from recording import Recorder

    outcome = llm_train.run(_resolved(device="cpu", seq=16), Recorder())
    assert outcome.details["precision"] == fp8_training.PRECISION_DETAILS
    assert outcome.figures["fp8_matmul_tflops"]["value"] > 0 and outcome.figures["matmul_tflops"]["value"] > 0
    assert outcome.figures["fp8_matmul_tflops"]["precision"] == FP8.label
    assert any("emulates FP8" in w for w in outcome.warnings)


def h100_fp8_document(precision: str = "fp8"):
    """The document of a gpt2-124m run on an H100 at 463,000 tokens/s (median), built as the runner builds it."""
    from datetime import datetime, timezone

    from hwbench_gui.engine.results.document import build_document
    from hwbench_gui.engine.run.protocol import outcome_to_json

    params = llm_train.BENCHMARK.resolve_params({"model": "gpt2-124m", "micro_batch": 16, "precision": precision})
    gpt2 = architectures.builtin("gpt2-124m")
    tokens = 16 * 1024
    seconds = [10 * tokens / r for r in (400_000, 450_000, 463_000, 470_000, 480_000)]
    run = TimedRun(batch=tokens, steps=50, total_s=sum(seconds), step_s=[0.03] * 50, window_s=seconds,
                   window_steps=[10] * 5, peak_allocated_bytes=10 * ta.GIB, total_memory_bytes=80 * ta.GIB)
    fp8_matmul = {"value": 1500.0, "unit": "TFLOP/s"} if precision == "fp8" else None
    outcome = llm_train._outcome(gpt2, {**params, "compile": True}, [run], "cuda:0 (NVIDIA H100 80GB HBM3)", {}, [],
                                 {"value": 800.0, "unit": "TFLOP/s"}, device_name="NVIDIA H100 80GB HBM3",
                                 fp8_matmul=fp8_matmul)
    machine = {"inventory": {"hostname": "box", "gpus": [{"name": "NVIDIA H100 80GB HBM3"}]}, "inventory_reason": None,
               "software": {}, "software_reason": None}
    return build_document(llm_train.BENCHMARK, params, status="ok",
                          started_at=datetime(2026, 12, 5, tzinfo=timezone.utc), duration_s=60.0,
                          outcome=outcome_to_json(outcome), machine=machine)


def test_an_fp8_document_reads_as_fp8_in_the_report_and_pairs_only_with_fp8():
    from hwbench_gui.engine.reports import compare, llm_train_section

    fp8_doc, bf16_doc = h100_fp8_document(), h100_fp8_document("bf16-amp")
    assert fp8_doc["precision"] == FP8.label
    row = llm_train_section.build([fp8_doc])[0]
    assert row.configuration.startswith("gpt2-124m · full · FP8 · seq 1024")
    mfu = 463_000 * (509_607_936 / 1979e12 + 344_830_464 / 989.5e12)
    assert row.mfu_datasheet == f"{mfu:.1%} of 1979 FP8 (block matmuls) and 989.5 BF16 (the rest) TFLOP/s (datasheet)"
    assert row.mfu_measured.endswith("of 1500 FP8 (block matmuls) and 800 BF16 (the rest) TFLOP/s (measured)")
    assert compare.comparability_key(fp8_doc) != compare.comparability_key(bf16_doc)
    assert compare.comparability_key(fp8_doc) == compare.comparability_key(h100_fp8_document())
    assert "full training with FP8 block matmuls" in fp8_doc["details"]["summary"][0]


def test_fp8_blocks_save_the_bf16_paths_activations_and_no_copy_of_their_matrices():
    """What autograd saves, parameters aside: per token exactly the BF16 path's activations (the estimate's), and
    in all the BF16 path's less autocast's 16-bit copies of the block matrices (2 bytes each)."""
    from hwbench_gui.engine.spec.precision import BF16_AMP

    def saved(precision, length):
        built = training.build(TINY, _resolved(device="cpu", seq=64) | {"compile": False}, CPU, precision, None,
                               "none")
        parameters = {p.untyped_storage().data_ptr() for p in built.decoder.parameters()}
        storages = {}

        def pack(t):
            if t.untyped_storage().data_ptr() not in parameters:
                storages[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
            return t

        ids = torch.randint(0, TINY.vocab, (1, length), generator=torch.Generator().manual_seed(1))
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t), torch.autocast("cpu", dtype=torch.bfloat16):
            built.decoder(ids, hidden_only=True)
        return sum(storages.values())

    dims = ta.dims_of(TINY, "full", 0, "cpu")
    per_token = (saved(FP8, 64) - saved(FP8, 32)) / 32
    assert per_token == TINY.layers * dims.saved_bytes_per_token_layer + dims.outside_bytes_per_token
    assert saved(BF16_AMP, 32) - saved(FP8, 32) == 2 * ta.block_matmul_params(dims)


def test_a_gpu_without_fp8_tensor_cores_is_refused_before_any_step(monkeypatch):
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: (8, 0))
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device=None: "NVIDIA A100-SXM4-80GB")
    with pytest.raises(BenchmarkUnavailable, match="precision=fp8: FP8 needs compute capability 8.9 or newer .*8.0"):
        training.search_micro_batch(TINY, _resolved(), torch.device("cuda", 0), FP8, None, start=1, limit=4)
