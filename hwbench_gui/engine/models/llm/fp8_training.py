"""FP8 training of the decoder's block matmuls, as torchao's float8 training does it with its default recipe,
"tensorwise" dynamic scaling (torchao itself is not a dependency: the GPU box's PyTorch has no torchao, and the
part needed is one autograd function).

Each block's q/k/v, output, MLP up (gate and up) and down projection multiplies in FP8, each operand cast with
one FP32 scale for the whole tensor taken from its amax at every step, FP32 accumulation, BF16 results:

* forward ``y = x(e4m3) @ w(e4m3)ᵀ``;
* backward ``grad_x = grad_y(e5m2) @ w(e4m3)`` and ``grad_w = grad_y(e5m2)ᵀ @ x(e4m3)`` (e5m2's range for
  gradients, e4m3's precision for values).

Tensorwise only: torchao's default and the fastest recipe (one cuBLAS FP8 GEMM per product, no re-cast along
another axis in the backward as row-wise scaling needs); one recipe keeps every FP8 llm.train document comparable
with every other. The master weights stay FP32 and AdamW's states with them, as the BF16-AMP path keeps them; the
function saves the BF16 input and a reference to the master weight and casts again in the backward (nothing FP8
is kept between the passes, torchao's default). Embeddings, norms, biases, attention and the output projection
run under BF16 autocast. ``torch._scaled_mm`` wants its first operand row-major and its second column-major,
every dimension a multiple of 16, and FP32 scales. torch is imported at module level: only a run imports this
module.
"""

from __future__ import annotations

import torch
from torch import nn

from hwbench_gui.engine.models.llm.fp8 import BLOCK_MATMULS
from hwbench_gui.engine.spec.precision import BF16, FP32

E4M3, E5M2 = torch.float8_e4m3fn, torch.float8_e5m2
#: Scales never fall below this: an all-zero tensor or row would otherwise divide by zero.
MIN_SCALE = 1e-12
#: Every dimension of a ``torch._scaled_mm`` operand is a multiple of this.
ALIGN = 16
#: The type of everything but the block matmuls (autocast's) and of every FP8 product's result.
OTHER_DTYPE = torch.bfloat16
OTHER_LABEL = BF16.label
#: What runs in which precision under ``precision=fp8`` (the document's ``details.precision``).
PRECISION_DETAILS = {
    "block_matmuls": f"FP8, tensorwise dynamic scaling (one FP32 scale per tensor from its amax, every step), "
                     f"torch._scaled_mm, FP32 accumulation, {OTHER_LABEL} results",
    "forward": "input e4m3 × weight e4m3",
    "backward": "gradient e5m2 × weight e4m3 (input gradient), gradient e5m2 × input e4m3 (weight gradient)",
    "master_weights_and_adamw": FP32.label,
    "embeddings_norms_biases": f"{OTHER_LABEL} autocast (FP32 parameters)",
    "attention": f"{OTHER_LABEL} autocast",
    "output_projection_and_loss": f"{OTHER_LABEL} autocast, FP32 loss",
}


def misaligned(shapes: dict[str, tuple[int, int]], tokens: int) -> list[str]:
    """``"up: in 100"`` for every dimension of the block matmuls (name -> (in, out)) and of ``tokens`` a
    micro-batch multiplies that is not a multiple of :data:`ALIGN`; [] when FP8 can run them."""
    bad = [f"{name}: {which} {n}" for name, (n_in, n_out) in shapes.items()
           for which, n in (("in", n_in), ("out", n_out)) if n % ALIGN]
    return bad + ([f"tokens per micro-batch {tokens}"] if tokens % ALIGN else [])


def cast(x: torch.Tensor, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """``x`` in FP8 ``dtype`` and its FP32 scale, one for the tensor: x ≈ q × scale."""
    top = torch.finfo(dtype).max
    scale = (x.abs().amax().float() / top).clamp(min=MIN_SCALE)
    scaled = x.to(torch.float32, copy=True)  # one FP32 temporary, divided in place (never the master weight)
    return scaled.div_(scale).clamp_(-top, top).to(dtype), scale


def _column_major(q: torch.Tensor) -> torch.Tensor:
    """``q`` with the same shape, stored column-major (what ``_scaled_mm`` wants of its second operand)."""
    return q.t().contiguous().t()


def _mm(a: torch.Tensor, b: torch.Tensor, scale_a: torch.Tensor, scale_b: torch.Tensor) -> torch.Tensor:
    return torch._scaled_mm(a, b, scale_a=scale_a, scale_b=scale_b, out_dtype=OTHER_DTYPE)


class Fp8Matmul(torch.autograd.Function):
    """``x @ wᵀ`` (``x`` ``[tokens, in]`` BF16, ``w`` ``[out, in]`` the master weight) in FP8, forward and
    backward as the module's docstring says."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(x, weight)
        xq, sx = cast(x, E4M3)
        wq, sw = cast(weight, E4M3)
        return _mm(xq, wq.t(), sx, sw)

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x, weight = ctx.saved_tensors
        gq, sg = cast(grad.contiguous(), E5M2)
        wq, sw = cast(weight, E4M3)
        xq, sx = cast(x, E4M3)
        grad_x = _mm(gq, _column_major(wq), sg, sw)
        grad_w = _mm(gq.t().contiguous(), _column_major(xq), sg, sx)
        return grad_x, grad_w.to(weight.dtype)


class Fp8TrainingLinear(nn.Module):
    """A linear layer of a block whose matmul runs in FP8 (:class:`Fp8Matmul`); it keeps the layer's own
    parameters (FP32 master weight, bias), so the optimizer and the seeded initial values are the BF16 path's."""

    def __init__(self, linear: nn.Linear):
        super().__init__()
        self.in_features, self.out_features = linear.in_features, linear.out_features
        self.weight, self.bias = linear.weight, linear.bias

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = x.shape
        flat = x.reshape(-1, shape[-1]).to(OTHER_DTYPE)
        if flat.shape[0] % ALIGN:
            raise ValueError(f"FP8 matmul of {flat.shape[0]} tokens: torch._scaled_mm needs a multiple of {ALIGN}")
        y = Fp8Matmul.apply(flat, self.weight)
        if self.bias is not None:
            y = y + self.bias.to(y.dtype)
        return y.view(*shape[:-1], self.out_features)


def convert_block(block: nn.Module) -> None:
    """Swap ``block``'s matmul layers for :class:`Fp8TrainingLinear` layers over the same parameters."""
    for name in BLOCK_MATMULS:
        setattr(block, name, Fp8TrainingLinear(getattr(block, name)))
