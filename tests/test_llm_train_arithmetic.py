"""llm.train's arithmetic with known answers: FLOPs per token (full and frozen-base LoRA), MFU against a
datasheet peak, the memory a step holds, the largest micro-batch the estimate fits. No torch."""

from __future__ import annotations

import pytest

from hwbench_gui.engine.inventory import datasheets
from hwbench_gui.engine.models.llm import architectures, arithmetic
from hwbench_gui.engine.models.llm import training_arithmetic as ta
from hwbench_gui.engine.models.llm import what_fits

GPT2 = architectures.builtin("gpt2-124m")
TINY = architectures.builtin("tiny")
LLAMA_1B = architectures.builtin("llama-3.2-1b")


def test_gpt2_parameters_and_training_flops_per_token():
    assert arithmetic.total_params(GPT2) == 124_439_808  # tied embeddings: the token table counted once
    dims = ta.dims_of(GPT2, "full")
    # 12 × (768·2304 + 768·768 + 2·768·3072) + the output projection (the token table) 50257·768
    assert dims.matmul_params == 12 * 7_077_888 + 38_597_376 == 123_532_032
    # 6 · N + 12 · layers · heads · head_dim · seq (nanoGPT's estimate_mfu, llm.c)
    assert ta.full_flops_per_token(dims, 1024) == 741_192_192 + 113_246_208 == 854_438_400


def test_tiny_lora_flops_per_token_by_hand():
    dims = ta.dims_of(TINY, "lora")
    # per block: q/k/v 128·256 + out 128·128 + gate/up 128·512 + down 256·128; two blocks and the head 512·128
    assert dims.matmul_params == 2 * 147_456 + 65_536 == 360_448
    assert dims.adapted == ((128, 256), (128, 128), (128, 512), (256, 128)) * 2
    attention = 12 * 2 * 4 * 32 * 64
    adapters = 6 * 8 * 2 * (384 + 256 + 640 + 384)
    assert ta.lora_flops_per_token(dims, 64, 8) == 4 * 360_448 + attention + adapters == 1_798_144
    assert ta.flops_per_token(ta.dims_of(TINY, "full"), 64, "full") == 6 * 360_448 + attention == 2_359_296
    with pytest.raises(ValueError):
        ta.flops_per_token(dims, 64, "qlora")


def test_mfu_against_the_h100_datasheet_and_the_nanogpt_error():
    sheet = datasheets.lookup("NVIDIA H100 80GB HBM3")
    assert sheet is not None and sheet.peak_tflops("bf16") == 989.5
    fpt = ta.full_flops_per_token(ta.dims_of(GPT2, "full"), 1024)
    # 463,000 tokens/s × 854,438,400 FLOPs = 395.6 TFLOP/s
    assert ta.mfu(463_000, fpt, 989.5) == pytest.approx(0.399803, abs=1e-6)
    # nanoGPT's hard-coded A100 peak (312 TFLOP/s) on an H100: above 100 %
    assert ta.mfu(463_000, fpt, 312.0) == pytest.approx(1.267964, abs=1e-6)
    assert ta.mfu(463_000, fpt, None) is None


def test_the_logits_of_a_large_vocabulary_and_their_chunked_loss():
    tokens = 8 * 2048
    # FP32 logits of a 128k vocabulary for 8 × 2048 tokens: 8.4 GB, their gradient as much
    assert ta.loss_bytes(tokens, 2048, 128_256, None, True) == 2 * 8_405_385_216
    chunk = ta.chunk_tokens(128_256)
    assert chunk == 1024 and chunk * 128_256 * 4 <= ta.CHUNK_LOGITS * 4
    # one chunk's FP32 logits and softmax and 16-bit gradient, the hidden gradient, the FP32 hidden states'
    # 16-bit copy, the FP32 head gradient
    assert ta.loss_bytes(tokens, 2048, 128_256, chunk, True) == 1024 * 128_256 * 10 + tokens * 2048 * 4 \
        + tokens * 2048 * 2 + 128_256 * 2048 * 4
    # LoRA: 16-bit hidden states (no copy), a frozen head
    assert ta.loss_bytes(tokens, 2048, 128_256, chunk, False, hidden_bytes=2) == 1024 * 128_256 * 10 \
        + tokens * 2048 * 2


def test_training_memory_states_and_peak():
    dims = ta.dims_of(LLAMA_1B, "full")
    memory = ta.training_memory(dims, method="full", micro_batch=1, seq=2048, checkpointing=False, chunk_tokens=1024)
    states = sum(memory.persistent.values()) + sum(memory.gradients.values())
    ids = memory.persistent.pop("token ids (int64 inputs and targets, every micro-batch)")
    assert ids == 16 * 2048
    assert states - ids == 16 * 1_235_814_400  # mixed-precision AdamW: 16 bytes a trainable parameter
    forward = sum(memory.forward.values())
    assert memory.total == sum(memory.persistent.values()) + max(forward, sum(memory.gradients.values()))
    assert memory.forward["activations"] == 2048 * (16 * dims.saved_bytes_per_token_layer
                                                    + dims.outside_bytes_per_token)
    ckpt = ta.training_memory(dims, method="full", micro_batch=1, seq=2048, checkpointing=True, chunk_tokens=1024)
    assert ckpt.forward["activations"] == 2048 * (16 * 4 * 2048 + dims.saved_bytes_per_token_layer
                                                  + dims.outside_bytes_per_token)
    lora = ta.training_memory(ta.dims_of(LLAMA_1B, "lora", 16), method="lora", micro_batch=1, seq=2048,
                              checkpointing=False, chunk_tokens=1024, lora_params=1000)
    assert lora.persistent["frozen base (BF16)"] == 2 * 1_235_814_400
    assert lora.persistent["adapters and AdamW moments (FP32)"] == 12_000
    fsdp = ta.training_memory(dims, method="full", micro_batch=1, seq=2048, checkpointing=False, chunk_tokens=1024,
                              sharding="fsdp", world=4)
    assert fsdp.persistent["AdamW moments (FP32)"] == 8 * 1_235_814_400 / 4


def test_largest_micro_batch_of_a_linear_estimate():
    def at(micro_batch):
        return ta.TrainingMemory("test", persistent={"states": 100.0}, forward={"activations": 7.0 * micro_batch})

    assert ta.largest_micro_batch(100 + 7 * 37, at) == 37
    assert ta.largest_micro_batch(100 + 7 * 37 + 6, at) == 37
    assert ta.largest_micro_batch(106, at) == 0


def test_a_run_that_cannot_fit_is_refused_with_the_arithmetic():
    from hwbench_gui.engine.benchmarks import llm_train
    from hwbench_gui.engine.models.common import OutOfMemoryError

    params = llm_train.BENCHMARK.resolve_params({"model": "llama-3.1-8b", "seq": 2048})
    arch = architectures.builtin("llama-3.1-8b")
    refusal = (r"llama-3\.1-8b full at micro-batch 1 × 2048 tokens needs about 1\d\d\.\d GiB "
               r"\(weights \(FP32\): 29\.92 GiB; AdamW moments \(FP32\): 59\.83 GiB")
    with pytest.raises(OutOfMemoryError, match=refusal):
        llm_train._fit_check(arch, params, 80 * ta.GIB, "none", 1)
    lora = llm_train.BENCHMARK.resolve_params({"model": "llama-3.1-8b", "seq": 2048, "method": "lora"})
    assert llm_train._fit_check(arch, lora, 80 * ta.GIB, "none", 1) == 6
    table = {(r["model"], r["method"]): r["by_seq"] for r in what_fits.fit_table(80 * ta.GIB)}
    assert table[("llama-3.1-8b", "full")][2048] == {"largest_micro_batch": 0, "checkpointing": False}
    assert table[("llama-3.1-8b", "lora")][2048]["largest_micro_batch"] == 6


def test_llama_8b_lora_fits_an_80_gib_gpu_at_micro_batch_6_by_hand():
    from hwbench_gui.engine.benchmarks import llm_train

    # compiled LoRA block of Llama-3.1-8B per token: 16-bit input and out-projection output 2·2·4096, two norms'
    # statistics, norm outputs 4·4096, q/k/v 2·6144, rotated q/k 2·5120, attention 2·4096 + 4·32, gate/up and
    # product 6·14336, four rank-16 adapter intermediates; 32 blocks and RoPE's FP32 cos/sin rows 2·4·128
    per_token = 32 * (4 * 4096 + 8 + 4 * 4096 + 12_288 + 10_240 + 8_192 + 128 + 6 * 14_336 + 128) + 1024
    states = 2 * 8_030_261_248 + 12 * 16 * 32 * (4096 + 6144 + 4096 + 4096 + 4096 + 28_672 + 14_336 + 4096)
    loss = 1024 * 128_256 * 10  # one chunk's FP32 logits, softmax and 16-bit gradient

    def peak(micro_batch):  # and the token ids, 16 bytes a token (int64 input and target)
        return states + micro_batch * 2048 * (per_token + 2 * 4096 + 16) + loss

    budget = 80 * ta.GIB * llm_train.FIT_FRACTION
    assert peak(6) <= budget < peak(7)
    params = llm_train.BENCHMARK.resolve_params({"model": "llama-3.1-8b", "seq": 2048, "method": "lora"})
    arch = architectures.builtin("llama-3.1-8b")
    assert llm_train.estimate(arch, params, 6).total == peak(6)
    summary = what_fits.largest_summary(80 * ta.GIB)
    assert summary == ("largest that trains on one 80 GiB GPU at seq 2048 (estimate): GPT-2: full gpt2-124m, "
                       "LoRA gpt2-124m; Llama 3: full llama-3.2-1b, LoRA llama-3.1-8b; Qwen2.5: full none, "
                       "LoRA qwen2.5-7b")


def test_scaling_efficiency_reads_only_a_matching_one_gpu_document(tmp_path):
    import json

    from hwbench_gui.engine.benchmarks import llm_train

    params = dict(llm_train.BENCHMARK.resolve_params({"model": "tiny", "gpus": 2, "micro_batch": 4}))
    doc = {"benchmark": {"id": "llm.train"}, "status": "ok", "figure": {"value": 1000.0},
           "params": {**params, "gpus": 1}, "details": {"world_size": 1}}
    path = tmp_path / "one.json"
    path.write_text(json.dumps(doc))
    warnings: list[str] = []
    assert llm_train._single_rate({**params, "single_gpu_result": str(path)}, warnings) == 1000.0 and not warnings
    path.write_text(json.dumps({**doc, "params": {**doc["params"], "seq": 2048}}))
    assert llm_train._single_rate({**params, "single_gpu_result": str(path)}, warnings) is None
    assert "differs in seq" in warnings[-1]
    assert llm_train._single_rate({**params, "single_gpu_result": str(tmp_path)}, warnings) is None
    assert "a folder: not read as a JSON file" in warnings[-1]
