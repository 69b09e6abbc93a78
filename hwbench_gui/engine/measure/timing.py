"""Shared pieces of the data-path micro-benchmarks: timers, unit helpers, device checks.

Timers return one elapsed time per repeat (seconds per call, averaged over ``inner`` back-to-back
calls); callers turn those into rates, and the runner computes median and spread from the rates.
Nothing here imports torch at module level: the CUDA helpers import it when called.
"""

from __future__ import annotations

import importlib.util
import os
import time
from typing import Any, Callable

from hwbench_gui.engine import nvml
from hwbench_gui.engine.measure.stats import median
from hwbench_gui.engine.spec.benchmark import BenchmarkUnavailable, Reporter

GB = 1e9  # rates are decimal (1e9 bytes/s), as vendors quote PCIe and memory bandwidth
MB = 1e6


def human_bytes(n_bytes: float) -> str:
    """``4096`` -> ``"4 KiB"``, ``1.5 * 2**30`` -> ``"1.5 GiB"`` (binary prefixes, for sizes)."""
    value = float(n_bytes)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def duration_text(seconds: float) -> str:
    """``45`` -> ``"45 seconds"``, ``1200`` -> ``"20 minutes"``, ``90`` -> ``"90 seconds"``: whole units, named."""
    if seconds < 120:
        return f"{seconds:,.0f} seconds"
    return f"{seconds / 60:,.0f} minutes"


def plural(count: int, word: str) -> str:
    """``plural(1, "thread")`` -> ``"1 thread"``, ``plural(4, "thread")`` -> ``"4 threads"``."""
    return f"{count} {word}{'' if count == 1 else 's'}"


def figure(samples: list[float], unit: str, higher_is_better: bool = True, **extra: Any) -> dict[str, Any]:
    """An entry of ``Outcome.figures``: the median of ``samples`` as ``value``, with the samples."""
    return {"value": median(samples), "unit": unit, "higher_is_better": higher_is_better,
            "samples": list(samples), **extra}


def doubling_counts(limit: int) -> list[int]:
    """1, 2, 4, ... below ``limit``, then ``limit`` itself: the default worker/thread sweep."""
    counts, n = [], 1
    while n < limit:
        counts.append(n)
        n *= 2
    counts.append(max(1, limit))
    return counts


def cpu_count() -> int:
    """CPUs this process may run on (the affinity mask where the OS has one)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


class Steps:
    """Progress over a known number of steps: ``advance(message)`` reports the next fraction."""

    def __init__(self, reporter: Reporter, total: int):
        self.reporter, self.total, self.done = reporter, max(1, total), 0

    def advance(self, message: str = "") -> None:
        self.done = min(self.total, self.done + 1)
        self.reporter.progress(self.done / self.total, message)

    def say(self, message: str) -> None:
        """What the step under way is doing, at the fraction done so far (a long compile is not a hang)."""
        self.reporter.progress(self.done / self.total, message)


def time_cpu(fn: Callable[[], Any], *, repeats: int, inner: int = 1, warmup: int = 1) -> list[float]:
    """Seconds per call of ``fn``, one figure per repeat, wall clock (``perf_counter``)."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(inner):
            fn()
        times.append((time.perf_counter() - start) / inner)
    return times


def time_cuda(fn: Callable[[], Any], *, repeats: int, inner: int = 1, warmup: int = 1) -> list[float]:
    """Seconds per call of ``fn``, one figure per repeat, from CUDA events on the current stream.

    ``fn`` must enqueue its work on the current stream, or make the current stream wait for the
    side streams it used (``current.wait_stream(side)``) before it returns.
    """
    import torch

    for _ in range(warmup):
        fn()
    torch.cuda.current_stream().synchronize()
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(inner):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3 / inner)
    return times


def inner_for(one_call_s: float, target_s: float, cap: int = 1000) -> int:
    """How many calls make one timed repeat last about ``target_s`` (at least 1, at most ``cap``)."""
    if one_call_s <= 0:
        return cap
    return max(1, min(cap, int(target_s / one_call_s)))


# --- availability -------------------------------------------------------------------------------

def torch_missing_reason() -> str | None:
    if importlib.util.find_spec("torch") is None:
        return "PyTorch is not installed"
    return None


def gpu_missing_reason(min_gpus: int = 1) -> str | None:
    """Why a CUDA benchmark cannot run here (cheap: NVML and a module lookup, no torch import)."""
    reason = torch_missing_reason()
    if reason:
        return reason
    found = nvml.device_count()
    if found == 0:
        reason = nvml.unavailable_reason()
        return nvml.plain_reason(reason) if reason else "no NVIDIA GPU: NVML reports 0 devices"
    if found < min_gpus:
        return f"needs {min_gpus} GPUs, found {found}"
    return None


def cuda_device(index: int) -> Any:
    """``torch.device("cuda:<index>")`` after checking that PyTorch can use it."""
    import torch

    if not torch.cuda.is_available():
        raise BenchmarkUnavailable(f"PyTorch {torch.__version__} cannot use CUDA here "
                                   f"(built for CUDA {torch.version.cuda}; no driver or no visible GPU)")
    if not 0 <= index < torch.cuda.device_count():
        raise BenchmarkUnavailable(f"GPU {index} does not exist: PyTorch sees {torch.cuda.device_count()}")
    return torch.device("cuda", index)


def cuda_label(index: int) -> str:
    import torch

    return f"cuda:{index} ({torch.cuda.get_device_name(index)})"


def nvml_handle_for(index: int) -> Any:
    """The NVML handle of PyTorch's GPU ``index``, matched by PCI bus id.

    CUDA and NVML may number GPUs differently (CUDA_DEVICE_ORDER, CUDA_VISIBLE_DEVICES); the bus
    id is the same in both. ``None`` when NVML does not answer.
    """
    import torch

    props = torch.cuda.get_device_properties(index)
    bus_id = f"{props.pci_domain_id:08x}:{props.pci_bus_id:02x}:{props.pci_device_id:02x}.0"
    return nvml.query("nvmlDeviceGetHandleByPciBusId", bus_id)
