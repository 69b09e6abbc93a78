"""Language-model architectures, their arithmetic, the decoder's KV cache and a user's safetensors folder."""

from __future__ import annotations

import json
import os

import pytest

from hwbench_gui.engine.models.llm import arithmetic as ar
from hwbench_gui.engine.models.llm import architectures as archs
from hwbench_gui.engine.spec.benchmark import ParamError


@pytest.mark.parametrize("name, params", [("gpt2-124m", 124_439_808), ("llama-3.2-1b", 1_235_814_400),
                                          ("llama-3.1-8b", 8_030_261_248), ("qwen2.5-7b", 7_615_616_512)])
def test_parameter_counts_match_the_published_models(name, params):
    assert ar.total_params(archs.builtin(name)) == params


def test_kv_cache_bytes_per_token_of_llama_31_8b_in_bf16():
    assert ar.kv_bytes_per_token(archs.builtin("llama-3.1-8b"), 2) == 2 * 32 * 8 * 128 * 2 == 131_072


def test_matmul_and_embedding_split_of_llama_31_8b():
    arch = archs.builtin("llama-3.1-8b")
    # 32 blocks of q,k,v,o (4096·(4096+1024+1024) + 4096·4096) and SwiGLU (3·4096·14336), plus the head.
    assert ar.matmul_params(arch) == 32 * (4096 * 6144 + 4096 * 4096 + 3 * 4096 * 14336) + 128256 * 4096
    assert ar.embedding_params(arch) == 128256 * 4096
    # Tied GPT-2: the head is the token table, read in full each step; its position table is not.
    gpt2 = archs.builtin("gpt2-124m")
    assert ar.weight_params_read_per_step(gpt2) == 124_439_808 - 1024 * 768 + 2 * 768


def test_bytes_and_flops_per_generated_token():
    arch = archs.builtin("llama-3.1-8b")
    weights = (8_030_261_248 - 128256 * 4096 + 4096) * 2
    assert ar.bytes_per_step(arch, 2, 2, context=0) == weights + 131_072
    assert ar.bytes_per_step(arch, 2, 2, context=4096, batch=3) == weights + 3 * 131_072 * 4097
    assert ar.flops_per_token(arch, 1000) == 2 * ar.matmul_params(arch) + 4 * 32 * 32 * 128 * 1000
    # Three queries after two cached positions attend 3 + 4 + 5 keys.
    assert ar.attention_flops(arch, 3, 2) == 4 * 32 * 32 * 128 * 12
    assert ar.forward_flops(arch, 3, 2, logit_tokens=1) == (2 * (ar.matmul_params(arch) - 128256 * 4096) * 3
                                                            + 4 * 32 * 32 * 128 * 12 + 2 * 128256 * 4096)


def test_memory_plan_adds_its_parts():
    arch = archs.builtin("llama-3.1-8b")
    plan = ar.memory_plan(arch, 2, batch=2, cache_positions=1000, chunk_tokens=10)
    assert plan.weights_bytes == 8_030_261_248 * 2
    assert plan.kv_cache_bytes == 131_072 * 2 * 1024  # 1000 positions allocate four blocks of 256
    assert [ar.allocated_positions(n) for n in (1, 256, 257, 16384 + 512)] == [256, 256, 512, 16896]
    assert plan.total_bytes == sum(v for k, v in plan.to_json().items() if k != "total_bytes")


def test_fp8_weights_count_one_byte_each_plus_a_scale_per_output_channel():
    arch = archs.builtin("llama-3.1-8b")
    # One block's matmuls have 6144 (q, k, v) + 4096 (output) + 28672 (gate and up) + 4096 (down) output channels.
    assert ar.layer_matmul_channels(arch) == 43_008
    blocks = 32 * 218_103_808  # block matmul weights, one byte each
    scales = 32 * 43_008 * 4  # an FP32 scale per output channel
    # Read per step in BF16: 2 norms per block, the final norm, the output projection and one token row.
    others_read = 32 * 2 * 4096 + 4096 + 128256 * 4096 + 4096
    assert ar.FP8_BLOCKS.read_per_step(arch) == blocks + scales + 2 * others_read == 8_036_040_704
    assert ar.bytes_per_step(arch, ar.FP8_BLOCKS, 2, context=99) == 8_036_040_704 + 131_072 * 100
    # Stored: the token table too (untied head), everything but the blocks' matmuls in BF16.
    assert ar.FP8_BLOCKS.stored(arch) == blocks + scales + 2 * (8_030_261_248 - blocks) == 9_086_705_664
    plan = ar.memory_plan(arch, 2, batch=1, cache_positions=256, chunk_tokens=10, weight_bytes=ar.FP8_BLOCKS)
    assert (plan.weights_bytes, plan.kv_cache_bytes) == (9_086_705_664, 131_072 * 256)
    # BF16 written the same way gives the figure the H200 document carries.
    assert ar.WeightBytes.uniform(2).read_per_step(arch) == 15_009_857_536


def _write(path, text):
    with open(path, "w") as handle:
        handle.write(text)


def test_hf_config_reads_into_the_same_architecture(tmp_path):
    config = {"model_type": "llama", "vocab_size": 128256, "hidden_size": 4096, "num_hidden_layers": 32,
              "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
              "max_position_embeddings": 131072, "rms_norm_eps": 1e-5, "rope_theta": 500000.0,
              "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                               "original_max_position_embeddings": 8192}, "tie_word_embeddings": False}
    _write(tmp_path / "config.json", json.dumps(config))
    arch = archs.resolve(str(tmp_path))
    assert ar.total_params(arch) == 8_030_261_248
    assert arch.rope_scaling == archs.builtin("llama-3.1-8b").rope_scaling
    # what the peer scripts write for transformers reads back as the same scaling
    assert arch.rope_scaling.to_hf() == config["rope_scaling"]
    gpt2 = {"model_type": "gpt2", "vocab_size": 50257, "n_embd": 768, "n_layer": 12, "n_head": 12, "n_positions": 1024}
    assert ar.total_params(archs.from_hf_config(gpt2, "g")) == 124_439_808


def test_foreign_configs_are_refused_with_a_reason(tmp_path):
    with pytest.raises(ParamError, match="not one of"):
        archs.resolve("llama-9")
    with pytest.raises(ParamError, match="cannot be read"):
        archs.read_hf_config(str(tmp_path))
    os.mkdir(tmp_path / "config.json")
    with pytest.raises(ParamError, match="a folder: not read as a config.json"):
        archs.read_hf_config(str(tmp_path))
    os.rmdir(tmp_path / "config.json")
    _write(tmp_path / "config.json", " " * (archs.CONFIG_MAX_BYTES + 1))
    with pytest.raises(ParamError, match="too large for a config.json"):
        archs.read_hf_config(str(tmp_path))
    with pytest.raises(ParamError, match="num_attention_heads 3 is not a multiple of num_key_value_heads 2"):
        archs.from_hf_config({"model_type": "llama", "vocab_size": 8, "hidden_size": 8, "num_hidden_layers": 1,
                              "num_attention_heads": 3, "num_key_value_heads": 2, "intermediate_size": 8,
                              "max_position_embeddings": 8}, "x")
    with pytest.raises(ParamError, match="model_type"):
        archs.from_hf_config({"model_type": "mamba"}, "x")
