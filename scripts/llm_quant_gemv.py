"""One-row weight-only products on a GPU, layer by layer, against the copy rate: where quantized decoding loses.

For three of Llama-3.1-8B's matmul shapes (q/k/v, gate+up, down), each stored as BF16, int8 and FP8 (per-channel
scales) and int4 nibbles (groups of 128), times y = x·Wᵀ for one row compiled as llm.infer's step=fused compiles it
(Inductor, coordinate-descent tuning, never max-autotune), plus variants of the FP8 conversion, and cuBLAS's BF16
GEMV; each timed as 20 products in one CUDA graph (no launch cost), median of 15 replays. Prints GB/s of what is
read (weights, scales, zeros) and its share of a device-to-device copy's rate measured here. GPU only; about a
minute.
    python3 scripts/llm_quant_gemv.py
"""

from __future__ import annotations

import statistics
import sys

import torch
import torch.nn.functional as F

SHAPES = {"qkv": (4096, 6144), "gate+up": (4096, 28672), "down": (14336, 4096)}
OPTIONS = {"coordinate_descent_tuning": True, "triton.unique_kernel_names": True}
REPS, REPLAYS = 20, 15
GROUP = 128


def timed(fn, x) -> float:
    """Seconds per product: REPS products captured in one CUDA graph, median over REPLAYS replays."""
    for _ in range(3):
        fn(x)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(REPS):
            fn(x)
    times = []
    for _ in range(REPLAYS):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3 / REPS)
    return statistics.median(times)


def copy_rate() -> float:
    a = torch.empty(2 << 30, dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)
    seconds = timed(lambda _: b.copy_(a), None)
    return 2 * a.numel() / seconds


def variants(k: int, n: int):
    w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16) / k ** 0.5
    scale = (w.float().abs().amax(dim=1) / 127).to(torch.bfloat16)
    w8 = (w.float() / scale.float()[:, None]).round().clamp(-127, 127).to(torch.int8)
    fscale = (w.float().abs().amax(dim=1) / 448).to(torch.bfloat16)
    wf8 = (w.float() / fscale.float()[:, None]).to(torch.float8_e4m3fn)
    groups = w.float().reshape(n, -1, GROUP)
    low, high = groups.amin(-1, keepdim=True), groups.amax(-1, keepdim=True)
    s4 = ((high - low).clamp(min=1e-6) / 15).to(torch.bfloat16)
    z4 = (low + s4.float() * 8).to(torch.bfloat16)
    q = ((groups - (z4.float() - s4.float() * 8)) / s4.float()).round().clamp(0, 15).to(torch.uint8).reshape(n, k)
    nib = (q[:, ::2] << 4 | q[:, 1::2]).contiguous()

    def int4(x):
        q4 = torch.stack([nib >> 4, nib & 15], dim=-1).reshape(n, -1, GROUP).to(torch.bfloat16)
        deq = ((q4 - 8) * s4 + z4).reshape(n, k)
        return F.linear(x, deq)

    return [
        ("bf16 cuBLAS", lambda x: F.linear(x, w), w.numel() * 2, False),
        ("bf16", lambda x: F.linear(x, w), w.numel() * 2, True),
        ("int8", lambda x: F.linear(x, w8.to(x.dtype)) * scale, w8.numel() + n * 2, True),
        ("fp8→bf16", lambda x: F.linear(x, wf8.to(x.dtype)) * fscale, wf8.numel() + n * 2, True),
        ("fp8→f16", lambda x: (F.linear(x.half(), wf8.to(torch.float16)) * fscale.half()).to(x.dtype),
         wf8.numel() + n * 2, True),
        ("fp8 sum", lambda x: (wf8.to(torch.float32) * x.float()).sum(-1).mul(fscale.float()).to(x.dtype),
         wf8.numel() + n * 2, True),
        ("int4 nibbles", int4, nib.numel() + s4.numel() * 4, True),
    ]


def main() -> int:
    if not torch.cuda.is_available():
        print("llm_quant_gemv: needs a CUDA GPU")
        return 2
    print(torch.cuda.get_device_name(), "torch", torch.__version__)
    rate = copy_rate()
    print(f"device-to-device copy: {rate / 1e9:,.0f} GB/s (read + write)")
    print(f"{'layer':8} {'kind':13} {'µs':>8} {'GB/s':>7} {'of copy':>8}")
    totals: dict[str, list[float]] = {}
    for name, (k, n) in SHAPES.items():
        x = torch.randn(1, k, device="cuda", dtype=torch.bfloat16)
        for kind, fn, nbytes, compile_it in variants(k, n):
            try:
                f = torch.compile(fn, options=OPTIONS, dynamic=False) if compile_it else fn
                seconds = timed(f, x)
            except Exception as exc:  # a variant this PyTorch cannot compile: say so, go on
                print(f"{name:8} {kind:13} failed: {type(exc).__name__}: {str(exc).splitlines()[0][:120]}")
                continue
            totals.setdefault(kind, [0.0, 0.0])
            totals[kind][0] += seconds
            totals[kind][1] += nbytes
            share = nbytes / seconds / rate
            print(f"{name:8} {kind:13} {seconds * 1e6:8.1f} {nbytes / seconds / 1e9:7.0f} {share:8.2f}", flush=True)
    print("the three layers once:")
    for kind, (seconds, nbytes) in totals.items():
        share = nbytes / seconds / rate
        print(f"  {kind:13} {seconds * 1e6:8.1f} µs {nbytes / seconds / 1e9:7.0f} GB/s {share:5.2f} of copy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
