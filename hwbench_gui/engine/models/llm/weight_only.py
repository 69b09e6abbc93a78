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
  group (w ≈ (q − 8) × scale + zero, gpt-fast's asymmetric scheme), held in one of two layouts (never both):
  :data:`INT4_ROUTES`.

:data:`PROMPT_ROWS` rows or more (a prompt, a large batch) are a matmul, not a GEMV: each layer dequantises its
weight to a transient BF16 matrix and multiplies by cuBLAS (``F.linear``), one layer at a time. That product is an
opaque custom op (``hwbench::…_prompt_product``), so a compiled prompt pass neither compiles nor fuses it.

torch is imported by the code that builds a model only.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from hwbench_gui.engine.inventory.gpu_arch import FP8_MAX
from hwbench_gui.engine.models.llm.storage import INT4_GROUP, INT4_INNER_K_TILES

#: llm.infer's ``int4_kernel`` choices besides "auto": how int4 weights are held and multiplied.
INT4_ROUTES = {
    "packed": "PyTorch's packed int4 matmul (_weight_int4pack_mm after _convert_weight_to_int4pack at load; their "
              "_for_cpu forms on the CPU) at every row count: that layout has no cheap way back to BF16, so a "
              "prompt too goes through the kernel (made for a few rows on a GPU)",
    "compiled": "plain nibbles [out, in/2]: one row multiplied by a dequantise-in-the-product expression that "
                "torch.compile makes one reduction reading each byte once; a prompt's rows by cuBLAS after "
                "dequantising each layer to a transient BF16 matrix",
}
INT4_FALLBACK = ("plain nibbles (this PyTorch has no packed int4 matmul for the device): dequantised to a transient "
                 "BF16 matrix before F.linear outside torch.compile")
#: Rows from which a layer multiplies as a matmul: its weight dequantised to BF16 for cuBLAS (or, FP8 with
#: ``fp8_prompts``, on FP8 tensor cores); below, the one-token GEMV reading the quantized bytes.
PROMPT_ROWS = 16
#: Rows of a weight quantised at once: the FP32 temporaries stay small whatever the matrix.
QUANTIZE_ROWS = 4096


def int4_kernel(device: torch.device | str) -> str | None:
    """Which packed int4 matmul this PyTorch has for ``device`` ("cuda" or "cpu", tried on a 128×16 weight), or
    None (then the nibbles of :data:`INT4_ROUTES` "compiled", :data:`INT4_FALLBACK`)."""
    where = torch.device(device)
    try:
        weight = Int4Linear(128, 16, False, "cuda" if where.type == "cuda" else "cpu", device=where)
        weight.set_weight(torch.ones(16, 128, dtype=torch.bfloat16, device=where))
        weight(torch.ones(1, 128, dtype=torch.bfloat16, device=where))
    except (RuntimeError, NotImplementedError, AttributeError):
        return None
    return weight.kernel


def int4_route(asked: str, device: torch.device | str) -> tuple[str | None, str]:
    """``int4_kernel`` ``asked`` (auto, packed or compiled) on ``device``: the packed kernel to hold the weights for
    ("cuda", "cpu"), or None for the nibbles, and the route's name. auto = packed wherever this PyTorch has the
    kernel: on an H100 (llama-3.1-8b, batch 1) it generates 315.5 tokens/s against the compiled nibbles' 113.7,
    while its prompt runs 2,141 tokens/s against their 6,698; a run's headline is generation. packed where this
    PyTorch has no packed kernel for the device = the nibbles."""
    if asked == "compiled":
        return None, "compiled"
    kernel = int4_kernel(device)
    return kernel, "packed" if kernel else "compiled"


@torch.library.custom_op("hwbench::channel_prompt_product", mutates_args=())
def channel_prompt_product(x: torch.Tensor, weight: torch.Tensor, scales: torch.Tensor) -> torch.Tensor:
    """``x`` ``[rows, in]`` times an int8 or FP8 ``weight`` ``[out, in]`` with a scale per output channel: the
    weight converted to a transient BF16 matrix and multiplied by cuBLAS. A custom op, so that torch.compile
    calls it as it is instead of compiling it into the block's graph."""
    return F.linear(x, weight.to(x.dtype)) * scales


@channel_prompt_product.register_fake
def _channel_prompt_shape(x: torch.Tensor, weight: torch.Tensor, scales: torch.Tensor) -> torch.Tensor:
    return x.new_empty(x.shape[0], weight.shape[0])


@torch.library.custom_op("hwbench::int4_prompt_product", mutates_args=())
def int4_prompt_product(x: torch.Tensor, nibbles: torch.Tensor, scales_and_zeros: torch.Tensor) -> torch.Tensor:
    """``x`` ``[rows, in]`` times int4 ``nibbles`` ``[out, in/2]`` dequantised to a transient BF16 matrix
    (:func:`dequantised_int4`; on a GPU with Triton, that function compiled: one pass reading 0.5 byte and
    writing 2 bytes per weight) and multiplied by cuBLAS, outside any compiled graph (see
    :func:`channel_prompt_product`)."""
    dequantise = _compiled_dequantise() if x.is_cuda else dequantised_int4
    return F.linear(x, dequantise(nibbles, scales_and_zeros).to(x.dtype))


@int4_prompt_product.register_fake
def _int4_prompt_shape(x: torch.Tensor, nibbles: torch.Tensor, scales_and_zeros: torch.Tensor) -> torch.Tensor:
    return x.new_empty(x.shape[0], nibbles.shape[0])


def dequantised_int4(nibbles: torch.Tensor, scales_and_zeros: torch.Tensor) -> torch.Tensor:
    """int4 weights ``[out, in/2]`` (each byte: an even input's value in its high 4 bits, the next input's in its
    low 4) with ``scales_and_zeros`` ``[in / INT4_GROUP, out, 2]`` as a BF16 matrix ``[out, in]``: (q − 8) × scale
    + zero, computed in FP32 and rounded once."""
    out = nibbles.shape[0]
    q = torch.stack([nibbles >> 4, nibbles & 15], dim=-1).view(out, -1, INT4_GROUP).float()
    sz = scales_and_zeros.transpose(0, 1).float()  # [out, groups, 2]
    return torch.addcmul(sz[..., 1:], q - 8, sz[..., :1]).reshape(out, -1).to(torch.bfloat16)


_COMPILED: dict[str, object] = {}


def _compiled_dequantise():
    """:func:`dequantised_int4` compiled once for every shape where this PyTorch has Triton (eager PyTorch makes
    several passes over FP32 copies of the weight for it), else itself."""
    if "dequantise" not in _COMPILED:
        from torch.utils._triton import has_triton

        _COMPILED["dequantise"] = torch.compile(dequantised_int4, dynamic=True) if has_triton() \
            else dequantised_int4
    return _COMPILED["dequantise"]


def grouped_product(x: torch.Tensor, nibbles: torch.Tensor, scales_and_zeros: torch.Tensor) -> torch.Tensor:
    """``x`` ``[rows, in]`` times the int4 weight of :func:`dequantised_int4`, written as one reduction for
    torch.compile: each byte unpacked (>> 4 for the even input, & 15 for the odd), (q − 8) × scale + zero, times its
    input, summed in FP32. Inductor makes it a single kernel (a tuned reduction under coordinate-descent tuning)
    that reads each byte of the weight once and never writes a BF16 copy. Eagerly it would materialise
    ``rows × out × in`` products: for small tests and compiled graphs only."""
    rows, out, groups = x.shape[0], nibbles.shape[0], scales_and_zeros.shape[0]
    pairs = x.float().reshape(rows, 1, groups, INT4_GROUP // 2, 2)
    even, odd = pairs[..., 0], pairs[..., 1]
    packed = nibbles.view(1, out, groups, INT4_GROUP // 2)
    scale = scales_and_zeros[..., 0].t().float().reshape(1, out, groups, 1)
    zero = scales_and_zeros[..., 1].t().float().reshape(1, out, groups, 1)
    high = ((packed >> 4).float() - 8) * scale + zero
    low = ((packed & 15).float() - 8) * scale + zero
    return (even * high + odd * low).sum(dim=(2, 3)).to(x.dtype)


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
        if x.numel() // shape[-1] < PROMPT_ROWS:
            return self._biased(F.linear(x, self.weight.to(dtype=x.dtype)) * self.scales)
        rows = x.reshape(-1, shape[-1])
        if self.fp8_prompts:
            from hwbench_gui.engine.models.llm.fp8 import quantize_rows

            q, scale = quantize_rows(rows)
            y = torch._scaled_mm(q, self.weight.t(), scale_a=scale, scale_b=self.scales.float().view(1, -1),
                                 out_dtype=torch.bfloat16)
        else:
            y = channel_prompt_product(rows, self.weight, self.scales)
        return self._biased(y.view(*shape[:-1], self.out_features))


class Int4Linear(WeightOnlyLinear):
    """4-bit weights in groups of :data:`INT4_GROUP` with a BF16 scale and zero each (gpt-fast's
    WeightOnlyInt4Linear), in PyTorch's packed layout for ``kernel`` ("cuda", "cpu") and multiplied by its kernel,
    or (``kernel`` None) as plain nibbles ``[out, in/2]`` (:data:`INT4_ROUTES` "compiled"). Either way 0.5 byte a
    weight: one layout is held, never both."""

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
        return dequantised_int4(self.weight, self.scales_and_zeros).float()

    def _packed(self, x2: torch.Tensor) -> torch.Tensor:
        if self.kernel == "cuda":
            return torch.ops.aten._weight_int4pack_mm(x2, self.weight, INT4_GROUP, self.scales_and_zeros)
        return torch.ops.aten._weight_int4pack_mm_for_cpu(x2, self.weight, INT4_GROUP, self.scales_and_zeros)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = x.shape
        rows = x.reshape(-1, shape[-1])
        if self.kernel is not None:
            y = self._packed(rows.contiguous())
        elif rows.shape[0] < PROMPT_ROWS and torch.compiler.is_compiling():
            y = grouped_product(rows, self.weight, self.scales_and_zeros)
        else:
            # a prompt, or a token outside torch.compile (where the grouped product would be materialised)
            y = int4_prompt_product(rows, self.weight, self.scales_and_zeros)
        return self._biased(y.view(*shape[:-1], self.out_features))


BLOCK_MATMULS = ("qkv", "out", "up", "down")


def quantized(linear: nn.Linear, kind: str, int4: str | None = None, fp8_prompts: bool = False) -> WeightOnlyLinear:
    """An empty weight-only layer of ``kind`` of ``linear``'s shape on its device (``int4``: the packed kernel,
    or None for the nibbles, :func:`int4_route`; ``fp8_prompts``: :class:`ChannelLinear`'s)."""
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
