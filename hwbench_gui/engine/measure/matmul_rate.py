"""The matmul rate a model's figure is held against, measured the way the model multiplies.

A model's layers multiply with ``F.linear`` (the weight stored ``[out, in]``), and their backward with two
``mm``s (the input's gradient ``g @ W`` and the weight's ``gᵀ @ x``), at the model's own shapes, in its
dtype, on the threads the run set. A square ``torch.mm(a, b, out=c)`` measures another kernel: where PyTorch's CPU
BF16 products do not go through oneDNN (a CPU without AVX-512 BF16, or oneDNN switched off) a 1024² ``mm``
runs some 20 times slower than the layers' ``linear`` (0.0009 against 0.016 TFLOP/s on a 2-core Sapphire
Rapids with oneDNN off), and a figure held against it reads 1800 % of its bound.
:func:`limit_tflops` therefore times each of the model's products (and a square one as large as the device
needs to reach its peak) and keeps the fastest: no product of the model can run faster than the fastest
one measured, so the model's FLOPs over that rate is the least time they can take.

One loop (:func:`rates_tflops`) times a product; torch is imported by the functions that run one.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from hwbench_gui.engine.measure.stats import median
from hwbench_gui.engine.measure.timing import inner_for, time_cpu, time_cuda

#: The forms a layer's product takes: the forward ``F.linear(x, W)``; the backward's ``g @ W`` (the input's
#: gradient) and ``gᵀ @ x`` (the weight's).
FORMS = ("linear", "input_grad", "weight_grad")
#: A prompt's attention as the model runs it (:meth:`..models.llm.model.Block.prefill`): SDPA of ``m`` queries per
#: head after ``depth`` cached positions, the query heads of each key/value head as rows of one block, with the
#: causal mask; its FLOPs counted as the bounds count them (masked pairs not).
ATTENTION = "attention"
#: An operand is at most this many elements (128 MiB in BF16): a product is measured at its shape clipped to
#: it, since a vocabulary or a batch of any size must not allocate what the run itself would refuse.
MAX_OPERAND_ELEMENTS = 1 << 26
#: A product measured is at most this many FLOPs (its rows halved until it is): past a few hundred
#: milliseconds a CPU's rate no longer grows with the shape, and the limit must be measured in seconds.
MAX_FLOPS = {"cpu": 1 << 35, "cuda": 1 << 41}
#: Seconds of back-to-back products per timed repeat.
REPEAT_S = {"cpu": 0.05, "cuda": 0.05}
#: Burst mode: each repeat is ~15 ms of products after a short idle gap. A GPU at its power limit
#: (an H200 at 700 W) lowers its clocks within a second of sustained matmul, so back-to-back
#: repeats measure the power-capped rate; bursts measure the clock-limited peak that published
#: "peak TFLOP/s" figures and short framework kernels see.
BURST_S = 0.015


@dataclass(frozen=True)
class Product:
    """One matrix product of a model: ``m`` rows (tokens) of ``k`` inputs against a ``[n, k]`` weight, in one of
    :data:`FORMS`."""

    m: int
    k: int
    n: int
    form: str = "linear"
    #: :data:`ATTENTION` only: ``k`` is the head size, ``n`` the query heads, ``kv_heads`` the key/value heads.
    kv_heads: int = 0
    depth: int = 0

    @property
    def flops(self) -> int:
        if self.form == ATTENTION:
            return 4 * self.n * self.k * (self.m * self.depth + self.m * (self.m + 1) // 2)
        return 2 * self.m * self.k * self.n

    @property
    def label(self) -> str:
        if self.form == ATTENTION:
            return f"attention {self.m} queries after {self.depth}, {self.n} heads of {self.k}"
        return f"{self.form} {self.m}×{self.k}→{self.n}"

    def clipped(self, max_flops: int, max_elements: int = MAX_OPERAND_ELEMENTS) -> Product:
        """This product with its rows (then its widest sides) halved until every operand holds at most
        ``max_elements`` and it takes at most ``max_flops``: what can be measured in seconds."""
        if self.form == ATTENTION:  # fewer queries and cached positions until the mask and scores fit
            m, depth, k, heads, kv = max(1, self.m), max(0, self.depth), max(1, self.k), max(1, self.n), \
                max(1, min(self.kv_heads or 1, self.n))
            while heads * (m + k) * (depth + m) > max_elements or \
                    Product(m, k, heads, ATTENTION, kv, depth).flops > max_flops:
                if depth >= m and depth > 0:
                    depth //= 2
                elif m > 1:
                    m = (m + 1) // 2
                elif k > 1:
                    k = (k + 1) // 2
                elif heads > 1:  # a configuration no model has: as many heads as fit, one per key/value head
                    heads = kv = (heads + 1) // 2
                else:
                    break
            return Product(m, k, heads, ATTENTION, kv, depth)
        m, k, n = max(1, self.m), max(1, self.k), max(1, self.n)
        while m > 1 and (2 * m * k * n > max_flops or m * max(k, n) > max_elements):
            m = (m + 1) // 2
        while max(k, n) > 1 and (k * n > max_elements or 2 * m * k * n > max_flops):
            if n >= k:
                n = (n + 1) // 2
            else:
                k = (k + 1) // 2
        return Product(m, k, n, self.form)


def operands(torch: Any, product: Product, dtype: Any, device: str) -> Callable[[], Any]:
    """A zero-argument function computing ``product`` in ``dtype`` on ``device``, on ``torch.randn`` operands
    (never zeros: some hardware is faster on zeros)."""
    import torch.nn.functional as F

    def randn(*shape: int) -> Any:
        return torch.randn(*shape, device=device, dtype=dtype)

    if product.form == "linear":
        x, w = randn(product.m, product.k), randn(product.n, product.k)
        return lambda: F.linear(x, w)
    if product.form == "input_grad":
        g, w = randn(product.m, product.n), randn(product.n, product.k)
        return lambda: torch.mm(g, w)
    if product.form == "weight_grad":
        g, x = randn(product.m, product.n), randn(product.m, product.k)
        return lambda: torch.mm(g.t(), x)
    if product.form == ATTENTION:
        kv_heads = max(1, product.kv_heads)
        groups, seen = product.n // kv_heads, product.depth + product.m
        q = randn(1, kv_heads, groups * product.m, product.k)
        keys, values = randn(1, kv_heads, seen, product.k), randn(1, kv_heads, seen, product.k)
        positions = torch.arange(product.depth, seen, device=device)
        mask = (torch.arange(seen, device=device)[None, :] <= positions[:, None]).repeat(groups, 1)
        return lambda: F.scaled_dot_product_attention(q, keys, values, attn_mask=mask)
    raise ValueError(f"unknown product form {product.form!r} ({', '.join(FORMS)})")


def product_seconds(fn: Callable[[], Any], kind: str, repeats: int, burst: bool,
                    repeat_s: float | None = None) -> list[float]:
    """Seconds per call of ``fn`` (one product) on a device of ``kind`` ("cpu" or "cuda"), one figure per repeat:
    3 warm-up calls, then repeats of back-to-back calls lasting about ``repeat_s`` (default :data:`REPEAT_S`), or
    with ``burst`` bursts of about :data:`BURST_S` after idle gaps (what a GPU's power limiter allows a short
    kernel). The one timing loop of every matmul rate hwbench measures (gpu.matmul's and the language models'
    limits)."""
    timer = time_cpu if kind == "cpu" else time_cuda
    one_s = timer(fn, repeats=1, warmup=3)[0]
    if not burst:
        return timer(fn, repeats=repeats, inner=inner_for(one_s, repeat_s or REPEAT_S[kind]), warmup=0)
    inner = inner_for(one_s, BURST_S)
    seconds = []
    for _ in range(repeats):
        time.sleep(max(0.02, 3 * one_s * inner))  # let the power limiter recover
        seconds += timer(fn, repeats=1, inner=inner, warmup=2)
    return seconds


def rates_tflops(product: Product, dtype: Any, device: str, repeats: int, burst: bool = False) -> list[float]:
    """TFLOP/s of ``product`` in ``dtype`` (a torch dtype) on ``device`` ("cpu", "cuda:0"), one figure per repeat:
    3 warm-up products, then repeats of back-to-back products lasting about :data:`REPEAT_S`, or with ``burst``
    (a GPU) bursts of about :data:`BURST_S` after idle gaps. Operands are freed before it returns."""
    import torch

    kind = "cpu" if device == "cpu" else "cuda"
    fn: Callable[[], Any] | None = operands(torch, product, dtype, device)
    try:
        seconds = product_seconds(fn, kind, repeats, burst)
    finally:
        fn = None  # free the operands before the caller allocates more
        if kind == "cuda":
            torch.cuda.empty_cache()
    return [product.flops / s / 1e12 for s in seconds]


@dataclass
class MatmulLimit:
    """The fastest of the products measured: its samples (TFLOP/s), what it was, and every product's median."""

    tflops: list[float]
    product: Product
    by_product: dict[str, float]
    dtype: str

    @property
    def median_tflops(self) -> float:
        return median(self.tflops)

    def to_json(self) -> dict[str, Any]:
        return {"tflops": list(self.tflops), "median_tflops": self.median_tflops, "fastest": self.product.label,
                "dtype": self.dtype, "by_product_median_tflops": dict(self.by_product)}


def limit_tflops(products: Iterable[Product], dtype: Any, device: str, repeats: int, burst: bool = False,
                 on_product: Callable[[Product, float], None] | None = None) -> MatmulLimit:
    """The fastest median rate among ``products`` (each clipped to what can be measured in seconds, duplicates
    measured once): the limit a model made of these products is held against."""
    kind = "cpu" if device == "cpu" else "cuda"
    seen: dict[Product, list[float]] = {}
    for product in products:
        clipped = product.clipped(MAX_FLOPS[kind])
        if clipped in seen:
            continue
        seen[clipped] = rates_tflops(clipped, dtype, device, repeats, burst)
        if on_product is not None:
            on_product(clipped, median(seen[clipped]))
    if not seen:
        raise ValueError("no product to measure")
    best = max(seen, key=lambda p: median(seen[p]))
    return MatmulLimit(seen[best], best, {p.label: median(r) for p, r in seen.items()},
                       str(dtype).replace("torch.", ""))
