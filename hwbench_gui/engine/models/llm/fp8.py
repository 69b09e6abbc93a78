"""FP8 weights for the decoder's block matmuls, declared once: what is stored in FP8, how activations are
quantised, what stays BF16, and where it can run.

Each block's q/k/v, output, MLP up (gate and up) and down projection keeps its weight as float8_e4m3fn with
one FP32 scale per output channel (the channel's largest magnitude ÷ 448). At every such matmul the BF16
input is quantised per token (each row's largest magnitude ÷ 448) and ``torch._scaled_mm`` multiplies the two
FP8 operands with both scales applied, giving BF16. Embeddings, norms, biases, the KV cache, attention and the
output projection stay BF16. torch is imported by the code that builds a model only.
"""

from __future__ import annotations

import torch
from torch import nn

from hwbench_gui.engine.inventory.gpu_arch import FP8_CAPABILITY, FP8_MAX, fp8_capability_reason
from hwbench_gui.engine.spec.precision import BF16, FP32

#: Scales never fall below this: an all-zero row or channel would otherwise divide by zero.
MIN_SCALE = 1e-12
QUANTIZE_ROWS = 4096  # a block of 4096 rows of 14336 (llama-3.1-8b's down projection): 2 × 235 MB of FP32
#: What runs in which precision under ``precision=fp8`` (the result document's ``details.precision``).
PRECISION_DETAILS = {
    "block_matmul_weights": "FP8 e4m3 (float8_e4m3fn), one FP32 scale per output channel",
    "block_matmul_activations": "FP8 e4m3, quantised per token at each matmul (one FP32 scale per row)",
    "block_matmul_product": "torch._scaled_mm (FP8 tensor cores), FP32 accumulation, BF16 output",
    "embeddings": BF16.label,
    "norms_and_biases": BF16.label,
    "kv_cache": BF16.label,
    "attention": f"{BF16.label} (softmax of generation in {FP32.label})",
    "output_projection": BF16.label,
    "residual_stream": BF16.label,
}


def unavailable_reason(device: str) -> str | None:
    """Why ``precision=fp8`` cannot run on ``device`` ("cpu", "cuda:0"), or None: a GPU needs compute capability
    8.9 or newer, and on either this PyTorch must multiply float8 operands with row-wise scales (tried on a
    16×16 product; on the CPU that is a numerics check, not a speed anyone would use)."""
    if not (hasattr(torch, "_scaled_mm") and hasattr(torch, "float8_e4m3fn")):
        return f"PyTorch {torch.__version__} has no torch._scaled_mm / float8_e4m3fn"
    if device != "cpu":
        major, minor = torch.cuda.get_device_capability(device)
        if (major, minor) < FP8_CAPABILITY:
            return fp8_capability_reason(major, minor, torch.cuda.get_device_name(device))
    try:
        a = torch.ones(16, 16, dtype=torch.float8_e4m3fn, device=device)
        torch._scaled_mm(a, a.t(), scale_a=torch.ones(16, 1, device=device), scale_b=torch.ones(1, 16, device=device),
                         out_dtype=torch.bfloat16)
    except (RuntimeError, NotImplementedError) as exc:
        where = "the CPU" if device == "cpu" else device
        return f"this PyTorch build cannot multiply FP8 matrices with row-wise scales on {where}: {exc}"
    return None


def quantize_rows(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``x`` ``[rows, k]`` as float8_e4m3fn and its FP32 scale per row ``[rows, 1]``: x ≈ q × scale."""
    scale = (x.abs().amax(dim=-1, keepdim=True).float() / FP8_MAX).clamp(min=MIN_SCALE)
    return (x.float() / scale).clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn), scale


class Fp8Linear(nn.Module):
    """A bias-optional linear layer whose weight ``[out, in]`` is stored in FP8 with a scale per output channel,
    its input quantised per token; the product in BF16."""

    def __init__(self, in_features: int, out_features: int, bias: bool, device=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.register_buffer("weight", torch.empty(out_features, in_features, dtype=torch.float8_e4m3fn,
                                                   device=device))
        self.register_buffer("scale", torch.empty(1, out_features, dtype=torch.float32, device=device))
        self.bias = nn.Parameter(torch.empty(out_features, dtype=torch.bfloat16, device=device)) if bias else None

    @torch.no_grad()
    def set_weight(self, weight: torch.Tensor) -> None:
        """Quantise ``weight`` ``[out, in]`` (any float dtype) into this layer, one scale per output channel, a
        block of rows at a time: the FP32 temporaries stay within :data:`QUANTIZE_ROWS` rows, inside the memory
        plan's margin, whatever the matrix."""
        for first in range(0, self.out_features, QUANTIZE_ROWS):
            q, scale = quantize_rows(weight[first:first + QUANTIZE_ROWS])
            self.weight[first:first + QUANTIZE_ROWS].copy_(q)
            self.scale[0, first:first + QUANTIZE_ROWS].copy_(scale.view(-1))

    def dequantized(self) -> torch.Tensor:
        """The weight this layer multiplies by, in FP32 (tests compare against it)."""
        return self.weight.float() * self.scale.view(-1, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = x.shape
        q, scale = quantize_rows(x.reshape(-1, shape[-1]))
        # _scaled_mm wants its second operand column-major: the row-major [out, in] weight transposed is that.
        y = torch._scaled_mm(q, self.weight.t(), scale_a=scale, scale_b=self.scale, out_dtype=torch.bfloat16)
        if self.bias is not None:
            y = y + self.bias
        return y.view(*shape[:-1], self.out_features)


BLOCK_MATMULS = ("qkv", "out", "up", "down")


def replace_matmuls(block: nn.Module) -> None:
    """Swap ``block``'s matmul layers (``nn.Linear``, made on ``meta``) for empty :class:`Fp8Linear` layers of the
    same shapes on the same device: the decoder is then materialised with FP8 weights directly, never holding
    its BF16 matrices all at once."""
    for name in BLOCK_MATMULS:
        linear = getattr(block, name)
        setattr(block, name, Fp8Linear(linear.in_features, linear.out_features, linear.bias is not None,
                                       device=linear.weight.device))
