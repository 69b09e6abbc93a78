"""A user's Hugging Face folder (``config.json`` + ``*.safetensors``) loaded into a :class:`~.model.Decoder`.

The safetensors format (tensors only: never pickle) is read here from the file descriptor each file was
checked on (:mod:`hwbench_gui.engine.foreign`: a regular file, its size bounded by what the configuration
needs), so a name swapped for a pipe or another file between the check and the read cannot slip through.
Each header is checked whole before any tensor is read: its length against the file, its JSON's nesting,
every tensor's dtype, shape and byte range (inside the file, matching its shape, overlapping no other), and
every tensor's name and shape against the configuration. One clear line (a
:class:`~hwbench_gui.engine.spec.benchmark.ParamError` naming the file) says why a folder is refused.
"""

from __future__ import annotations

import glob
import json
import math
import os
from dataclasses import dataclass

from hwbench_gui.engine.foreign import MAX_JSON_DEPTH, ForeignFileError, json_depth, open_regular
from hwbench_gui.engine.models.llm import arithmetic
from hwbench_gui.engine.models.llm.architectures import Architecture, read_hf_config
from hwbench_gui.engine.shown_text import shown_path
from hwbench_gui.engine.spec.benchmark import ParamError

HEADER_SLACK_BYTES = 100 << 20  # safetensors caps a header at 100 MB
#: Bytes per element of each safetensors dtype (the format spells them in capitals: "F32", "BF16"; kept
#: lower-case here, apart from the precision labels hwbench declares once), and torch's name for it.
DTYPES = {"f64": (8, "float64"), "f32": (4, "float32"), "f16": (2, "float16"), "bf16": (2, "bfloat16"),
          "f8_e4m3": (1, "float8_e4m3fn"), "f8_e5m2": (1, "float8_e5m2"), "i64": (8, "int64"),
          "i32": (4, "int32"), "i16": (2, "int16"), "i8": (1, "int8"), "u8": (1, "uint8"), "bool": (1, "bool")}


def _dtype_key(dtype: object) -> str | None:
    """The :data:`DTYPES` key of a header's dtype, or None when the format has no such dtype."""
    if not isinstance(dtype, str) or dtype != dtype.upper() or dtype.lower() not in DTYPES:
        return None
    return dtype.lower()
MAX_FILES = 512  # each is held open while it is read; Llama 3.1 405B comes in 191
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


@dataclass(frozen=True)
class Tensor:
    """One tensor of a safetensors file, from its checked header: where its bytes are in the file."""

    dtype: str  # a DTYPES key
    shape: tuple[int, ...]
    start: int  # from the file's first byte
    nbytes: int


def _weight_files(folder: str) -> list[str]:
    paths = sorted(glob.glob(os.path.join(glob.escape(folder), "*.safetensors")))
    if not paths:
        raise ParamError(f"{shown_path(folder)}: no *.safetensors file (only safetensors weights are read, never "
                         "pickle)")
    if len(paths) > MAX_FILES:
        raise ParamError(f"{shown_path(folder)}: {len(paths)} safetensors files, more than {MAX_FILES}")
    return paths


def _open(path: str, max_bytes: int):
    """``path`` opened if it is a regular file of at most ``max_bytes``: the handle every check and read uses."""
    try:
        return open_regular(path, max_bytes, "a safetensors file")
    except ForeignFileError as exc:
        raise ParamError(str(exc)) from None


def read_header(handle, path: str) -> dict[str, Tensor]:
    """The tensors the safetensors file open in ``handle`` declares, every one checked against the file;
    ParamError naming the file and what is wrong otherwise."""
    def bad(reason: str) -> ParamError:
        return ParamError(f"{shown_path(path)}: not a readable safetensors file ({reason})")

    size = os.fstat(handle.fileno()).st_size
    if size < 8:
        raise bad(f"{size} bytes, shorter than the 8-byte header length")
    length = int.from_bytes(os.pread(handle.fileno(), 8, 0), "little")
    if length > min(HEADER_SLACK_BYTES, size - 8):
        raise bad(f"its header claims {length:,} bytes, the file has {size - 8:,} after the length")
    raw = os.pread(handle.fileno(), length, 8)
    if len(raw) != length:
        raise bad("the file ended inside its header")
    if json_depth(raw) > MAX_JSON_DEPTH:
        raise bad("its header's JSON is nested too deeply")
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise bad(f"its header is not JSON: {str(exc)[:80]}") from None
    if not isinstance(header, dict):
        raise bad("its header is not a JSON object")
    data_start, data_bytes = 8 + length, size - 8 - length
    tensors: dict[str, Tensor] = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        shown = shown_path(name)[:200]
        if not isinstance(entry, dict):
            raise bad(f"tensor {shown} is not described by an object")
        dtype, shape, offsets = entry.get("dtype"), entry.get("shape"), entry.get("data_offsets")
        key = _dtype_key(dtype)
        if key is None:
            raise bad(f"tensor {shown} has dtype {str(dtype)[:40]!r}, not one of {', '.join(DTYPES).upper()}")
        if (not isinstance(shape, list) or len(shape) > 8
                or not all(isinstance(d, int) and not isinstance(d, bool) and 0 <= d < 1 << 40 for d in shape)):
            raise bad(f"tensor {shown} has no valid shape")
        if (not isinstance(offsets, list) or len(offsets) != 2
                or not all(isinstance(o, int) and not isinstance(o, bool) for o in offsets)
                or not 0 <= offsets[0] <= offsets[1] <= data_bytes):
            raise bad(f"tensor {shown}'s byte range {str(offsets)[:60]} is outside the file's {data_bytes:,} "
                      "bytes of data")
        nbytes = math.prod(shape) * DTYPES[key][0]
        if offsets[1] - offsets[0] != nbytes:
            raise bad(f"tensor {shown} of shape {shape} in {dtype} needs {nbytes:,} bytes, its range holds "
                      f"{offsets[1] - offsets[0]:,}")
        tensors[name] = Tensor(key, tuple(shape), data_start + offsets[0], nbytes)
    ranges = sorted((t.start, t.start + t.nbytes, n) for n, t in tensors.items() if t.nbytes)
    for (_, end, first), (start, _, second) in zip(ranges, ranges[1:]):
        if start < end:
            raise bad(f"tensors {shown_path(first)[:100]} and {shown_path(second)[:100]} overlap")
    return tensors


def check_folder(folder: str, arch: Architecture | None = None) -> tuple[Architecture, dict[str, Source],
                                                                         dict[str, tuple[str, Tensor]]]:
    """The folder's architecture, the parameter -> tensors plan, and tensor name -> (file, tensor), checked
    from the headers only: sizes bounded, every needed tensor present once with the configured shape,
    nothing unknown."""
    handles: dict = {}
    try:
        return _check(folder, arch, handles)
    finally:
        for handle in handles.values():
            handle.close()


def _check(folder: str, arch: Architecture | None, handles: dict) -> tuple[Architecture, dict[str, Source],
                                                                          dict[str, tuple[str, Tensor]]]:
    """:func:`check_folder`, leaving each file open in ``handles`` (path -> handle; the caller closes them),
    so the tensors are read from the very files whose headers were checked."""
    arch = arch or read_hf_config(folder)
    paths = _weight_files(folder)
    limit = arithmetic.total_params(arch) * 4 + arch.vocab * arch.hidden * 4 + HEADER_SLACK_BYTES * len(paths)
    where: dict[str, tuple[str, Tensor]] = {}
    total = 0
    for path in paths:
        handle = handles[path] = _open(path, limit)
        total += os.fstat(handle.fileno()).st_size
        if total > limit:
            raise ParamError(f"{shown_path(folder)}: {total} bytes of safetensors, more than the {limit} that "
                             "FP32 weights of its config.json would need")
        for name, tensor in read_header(handle, path).items():
            if name in where:
                raise ParamError(f"{shown_path(path)}: tensor {shown_path(name)[:200]} is also in "
                                 f"{shown_path(where[name][0])}")
            where[name] = (path, tensor)
    if "wte.weight" in where or "transformer.wte.weight" in where:
        plan = _gpt2_sources(arch, "transformer." if "transformer.wte.weight" in where else "")
    else:
        plan = _llama_sources(arch)
    wanted = {name: shape for source in plan.values() for name, shape in zip(source.names, source.shapes)}
    for name, shape in wanted.items():
        if name not in where:
            raise ParamError(f"{shown_path(folder)}: tensor {name} is missing")
        path, tensor = where[name]
        if tensor.shape != shape:
            raise ParamError(f"{shown_path(path)}: tensor {name} has shape {list(tensor.shape)}, config.json makes "
                             f"it {list(shape)}")
    tied_extra = {"lm_head.weight"} if arch.tied_embeddings else set()
    unknown = [n for n in where if n not in wanted and n not in tied_extra and not n.endswith(IGNORED_SUFFIXES)]
    if unknown:
        raise ParamError(f"{shown_path(where[unknown[0]][0])}: tensor {shown_path(unknown[0])[:200]} is not part "
                         f"of a {arch.norm}/{arch.mlp} decoder ({len(unknown)} such)")
    return arch, plan, where


def _read_tensor(torch, handle, path: str, tensor: Tensor):
    data = bytearray(tensor.nbytes)
    view, done = memoryview(data), 0
    while done < tensor.nbytes:  # pread may return less than asked
        got = os.preadv(handle.fileno(), [view[done:]], tensor.start + done)
        if got == 0:
            raise ParamError(f"{shown_path(path)}: the file shrank while it was read")
        done += got
    value = torch.frombuffer(data, dtype=getattr(torch, DTYPES[tensor.dtype][1])) if data else \
        torch.empty(0, dtype=getattr(torch, DTYPES[tensor.dtype][1]))
    return value.reshape(tensor.shape)


def load(folder: str, dtype, device, *, rope_positions: int | None = None, fp8_blocks: bool = False,
         weights: str = "bf16", int4_route: str = "packed"):
    """The decoder of ``folder`` with its weights, in ``dtype`` on ``device``, checked first by
    :func:`check_folder`; each tensor is read, converted and copied in one at a time (with ``fp8_blocks``, or
    ``weights`` a weight-only kind, a block matmul's weight quantised as it arrives: the BF16 model never exists
    whole)."""
    import torch

    from hwbench_gui.engine.models.llm.fp8 import Fp8Linear
    from hwbench_gui.engine.models.llm.model import build
    from hwbench_gui.engine.models.llm.weight_only import WeightOnlyLinear

    handles: dict = {}
    try:
        arch, plan, where = _check(folder, None, handles)
        model = build(arch, dtype, device, rope_positions=rope_positions, seed=None, fp8_blocks=fp8_blocks,
                      weights=weights, int4_route=int4_route)
        params = dict(model.named_parameters())
        fp8_layers = {f"{name}.weight": module for name, module in model.named_modules()
                      if isinstance(module, (Fp8Linear, WeightOnlyLinear))}
        with torch.no_grad():
            for param_name, source in plan.items():
                parts = [_read_tensor(torch, handles[where[name][0]], where[name][0], where[name][1])
                         for name in source.names]
                if source.transpose:
                    parts = [part.t() for part in parts]
                value = torch.cat(parts, dim=0) if len(parts) > 1 else parts[0]
                if param_name in fp8_layers:
                    fp8_layers[param_name].set_weight(value.to(device=device, dtype=dtype))
                else:
                    params[param_name].copy_(value)
    finally:
        for handle in handles.values():
            handle.close()
    missing = (set(params) | set(fp8_layers)) - set(plan)
    if missing:
        raise ParamError(f"{shown_path(folder)}: no tensor for {sorted(missing)[0]}")
    return model
