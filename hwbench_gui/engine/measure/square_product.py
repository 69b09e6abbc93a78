"""The square n×n×n product in each precision (FP8 through ``torch._scaled_mm``), timed by
:func:`.matmul_rate.product_seconds`: gpu.matmul's figure, and the FP8 rate a language model's FP8 layers are held
against (llm.infer's prompt bound, llm.train's MFU denominator). torch is imported by the functions that run one."""

from __future__ import annotations

from typing import Any, Callable

from hwbench_gui.engine.measure.matmul_rate import product_seconds
from hwbench_gui.engine.spec.precision import BF16, FP8, FP16, FP32, TF32, from_label

#: The precisions a square product is made in, in gpu.matmul's order.
SQUARE_PRECISIONS = (FP32, TF32, FP16, BF16, FP8)
REPEAT_S = {"cuda": 0.05, "cpu": 0.2}  # target length of one timed repeat


def fp8_max(torch: Any) -> float:
    """The largest finite float8_e4m3fn value (448), as PyTorch declares it: what a scale maps a tensor's largest
    magnitude to."""
    return float(torch.finfo(torch.float8_e4m3fn).max)


def make_operands(label: str, n: int, device: str, fp8_rowwise: bool = False) -> tuple[Callable[[], Any], list[Any]]:
    """A zero-argument function computing one n×n×n product in precision ``label`` (its results'
    name: "FP32", "BF16"), and its inputs.

    Inputs come from ``torch.randn`` (never zeros: some hardware is faster on zeros). FP8 uses
    ``torch._scaled_mm`` on float8_e4m3fn operands with per-tensor scales (``fp8_rowwise``: a scale per row of
    the first operand and per column of the second, as a language model's FP8 layers multiply) and a BF16 result.
    """
    import torch

    precision = from_label(label)
    if precision is FP8:
        largest = fp8_max(torch)
        a, b_t = (torch.randn(n, n, device=device) for _ in range(2))
        if fp8_rowwise:
            scale_a, scale_b = (x.abs().amax(dim=1, keepdim=True).float() / largest for x in (a, b_t))
        else:
            scale_a, scale_b = (x.abs().max().float() / largest for x in (a, b_t))
        a8 = (a / scale_a).to(torch.float8_e4m3fn)
        b8 = (b_t / scale_b).to(torch.float8_e4m3fn).t()  # _scaled_mm wants the second operand column-major
        if fp8_rowwise:
            scale_b = scale_b.view(1, n)
        return (lambda: torch._scaled_mm(a8, b8, scale_a=scale_a, scale_b=scale_b, out_dtype=torch.bfloat16),
                [a8, b8])
    if precision not in SQUARE_PRECISIONS:
        raise ValueError(f"gpu.matmul does not multiply {label} matrices")
    dtype = getattr(torch, precision.tensor_dtype)
    a, b = (torch.randn(n, n, device=device, dtype=dtype) for _ in range(2))
    out = torch.empty(n, n, device=device, dtype=dtype)
    return (lambda: torch.mm(a, b, out=out)), [a, b]


def product_rates_tflops(label: str, n: int, device: str, repeats: int, burst: bool,
                         fp8_rowwise: bool = False, repeat_s: float | None = None) -> list[float]:
    """TFLOP/s of n×n×n products in precision ``label`` on ``device`` ("cpu", "cuda:0"), one figure per
    repeat: 3 warm-up products, then repeats of about ``repeat_s`` (default :data:`REPEAT_S`) back to back, or with
    ``burst`` (a GPU) bursts of about ``BURST_S`` after idle gaps. Operands are freed before it returns."""
    import torch

    kind = "cpu" if device == "cpu" else "cuda"
    fn, _inputs = make_operands(label, n, device, fp8_rowwise) if fp8_rowwise else make_operands(label, n, device)
    try:
        seconds = product_seconds(fn, kind, repeats, burst, repeat_s or REPEAT_S[kind])
    finally:
        fn = _inputs = None  # free before the caller allocates more
        if kind == "cuda":
            torch.cuda.empty_cache()
    return [2 * n**3 / s / 1e12 for s in seconds]
