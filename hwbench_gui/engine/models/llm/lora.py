"""Low-rank adapters (LoRA, Hu et al. 2021) on a model's linear layers: the base frozen, the adapters train.

A module of hwbench's own rather than peft, the field's library: peft requires transformers and
accelerate, which would become dependencies of the whole application for the sake of some thirty
lines. It does what peft's default ``LoraConfig`` does for a benchmark: ``W x + (alpha / r) · B A x``
with A Kaiming-uniform and B zero (the adapted model starts equal to the base), no dropout, adapters
in FP32 (autocast runs them in the step's 16-bit type).

Imported only inside a run: torch is imported at module level.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

#: Names of the projections adapted by default: Llama/Qwen attention and MLP, and GPT-2's
#: fused attention, its output and MLP matrices (as peft's per-architecture defaults name them).
DEFAULT_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj",
                   "c_attn", "c_proj", "c_fc")


class LoRALinear(nn.Module):
    """``base(x) + scale · (x Aᵀ) Bᵀ``: ``base`` frozen, ``lora_a`` (r × in) and ``lora_b`` (out × r) trainable."""

    def __init__(self, base: nn.Linear, rank: int, alpha: float, adapter_dtype: torch.dtype = torch.float32):
        super().__init__()
        if rank < 1:
            raise ValueError("LoRA rank must be at least 1")
        self.base = base
        for p in base.parameters():
            p.requires_grad_(False)
        device = base.weight.device
        self.lora_a = nn.Parameter(torch.empty(rank, base.in_features, device=device, dtype=adapter_dtype))
        self.lora_b = nn.Parameter(torch.zeros(base.out_features, rank, device=device, dtype=adapter_dtype))
        if device.type != "meta":
            nn.init.kaiming_uniform_(self.lora_a, a=math.sqrt(5))  # as nn.Linear (and peft) initialise A
        self.scale = alpha / rank
        self.rank = rank

    @property
    def in_features(self) -> int:
        return self.base.in_features

    @property
    def out_features(self) -> int:
        return self.base.out_features

    @property
    def weight(self) -> torch.Tensor:
        return self.base.weight

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dtype = torch.get_autocast_dtype(x.device.type) if torch.is_autocast_enabled(x.device.type) else x.dtype
        low = nn.functional.linear(x.to(dtype), self.lora_a.to(dtype))
        return self.base(x) + nn.functional.linear(low, self.lora_b.to(dtype)) * self.scale


@dataclass
class Adapted:
    """What :func:`apply_lora` did: the qualified names of the adapted linears and their (in, out)."""

    names: list[str]
    shapes: list[tuple[int, int]]
    rank: int
    alpha: float

    @property
    def adapter_params(self) -> int:
        return sum(self.rank * (n_in + n_out) for n_in, n_out in self.shapes)


def apply_lora(model: nn.Module, rank: int = 16, alpha: float | None = None,
               targets: tuple[str, ...] = DEFAULT_TARGETS) -> Adapted:
    """Freeze every parameter of ``model`` and wrap each ``nn.Linear`` whose own name is in ``targets``
    in a :class:`LoRALinear` (in place). The output projection and the embeddings stay frozen.
    ``alpha`` defaults to 2 · rank (scale 2, a common choice). Raises ValueError when nothing matched."""
    alpha = float(2 * rank if alpha is None else alpha)
    for p in model.parameters():
        p.requires_grad_(False)
    names: list[str] = []
    shapes: list[tuple[int, int]] = []
    for parent_name, parent in list(model.named_modules()):
        for child_name, child in list(parent.named_children()):
            if child_name in targets and isinstance(child, nn.Linear):
                setattr(parent, child_name, LoRALinear(child, rank, alpha))
                names.append(f"{parent_name}.{child_name}" if parent_name else child_name)
                shapes.append((child.in_features, child.out_features))
    if not names:
        raise ValueError(f"no linear layer named {', '.join(targets)} to adapt")
    return Adapted(names, shapes, rank, alpha)
