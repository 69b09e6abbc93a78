"""The memory bandwidth a bandwidth-bound figure (a language model's token generation) is held against.

Two loops, one per way of moving bytes: :func:`copy_rates_gbps`, a device copy (bytes read + written, what
gpu.d2d reports), and :func:`read_rates_gbps`, the way a decoding step reads its weights: a one-row
``F.linear`` against a weight of the step's size, in the model's dtype, on the run's threads. On a CPU the
two differ: a small model's weights stay in the caches, read at several times the rate a copy of 256 MiB
measures in RAM, and a generation figure held against the copy alone would read above 100 % of its bound.
torch is imported by the functions that run one.
"""

from __future__ import annotations

from typing import Any

from hwbench_gui.engine.measure.timing import GB, inner_for, time_cpu, time_cuda

#: Bytes a GPU copy moves per timed repeat: about 8 ms at 4 TB/s.
TARGET_TRAFFIC_BYTES = 32 << 30
MAX_INNER = 2000
#: Seconds of back-to-back reads per timed repeat on a CPU.
CPU_REPEAT_S = 0.05
#: The read's weight has rows of this many elements (a model's hidden size, as wide as the widest common one).
READ_ROW = 4096


def copy_rates_gbps(src: Any, dst: Any, n_bytes: int, repeats: int, cuda: bool = True) -> list[float]:
    """GB/s (bytes read + written) of copying the first ``n_bytes`` of ``src`` into ``dst`` (uint8 tensors on one
    device), one figure per repeat: 3 warm-up copies, then back-to-back copies moving about
    :data:`TARGET_TRAFFIC_BYTES` per repeat (``cuda``: a GPU, timed with CUDA events) or lasting about
    :data:`CPU_REPEAT_S` (the CPU, perf_counter)."""
    def copy() -> None:
        dst[:n_bytes].copy_(src[:n_bytes])

    if not cuda:
        one = time_cpu(copy, repeats=1, warmup=3)[0]
        seconds = time_cpu(copy, repeats=repeats, inner=inner_for(one, CPU_REPEAT_S), warmup=0)
    else:
        inner = max(1, min(MAX_INNER, TARGET_TRAFFIC_BYTES // (2 * n_bytes)))
        seconds = time_cuda(copy, repeats=repeats, inner=inner, warmup=3)
    return [2 * n_bytes / s / GB for s in seconds]


def read_rates_gbps(n_bytes: int, dtype: Any, device: str, repeats: int, rows: int = 1) -> list[float]:
    """GB/s of reading a weight of about ``n_bytes`` (``dtype``, rows of :data:`READ_ROW` elements or fewer) the
    way a decoding step reads one: ``F.linear`` of ``rows`` inputs against it, bytes = the weight's (the input
    and output are a row each), one figure per repeat after 3 warm-up reads. The operands are freed before it
    returns."""
    import torch
    import torch.nn.functional as F

    size = torch.empty((), dtype=dtype).element_size()
    elements = max(1, n_bytes // size)
    width = min(READ_ROW, elements)
    weight = torch.randn(max(1, elements // width), width, device=device, dtype=dtype)
    x = torch.randn(rows, width, device=device, dtype=dtype)
    read = weight.numel() * size
    try:
        if device == "cpu":
            one = time_cpu(lambda: F.linear(x, weight), repeats=1, warmup=3)[0]
            seconds = time_cpu(lambda: F.linear(x, weight), repeats=repeats, inner=inner_for(one, CPU_REPEAT_S),
                               warmup=0)
        else:
            inner = max(1, min(MAX_INNER, TARGET_TRAFFIC_BYTES // read))
            seconds = time_cuda(lambda: F.linear(x, weight), repeats=repeats, inner=inner, warmup=3)
    finally:
        weight = x = None
    return [read / s / GB for s in seconds]
