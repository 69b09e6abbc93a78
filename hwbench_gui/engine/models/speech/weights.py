"""A user's Hugging Face Whisper folder (``config.json`` + ``*.safetensors``) loaded into :class:`~.model.Whisper`.

The safetensors files are opened and their headers checked whole by the language models' reader
(:func:`hwbench_gui.engine.models.llm.weights.read_header`: a regular file, its size bounded, every tensor's dtype,
shape and byte range checked) before any tensor is read; then every tensor the configuration needs is checked for
presence and shape, and nothing unknown may remain. One line (a ParamError naming the file) says why a folder is
refused. :func:`plan` maps transformers' names onto this model's (q/k/v concatenated, the key's missing bias a zero),
and is what a test uses to give this model the weights of transformers' own.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable

from hwbench_gui.engine.models.llm import weights as llm_weights
from hwbench_gui.engine.models.speech.architectures import WhisperArch, resolve
from hwbench_gui.engine.shown_text import shown_path
from hwbench_gui.engine.spec.benchmark import ParamError

#: A part of a parameter that no checkpoint stores: the key projection's bias, zero in Whisper.
ZERO = ""


@dataclass(frozen=True)
class Part:
    """One checkpoint tensor (``name``, or :data:`ZERO` for zeros) of ``shape``, concatenated along dim 0."""

    name: str
    shape: tuple[int, ...]


def _attention(ours: str, theirs: str, d: int, fused: str) -> dict[str, tuple[Part, ...]]:
    """``fused`` "qkv": q, k, v in one matmul; "kv": k and v (the cross-attention's, applied to the encoder once)."""
    names = "qkv" if fused == "qkv" else "kv"
    return {f"{ours}.weight": tuple(Part(f"{theirs}.{p}_proj.weight", (d, d)) for p in names),
            f"{ours}.bias": tuple(Part(ZERO if p == "k" else f"{theirs}.{p}_proj.bias", (d,)) for p in names)}


def _linear(ours: str, theirs: str, n_out: int, n_in: int) -> dict[str, tuple[Part, ...]]:
    return {f"{ours}.weight": (Part(f"{theirs}.weight", (n_out, n_in)),),
            f"{ours}.bias": (Part(f"{theirs}.bias", (n_out,)),)}


def _norm(ours: str, theirs: str, d: int) -> dict[str, tuple[Part, ...]]:
    return {f"{ours}.{kind}": (Part(f"{theirs}.{kind}", (d,)),) for kind in ("weight", "bias")}


def plan(arch: WhisperArch, prefix: str = "model.") -> dict[str, tuple[Part, ...]]:
    """Each of this model's parameters -> the checkpoint tensors it is made of (transformers' names under
    ``prefix``: "model." in a WhisperForConditionalGeneration checkpoint, "" in a WhisperModel one)."""
    d, enc, dec = arch.d_model, f"{prefix}encoder", f"{prefix}decoder"
    out: dict[str, tuple[Part, ...]] = {
        "encoder.conv1.weight": (Part(f"{enc}.conv1.weight", (d, arch.mels, 3)),),
        "encoder.conv1.bias": (Part(f"{enc}.conv1.bias", (d,)),),
        "encoder.conv2.weight": (Part(f"{enc}.conv2.weight", (d, d, 3)),),
        "encoder.conv2.bias": (Part(f"{enc}.conv2.bias", (d,)),),
        "encoder.pos": (Part(f"{enc}.embed_positions.weight", (arch.source_positions, d)),),
        "decoder.embed.weight": (Part(f"{dec}.embed_tokens.weight", (arch.vocab, d)),),
        "decoder.pos": (Part(f"{dec}.embed_positions.weight", (arch.target_positions, d)),),
        **_norm("encoder.norm", f"{enc}.layer_norm", d), **_norm("decoder.norm", f"{dec}.layer_norm", d),
    }
    for i in range(arch.encoder_layers):
        at, theirs = f"encoder.blocks.{i}", f"{enc}.layers.{i}"
        out |= _attention(f"{at}.qkv", f"{theirs}.self_attn", d, "qkv")
        out |= _linear(f"{at}.out", f"{theirs}.self_attn.out_proj", d, d)
        out |= _norm(f"{at}.attn_norm", f"{theirs}.self_attn_layer_norm", d)
        out |= _norm(f"{at}.mlp_norm", f"{theirs}.final_layer_norm", d)
        out |= _linear(f"{at}.fc1", f"{theirs}.fc1", arch.encoder_ffn, d)
        out |= _linear(f"{at}.fc2", f"{theirs}.fc2", d, arch.encoder_ffn)
    for i in range(arch.decoder_layers):
        at, theirs = f"decoder.blocks.{i}", f"{dec}.layers.{i}"
        out |= _attention(f"{at}.qkv", f"{theirs}.self_attn", d, "qkv")
        out |= _linear(f"{at}.out", f"{theirs}.self_attn.out_proj", d, d)
        out |= _linear(f"{at}.cross_q", f"{theirs}.encoder_attn.q_proj", d, d)
        out |= _attention(f"{at}.cross_kv", f"{theirs}.encoder_attn", d, "kv")
        out |= _linear(f"{at}.cross_out", f"{theirs}.encoder_attn.out_proj", d, d)
        out |= _norm(f"{at}.attn_norm", f"{theirs}.self_attn_layer_norm", d)
        out |= _norm(f"{at}.cross_norm", f"{theirs}.encoder_attn_layer_norm", d)
        out |= _norm(f"{at}.mlp_norm", f"{theirs}.final_layer_norm", d)
        out |= _linear(f"{at}.fc1", f"{theirs}.fc1", arch.decoder_ffn, d)
        out |= _linear(f"{at}.fc2", f"{theirs}.fc2", d, arch.decoder_ffn)
    return out


def assign(model: Any, parameters: dict[str, tuple[Part, ...]], tensor: Callable[[str], Any]) -> None:
    """Every parameter of ``model`` set from its parts, ``tensor(name)`` giving a checkpoint tensor (on the CPU)."""
    import torch

    mine = dict(model.named_parameters())
    if set(mine) != set(parameters):
        raise ValueError(f"the plan and the model differ: {sorted(set(mine) ^ set(parameters))[:3]}")
    with torch.no_grad():
        for name, parts in parameters.items():
            values = [torch.zeros(p.shape) if p.name == ZERO else tensor(p.name) for p in parts]
            value = torch.cat(values, dim=0) if len(values) > 1 else values[0]
            mine[name].copy_(value.to(mine[name].dtype))


#: Tensors a checkpoint may carry beside the plan's: the output projection, tied to the token embedding.
TIED = "proj_out.weight"


def check_folder(folder: str, arch: WhisperArch | None = None) -> tuple[WhisperArch, dict[str, tuple[Part, ...]],
                                                                         dict[str, tuple[str, Any]]]:
    """The folder's architecture, its parameter plan and tensor name -> (file, tensor), from the headers only:
    every needed tensor present once with the configured shape, nothing unknown."""
    handles: dict = {}
    try:
        return _check(folder, arch, handles)
    finally:
        for handle in handles.values():
            handle.close()


def _bytes_limit(arch: WhisperArch, files: int) -> int:
    """FP32 bytes of every tensor the configuration makes, and header room: the most a folder's files may hold."""
    from hwbench_gui.engine.models.speech.arithmetic import total_params

    return total_params(arch) * 4 + arch.vocab * arch.d_model * 4 + llm_weights.HEADER_SLACK_BYTES * files


def _check(folder: str, arch: WhisperArch | None, handles: dict) -> tuple[WhisperArch, dict[str, tuple[Part, ...]],
                                                                          dict[str, tuple[str, Any]]]:
    arch = arch or resolve(folder)
    paths = llm_weights._weight_files(folder)
    limit = _bytes_limit(arch, len(paths))
    where: dict[str, tuple[str, Any]] = {}
    total = 0
    for path in paths:
        handle = handles[path] = llm_weights._open(path, limit)
        total += os.fstat(handle.fileno()).st_size
        if total > limit:
            raise ParamError(f"{shown_path(folder)}: {total} bytes of safetensors, more than the {limit} that "
                             "FP32 weights of its config.json would need")
        for name, tensor in llm_weights.read_header(handle, path).items():
            if name in where:
                raise ParamError(f"{shown_path(path)}: tensor {shown_path(name)[:200]} is also in "
                                 f"{shown_path(where[name][0])}")
            where[name] = (path, tensor)
    prefix = "model." if "model.encoder.conv1.weight" in where else ""
    parameters = plan(arch, prefix)
    wanted = {p.name: p.shape for parts in parameters.values() for p in parts if p.name != ZERO}
    for name, shape in wanted.items():
        if name not in where:
            raise ParamError(f"{shown_path(folder)}: tensor {name} is missing")
        path, tensor = where[name]
        if tensor.shape != shape:
            raise ParamError(f"{shown_path(path)}: tensor {name} has shape {list(tensor.shape)}, config.json makes "
                             f"it {list(shape)}")
    unknown = [n for n in where if n not in wanted and n != TIED]
    if unknown:
        raise ParamError(f"{shown_path(where[unknown[0]][0])}: tensor {shown_path(unknown[0])[:200]} is not part "
                         f"of a Whisper ({len(unknown)} such)")
    if TIED in where and where[TIED][1].shape != (arch.vocab, arch.d_model):
        raise ParamError(f"{shown_path(where[TIED][0])}: tensor {TIED} has shape {list(where[TIED][1].shape)}, "
                         f"not the token embedding's {[arch.vocab, arch.d_model]}")
    return arch, parameters, where


def load(folder: str, dtype: Any, device: str) -> Any:
    """The Whisper of ``folder`` with its weights, in ``dtype`` on ``device``, checked first by :func:`check_folder`;
    each tensor is read from the very file whose header was checked, converted and copied in one at a time."""
    import torch

    from hwbench_gui.engine.models.speech.model import build

    handles: dict = {}
    try:
        arch, parameters, where = _check(folder, None, handles)
        model = build(arch, dtype, device, seed=None)

        def tensor(name: str) -> Any:
            path, entry = where[name]
            return llm_weights._read_tensor(torch, handles[path], path, entry)

        assign(model, parameters, tensor)
    finally:
        for handle in handles.values():
            handle.close()
    return model
