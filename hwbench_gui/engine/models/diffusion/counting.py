"""What one call of a model costs, counted from its shapes: FLOPs by PyTorch's own counter
(``torch.utils.flop_counter.FlopCounterMode``: 2·m·k·n per matmul, a convolution's 2 × output elements × kernel
volume × input channels per group, attention's two products; elementwise work not counted, as MFU conventions
leave it out), the parameters, the matmul shapes the run measures its limit at, and the tensors the estimate of
its memory reads. The call runs on PyTorch's meta device (shapes only, nothing computed or allocated), so the
cost of SDXL at 1024² is known before a byte of it is allocated.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable


def _cpu_attention_mapping() -> dict[Any, Any]:
    """PyTorch's counter knows the CUDA attention kernels; the CPU's fused one is given the same formula."""
    import torch
    from torch.utils import flop_counter

    def attention(query_shape: Any, key_shape: Any, value_shape: Any, *_: Any, **__: Any) -> int:
        return flop_counter.sdpa_flop_count(query_shape, key_shape, value_shape)

    op = getattr(torch.ops.aten, "_scaled_dot_product_flash_attention_for_cpu", None)
    return {op: attention} if op is not None else {}


def count_flops(fn: Callable[[], Any]) -> tuple[int, dict[str, int]]:
    """FLOPs of ``fn()`` (any device, meta included) and their split by operator (``aten.convolution``: n)."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    with torch.no_grad(), FlopCounterMode(display=False, custom_mapping=_cpu_attention_mapping()) as counter:
        fn()
    by_op = {str(op).replace("aten.", ""): int(n) for op, n in counter.get_flop_counts().get("Global", {}).items()}
    return int(counter.get_total_flops()), by_op


@dataclass
class Trace:
    """A model's call at given shapes: FLOPs, parameters, and the tensors its memory estimate reads."""

    flops: int
    flops_by_op: dict[str, int]
    params: int
    #: Elements of the weights of its ``nn.Linear`` layers (what FP8 stores in one byte).
    linear_weights: int
    #: The largest output of any one layer, in bytes at the call's dtype.
    largest_output_bytes: int
    #: Bytes held across the call (a UNet's skip connections, kept from the down path to the up path).
    kept_bytes: int
    #: The matmuls of its linear layers, (rows, in, out), most FLOPs first, each shape once.
    products: list[tuple[int, int, int]] = field(default_factory=list)
    #: FLOPs of those matmuls (the share FP8 weights run at FP8's rate).
    linear_flops: int = 0


def trace(model: Any, call: Callable[[], Any], element_bytes: int) -> Trace:
    """Run ``call`` (``model`` on meta inputs) under the FLOP counter with hooks that read each layer's shapes."""
    import torch

    largest = [0]
    kept = [0]
    shapes: dict[tuple[int, int, int], int] = {}

    def on_output(module: Any, args: Any, output: Any) -> None:
        if isinstance(output, torch.Tensor):
            largest[0] = max(largest[0], output.numel() * element_bytes)
        if isinstance(module, torch.nn.Linear) and args and isinstance(args[0], torch.Tensor):
            rows = args[0].numel() // module.in_features
            key = (rows, module.in_features, module.out_features)
            shapes[key] = shapes.get(key, 0) + 1

    def on_down_block(module: Any, args: Any, output: Any) -> None:
        if isinstance(output, tuple) and len(output) == 2 and isinstance(output[1], tuple):
            kept[0] += sum(t.numel() * element_bytes for t in output[1] if isinstance(t, torch.Tensor))

    handles = [m.register_forward_hook(on_output) for m in model.modules() if not list(m.children())]
    handles += [m.register_forward_hook(on_down_block) for m in getattr(model, "down_blocks", [])]
    try:
        flops, by_op = count_flops(call)
    finally:
        for handle in handles:
            handle.remove()
    linear = sum(m.weight.numel() for m in model.modules() if isinstance(m, torch.nn.Linear))
    products = sorted(shapes, key=lambda s: -2 * s[0] * s[1] * s[2] * shapes[s])
    linear_flops = sum(2 * m * k * n * count for (m, k, n), count in shapes.items())
    return Trace(flops, by_op, sum(p.numel() for p in model.parameters()), linear, largest[0], kept[0], products,
                 linear_flops)
