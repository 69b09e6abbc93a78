"""The output projection and the cross-entropy loss in one step, a chunk of tokens at a time.

The textbook step materialises the logits of every token (tokens × vocabulary) in FP32 for the
loss and keeps them, and their gradient, for the backward pass: for 16 × 2048 tokens of Llama 3's
128k vocabulary that is 16.8 GB each, more than the model's 1B parameters' whole training state.
Here the forward pass computes, per chunk of tokens, the logits, the loss and at once the gradient
of the logits (softmax minus the one-hot target), turns that into the gradients of the hidden
states and of the output matrix, and drops the chunk's logits: the backward pass only scales what
was kept. The FLOPs are those of the textbook step (forward 2 · d · V, backward 4 · d · V per
token): nothing is recomputed. The idea is Liger-Kernel's and Apple's Cut Cross-Entropy's fused
linear cross-entropy, written with PyTorch operations (optionally compiled, so the softmax's
elementwise passes are fused).

Imported only inside a run: torch is imported at module level.
"""

from __future__ import annotations

from typing import Any, Callable

import torch

from hwbench_gui.engine.models.llm.training_arithmetic import chunk_tokens

#: The vocabulary is padded to a multiple of this in the matrix products (GPT-2's 50,257 rows leave the
#: logits' rows misaligned for tensor-core kernels; nanoGPT pads to 50,304 for the same reason). The
#: padded logits are masked out of the softmax: the loss and gradients are those of the real vocabulary.
PAD_VOCAB_TO = 64


def _chunk_grad(hidden: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor, need_weight: bool,
                vocab: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """Summed loss of one chunk, the gradient of its hidden states, and of the weight (unscaled, all
    ``weight``'s rows); rows of ``weight`` from ``vocab`` on are padding."""
    logits = (hidden @ weight.t()).float()
    if weight.shape[0] > vocab:
        logits[:, vocab:] = float("-inf")
    lse = torch.logsumexp(logits, dim=-1)
    picked = logits.gather(1, targets[:, None]).squeeze(1)
    loss = (lse - picked).sum()
    grad = torch.exp(logits - lse[:, None])
    grad.scatter_add_(1, targets[:, None], torch.full_like(picked[:, None], -1.0))
    grad = grad.to(hidden.dtype)
    return loss, grad @ weight, (grad.t() @ hidden) if need_weight else None


_compiled: dict[bool, Callable[..., Any]] = {}


def _chunk_fn(compiled: bool) -> Callable[..., Any]:
    if not compiled:
        return _chunk_grad
    if True not in _compiled:
        _compiled[True] = torch.compile(_chunk_grad, dynamic=False)
    return _compiled[True]


class _LinearCrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, hidden, weight, targets, compute_dtype, chunk, compiled):  # noqa: D401 (torch's signature)
        need_hidden, need_weight = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        n = hidden.shape[0]
        h16 = hidden.to(compute_dtype)
        vocab = weight.shape[0]
        padded = -(-vocab // PAD_VOCAB_TO) * PAD_VOCAB_TO
        w16 = weight.to(compute_dtype)
        if padded != vocab:
            w16 = torch.cat([w16, w16.new_zeros(padded - vocab, w16.shape[1])])
        fn = _chunk_fn(compiled)
        total = torch.zeros((), dtype=torch.float32, device=hidden.device)
        grad_hidden = torch.empty(n, hidden.shape[1], dtype=hidden.dtype, device=hidden.device) \
            if need_hidden else None
        grad_weight = torch.zeros(weight.shape, dtype=torch.float32, device=weight.device) if need_weight else None
        with torch.autocast(hidden.device.type, enabled=False):
            for start in range(0, n, chunk):
                end = min(n, start + chunk)
                loss, g_hidden, g_weight = fn(h16[start:end], w16, targets[start:end], need_weight, vocab)
                total += loss
                if grad_hidden is not None:
                    grad_hidden[start:end] = g_hidden
                if grad_weight is not None:
                    grad_weight += g_weight[:vocab]
        ctx.save_for_backward(grad_hidden, grad_weight)
        ctx.count = n
        ctx.weight_dtype = weight.dtype
        return total / n

    @staticmethod
    def backward(ctx, grad_loss):
        grad_hidden, grad_weight = ctx.saved_tensors
        scale = grad_loss / ctx.count
        out_hidden = (grad_hidden * scale.to(grad_hidden.dtype)) if grad_hidden is not None else None
        out_weight = (grad_weight * scale).to(ctx.weight_dtype) if grad_weight is not None else None
        return out_hidden, out_weight, None, None, None, None


def linear_cross_entropy(hidden: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor, *,
                         compute_dtype: torch.dtype | None = None, chunk: int | None = None,
                         compiled: bool = False) -> torch.Tensor:
    """Mean cross-entropy of ``hidden @ weight.T`` (``hidden``: tokens × d, ``weight``: vocabulary × d)
    against ``targets`` (tokens), with the matrix products in ``compute_dtype`` (default: ``hidden``'s,
    or autocast's when autocast is on) and the softmax in FP32."""
    device_type = hidden.device.type
    if compute_dtype is None:
        compute_dtype = torch.get_autocast_dtype(device_type) if torch.is_autocast_enabled(device_type) \
            else hidden.dtype
    return _LinearCrossEntropy.apply(hidden.reshape(-1, hidden.shape[-1]), weight, targets.reshape(-1),
                                     compute_dtype, chunk or chunk_tokens(weight.shape[0]), compiled)
