"""The PyTorch decoder of an :class:`~.architectures.Architecture`: built in the run's dtype directly on
its device, with an optional static KV cache.

- ``model(tokens)`` -> logits of every position (causal, no cache): what training wraps.
- ``model(tokens, cache=cache, start=n)``: a prompt (or a block of a prompt) after ``n`` cached positions;
  its keys and values are written into the cache.
- ``model.decode(tokens, position, cache)``: one new position per sequence, with ``position`` a device
  tensor and every shape fixed by the cache, so the step can be captured in a CUDA graph.

Weights are made on the ``meta`` device and materialised once on the target device in the target dtype
(no FP32 copy on the host), then filled with random values (throughput does not depend on them) or by
:mod:`.weights` from a user's safetensors. torch is imported by the code that builds a model only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import torch
import torch.nn.functional as F
from torch import nn

from hwbench_gui.engine.models.llm import fp8, weight_only
from hwbench_gui.engine.models.llm.architectures import Architecture, RopeScaling
from hwbench_gui.engine.models.llm.arithmetic import ATTENTION_BLOCK, allocated_positions

INIT_STD = 0.02  # GPT-2's and Llama's initialiser scale: keeps random activations in FP16's range

_HAS_GQA = tuple(int(p) for p in torch.__version__.split(".")[:2] if p.isdigit()) >= (2, 5)


@dataclass
class KVCache:
    """Keys and values of every layer, ``[layers, batch, kv_heads, positions, head_dim]`` each, allocated
    once (positions rounded up to whole attention blocks); ``narrow(first, count)`` is a view of some
    sequences (a prompt filled a group at a time)."""

    k: torch.Tensor
    v: torch.Tensor

    @classmethod
    def allocate(cls, arch: Architecture, batch: int, positions: int, dtype: torch.dtype,
                 device: torch.device | str) -> KVCache:
        shape = (arch.layers, batch, arch.kv_heads, allocated_positions(positions), arch.head_dim)
        return cls(torch.zeros(shape, dtype=dtype, device=device), torch.zeros(shape, dtype=dtype, device=device))

    @property
    def positions(self) -> int:
        return self.k.shape[3]

    def narrow(self, first: int, count: int) -> KVCache:
        return KVCache(self.k[:, first:first + count], self.v[:, first:first + count])


def rope_inverse_frequencies(arch: Architecture) -> torch.Tensor:
    """RoPE's per-pair frequencies in FP32, with Llama 3's rescaling where the architecture has it."""
    inv = 1.0 / (arch.rope_theta ** (torch.arange(0, arch.head_dim, 2, dtype=torch.float64) / arch.head_dim))
    scaling: RopeScaling | None = arch.rope_scaling
    if scaling is not None:
        low_wavelen = scaling.original_max_positions / scaling.low_freq_factor
        high_wavelen = scaling.original_max_positions / scaling.high_freq_factor
        wavelen = 2 * math.pi / inv
        scaled = torch.where(wavelen > low_wavelen, inv / scaling.factor, inv)
        smooth = (scaling.original_max_positions / wavelen - scaling.low_freq_factor) / (
            scaling.high_freq_factor - scaling.low_freq_factor)
        blended = (1 - smooth) * scaled / scaling.factor + smooth * scaled
        medium = (wavelen >= high_wavelen) & (wavelen <= low_wavelen)
        inv = torch.where(medium, blended, scaled)
    return inv.float()


def _rotate(x: torch.Tensor, cos: torch.Tensor, signed_sin: torch.Tensor) -> torch.Tensor:
    """RoPE as Llama's checkpoints expect it (halves rotated: x·cos + (-x₂, x₁)·sin), written as x·cos +
    roll(x)·(-sin, sin) so that it takes three kernels: fewer launches per generated token."""
    return torch.addcmul(x * cos, x.roll(x.shape[-1] // 2, dims=-1), signed_sin).to(x.dtype)


def _linear(layer: nn.Module, h: torch.Tensor, split: bool) -> torch.Tensor:
    """``layer(h)``; with ``split``, a plain nn.Linear's bias is added after its matmul instead of by it: Inductor
    turns a one-row matmul without bias into a tuned reduction fused with its neighbours, but leaves addmm to
    cuBLAS (see :meth:`Decoder.decode`'s ``split``)."""
    if split and type(layer) is nn.Linear and layer.bias is not None:
        return F.linear(h, layer.weight) + layer.bias
    return layer(h)


def _residual_linear(x: torch.Tensor, layer: nn.Module, h: torch.Tensor, split: bool = False) -> torch.Tensor:
    """``x + layer(h)``, the add done by the matmul itself (cuBLAS's beta = 1) where the layer is a plain
    nn.Linear without bias, autocast is off and ``split`` is not asked for (see :func:`_linear`). Training keeps
    the add apart: a LoRA-wrapped layer must run its own forward, and under autocast addmm would round the FP32
    residual stream to 16 bits."""
    if split or type(layer) is not nn.Linear or layer.bias is not None or torch.is_autocast_enabled(x.device.type):
        return x + _linear(layer, h, split)
    shape = x.shape
    return torch.addmm(x.reshape(-1, shape[-1]), h.reshape(-1, h.shape[-1]), layer.weight.t()).view(shape)


def _norm(arch: Architecture, dtype: torch.dtype) -> nn.Module:
    if arch.norm == "layernorm":
        return nn.LayerNorm(arch.hidden, eps=arch.norm_eps, dtype=dtype)
    return nn.RMSNorm(arch.hidden, eps=arch.norm_eps, dtype=dtype)


class Block(nn.Module):
    """Pre-norm attention and MLP with residuals. q, k and v share one matmul, as do SwiGLU's gate and up
    projections (one larger GEMV per step instead of three or two)."""

    def __init__(self, arch: Architecture, dtype: torch.dtype):
        super().__init__()
        self.arch = arch
        self.attn_norm = _norm(arch, dtype)
        self.qkv = nn.Linear(arch.hidden, arch.q_size + 2 * arch.kv_size, bias=arch.qkv_bias, dtype=dtype)
        self.out = nn.Linear(arch.q_size, arch.hidden, bias=arch.other_bias, dtype=dtype)
        self.mlp_norm = _norm(arch, dtype)
        if arch.mlp == "swiglu":
            self.up = nn.Linear(arch.hidden, 2 * arch.intermediate, bias=False, dtype=dtype)
        else:
            self.up = nn.Linear(arch.hidden, arch.intermediate, bias=arch.other_bias, dtype=dtype)
        self.down = nn.Linear(arch.intermediate, arch.hidden, bias=arch.other_bias, dtype=dtype)

    def mlp(self, x: torch.Tensor, residual: torch.Tensor | None = None, split: bool = False) -> torch.Tensor:
        """The MLP of ``x``, with ``residual`` added (by the last matmul unless ``split``) where one is given."""
        h = _linear(self.up, x, split)
        if self.arch.mlp == "swiglu":
            gate, up = h.chunk(2, dim=-1)
            h = F.silu(gate) * up
        else:
            h = F.gelu(h, approximate="tanh")
        return _linear(self.down, h, split) if residual is None else _residual_linear(residual, self.down, h, split)

    def forward(self, x: torch.Tensor, cos: torch.Tensor | None, sin: torch.Tensor | None) -> torch.Tensor:
        """The block over whole sequences without a cache (training): a module call, so per-block
        activation checkpointing and FSDP's per-block gathering (hooks on the call) apply to it."""
        a = self.arch
        batch, length, _ = x.shape
        q, k, v = self.qkv_heads(self.attn_norm(x), cos, sin)
        groups = a.heads // a.kv_heads
        if groups > 1 and not _HAS_GQA:
            k, v = k.repeat_interleave(groups, dim=1), v.repeat_interleave(groups, dim=1)
        extra = {"enable_gqa": True} if groups > 1 and _HAS_GQA else {}
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True, **extra)
        x = _residual_linear(x, self.out, y.transpose(1, 2).reshape(batch, length, a.q_size))
        return self.mlp(self.mlp_norm(x), residual=x)

    def prefill(self, x: torch.Tensor, cos: torch.Tensor | None, sin: torch.Tensor | None, keys: torch.Tensor,
                values: torch.Tensor, start: int, mask: torch.Tensor) -> torch.Tensor:
        """The block over ``x`` ``[B, T, hidden]`` placed after ``start`` positions already in this block's cache
        ``keys``/``values``: their keys and values written there, attention over the cache so far with ``mask``
        (``[groups × T, start + T]``, True where a query may see a key)."""
        a = self.arch
        batch, length, _ = x.shape
        seen = start + length
        q, k, v = self.qkv_heads(self.attn_norm(x), cos, sin)
        keys[:, :, start:seen] = k
        values[:, :, start:seen] = v
        # Each key/value head's query heads become rows of one query block: the cache is read once
        # per key/value head, never copied out per query head.
        grouped = q.reshape(batch, a.kv_heads, (a.heads // a.kv_heads) * length, a.head_dim)
        y = F.scaled_dot_product_attention(grouped, keys[:, :, :seen], values[:, :, :seen], attn_mask=mask)
        y = y.view(batch, a.heads, length, a.head_dim)
        x = _residual_linear(x, self.out, y.transpose(1, 2).reshape(batch, length, a.q_size))
        return self.mlp(self.mlp_norm(x), residual=x)

    def decode(self, x: torch.Tensor, cos: torch.Tensor | None, sin: torch.Tensor | None, keys: torch.Tensor,
               values: torch.Tensor, at: torch.Tensor, hidden_after: torch.Tensor, split: bool = False) -> torch.Tensor:
        """The block's step for one new position per sequence (``x`` ``[B, 1, hidden]``) at ``at`` (``[1]``, on
        the device): its key and value written into this block's cache ``keys``/``values`` ``[B, kv_heads,
        positions, head_dim]``, attention over the whole cache with ``hidden_after`` (0 or -inf per position)
        added to the scores. Every shape is fixed by the cache (see :meth:`Decoder.decode`)."""
        a = self.arch
        batch = x.shape[0]
        groups = a.heads // a.kv_heads
        q, k, v = self.qkv_heads(self.attn_norm(x), cos, sin, split)
        # index_put_ (not index_copy_): torch.compile writes it in place instead of copying the cache
        keys[:, :, at] = k
        values[:, :, at] = v
        # One query row per head against the cache: batched matmuls split the long key axis across the
        # GPU (a fused attention kernel would give each key/value head one block and idle the rest).
        grouped = q.reshape(batch, a.kv_heads, groups, a.head_dim)
        scores = torch.matmul(grouped, keys.transpose(-1, -2))
        # scale, mask and widening to FP32 in one kernel
        weights = torch.add(hidden_after, scores, alpha=1.0 / math.sqrt(a.head_dim)).softmax(dim=-1).to(values.dtype)
        # Weighted values block by block, the blocks summed in FP32: one matmul over the whole context would
        # give each key/value head a single block of the GPU to read it with (no split over the long axis).
        blocks = keys.shape[2] // ATTENTION_BLOCK
        per_block = torch.matmul(
            weights.view(batch, a.kv_heads, groups, blocks, ATTENTION_BLOCK).transpose(2, 3),
            values.view(batch, a.kv_heads, blocks, ATTENTION_BLOCK, a.head_dim))
        y = per_block.sum(dim=2, dtype=torch.float32).to(values.dtype).reshape(batch, 1, a.q_size)
        x = _residual_linear(x, self.out, y, split)
        return self.mlp(self.mlp_norm(x), residual=x, split=split)

    def qkv_heads(self, x: torch.Tensor, cos: torch.Tensor | None, sin: torch.Tensor | None, split: bool = False):
        """q ``[B, heads, T, D]``, k and v ``[B, kv_heads, T, D]`` (views), q and k rotated together where
        positions are rotary (one set of elementwise kernels for both: fewer launches per generated token)."""
        a = self.arch
        batch, length, _ = x.shape
        qkv = _linear(self.qkv, x, split)
        qk = qkv[..., :a.q_size + a.kv_size].view(batch, length, a.heads + a.kv_heads, a.head_dim)
        if cos is not None:
            qk = _rotate(qk, cos, sin)
        q = qk[:, :, :a.heads].transpose(1, 2)
        k = qk[:, :, a.heads:].transpose(1, 2)
        v = qkv[..., a.q_size + a.kv_size:].view(batch, length, a.kv_heads, a.head_dim).transpose(1, 2)
        return q, k, v


class Decoder(nn.Module):
    """Token (and learned position) embedding, the blocks, a final norm and the output projection
    (the token table itself when tied)."""

    def __init__(self, arch: Architecture, dtype: torch.dtype, rope_positions: int | None = None):
        super().__init__()
        self.arch = arch
        self.rope_positions = min(arch.max_positions, rope_positions or arch.max_positions)
        self.embed = nn.Embedding(arch.vocab, arch.hidden, dtype=dtype)
        self.pos_embed = nn.Embedding(arch.max_positions, arch.hidden, dtype=dtype) \
            if arch.positional == "learned" else None
        self.blocks = nn.ModuleList(Block(arch, dtype) for _ in range(arch.layers))
        self.norm = _norm(arch, dtype)
        self.head = None if arch.tied_embeddings else nn.Linear(arch.hidden, arch.vocab, bias=False, dtype=dtype)

    def make_tables(self) -> None:
        """RoPE cos and (-sin, sin) for ``rope_positions`` positions, on the model's device, in FP32 (not saved)."""
        device = self.embed.weight.device
        if self.arch.positional == "rope":
            inv = rope_inverse_frequencies(self.arch).to(device)
            angles = torch.outer(torch.arange(self.rope_positions, device=device, dtype=torch.float32), inv)
            self.register_buffer("cos", torch.cat((angles.cos(), angles.cos()), dim=-1), persistent=False)
            self.register_buffer("sin", torch.cat((-angles.sin(), angles.sin()), dim=-1), persistent=False)

    @torch.no_grad()
    def randomize(self, seed: int = 0, on_block: Callable[[int, int], None] | None = None) -> None:
        """Random weights (normal, std 0.02; norms at one, biases at zero), drawn on the device in its dtype;
        an FP8 layer's drawn in BF16 one matrix at a time and quantised. ``on_block(done, total)`` is called
        after each block (an 8B model's take minutes on a CPU)."""
        generator = torch.Generator(device=self.embed.weight.device).manual_seed(seed)
        parts = [m for m in (self.embed, self.pos_embed) if m is not None] + list(self.blocks) \
            + [m for m in (self.norm, self.head) if m is not None]
        block_number = {id(block): i + 1 for i, block in enumerate(self.blocks)}
        for part in parts:
            for name, param in part.named_parameters():
                if name.endswith("bias"):
                    param.zero_()
                elif "norm" in name or part is self.norm:
                    param.fill_(1.0)
                else:
                    param.normal_(0.0, INIT_STD, generator=generator)
            for module in part.modules():
                if isinstance(module, (fp8.Fp8Linear, weight_only.WeightOnlyLinear)):
                    weight = torch.empty(module.out_features, module.in_features, dtype=torch.bfloat16,
                                         device=module.weight.device)
                    module.set_weight(weight.normal_(0.0, INIT_STD, generator=generator))
            if on_block is not None and id(part) in block_number:
                on_block(block_number[id(part)], len(self.blocks))

    def _embed(self, tokens: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens)
        if self.pos_embed is not None:
            x = x + self.pos_embed(positions)
        return x

    def _rope(self, positions: torch.Tensor):
        if self.arch.positional != "rope":
            return None, None
        return self.cos[positions].unsqueeze(1), self.sin[positions].unsqueeze(1)  # [T, 1, D]: every head

    def _logits(self, x: torch.Tensor) -> torch.Tensor:
        x = self.norm(x)
        return F.linear(x, self.embed.weight) if self.head is None else self.head(x)

    def forward(self, tokens: torch.Tensor, cache: KVCache | None = None, start: int = 0,
                last_only: bool = False, hidden_only: bool = False, layer=None) -> torch.Tensor:
        """Logits ``[B, T, vocab]`` (``[B, 1, vocab]`` with ``last_only``) of ``tokens`` ``[B, T]`` placed
        after ``start`` positions already in ``cache``; without a cache, positions start at zero.
        ``hidden_only``: the final norm's output ``[B, T, hidden]`` instead of the logits (training's
        fused output projection and loss take it with :meth:`output_weight`). ``layer``: what runs each block
        with a cache in place of :meth:`Block.prefill` (same arguments), e.g. that function compiled once."""
        a = self.arch
        length = tokens.shape[1]
        positions = torch.arange(start, start + length, device=tokens.device)
        x = self._embed(tokens, positions)
        cos, sin = self._rope(positions)
        groups = a.heads // a.kv_heads
        mask = None
        if cache is not None:
            seen = start + length
            key_positions = torch.arange(seen, device=tokens.device)
            mask = (key_positions[None, :] <= positions[:, None]).repeat(groups, 1)
        prefill = Block.prefill if layer is None else layer
        for index, block in enumerate(self.blocks):
            x = block(x, cos, sin) if cache is None else \
                prefill(block, x, cos, sin, cache.k[index], cache.v[index], start, mask)
        if last_only:
            x = x[:, -1:]
        if hidden_only:
            return self.norm(x)
        return self._logits(x)

    def output_weight(self) -> torch.Tensor:
        """The output projection's matrix ``[vocab, hidden]`` (the token table when tied)."""
        return self.embed.weight if self.head is None else self.head.weight

    def decode(self, tokens: torch.Tensor, position: torch.Tensor, cache: KVCache, split: bool = False,
               layer=None, logits=None) -> torch.Tensor:
        """Logits ``[B, vocab]`` of one new token per sequence (``tokens`` ``[B, 1]``) at ``position`` (a
        0-d long tensor on the device, the same for every sequence). Attention reads the whole static cache
        with positions after ``position`` masked: shapes never change, so a CUDA graph can replay it.

        ``split``: residuals and biases added after their matmuls, never by them (addmm). Eagerly that is two
        kernels instead of one; under torch.compile with coordinate-descent tuning it lets Inductor make every
        one-row matmul a tuned Triton reduction with the add, the norm's scale and the activation fused in.

        ``layer``: what runs each block's step in place of :meth:`Block.decode` (same arguments), e.g. that
        function compiled once: every block has the same shapes, so one compilation serves them all. ``logits``:
        what runs the final norm and output projection in place of :meth:`_logits` (same arguments)."""
        at = position.view(1)
        x = self._embed(tokens, at)
        cos, sin = self._rope(at)
        # Positions after ``position`` get -inf before the softmax; 0 elsewhere.
        hidden_after = torch.zeros(cache.positions, device=tokens.device).masked_fill_(
            torch.arange(cache.positions, device=tokens.device) > position, float("-inf"))
        step = Block.decode if layer is None else layer
        for index, block in enumerate(self.blocks):
            x = step(block, x, cos, sin, cache.k[index], cache.v[index], at, hidden_after, split)
        return (type(self)._logits if logits is None else logits)(self, x)[:, 0]


def build(arch: Architecture, dtype: torch.dtype, device: torch.device | str, *, rope_positions: int | None = None,
          seed: int | None = 0, fp8_blocks: bool = False, weights: str = "bf16", int4_route: str = "packed",
          on_block: Callable[[int, int], None] | None = None) -> Decoder:
    """The decoder made on ``meta``, materialised on ``device`` in ``dtype`` (never as FP32 first), its RoPE
    tables made, and random weights drawn when ``seed`` is not None (leave them empty for a loader).
    ``fp8_blocks``: every block's matmuls hold FP8 weights (:mod:`.fp8`); ``weights`` other than "bf16": they and
    the output projection hold weight-only quantized weights of that kind (:mod:`.weight_only`); either way
    ``dtype`` must be BF16, the precision of everything else. ``int4_route``: how int4 weights are held
    (:data:`.weight_only.INT4_ROUTES`; packed where the device has no packed kernel = the nibbles).
    ``on_block(done, total)``: called as each block's random weights are drawn."""
    if (fp8_blocks or weights != "bf16") and dtype != torch.bfloat16:
        raise ValueError("quantized block weights go with BF16 for the rest of the model")
    int4 = weight_only.int4_kernel(device) if weights == "int4" and int4_route == "packed" else None
    fp8_prompts = weights == "fp8" and weight_only.fp8_prompt_products(device)
    with torch.device("meta"):
        model = Decoder(arch, dtype, rope_positions)
        for block in model.blocks if fp8_blocks else ():
            fp8.replace_matmuls(block)
        if weights != "bf16":
            weight_only.replace_matmuls(model, weights, int4, fp8_prompts)
    model.to_empty(device=device)
    model.make_tables()
    if seed is not None:
        model.randomize(seed, on_block)
    return model.eval()
