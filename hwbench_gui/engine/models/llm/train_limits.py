"""The limits llm.train's MFU is held against, measured in the run: the fastest 16-bit product of the model's
step at its shapes (:mod:`...measure.matmul_rate`) and, for FP8 blocks, the FP8 square product with tensorwise
scales (:mod:`...measure.square_product`); and how a figure is held against a limit (never a share above 100 %)."""

from __future__ import annotations

from typing import Any

from hwbench_gui.engine.measure import matmul_rate
from hwbench_gui.engine.measure.square_product import make_operands
from hwbench_gui.engine.measure.timing import figure
from hwbench_gui.engine.models.llm import training_arithmetic as ta
from hwbench_gui.engine.spec.precision import BF16, FP8, FP16, from_key, from_label

#: The matmul the run measures for its own MFU denominator: n × n × n, back-to-back for about this long.
MATMUL_N = {"cuda": 8192, "cpu": 512}
#: The CPU's FP8 product is PyTorch's emulation, some 10,000 times slower than its BF16 one: a smaller n keeps the
#: measurement to seconds (it is a numerics check's denominator there, not a figure).
FP8_CPU_MATMUL_N = 128
MATMUL_REPEAT_S = {"cuda": 0.05, "cpu": 0.1}
MATMUL_REPEATS = 10
#: Samples of each of the model's products measured for the MFU denominator (a dozen products, twice a run).
LIMIT_REPEATS = 5


def low_label(precision_key: str) -> str:
    """The 16-bit type the step's autocast multiplies in (BF16 around FP8's block matmuls)."""
    if precision_key == FP8.key:
        return BF16.label
    autocast = from_key(precision_key).autocast_dtype
    return next(p.label for p in (BF16, FP16) if p.tensor_dtype == autocast)


def limit_products(arch: Any, params: dict[str, Any], tokens: int, square: int) -> list[matmul_rate.Product]:
    """The products a training step of ``tokens`` tokens multiplies: each block matrix (q/k/v, out, up, down) and
    the output projection (a loss chunk of tokens at a time) forward and backward (a frozen LoRA base computes no
    weight gradient), and a square one of ``square``: the matmul limit is the fastest of them."""
    forms = matmul_rate.FORMS if params["method"] == "full" else ("linear", "input_grad")
    chunk = min(tokens, ta.chunk_tokens(arch.vocab))
    shapes = [(tokens, k, n) for k, n in ta.lora_shapes(arch)[:len(ta.LORA_TARGETS)]] + \
        [(chunk, arch.hidden, arch.vocab)]
    return [matmul_rate.Product(m, k, n, form) for m, k, n in shapes for form in forms] + \
        [matmul_rate.Product(square, square, square)]


def measure_limit(torch: Any, device: Any, params: dict[str, Any], arch: Any, micro_batch: int) -> dict[str, Any]:
    """The MFU denominator: the fastest 16-bit product of the model's step measured now as the step runs it
    (:func:`limit_products` at micro_batch × seq tokens, in the autocast type, on the run's threads; back-to-back,
    sustained as training is), as a figure with every product's rate; ``value`` None with the reason where
    it cannot run."""
    label = low_label(params["precision"])
    kind = device.type
    products = limit_products(arch, params, micro_batch * params["seq"], MATMUL_N[kind])
    try:
        limit = matmul_rate.limit_tflops(products, getattr(torch, from_label(label).tensor_dtype), str(device),
                                         LIMIT_REPEATS)
    except RuntimeError as exc:
        return {"value": None, "unit": "TFLOP/s", "reason": f"{label} matmul could not run here: {exc}"}
    return {**figure(limit.tflops, "TFLOP/s", size=limit.product.n, precision=label), "products": limit.to_json(),
            "short": f"{label} {limit.product.label}, the fastest of the model's products measured now",
            "what": f"the fastest {label} product of the model's step ({limit.product.label}) of "
                    f"{len(limit.by_product)} measured as the step runs them (F.linear and its backward's mm, at "
                    f"its shapes, on the run's threads, back to back for about "
                    f"{matmul_rate.REPEAT_S[kind] * 1e3:g} ms per sample)"}


def best_of(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    """The higher of two measurements of the matmul limit (before and after the timed steps), marked as such."""
    values = [m for m in (first, second) if m.get("value")]
    if not values:
        return second if second else first
    best = dict(max(values, key=lambda m: m["value"]))
    if len(values) == 2:
        best["what"] = f"{best['what']}; measured before and after the timed steps, the higher kept"
    return best


def measure_fp8(torch: Any, device: Any) -> dict[str, Any]:
    """The FP8 rate (tensorwise scales, as the blocks multiply), with gpu.matmul's FP8 operands."""
    kind = device.type
    n = FP8_CPU_MATMUL_N if kind == "cpu" else MATMUL_N[kind]
    try:
        fn, _inputs = make_operands(FP8.label, n, str(device))
        seconds = matmul_rate.product_seconds(fn, kind, MATMUL_REPEATS, False, MATMUL_REPEAT_S[kind])
    except RuntimeError as exc:
        return {"value": None, "unit": "TFLOP/s", "reason": f"{FP8.label} matmul could not run here: {exc}"}
    rates = [2 * n**3 / s / 1e12 for s in seconds]
    return {**figure(rates, "TFLOP/s", size=n, precision=FP8.label),
            "what": f"{FP8.label} {n}×{n}×{n} products back to back for about {MATMUL_REPEAT_S[kind] * 1e3:g} ms per "
                    f"sample, after the timed steps (gpu.matmul's square product, sustained mode)"}


def within_limit(entry: dict[str, Any], reason: str) -> dict[str, Any]:
    """``entry`` (a fraction of a limit) as it is, or, when its value is above 1, with no value, ``reason`` and
    ``above_limit`` (and no samples): a figure above its limit means the limit is wrong, and no share above
    100 % is shown or stored."""
    value = entry.get("value")
    if value is None or value <= 1.0:
        return entry
    return {**{k: v for k, v in entry.items() if k != "samples"}, "value": None, "above_limit": True,
            "reason": reason}


def at_peaks(fpt: int, fp8_fpt: int, peak: float | None, fp8_peak: float | None) -> float | None:
    """Seconds one token's FLOPs take at the given peaks (TFLOP/s): the FP8 share at ``fp8_peak``, the rest at
    ``peak``; None where a needed peak is unknown."""
    if not peak or (fp8_fpt and not fp8_peak):
        return None
    return (fpt - fp8_fpt) / (peak * 1e12) + (fp8_fpt / (fp8_peak * 1e12) if fp8_fpt else 0.0)


