"""A user's Hugging Face folder (``config.json`` + ``*.safetensors``) loaded into a :class:`~.model.Decoder`.

Read through the ``safetensors`` package (tensors only: never pickle). Every file must be a regular file;
the folder's tensor bytes are bounded by what the configuration needs, and every tensor's name and shape is
checked against the configuration from the files' headers before the model is allocated. One clear line
(a :class:`~hwbench_gui.engine.spec.benchmark.ParamError` naming the file) says why a folder is refused.
"""

from __future__ import annotations

import glob
import os
import stat
from dataclasses import dataclass

from hwbench_gui.engine.models.llm import arithmetic
from hwbench_gui.engine.models.llm.architectures import Architecture, read_hf_config
from hwbench_gui.engine.spec.benchmark import ParamError

HEADER_SLACK_BYTES = 100 << 20  # safetensors caps a header at 100 MB
MAX_FILES = 4096
#: Tensors a checkpoint may carry that hold no weights (RoPE tables, GPT-2's causal-mask buffers).
IGNORED_SUFFIXES = ("rotary_emb.inv_freq", "attn.bias", "attn.masked_bias")


@dataclass(frozen=True)
class Source:
    """Where one of the model's parameters comes from: checkpoint tensors concatenated along dim 0,
    each transposed first where ``transpose`` (GPT-2's Conv1D stores [in, out])."""

    names: tuple[str, ...]
    shapes: tuple[tuple[int, ...], ...]
    transpose: bool = False


def _llama_sources(arch: Architecture) -> dict[str, Source]:
    h, q, kv, inter = arch.hidden, arch.q_size, arch.kv_size, arch.intermediate
    sources = {"embed.weight": Source(("model.embed_tokens.weight",), ((arch.vocab, h),)),
               "norm.weight": Source(("model.norm.weight",), ((h,),))}
    if not arch.tied_embeddings:
        sources["head.weight"] = Source(("lm_head.weight",), ((arch.vocab, h),))
    for i in range(arch.layers):
        pre, at = f"model.layers.{i}.", f"blocks.{i}."
        sources[at + "attn_norm.weight"] = Source((pre + "input_layernorm.weight",), ((h,),))
        sources[at + "mlp_norm.weight"] = Source((pre + "post_attention_layernorm.weight",), ((h,),))
        sources[at + "qkv.weight"] = Source(tuple(pre + f"self_attn.{p}_proj.weight" for p in "qkv"),
                                            ((q, h), (kv, h), (kv, h)))
        if arch.qkv_bias:
            sources[at + "qkv.bias"] = Source(tuple(pre + f"self_attn.{p}_proj.bias" for p in "qkv"),
                                              ((q,), (kv,), (kv,)))
        sources[at + "out.weight"] = Source((pre + "self_attn.o_proj.weight",), ((h, q),))
        sources[at + "up.weight"] = Source((pre + "mlp.gate_proj.weight", pre + "mlp.up_proj.weight"),
                                           ((inter, h), (inter, h)))
        sources[at + "down.weight"] = Source((pre + "mlp.down_proj.weight",), ((h, inter),))
    return sources


def _gpt2_sources(arch: Architecture, prefix: str) -> dict[str, Source]:
    h, inter = arch.hidden, arch.intermediate
    sources = {"embed.weight": Source((prefix + "wte.weight",), ((arch.vocab, h),)),
               "pos_embed.weight": Source((prefix + "wpe.weight",), ((arch.max_positions, h),)),
               "norm.weight": Source((prefix + "ln_f.weight",), ((h,),)),
               "norm.bias": Source((prefix + "ln_f.bias",), ((h,),))}
    for i in range(arch.layers):
        pre, at = f"{prefix}h.{i}.", f"blocks.{i}."
        for ours, theirs in (("attn_norm", "ln_1"), ("mlp_norm", "ln_2")):
            for kind in ("weight", "bias"):
                sources[f"{at}{ours}.{kind}"] = Source((f"{pre}{theirs}.{kind}",), ((h,),))
        for ours, theirs, n_in, n_out in (("qkv", "attn.c_attn", h, 3 * h), ("out", "attn.c_proj", h, h),
                                          ("up", "mlp.c_fc", h, inter), ("down", "mlp.c_proj", inter, h)):
            sources[f"{at}{ours}.weight"] = Source((f"{pre}{theirs}.weight",), ((n_in, n_out),), transpose=True)
            sources[f"{at}{ours}.bias"] = Source((f"{pre}{theirs}.bias",), ((n_out,),))
    return sources


def _regular_files(folder: str) -> list[tuple[str, int]]:
    paths = sorted(glob.glob(os.path.join(glob.escape(folder), "*.safetensors")))
    if not paths:
        raise ParamError(f"{folder}: no *.safetensors file (only safetensors weights are read, never pickle)")
    if len(paths) > MAX_FILES:
        raise ParamError(f"{folder}: {len(paths)} safetensors files, more than {MAX_FILES}")
    files = []
    for path in paths:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            raise ParamError(f"{path}: not a regular file")
        files.append((path, info.st_size))
    return files


def check_folder(folder: str, arch: Architecture | None = None) -> tuple[Architecture, dict[str, Source],
                                                                         dict[str, str]]:
    """The folder's architecture, the parameter -> tensors plan, and tensor name -> file, checked from the
    headers only: sizes bounded, every needed tensor present once with the configured shape, nothing unknown."""
    from safetensors import SafetensorError, safe_open

    arch = arch or read_hf_config(folder)
    files = _regular_files(folder)
    limit = arithmetic.total_params(arch) * 4 + arch.vocab * arch.hidden * 4 + HEADER_SLACK_BYTES * len(files)
    total = sum(size for _, size in files)
    if total > limit:
        raise ParamError(f"{folder}: {total} bytes of safetensors, more than the {limit} that FP32 weights of "
                         "its config.json would need")
    shapes: dict[str, tuple[int, ...]] = {}
    where: dict[str, str] = {}
    for path, _ in files:
        try:
            with safe_open(path, framework="pt", device="cpu") as handle:
                for name in handle.keys():
                    if name in where:
                        raise ParamError(f"{path}: tensor {name} is also in {where[name]}")
                    shapes[name] = tuple(handle.get_slice(name).get_shape())
                    where[name] = path
        except (SafetensorError, OSError) as exc:
            raise ParamError(f"{path}: not a readable safetensors file ({exc})") from None
    if "wte.weight" in shapes or "transformer.wte.weight" in shapes:
        plan = _gpt2_sources(arch, "transformer." if "transformer.wte.weight" in shapes else "")
    else:
        plan = _llama_sources(arch)
    wanted = {name: shape for source in plan.values() for name, shape in zip(source.names, source.shapes)}
    for name, shape in wanted.items():
        if name not in shapes:
            raise ParamError(f"{folder}: tensor {name} is missing")
        if shapes[name] != shape:
            raise ParamError(f"{where[name]}: tensor {name} has shape {list(shapes[name])}, config.json makes it "
                             f"{list(shape)}")
    tied_extra = {"lm_head.weight"} if arch.tied_embeddings else set()
    unknown = [n for n in shapes if n not in wanted and n not in tied_extra and not n.endswith(IGNORED_SUFFIXES)]
    if unknown:
        raise ParamError(f"{where[unknown[0]]}: tensor {unknown[0]} is not part of a {arch.norm}/{arch.mlp} "
                         f"decoder ({len(unknown)} such)")
    return arch, plan, where


def load(folder: str, dtype, device, *, rope_positions: int | None = None, fp8_blocks: bool = False):
    """The decoder of ``folder`` with its weights, in ``dtype`` on ``device``, checked first by
    :func:`check_folder`; each tensor is read, converted and copied in one at a time (with ``fp8_blocks``, a
    block matmul's weight quantised to FP8 as it arrives: the BF16 model never exists whole)."""
    import torch
    from safetensors import safe_open

    from hwbench_gui.engine.models.llm.fp8 import Fp8Linear
    from hwbench_gui.engine.models.llm.model import build

    arch, plan, where = check_folder(folder)
    model = build(arch, dtype, device, rope_positions=rope_positions, seed=None, fp8_blocks=fp8_blocks)
    params = dict(model.named_parameters())
    fp8_layers = {f"{name}.weight": module for name, module in model.named_modules() if isinstance(module, Fp8Linear)}
    handles = {}
    try:
        for path in sorted(set(where.values())):
            handles[path] = safe_open(path, framework="pt", device="cpu").__enter__()
        with torch.no_grad():
            for param_name, source in plan.items():
                parts = [handles[where[name]].get_tensor(name) for name in source.names]
                if source.transpose:
                    parts = [part.t() for part in parts]
                value = torch.cat(parts, dim=0) if len(parts) > 1 else parts[0]
                if param_name in fp8_layers:
                    fp8_layers[param_name].set_weight(value.to(device=device, dtype=dtype))
                else:
                    params[param_name].copy_(value)
    finally:
        for handle in handles.values():
            handle.__exit__(None, None, None)
    missing = (set(params) | set(fp8_layers)) - set(plan)
    if missing:
        raise ParamError(f"{folder}: no tensor for {sorted(missing)[0]}")
    return model
