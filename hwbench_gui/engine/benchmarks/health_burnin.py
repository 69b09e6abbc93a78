"""health.burnin: every GPU and the host at full, checked load at once, watched, with a PASS / WARN / FAIL verdict.

The loads, the watch and the rules live in :mod:`hwbench_gui.engine.health`; this module builds them
from the parameters, runs them in the benchmark's child and returns the verdict as the document's
``details["health"]``. A machine without a GPU runs the host side and says why the GPU side did not run.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from typing import Any

from hwbench_gui.engine import nvml
from hwbench_gui.engine.health import burns, rules
from hwbench_gui.engine.health.burnin import BurninPlan, run_burnin
from hwbench_gui.engine.health.gpu_load import FULL_CHECK_EVERY_S, VALIDATE_ROWS
from hwbench_gui.engine.health.allowance import allowance
from hwbench_gui.engine.health.host_load import CpuCheckedMatmul, RamPattern, ram_pattern_words
from hwbench_gui.engine.health.rules import RATE_SETTLE_S
from hwbench_gui.engine.health.watch import HealthWatch
from hwbench_gui.engine.measure.timing import nvml_handle_for
from hwbench_gui.engine.spec.benchmark import Benchmark, Outcome, Param, Reporter
from hwbench_gui.engine.spec.precision import FP64, MATMUL_KEYS, from_key

#: The quick level (``-p minutes=1``) and the standard one.
QUICK_MINUTES, STANDARD_MINUTES = 1.0, 10.0
MAX_MINUTES = 720.0
#: The benchmark's own limit is the longest run's; a run that outlasts its own length by this much (a hung
#: CUDA call while loading or stopping) ends its process, and the runner's document says so.
OVERRUN_S = 600.0


def _gpu_loads(params: dict[str, Any], plan: BurninPlan, watch: HealthWatch, notes: list[str]) -> None:
    """A GEMM load per CUDA GPU, keyed by its NVML index (CUDA may number GPUs otherwise)."""
    if importlib.util.find_spec("torch") is None:
        plan.no_gpu_reason = "PyTorch is not installed"
        return
    import torch

    from hwbench_gui.engine.health.gpu_load import GpuGemm, best_precision

    if not torch.cuda.is_available():
        plan.no_gpu_reason = (watch.reason and nvml.plain_reason(watch.reason)) or \
            f"PyTorch {torch.__version__} sees no CUDA GPU"
        return
    loaded = set()
    for index in range(torch.cuda.device_count()):
        handle = nvml_handle_for(index)
        nvml_index = nvml.query("nvmlDeviceGetIndex", handle) if handle is not None else None
        if nvml_index is None or not 0 <= nvml_index < watch.count:
            notes.append(f"cuda:{index} is not watched: NVML does not match it to a GPU it sees")
            continue
        if params["precision"] == "auto":
            precision, why = best_precision(torch, index)
            notes.append(f"cuda:{index}: {precision.label} GEMMs ({why})")
        else:
            precision = from_key(params["precision"])
        plan.gpu_loads[nvml_index] = GpuGemm(0.0, index=index, precision=precision, n=params["matrix_size"],
                                             memory_bytes=params["gpu_memory_mib"] << 20, check=params["check"])
        loaded.add(nvml_index)
    for i in range(watch.count):
        if i not in loaded:
            plan.gpu_skipped[i] = "PyTorch does not see this GPU (CUDA_VISIBLE_DEVICES?)"


def _overran(reporter: Reporter, limit_s: float) -> None:
    reporter.log(f"health.burnin: still running {limit_s:.0f} s after it started (its length plus {OVERRUN_S:g} s): "
                 "a load or the watch is stuck; ending the run")
    os._exit(3)


def run(params: dict[str, Any], reporter: Reporter) -> Outcome:
    duration_s = params["minutes"] * 60.0
    watchdog = threading.Timer(duration_s + OVERRUN_S, _overran, (reporter, duration_s + OVERRUN_S))
    watchdog.daemon = True
    watchdog.start()
    try:
        return _run(params, reporter, duration_s)
    finally:
        watchdog.cancel()


def _run(params: dict[str, Any], reporter: Reporter, duration_s: float) -> Outcome:
    watch = HealthWatch()
    plan = BurninPlan(duration_s=duration_s)
    notes: list[str] = []
    _gpu_loads(params, plan, watch, notes)
    if params["host"]:
        allowed = allowance()  # ulimit -v, ulimit -d and a cgroup's limit bind before the host's free RAM does
        words = ram_pattern_words(allowed.bytes, params["ram_share"])
        notes.append(f"host RAM pattern test: {words * 8 / 2 ** 30:.2f} GiB, {params['ram_share'] * 100:g} % of "
                     f"the {allowed.bytes / 2 ** 30:.2f} GiB this process may allocate ({allowed.source})")
        plan.host_loads = [CpuCheckedMatmul(0.0, check=params["check"])]
        if words:
            plan.host_loads.append(RamPattern(0.0, words=words, check=params["check"]))
    for note in notes:
        reporter.log(note)
    health = run_burnin(plan, watch, progress=reporter.progress, phase=reporter.phase, metric=reporter.metric)
    health["checking"] = params["check"]
    warnings = [f"{r['scope']}: {r['text']}" for r in health["reasons"] if r["level"] in (rules.WARN, rules.FAIL)]
    warnings += [f"gpu{g['index']}: {g['burn']['text']}" for g in health["gpus"]
                 if (g.get("burn") or {}).get("level") == rules.WARN]
    if not params["check"]:
        warnings.append("results were not checked (check=false): this run measures the load only, and its "
                        "verdict cannot see a wrong result")
    gpu_rates = {f"gpu{g['index']} GEMM": g["load"]["rate"] for g in health["gpus"] if g.get("load")}
    figures = {name: {"samples": rates, "unit": "TFLOP/s", "higher_is_better": True}
               for name, rates in gpu_rates.items() if rates}
    for load in plan.host_loads:
        if load.rate:
            figures[f"host {load.name}"] = {"samples": [r for _, r in load.rate], "unit": load.unit,
                                            "higher_is_better": True}
    if gpu_rates:
        headline = "GEMM rate per GPU under burn-in"
        samples = [r for rates in gpu_rates.values() for r in rates]
        unit = "TFLOP/s"
    else:
        headline, unit = "host checked matmul under burn-in", "GFLOP/s"
        samples = figures.get("host cpu-matmul", {}).get("samples", [])
    precisions = sorted({load.precision.label for load in plan.gpu_loads.values()})
    method = (
        f"Every load at once for {params['minutes']:g} min, watched every {health['watch_interval_s']:g} s. "
        + (f"GPUs: back-to-back {'/'.join(precisions)} GEMMs of {params['matrix_size']}×{params['matrix_size']} "
           "(the precision with the highest tensor rate unless set); the first product checked against FP64 "
           f"recomputation of {VALIDATE_ROWS} rows, every later one against the first: each product's rows as "
           "exact integer sums of their bits (one read of the product; any single wrong element changes its "
           f"row's sum), and every element of one product at least every {FULL_CHECK_EVERY_S:g} s; beside them "
           f"{params['gpu_memory_mib']} MiB of pattern and complement copied and compared element by element "
           "after every copy on a second stream; no host sync between windows (each is queued before the one "
           "before it is collected). " if plan.gpu_loads else f"No GPU load: {health['no_gpu_reason']}. ")
        + ("Host: float64 products of integer-valued 512×512 matrices (exact, checked against the integer "
           f"product) on every core, and a pattern written over {params['ram_share'] * 100:g} % of the memory this "
           "process may allocate (the least of the available RAM, ulimit -v / -d and its cgroup's limit) and read "
           "back. " if params["host"] else "Host load off. ")
        + ("Rates are work per load window (about 0.5 s). " if params["check"] else
           "Results not checked (check=false). ")
        + f"Whether the load burns: its GEMM rate after {RATE_SETTLE_S:g} s at least {burns.RATE_TARGET:g} × "
        f"gpu.matmul's sustained rate alone (same precision and size; the report and the Health page hold it "
        f"against such a run among the results) and its power at least {burns.POWER_TARGET:g} × the limit, or a "
        "clock-event reason (power cap, thermal or HW slowdown) set in at least half the samples holding it "
        "lower; else a WARN beside the verdict. "
        + "Verdict rules: hwbench_gui.engine.health.rules.")
    return Outcome(figure_name=headline, unit=unit, samples=samples, precision="/".join(precisions) or FP64.label,
                   method=method, figures=figures, warnings=warnings, details={"health": health, "notes": notes},
                   device=", ".join(f"gpu{g['index']} ({g['name']})" for g in health["gpus"]) or
                   f"cpu ({os.cpu_count()} CPUs)")


BENCHMARK = Benchmark(
    id="health.burnin",
    title="Health burn-in",
    category="Health",
    description="Every GPU and the host at full load at once with checked results, watched (clocks, "
                "temperatures, power, clock-event reasons, PCIe link, ECC, XID): PASS / WARN / FAIL with reasons.",
    params=(
        Param("minutes", "float", STANDARD_MINUTES, f"Length of the load; {QUICK_MINUTES:g} = the quick level, "
              f"{STANDARD_MINUTES:g} the standard one (fractions allowed: 0.05 = 3 s).", minimum=0.01,
              maximum=MAX_MINUTES, decides_comparability=False),
        Param("check", "bool", True, "Check every result (false only to measure what checking costs)."),
        Param("precision", "choice", "auto", "GEMM precision; auto = the highest tensor rate the GPU has "
              "(FP8 on compute capability 8.9+, else BF16, else FP16).", choices=("auto",) + MATMUL_KEYS),
        Param("matrix_size", "int", 16384, "GEMM size n (n×n×n).", minimum=256, maximum=65536),
        Param("gpu_memory_mib", "int", 2048, "Device memory copied and read back beside the GEMMs, per GPU.",
              minimum=1, maximum=1 << 20, unit="MiB"),
        Param("host", "bool", True, "Load the host too (all cores and a RAM pattern test).",
              decides_comparability=False),
        Param("ram_share", "float", 0.25, "Share of the memory this process may allocate (free RAM, ulimit -v / -d, "
              "cgroup limit) the host pattern test writes and reads.",
              minimum=0.0, maximum=0.8, decides_comparability=False),
    ),
    run=run,
    version="1",
    default_timeout_s=MAX_MINUTES * 60 + 900,
)
