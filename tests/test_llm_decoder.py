"""The decoder on the CPU with small configurations: KV-cached generation equals full recomputation, a
prompt processed after a filled cache equals processing the same tokens at once, and a user's safetensors
folder loads into the same logits as the same weights placed by hand."""

from __future__ import annotations

import json
import os
from dataclasses import replace

import pytest

torch = pytest.importorskip("torch")
safetensors_torch = pytest.importorskip("safetensors.torch")

from hwbench_gui.engine.models.llm import architectures as archs  # noqa: E402
from hwbench_gui.engine.models.llm import arithmetic as ar  # noqa: E402
from hwbench_gui.engine.models.llm import fp8  # noqa: E402
from hwbench_gui.engine.models.llm import model as llm  # noqa: E402
from hwbench_gui.engine.models.llm import weights  # noqa: E402
from hwbench_gui.engine.spec.benchmark import ParamError  # noqa: E402

TINY = archs.builtin("tiny")
TINY_GPT2 = replace(archs.builtin("gpt2-124m"), name="tiny-gpt2", vocab=300, hidden=64, layers=2, heads=4,
                    kv_heads=4, head_dim=16, intermediate=128, max_positions=64)
TOL = dict(atol=2e-5, rtol=1e-4)


@pytest.mark.parametrize("split", [False, True], ids=["matmul-adds", "split-adds"])
@pytest.mark.parametrize("arch", [TINY, TINY_GPT2], ids=lambda a: a.name)
def test_cached_generation_equals_full_recomputation(arch, split):
    # split: residuals and biases added after their matmuls, as step=fused's compiled step runs it
    torch.manual_seed(0)
    model = llm.build(arch, torch.float32, "cpu", rope_positions=64, seed=1)
    with torch.no_grad():  # random weights leave biases at zero: a lost bias would go unseen
        for name, param in model.named_parameters():
            if name.endswith("bias"):
                param.normal_(0.0, 0.1)
    tokens = torch.randint(0, arch.vocab, (2, 24))
    with torch.inference_mode():
        full = model(tokens)
        cache = llm.KVCache.allocate(arch, 2, 32, torch.float32, "cpu")
        prompt = model(tokens[:, :16], cache=cache, start=0)
        torch.testing.assert_close(prompt, full[:, :16], **TOL)
        for i in range(16, 24):
            step = model.decode(tokens[:, i:i + 1], torch.tensor(i), cache, split=split)
            torch.testing.assert_close(step, full[:, i], **TOL)


def test_an_fp8_layer_multiplies_its_quantised_operands_with_both_scales():
    torch.manual_seed(5)
    weight = torch.randn(256, 128, dtype=torch.bfloat16) * 0.02
    weight[7] *= 50  # one channel far larger: a scale per output channel keeps the others' resolution
    x = torch.randn(2, 3, 128, dtype=torch.bfloat16)
    x[1, 2] *= 100  # one token far larger: a scale per token keeps the others'
    layer = fp8.Fp8Linear(128, 256, bias=False)
    layer.set_weight(weight)
    assert layer.weight.dtype == torch.float8_e4m3fn and layer.scale.shape == (1, 256)
    y = layer(x)
    assert y.shape == (2, 3, 256) and y.dtype == torch.bfloat16
    # What _scaled_mm is asked for: (q_x · s_x) (q_w · s_w)ᵀ, up to the BF16 rounding of its output.
    q, s = fp8.quantize_rows(x.reshape(6, 128))
    exact = (q.float() * s) @ layer.dequantized().t()
    torch.testing.assert_close(y.float().reshape(6, 256), exact, rtol=2 ** -8, atol=1e-6)
    # Against the BF16 layer: e4m3's 3 mantissa bits on both operands, within 6 % of the output's norm.
    reference = x.float() @ weight.float().t()
    assert (y.float() - reference).norm() / reference.norm() < 0.06


def test_fp8_blocks_hold_one_byte_per_weight_and_generate_as_recomputed():
    model = llm.build(TINY, torch.bfloat16, "cpu", rope_positions=64, seed=1, fp8_blocks=True)
    # Everything stored (the RoPE tables are made, not stored) is what the memory plan counts.
    stored = [t for n, t in model.state_dict().items()]
    assert sum(t.numel() * t.element_size() for t in stored) == ar.FP8_BLOCKS.stored(TINY)
    assert {model.blocks[0].qkv.weight.dtype, model.blocks[1].down.weight.dtype} == {torch.float8_e4m3fn}
    assert model.head.weight.dtype == model.embed.weight.dtype == torch.bfloat16
    torch.manual_seed(0)
    tokens = torch.randint(0, TINY.vocab, (2, 24))
    with torch.inference_mode():
        full = model(tokens)
        cache = llm.KVCache.allocate(TINY, 2, 32, torch.bfloat16, "cpu")
        model(tokens[:, :16], cache=cache, start=0)
        for i in range(16, 24):
            step = model.decode(tokens[:, i:i + 1], torch.tensor(i), cache, split=bool(i % 2))
            # BF16 logits of about ±0.9: a cached step's inputs differ from the recomputed ones in their last
            # BF16 bits, which can move a per-token FP8 rounding by one step (0.005 apart in BF16 alone).
            torch.testing.assert_close(step.float(), full[:, i].float(), atol=0.04, rtol=0)


def test_prompt_after_a_filled_cache_equals_processing_the_same_tokens():
    model = llm.build(TINY, torch.float32, "cpu", rope_positions=128, seed=2)
    tokens = torch.randint(0, TINY.vocab, (1, 100))
    with torch.inference_mode():
        whole = model(tokens, cache=llm.KVCache.allocate(TINY, 1, 100, torch.float32, "cpu"), start=0)
        cache = llm.KVCache.allocate(TINY, 1, 100, torch.float32, "cpu")
        model(tokens[:, :37], cache=cache, start=0)
        model(tokens[:, 37:80], cache=cache, start=37)
        last = model(tokens[:, 80:], cache=cache, start=80, last_only=True)
    torch.testing.assert_close(last, whole[:, -1:], **TOL)
    # Without a cache (the training path) the same logits come out.
    torch.testing.assert_close(model(tokens)[:, -1:].detach(), whole[:, -1:], **TOL)


def test_weights_are_made_in_the_run_dtype():
    model = llm.build(TINY, torch.bfloat16, "cpu", rope_positions=16)
    assert {p.dtype for p in model.parameters()} == {torch.bfloat16}
    assert all(p.abs().sum() > 0 for n, p in model.named_parameters() if not n.endswith("bias"))


def _llama_folder(path, arch, generator):
    config = {"model_type": "qwen2", "vocab_size": arch.vocab, "hidden_size": arch.hidden,
              "num_hidden_layers": arch.layers, "num_attention_heads": arch.heads,
              "num_key_value_heads": arch.kv_heads, "intermediate_size": arch.intermediate,
              "max_position_embeddings": arch.max_positions, "rms_norm_eps": arch.norm_eps,
              "rope_theta": arch.rope_theta, "tie_word_embeddings": False}
    (path / "config.json").write_text(json.dumps(config))
    h, q, kv, i = arch.hidden, arch.q_size, arch.kv_size, arch.intermediate

    def rand(*shape):
        return torch.randn(*shape, generator=generator) * 0.05

    tensors = {"model.embed_tokens.weight": rand(arch.vocab, h), "model.norm.weight": 1 + rand(h),
               "lm_head.weight": rand(arch.vocab, h)}
    for n in range(arch.layers):
        p = f"model.layers.{n}."
        tensors.update({p + "input_layernorm.weight": 1 + rand(h), p + "post_attention_layernorm.weight": 1 + rand(h),
                        p + "self_attn.q_proj.weight": rand(q, h), p + "self_attn.k_proj.weight": rand(kv, h),
                        p + "self_attn.v_proj.weight": rand(kv, h), p + "self_attn.q_proj.bias": rand(q),
                        p + "self_attn.k_proj.bias": rand(kv), p + "self_attn.v_proj.bias": rand(kv),
                        p + "self_attn.o_proj.weight": rand(h, q), p + "mlp.gate_proj.weight": rand(i, h),
                        p + "mlp.up_proj.weight": rand(i, h), p + "mlp.down_proj.weight": rand(h, i)})
    names = sorted(tensors)
    half = len(names) // 2  # two shards, as large checkpoints come
    safetensors_torch.save_file({k: tensors[k] for k in names[:half]}, str(path / "model-00001.safetensors"))
    safetensors_torch.save_file({k: tensors[k] for k in names[half:]}, str(path / "model-00002.safetensors"))
    return tensors


def test_a_hugging_face_folder_loads_the_same_logits_as_weights_placed_by_hand(tmp_path):
    tensors = _llama_folder(tmp_path, TINY, torch.Generator().manual_seed(3))
    loaded = weights.load(str(tmp_path), torch.float32, "cpu", rope_positions=64)
    assert loaded.arch.bias == "qkv" and loaded.arch.kv_heads == 2
    by_hand = llm.build(loaded.arch, torch.float32, "cpu", rope_positions=64, seed=None)
    with torch.no_grad():
        by_hand.embed.weight.copy_(tensors["model.embed_tokens.weight"])
        by_hand.head.weight.copy_(tensors["lm_head.weight"])
        by_hand.norm.weight.copy_(tensors["model.norm.weight"])
        for n, block in enumerate(by_hand.blocks):
            p = f"model.layers.{n}."
            block.attn_norm.weight.copy_(tensors[p + "input_layernorm.weight"])
            block.mlp_norm.weight.copy_(tensors[p + "post_attention_layernorm.weight"])
            block.qkv.weight.copy_(torch.cat([tensors[p + f"self_attn.{x}_proj.weight"] for x in "qkv"]))
            block.qkv.bias.copy_(torch.cat([tensors[p + f"self_attn.{x}_proj.bias"] for x in "qkv"]))
            block.out.weight.copy_(tensors[p + "self_attn.o_proj.weight"])
            block.up.weight.copy_(torch.cat([tensors[p + "mlp.gate_proj.weight"], tensors[p + "mlp.up_proj.weight"]]))
            block.down.weight.copy_(tensors[p + "mlp.down_proj.weight"])
    tokens = torch.randint(0, TINY.vocab, (1, 12))
    with torch.inference_mode():
        torch.testing.assert_close(loaded(tokens), by_hand(tokens), atol=0, rtol=0)
    # The loaded model carries real values: a different seed's model gives different logits.
    with torch.inference_mode():
        other = llm.build(loaded.arch, torch.float32, "cpu", rope_positions=64)
        assert not torch.allclose(loaded(tokens), other(tokens))


def test_foreign_safetensors_folders_are_refused_before_allocating(tmp_path):
    tensors = _llama_folder(tmp_path, TINY, torch.Generator().manual_seed(4))
    config = json.loads((tmp_path / "config.json").read_text())
    config["intermediate_size"] = TINY.intermediate * 2
    (tmp_path / "config.json").write_text(json.dumps(config))
    with pytest.raises(ParamError, match="gate_proj.weight has shape"):
        weights.check_folder(str(tmp_path))
    config["intermediate_size"] = TINY.intermediate
    (tmp_path / "config.json").write_text(json.dumps(config))
    os.remove(tmp_path / "model-00002.safetensors")
    with pytest.raises(ParamError, match="is missing"):
        weights.check_folder(str(tmp_path))
    os.mkdir(tmp_path / "model-00002.safetensors")
    with pytest.raises(ParamError, match="a folder: not read as a safetensors file"):
        weights.check_folder(str(tmp_path))
    os.rmdir(tmp_path / "model-00002.safetensors")
    (tmp_path / "model-00002.safetensors").write_bytes(b"\x10" + b"\0" * 7 + b"not json at all!")
    with pytest.raises(ParamError, match="not a readable safetensors file"):
        weights.check_folder(str(tmp_path))
    del tensors


def test_a_gpt2_folder_loads_with_its_transposed_layers(tmp_path):
    arch = TINY_GPT2
    config = {"model_type": "gpt2", "vocab_size": arch.vocab, "n_embd": arch.hidden, "n_layer": arch.layers,
              "n_head": arch.heads, "n_positions": arch.max_positions, "n_inner": arch.intermediate}
    (tmp_path / "config.json").write_text(json.dumps(config))
    source = llm.build(arch, torch.float32, "cpu", seed=5)
    state = {"wte.weight": source.embed.weight, "wpe.weight": source.pos_embed.weight,
             "ln_f.weight": source.norm.weight, "ln_f.bias": source.norm.bias}
    for n, block in enumerate(source.blocks):
        for ours, theirs in (("qkv", "attn.c_attn"), ("out", "attn.c_proj"), ("up", "mlp.c_fc"),
                             ("down", "mlp.c_proj")):
            state[f"h.{n}.{theirs}.weight"] = getattr(block, ours).weight.t()
            state[f"h.{n}.{theirs}.bias"] = getattr(block, ours).bias
        for ours, theirs in (("attn_norm", "ln_1"), ("mlp_norm", "ln_2")):
            state[f"h.{n}.{theirs}.weight"] = getattr(block, ours).weight
            state[f"h.{n}.{theirs}.bias"] = getattr(block, ours).bias
    safetensors_torch.save_file({k: v.detach().contiguous() for k, v in state.items()}, str(tmp_path / "m.safetensors"))
    loaded = weights.load(str(tmp_path), torch.float32, "cpu")
    tokens = torch.randint(0, arch.vocab, (1, 10))
    with torch.inference_mode():
        torch.testing.assert_close(loaded(tokens), source(tokens), atol=0, rtol=0)


def test_the_one_token_step_reads_the_cache_in_place():
    # A copy of the KV cache per step (a .contiguous() of its transpose, an out-of-place write) would read and
    # write it again for every token: generation's bound counts it read once.
    from torch.utils._python_dispatch import TorchDispatchMode

    model = llm.build(TINY, torch.float32, "cpu", rope_positions=2048)
    cache = llm.KVCache.allocate(TINY, 1, 2048, torch.float32, "cpu")
    layer_numel = cache.k[0].numel()

    class Ops(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.large = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            if isinstance(out, torch.Tensor) and out.numel() >= layer_numel:
                self.large.append(func.__name__.split(".")[0])
            return out

    with torch.inference_mode(), Ops() as ops:
        model.decode(torch.zeros(1, 1, dtype=torch.long), torch.tensor(7), cache)
    assert ops.large and set(ops.large) <= {"select", "transpose", "expand", "view", "index_put_", "alias"}


def test_a_hugging_face_folder_loads_into_fp8_blocks(tmp_path):
    tensors = _llama_folder(tmp_path, TINY, torch.Generator().manual_seed(6))
    loaded = weights.load(str(tmp_path), torch.bfloat16, "cpu", rope_positions=64, fp8_blocks=True)
    qkv = torch.cat([tensors[f"model.layers.1.self_attn.{x}_proj.weight"] for x in "qkv"]).to(torch.bfloat16)
    q, scale = fp8.quantize_rows(qkv)
    layer = loaded.blocks[1].qkv
    assert torch.equal(layer.weight.view(torch.uint8), q.view(torch.uint8))
    assert torch.equal(layer.scale, scale.view(1, -1))
    torch.testing.assert_close(layer.bias, torch.cat([tensors[f"model.layers.1.self_attn.{x}_proj.bias"]
                                                      for x in "qkv"]).to(torch.bfloat16))
    assert torch.equal(loaded.head.weight, tensors["lm_head.weight"].to(torch.bfloat16))


def test_an_fp8_weight_quantised_a_block_of_rows_at_a_time_is_the_whole_one(monkeypatch):
    weight = torch.randn(300, 64, generator=torch.Generator().manual_seed(7)).to(torch.bfloat16)
    monkeypatch.setattr(fp8, "QUANTIZE_ROWS", 128)  # 128 + 128 + 44 rows
    layer = fp8.Fp8Linear(64, 300, bias=False)
    layer.set_weight(weight)
    q, scale = fp8.quantize_rows(weight)
    assert torch.equal(layer.weight.view(torch.uint8), q.view(torch.uint8))
    assert torch.equal(layer.scale, scale.view(1, -1))
