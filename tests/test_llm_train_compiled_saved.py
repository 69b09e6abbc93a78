"""What a compiled block keeps for its backward, counted on the CPU from the tensors AOTAutograd's
partitioner saves, against :func:`training_arithmetic.compiled_saved_bytes_per_token_layer`."""

from __future__ import annotations

from dataclasses import replace

import pytest

from hwbench_gui.engine.models.llm import architectures
from hwbench_gui.engine.models.llm import training_arithmetic as ta

LLAMA_1B = architectures.builtin("llama-3.2-1b")
GPT2 = architectures.builtin("gpt2-124m")


def test_compiled_block_bytes_by_hand():
    # Llama-3.2-1B (h 2048, q 2048, kv 512, I 8192, 32 heads), full: FP32 input 4h, the out-projection's
    # 16-bit output 2h, two norms' statistics, two 16-bit norm outputs 4h, q/k/v 2·3072, rotated q/k 2·2560,
    # attention 2·2048 + 4·32, gate/up 4I and the product 2I
    full = 4 * 2048 + 2 * 2048 + 8 + 4 * 2048 + 6144 + 5120 + 4096 + 128 + 6 * 8192
    assert ta.dims_of(LLAMA_1B, "full", compiled=True).saved_bytes_per_token_layer == full == 85_128
    # eager keeps the second norm's FP32 input (4h, not 2h) and SiLU's output (2I) besides
    assert ta.dims_of(LLAMA_1B, "full").saved_bytes_per_token_layer - full == 2 * 2048 + 2 * 8192
    # LoRA: the 16-bit stream is kept as it is (2h), and each adapter's rank-16 intermediate
    lora = ta.dims_of(LLAMA_1B, "lora", 16, compiled=True).saved_bytes_per_token_layer
    assert lora == full - 2 * 2048 + 4 * 2 * 16
    # GPT-2: LayerNorm's mean and rstd, no rotation, GELU keeps its input and output (2I each) compiled too
    gpt2 = ta.dims_of(GPT2, "full", compiled=True).saved_bytes_per_token_layer
    assert gpt2 == 4 * 768 + 2 * 768 + 16 + 4 * 768 + 2 * 2304 + 2 * 768 + 4 * 12 + 4 * 3072 == 26_176
    assert ta.dims_of(GPT2, "full").saved_bytes_per_token_layer - gpt2 == 2 * 768


def test_the_estimate_of_a_compiled_run_says_so_and_counts_compiled_blocks():
    from hwbench_gui.engine.benchmarks import llm_train

    params = llm_train.BENCHMARK.resolve_params({"model": "llama-3.2-1b", "seq": 2048, "micro_batch": 32})
    compiled = llm_train.estimate(LLAMA_1B, {**params, "compile": True}, 32)
    eager = llm_train.estimate(LLAMA_1B, {**params, "compile": "false"}, 32)
    # 16 blocks × 32 × 2048 tokens × (2h + 2I) bytes: 20 GiB fewer compiled
    assert eager.forward["activations"] - compiled.forward["activations"] == 16 * 32 * 2048 * (2 * 2048 + 2 * 8192)
    assert any(note.startswith("compiled blocks: AOTAutograd") for note in compiled.notes)
    assert not any(note.startswith("compiled blocks") for note in eager.notes)
    assert llm_train.estimate(LLAMA_1B, dict(params), 32).total == compiled.total  # compile=auto: compiled on a GPU


def _saved_bytes_per_token(arch, method: str, fp8: bool = False) -> float:
    torch = pytest.importorskip("torch")
    from hwbench_gui.engine.models.llm import model as llm_model
    from hwbench_gui.engine.models.llm.lora import apply_lora

    # 300 tokens (48 in FP8: a multiple of 16, few: the CPU emulates FP8 products slowly): no weight has a
    # dimension of 3, 300 or 48
    batch, seq = 3, 16 if fp8 else 100
    dtype = torch.float32 if method == "full" else torch.bfloat16
    decoder = llm_model.build(arch, dtype, "cpu", rope_positions=seq)
    decoder.train()
    if method == "lora":
        apply_lora(decoder, 16, 32.0, ta.LORA_TARGETS)
    block = decoder.blocks[0]
    if fp8:
        from hwbench_gui.engine.models.llm.fp8_training import convert_block

        convert_block(block)
    torch._dynamo.reset()  # after a block of other sizes, dynamo would compile this one with dynamic shapes
    block.compile()
    cos, sin = decoder._rope(torch.arange(seq))
    storages: dict[int, int] = {}

    def pack(t):
        if t.dim() and t.shape[0] in (batch, batch * seq):  # activations, not weights or RoPE's tables
            s = t.untyped_storage()
            storages[s.data_ptr()] = s.nbytes()
        return t

    for hooked in (False, True):  # the first call compiles; the second is counted
        storages.clear()
        x = torch.randn(batch, seq, arch.hidden, dtype=dtype, requires_grad=True)
        with torch.autocast("cpu", dtype=torch.bfloat16), \
                torch.autograd.graph.saved_tensors_hooks(pack if hooked else (lambda t: t), lambda t: t):
            y = block(x, cos, sin)
        y.float().sum().backward()
    return sum(storages.values()) / (batch * seq)


def test_a_compiled_block_saves_what_the_arithmetic_counts():
    arch = replace(LLAMA_1B, name="probe", vocab=512, hidden=256, layers=1, heads=4, kv_heads=1, head_dim=64,
                   intermediate=704, max_positions=256)
    expected = ta.dims_of(arch, "full", compiled=True).saved_bytes_per_token_layer
    assert expected == 8728
    assert _saved_bytes_per_token(arch, "full") == expected


def test_a_compiled_fp8_block_saves_what_the_arithmetic_counts():
    from hwbench_gui.engine.models.llm import fp8

    if fp8.unavailable_reason("cpu"):
        pytest.skip(fp8.unavailable_reason("cpu"))
    arch = replace(GPT2, name="probe", vocab=512, hidden=64, layers=1, heads=2, kv_heads=2, head_dim=32,
                   intermediate=256, max_positions=256)
    expected = ta.dims_of(arch, "full", compiled=True, fp8=True).saved_bytes_per_token_layer
    # the BF16 block's less the two LayerNorms' 16-bit outputs (2 · 2 · 64) and GELU's output (2 · 256)
    assert expected == ta.dims_of(arch, "full", compiled=True).saved_bytes_per_token_layer - 768 == 1432
    assert _saved_bytes_per_token(arch, "full", fp8=True) == expected
