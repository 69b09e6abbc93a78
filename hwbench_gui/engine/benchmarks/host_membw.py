"""host.membw: STREAM-style copy / scale / add / triad bandwidth of host RAM, 1..N threads."""

from __future__ import annotations

import glob
import importlib.util
import os
from typing import Any, Callable

from hwbench_gui.engine.measure.stats import median, spread
from hwbench_gui.engine.measure.timing import (
    GB,
    Steps,
    cpu_count,
    doubling_counts,
    figure,
    human_bytes,
    plural,
    time_cpu,
)
from hwbench_gui.engine.spec.benchmark import Benchmark, Outcome, Param, Reporter, Series

KERNELS = ("copy", "scale", "add", "triad")
ARRAYS_TOUCHED = {"copy": 2, "scale": 2, "add": 3, "triad": 3}  # STREAM's byte-counting convention
SCALAR = 3.0
TRIAD_BLOCK = 1 << 16  # elements; numpy's two-pass triad stays within L2 block by block


def last_level_cache_bytes() -> int | None:
    """Total last-level cache of the machine: every distinct LLC instance counted once (Linux sysfs).

    Summing instances matters on multi-socket machines and on CPUs with one L3 per core complex,
    where cpu0's L3 alone is a fraction of what the threads share.
    """
    instances: dict[str, int] = {}
    top_level = 0
    for index in glob.glob("/sys/devices/system/cpu/cpu[0-9]*/cache/index[0-9]*"):
        try:
            with open(os.path.join(index, "type")) as f:
                if f.read().strip() == "Instruction":
                    continue
            with open(os.path.join(index, "level")) as f:
                level = int(f.read())
            with open(os.path.join(index, "size")) as f:
                text = f.read().strip().upper()
            with open(os.path.join(index, "shared_cpu_list")) as f:
                shared = f.read().strip()
        except (OSError, ValueError):
            continue
        scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
        size = int(text.rstrip("KMG")) * scale
        if level > top_level:
            top_level, instances = level, {}
        if level == top_level:
            instances[shared] = size
    return sum(instances.values()) or None


Kernels = tuple[dict[str, Callable[[], Any]], Callable[[int], None], Callable[[], None]]


def _torch_kernels(n: int) -> Kernels:
    """The four kernels, a function setting the thread count, and one restoring the state."""
    import torch

    threads_before = torch.get_num_threads()

    a, b, c = (torch.rand(n, dtype=torch.float64) for _ in range(3))
    kernels = {
        "copy": lambda: c.copy_(a),
        "scale": lambda: torch.mul(c, SCALAR, out=b),
        "add": lambda: torch.add(a, b, out=c),
        "triad": lambda: torch.add(b, c, alpha=SCALAR, out=a),  # one fused pass: a = b + q·c
    }
    return kernels, torch.set_num_threads, lambda: torch.set_num_threads(threads_before)


def _numpy_kernels(n: int) -> Kernels:
    from concurrent.futures import ThreadPoolExecutor

    import numpy as np

    rng = np.random.default_rng()
    a, b, c = rng.random(n), rng.random(n), rng.random(n)
    state: dict[str, Any] = {"pool": None, "chunks": []}

    def set_threads(threads: int) -> None:
        if state["pool"]:
            state["pool"].shutdown()
        state["pool"] = ThreadPoolExecutor(threads)
        bounds = [n * i // threads for i in range(threads + 1)]
        state["chunks"] = [(slice(lo, hi), np.empty(TRIAD_BLOCK)) for lo, hi in zip(bounds, bounds[1:])]

    def triad(s: slice, tmp: Any) -> None:
        # numpy has no fused b + q·c; doing it block by block keeps the temporary in cache, so
        # DRAM sees the same three arrays STREAM counts.
        for lo in range(s.start, s.stop, TRIAD_BLOCK):
            hi = min(lo + TRIAD_BLOCK, s.stop)
            np.multiply(c[lo:hi], SCALAR, out=tmp[: hi - lo])
            np.add(b[lo:hi], tmp[: hi - lo], out=a[lo:hi])

    per_chunk = {
        "copy": lambda s, tmp: np.copyto(c[s], a[s]),
        "scale": lambda s, tmp: np.multiply(c[s], SCALAR, out=b[s]),
        "add": lambda s, tmp: np.add(a[s], b[s], out=c[s]),
        "triad": triad,
    }
    kernels = {name: (lambda f=f: list(state["pool"].map(lambda ch: f(*ch), state["chunks"])))
               for name, f in per_chunk.items()}
    return kernels, set_threads, lambda: state["pool"] and state["pool"].shutdown()


def run(params: dict[str, Any], reporter: Reporter) -> Outcome:
    import psutil

    warnings = []
    llc_bytes = last_level_cache_bytes()
    available_bytes = psutil.virtual_memory().available
    if params["array_mib"]:
        array_bytes = params["array_mib"] << 20
    else:
        wanted = max(4 * (llc_bytes or (64 << 20)), 64 << 20)
        array_bytes = min(-(-wanted // (1 << 20)) << 20, int(available_bytes * 0.4 / 3) >> 20 << 20)
    if 3 * array_bytes > available_bytes * 0.8:
        warnings.append(f"three arrays of {human_bytes(array_bytes)} need most of the "
                        f"{human_bytes(available_bytes)} RAM available: the system may swap")
    if llc_bytes is None:
        warnings.append("the last-level cache size could not be read; arrays may not be 4× larger than it")
    elif array_bytes < 4 * llc_bytes:
        warnings.append(f"arrays of {human_bytes(array_bytes)} are smaller than 4× the {human_bytes(llc_bytes)} "
                        "last-level cache: part of the traffic is served by cache, not RAM")
    threads = sorted(set(params["threads"]))
    if max(threads) > cpu_count():
        warnings.append(f"{max(threads)} threads on {cpu_count()} CPUs: the larger counts oversubscribe")

    n = array_bytes // 8
    engine = params["engine"]
    if engine == "auto":
        engine = "torch" if importlib.util.find_spec("torch") else "numpy"
    reporter.progress(0.0, f"filling three {human_bytes(array_bytes)} arrays with random float64 ({engine})")
    kernels, set_threads, close = (_torch_kernels if engine == "torch" else _numpy_kernels)(n)
    steps = Steps(reporter, len(threads))
    rates: dict[str, dict[int, list[float]]] = {k: {t: [] for t in threads} for k in KERNELS}
    try:
        for t in threads:
            set_threads(t)
            for name in KERNELS:  # warm-up: page faults, thread-pool start, frequency ramp
                kernels[name]()
            for _ in range(params["repeats"]):  # STREAM's order: the four kernels in turn, every repeat
                for name in KERNELS:
                    seconds = time_cpu(kernels[name], repeats=1, warmup=0)[0]
                    rates[name][t].append(ARRAYS_TOUCHED[name] * array_bytes / seconds / GB)
            for name in KERNELS:
                reporter.metric(name, median(rates[name][t]), "GB/s", threads=t)
            steps.advance(f"{plural(t, 'thread')}: triad {median(rates['triad'][t]):.1f} GB/s")
    finally:
        close()

    top = threads[-1]
    method = (
        f"STREAM-style kernels on three float64 arrays of {human_bytes(array_bytes)} each (filled with random "
        f"values; last-level cache {human_bytes(llc_bytes) if llc_bytes else 'unknown'} in total): copy c=a, scale "
        f"b=q·c, add c=a+b, triad a=b+q·c, "
        + ("with PyTorch CPU ops (triad fused as torch.add(b, c, alpha=q)) and torch.set_num_threads(N)"
           if engine == "torch" else
           "with numpy ufuncs (out=) on N equal slices run by a ThreadPoolExecutor (ufuncs release the GIL); "
           "triad done in L2-sized blocks so its temporary stays in cache")
        + f". Thread counts {', '.join(map(str, threads))}: one untimed warm-up of each kernel, then "
        f"{params['repeats']} repeats of the four kernels in turn, each call timed with perf_counter. GB/s = 1e9 "
        "bytes/s counting bytes as STREAM does (copy and scale 2 arrays, add and triad 3; write-allocate "
        f"traffic not counted). Headline: triad at {top} threads."
    )
    return Outcome(
        # One name on every machine: the headline is the machine's figure at its largest thread count
        # (every core by default), so machines with other core counts compare on it.
        figure_name="triad, largest thread count",
        unit="GB/s",
        samples=rates["triad"][top],
        method=method,
        figures={**{f"{k}, {plural(top, 'thread')}": figure(rates[k][top], "GB/s", threads=top) for k in KERNELS},
                 **{f"{k}, {plural(threads[0], 'thread')}": figure(rates[k][threads[0]], "GB/s", threads=threads[0])
                    for k in KERNELS if threads[0] != top}},
        series=[Series(k, [float(t) for t in threads], [median(rates[k][t]) for t in threads], "threads", "GB/s",
                       y_spread=[spread(rates[k][t]) for t in threads]) for k in KERNELS],
        warnings=warnings,
        details={"engine": engine, "array_bytes": array_bytes, "last_level_cache_bytes": llc_bytes,
                 "threads": threads, "cpus": cpu_count(), "logical_cpus": psutil.cpu_count(logical=True),
                 "physical_cores": psutil.cpu_count(logical=False)},
        device=f"cpu ({cpu_count()} CPUs)",
    )


BENCHMARK = Benchmark(
    id="host.membw",
    title="Host memory bandwidth",
    category="Memory",
    description="STREAM-style copy/scale/add/triad bandwidth of system RAM from 1 to N threads.",
    params=(
        Param("array_mib", "int", 0, "Size of each of the three arrays; 0 = 4× the last-level cache (at least "
              "64 MiB).", minimum=0, maximum=1 << 20, unit="MiB"),
        Param("threads", "int_list", doubling_counts(cpu_count()), "Thread counts to measure (default 1, 2, 4, … "
              "up to every CPU); the headline is the largest.", minimum=1, maximum=4096,
              decides_comparability=False),
        Param("engine", "choice", "auto", "What runs the kernels: PyTorch CPU ops (fused triad) or numpy ufuncs "
              "on a thread pool; auto = torch when installed.", choices=("auto", "torch", "numpy")),
        Param("repeats", "int", 10, "Timed repeats of each kernel per thread count.", minimum=1, maximum=1000,
              decides_comparability=False),
    ),
    run=run,
    version="1",
)
