"""Weight-only quantized matmul weights for the decoder (llm.infer's ``weights``): every block's q/k/v, output,
MLP up and down weights and the output projection stored in fewer bytes and dequantised inside the product, the
activations, KV cache, embeddings and norms staying BF16, as gpt-fast's int8 and int4 handlers (which quantize
every linear layer) and PyTorch's packed int4 matmul do.

- ``int8``: one int8 per weight and a BF16 scale per output channel (the channel's largest magnitude ÷ 127);
  ``F.linear(x, w.to(x.dtype)) * scales``: under torch.compile Inductor fuses the conversion into the one-row
  reduction, so a decoding step reads one byte per weight.
- ``fp8``: the same with float8_e4m3fn weights (largest magnitude ÷ 448): no FP8 tensor cores needed, the
  product is BF16.
- ``int4``: 4-bit unsigned values in groups of :data:`INT4_GROUP` along the input with a BF16 scale and zero per
  group (w ≈ (q − 8) × scale + zero, gpt-fast's asymmetric scheme); multiplied by PyTorch's packed kernel
  (``_weight_int4pack_mm`` after ``_convert_weight_to_int4pack`` on a GPU, their ``_for_cpu`` forms on the CPU)
  where this PyTorch has it for the device, else dequantised to BF16 by PyTorch ops before ``F.linear``
  (:data:`INT4_FALLBACK`, which reads a BF16 copy besides).

torch is imported by the code that builds a model only.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from hwbench_gui.engine.inventory.gpu_arch import FP8_MAX
from hwbench_gui.engine.models.llm.storage import INT4_GROUP, INT4_INNER_K_TILES

INT4_FALLBACK = ("dequantised to BF16 by PyTorch ops before F.linear (this PyTorch has no packed int4 matmul for "
                 "the device)")
#: Rows from which an FP8 layer with ``fp8_prompts`` multiplies on FP8 tensor cores (below: the one-token GEMV).
PROMPT_ROWS = 16
#: Rows of a weight quantised at once: the FP32 temporaries stay small whatever the matrix.
QUANTIZE_ROWS = 4096


def int4_kernel(device: torch.device | str) -> str | None:
    """Which packed int4 matmul this PyTorch has for ``device`` ("cuda" or "cpu", tried on a 128×16 weight), or
    None (then :data:`INT4_FALLBACK`)."""
    where = torch.device(device)
    try:
        weight = Int4Linear(128, 16, False, "cuda" if where.type == "cuda" else "cpu", device=where)
        weight.set_weight(torch.ones(16, 128, dtype=torch.bfloat16, device=where))
        weight(torch.ones(1, 128, dtype=torch.bfloat16, device=where))
    except (RuntimeError, NotImplementedError, AttributeError):
        return None
    return weight.kernel


class WeightOnlyLinear(nn.Module):
    """A bias-optional linear layer whose weight ``[out, in]`` is held quantized; input and output BF16."""

    def __init__(self, in_features: int, out_features: int, bias: bool, device=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.bias = nn.Parameter(torch.empty(out_features, dtype=torch.bfloat16, device=device)) if bias else None

    def _biased(self, y: torch.Tensor) -> torch.Tensor:
        return y if self.bias is None else y + self.bias


def fp8_prompt_products(device: torch.device | str) -> bool:
    """Whether FP8 weights multiply a prompt's rows on FP8 tensor cores on ``device`` (a GPU of compute capability
    8.9+ whose PyTorch has ``torch._scaled_mm`` with row-wise scales); elsewhere they are converted to BF16."""
    from hwbench_gui.engine.models.llm.fp8 import unavailable_reason

    return torch.device(device).type == "cuda" and unavailable_reason(str(device)) is None


class ChannelLinear(WeightOnlyLinear):
    """int8 or FP8 weights with one BF16 scale per output channel (gpt-fast's WeightOnlyInt8Linear). With
    ``fp8_prompts`` an FP8 layer multiplies :data:`PROMPT_ROWS` rows or more (a prompt, a large batch) as
    precision=fp8 does, its input quantised per row and ``torch._scaled_mm`` on FP8 tensor cores: the prompt pass at
    the FP8 matmul rate instead of converting the whole weight to BF16 first."""

    def __init__(self, in_features: int, out_features: int, bias: bool, kind: str, device=None,
                 fp8_prompts: bool = False):
        super().__init__(in_features, out_features, bias, device)
        self.kind = kind
        self.fp8_prompts = fp8_prompts and kind == "fp8" and in_features % 16 == 0 and out_features % 16 == 0
        dtype = torch.int8 if kind == "int8" else torch.float8_e4m3fn
        self.register_buffer("weight", torch.empty(out_features, in_features, dtype=dtype, device=device))
        self.register_buffer("scales", torch.empty(out_features, dtype=torch.bfloat16, device=device))

    @torch.no_grad()
    def set_weight(self, weight: torch.Tensor) -> None:
        """Quantise ``weight`` ``[out, in]`` into this layer, a block of rows at a time."""
        largest = 127.0 if self.kind == "int8" else FP8_MAX
        for first in range(0, self.out_features, QUANTIZE_ROWS):
            rows = weight[first:first + QUANTIZE_ROWS].float()
            scale = (rows.abs().amax(dim=1, keepdim=True) / largest).clamp(min=1e-12).to(torch.bfloat16).float()
            q = (rows / scale).clamp(-largest, largest)
            self.weight[first:first + QUANTIZE_ROWS].copy_(q.round() if self.kind == "int8" else q)
            self.scales[first:first + QUANTIZE_ROWS].copy_(scale.view(-1))

    def dequantized(self) -> torch.Tensor:
        """The weight this layer multiplies by, in FP32 (tests compare against it)."""
        return self.weight.float() * self.scales.float().view(-1, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = x.shape
        if self.fp8_prompts and x.numel() // shape[-1] >= PROMPT_ROWS:
            from hwbench_gui.engine.models.llm.fp8 import quantize_rows

            q, scale = quantize_rows(x.reshape(-1, shape[-1]))
            y = torch._scaled_mm(q, self.weight.t(), scale_a=scale, scale_b=self.scales.float().view(1, -1),
                                 out_dtype=torch.bfloat16)
            return self._biased(y.view(*shape[:-1], self.out_features))
        return self._biased(F.linear(x, self.weight.to(dtype=x.dtype)) * self.scales)


class Int4Linear(WeightOnlyLinear):
    """4-bit weights in groups of :data:`INT4_GROUP` with a BF16 scale and zero each (gpt-fast's
    WeightOnlyInt4Linear), multiplied by PyTorch's packed kernel for ``kernel`` ("cuda", "cpu"), or (``kernel``
    None) unpacked and dequantised by PyTorch ops."""

    def __init__(self, in_features: int, out_features: int, bias: bool, kernel: str | None, device=None):
        super().__init__(in_features, out_features, bias, device)
        self.kernel = kernel
        # Two 4-bit values a byte, whatever the layout: the packed kernels' weights take the same bytes.
        self.register_buffer("weight", torch.empty(out_features, in_features // 2, dtype=torch.uint8, device=device))
        self.register_buffer("scales_and_zeros", torch.empty(in_features // INT4_GROUP, out_features, 2,
                                                             dtype=torch.bfloat16, device=device))

    @torch.no_grad()
    def set_weight(self, weight: torch.Tensor) -> None:
        """Quantise ``weight`` ``[out, in]`` group-wise (asymmetric, as gpt-fast) and pack it for the kernel."""
        n, k = self.out_features, self.in_features
        groups = weight.float().reshape(-1, INT4_GROUP)
        low, high = groups.amin(dim=1, keepdim=True), groups.amax(dim=1, keepdim=True)
        scales = ((high - low).clamp(min=1e-6) / 15).to(torch.bfloat16).float()
        zeros = (low + scales * 8).to(torch.bfloat16).float()
        q = (groups - (zeros - scales * 8)).div(scales).round().clamp(0, 15).to(torch.int32).reshape(n, k)
        self.scales_and_zeros.copy_(torch.cat([scales.reshape(n, -1, 1), zeros.reshape(n, -1, 1)], dim=2)
                                    .transpose(0, 1))
        nibbles = (q[:, ::2] << 4 | q[:, 1::2]).to(torch.uint8)
        if self.kernel == "cuda":
            self.weight = torch.ops.aten._convert_weight_to_int4pack(nibbles, INT4_INNER_K_TILES)
        elif self.kernel == "cpu":
            self.weight = torch.ops.aten._convert_weight_to_int4pack_for_cpu(q, 1)
        else:
            self.weight.copy_(nibbles)

    def dequantized(self) -> torch.Tensor:
        """The weight this layer multiplies by, in FP32, from its scales and zeros (tests compare against it)."""
        if self.kernel is not None:
            eye = torch.eye(self.in_features, dtype=torch.bfloat16, device=self.scales_and_zeros.device)
            return self._packed(eye).float().t()
        return self._unpacked().float()

    def _unpacked(self) -> torch.Tensor:
        q = torch.stack([self.weight >> 4, self.weight & 15], dim=-1).reshape(self.out_features, -1)
        sz = self.scales_and_zeros.transpose(0, 1).float()  # [out, groups, 2]
        groups = q.reshape(self.out_features, -1, INT4_GROUP).float()
        w = (groups - 8) * sz[..., :1] + sz[..., 1:]
        return w.reshape(self.out_features, self.in_features).to(torch.bfloat16)

    def _packed(self, x2: torch.Tensor) -> torch.Tensor:
        if self.kernel == "cuda":
            return torch.ops.aten._weight_int4pack_mm(x2, self.weight, INT4_GROUP, self.scales_and_zeros)
        return torch.ops.aten._weight_int4pack_mm_for_cpu(x2, self.weight, INT4_GROUP, self.scales_and_zeros)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.kernel is None:
            return self._biased(F.linear(x, self._unpacked().to(x.dtype)))
        shape = x.shape
        y = self._packed(x.reshape(-1, shape[-1]).contiguous())
        return self._biased(y.view(*shape[:-1], self.out_features))


BLOCK_MATMULS = ("qkv", "out", "up", "down")


def quantized(linear: nn.Linear, kind: str, int4: str | None = None, fp8_prompts: bool = False) -> WeightOnlyLinear:
    """An empty weight-only layer of ``kind`` of ``linear``'s shape on its device (``int4``: the packed kernel,
    :func:`int4_kernel`; ``fp8_prompts``: :class:`ChannelLinear`'s)."""
    args = (linear.in_features, linear.out_features, linear.bias is not None)
    return Int4Linear(*args, int4, device=linear.weight.device) if kind == "int4" else \
        ChannelLinear(*args, kind, device=linear.weight.device, fp8_prompts=fp8_prompts)


def replace_matmuls(model: nn.Module, kind: str, int4: str | None = None, fp8_prompts: bool = False) -> None:
    """Swap every block's matmul layers and the output projection (``nn.Linear``, made on ``meta``; a tied output
    projection is the token table and stays) for empty weight-only layers of ``kind``: the decoder is then
    materialised with quantized weights directly, never holding its BF16 matrices all at once."""
    for block in model.blocks:
        for name in BLOCK_MATMULS:
            setattr(block, name, quantized(getattr(block, name), kind, int4, fp8_prompts))
    if model.head is not None:
        model.head = quantized(model.head, kind, int4, fp8_prompts)
