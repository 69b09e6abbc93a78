"""A compact Whisper (encoder, decoder, static caches) whose one-token step has fixed shapes and buffers, so a run
can capture it in a CUDA graph as llm.infer does, and whose logits equal transformers'
``WhisperForConditionalGeneration`` for the same weights (a test holds them together on the CPU).

Why not transformers' own model: its decoder grows a dynamic cache and re-derives masks and positions in Python
on every token, which a CUDA graph cannot capture and which costs more than the step's kernels at batch 1; its
``generate`` is run beside this model as the peer (scripts/gpu_speech.sh). Differences of layout only: the
self-attention's q/k/v are one matmul (the key's missing bias a zero), the cross-attention's k/v one matmul, applied
once per window to the encoder's output (:meth:`Whisper.cross_cache`), the output projection the token embedding.
torch is imported here, so only a run's child process imports this module.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import torch
import torch.nn.functional as F
from torch import nn

from hwbench_gui.engine.models.speech.architectures import WhisperArch


def sinusoids(length: int, channels: int) -> torch.Tensor:
    """Whisper's fixed position table of its encoder (sin then cos, timescales 1 to 10000)."""
    increment = math.log(10000) / (channels // 2 - 1)
    inverse = torch.exp(-increment * torch.arange(channels // 2, dtype=torch.float32))
    scaled = torch.arange(length, dtype=torch.float32)[:, None] * inverse[None, :]
    return torch.cat([torch.sin(scaled), torch.cos(scaled)], dim=1)


def _heads(x: torch.Tensor, heads: int) -> torch.Tensor:
    """[batch, positions, width] -> [batch, heads, positions, width / heads]."""
    b, t, w = x.shape
    return x.view(b, t, heads, w // heads).transpose(1, 2)


def _merge(x: torch.Tensor) -> torch.Tensor:
    b, h, t, d = x.shape
    return x.transpose(1, 2).reshape(b, t, h * d)


class EncoderBlock(nn.Module):
    def __init__(self, arch: WhisperArch, **kw: Any):
        super().__init__()
        d = arch.d_model
        self.heads = arch.encoder_heads
        self.attn_norm, self.mlp_norm = nn.LayerNorm(d, **kw), nn.LayerNorm(d, **kw)
        self.qkv, self.out = nn.Linear(d, 3 * d, **kw), nn.Linear(d, d, **kw)
        self.fc1, self.fc2 = nn.Linear(d, arch.encoder_ffn, **kw), nn.Linear(arch.encoder_ffn, d, **kw)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(self.attn_norm(x)).chunk(3, dim=-1)
        h = self.heads
        x = x + self.out(_merge(F.scaled_dot_product_attention(_heads(q, h), _heads(k, h), _heads(v, h))))
        return x + self.fc2(F.gelu(self.fc1(self.mlp_norm(x))))


class Encoder(nn.Module):
    def __init__(self, arch: WhisperArch, **kw: Any):
        super().__init__()
        d = arch.d_model
        self.conv1 = nn.Conv1d(arch.mels, d, kernel_size=3, padding=1, **kw)
        self.conv2 = nn.Conv1d(d, d, kernel_size=3, stride=2, padding=1, **kw)
        self.pos = nn.Parameter(sinusoids(arch.source_positions, d).to(**kw), requires_grad=False)
        self.blocks = nn.ModuleList(EncoderBlock(arch, **kw) for _ in range(arch.encoder_layers))
        self.norm = nn.LayerNorm(d, **kw)

    def forward(self, mel: torch.Tensor, layer: Callable[..., torch.Tensor] | None = None) -> torch.Tensor:
        """[batch, mels, frames] log-mel -> [batch, positions, d_model]; ``layer`` (a compiled
        ``EncoderBlock.forward``, one for every block) runs each block where given."""
        x = F.gelu(self.conv2(F.gelu(self.conv1(mel)))).transpose(1, 2)
        x = x + self.pos
        for block in self.blocks:
            x = layer(block, x) if layer is not None else block(x)
        return self.norm(x)


@dataclass
class Cache:
    """One window's decoder state: the self-attention's keys and values of every position written so far
    (``self_k``/``self_v``: [layers, batch, heads, positions, head_dim], positions fixed at allocation) and the
    cross-attention's keys and values of the encoder's output (computed once per window)."""

    self_k: torch.Tensor
    self_v: torch.Tensor
    cross_k: torch.Tensor
    cross_v: torch.Tensor

    @property
    def positions(self) -> int:
        return self.self_k.shape[3]


class DecoderBlock(nn.Module):
    def __init__(self, arch: WhisperArch, **kw: Any):
        super().__init__()
        d = arch.d_model
        self.heads = arch.decoder_heads
        self.attn_norm, self.cross_norm, self.mlp_norm = (nn.LayerNorm(d, **kw) for _ in range(3))
        self.qkv, self.out = nn.Linear(d, 3 * d, **kw), nn.Linear(d, d, **kw)
        self.cross_q, self.cross_kv, self.cross_out = (nn.Linear(d, d, **kw), nn.Linear(d, 2 * d, **kw),
                                                       nn.Linear(d, d, **kw))
        self.fc1, self.fc2 = nn.Linear(d, arch.decoder_ffn, **kw), nn.Linear(arch.decoder_ffn, d, **kw)

    def forward(self, x: torch.Tensor, positions: torch.Tensor, mask: torch.Tensor, k_cache: torch.Tensor,
                v_cache: torch.Tensor, cross_k: torch.Tensor, cross_v: torch.Tensor) -> torch.Tensor:
        """``x`` [batch, new, d] at ``positions`` [new]: their keys and values written into the layer's caches at
        those positions (index_copy_: no Python branch on a position, so the step can be captured), attention over
        every cached position with ``mask`` [new, cache positions] hiding the later ones."""
        h = self.heads
        q, k, v = self.qkv(self.attn_norm(x)).chunk(3, dim=-1)
        k_cache.index_copy_(2, positions, _heads(k, h))
        v_cache.index_copy_(2, positions, _heads(v, h))
        x = x + self.out(_merge(F.scaled_dot_product_attention(_heads(q, h), k_cache, v_cache, attn_mask=mask)))
        q = _heads(self.cross_q(self.cross_norm(x)), h)
        x = x + self.cross_out(_merge(F.scaled_dot_product_attention(q, cross_k, cross_v)))
        return x + self.fc2(F.gelu(self.fc1(self.mlp_norm(x))))


class Decoder(nn.Module):
    def __init__(self, arch: WhisperArch, **kw: Any):
        super().__init__()
        self.embed = nn.Embedding(arch.vocab, arch.d_model, **kw)
        self.pos = nn.Parameter(torch.empty(arch.target_positions, arch.d_model, **kw))
        self.blocks = nn.ModuleList(DecoderBlock(arch, **kw) for _ in range(arch.decoder_layers))
        self.norm = nn.LayerNorm(arch.d_model, **kw)

    def forward(self, tokens: torch.Tensor, positions: torch.Tensor, cache: Cache,
                layer: Callable[..., torch.Tensor] | None = None) -> torch.Tensor:
        """Logits [batch, new, vocab] of ``tokens`` [batch, new] at ``positions`` [new] (a tensor on the device),
        every position before them already in ``cache``; ``layer`` (a compiled ``DecoderBlock.forward``) runs each
        block where given."""
        x = self.embed(tokens) + self.pos.index_select(0, positions)
        mask = torch.arange(cache.positions, device=tokens.device)[None, :] <= positions[:, None]
        for i, block in enumerate(self.blocks):
            args = (x, positions, mask, cache.self_k[i], cache.self_v[i], cache.cross_k[i], cache.cross_v[i])
            x = layer(block, *args) if layer is not None else block(*args)
        return F.linear(self.norm(x), self.embed.weight)


class Whisper(nn.Module):
    def __init__(self, arch: WhisperArch, **kw: Any):
        super().__init__()
        self.arch = arch
        self.encoder = Encoder(arch, **kw)
        self.decoder = Decoder(arch, **kw)

    def allocate(self, batch: int, positions: int) -> Cache:
        """Empty caches for ``batch`` sequences of up to ``positions`` decoder positions."""
        a = self.arch
        like = self.decoder.embed.weight
        shape = (a.decoder_layers, batch, a.decoder_heads, positions, a.d_model // a.decoder_heads)
        cross = (a.decoder_layers, batch, a.decoder_heads, a.source_positions, a.d_model // a.decoder_heads)
        return Cache(like.new_zeros(shape), like.new_zeros(shape), like.new_empty(cross), like.new_empty(cross))

    def cross_cache(self, encoded: torch.Tensor, cache: Cache) -> None:
        """The cross-attention's keys and values of every decoder layer, from the encoder's output, into ``cache``."""
        h = self.arch.decoder_heads
        for i, block in enumerate(self.decoder.blocks):
            k, v = block.cross_kv(encoded).chunk(2, dim=-1)
            cache.cross_k[i].copy_(_heads(k, h))
            cache.cross_v[i].copy_(_heads(v, h))

    def logits(self, mel: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
        """Every position's logits of ``tokens`` after ``mel``, computed whole (no state kept): what the cached
        decoding must equal."""
        cache = self.allocate(tokens.shape[0], tokens.shape[1])
        self.cross_cache(self.encoder(mel), cache)
        return self.decoder(tokens, torch.arange(tokens.shape[1], device=tokens.device), cache)


def build(arch: WhisperArch, dtype: torch.dtype, device: str | torch.device, seed: int | None = 0) -> Whisper:
    """``arch`` made on ``device`` in ``dtype``; with ``seed``, random weights (linear layers as PyTorch initialises
    them, embeddings and the decoder's position table N(0, 0.02)) instead of values to be loaded."""
    if seed is not None:
        torch.manual_seed(seed)
    with torch.no_grad():
        model = Whisper(arch, device=device, dtype=dtype)
        if seed is not None:
            model.decoder.embed.weight.normal_(0.0, 0.02)
            model.decoder.pos.normal_(0.0, 0.02)
    return model.eval().requires_grad_(False)
