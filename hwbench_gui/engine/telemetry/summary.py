"""Window statistics over a telemetry history, and the compact form a benchmark result stores."""

from __future__ import annotations

from typing import Any

import numpy as np


def _stats(values: np.ndarray) -> dict[str, Any]:
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return {"mean": None, "min": None, "max": None, "count": 0}
    return {
        "mean": float(finite.mean()),
        "min": float(finite.min()),
        "max": float(finite.max()),
        "count": int(finite.size),
    }


def summarize(values: dict[str, np.ndarray]) -> dict[str, dict[str, Any]]:
    """``{metric: {"mean", "min", "max", "count"}}``; N/A (NaN) samples are left out, all-N/A gives None."""
    return {name: _stats(v) for name, v in values.items()}


#: The five figures the seed evaluation averaged during every run.
SEED_GPU_FIGURES = {
    "gpu_util_percent": "util_percent",
    "gpu_mem_util_percent": "mem_util_percent",
    "gpu_vram_used_bytes": "vram_used_bytes",
    # not the seed's, but what explains a GPU figure: the power limit and the clock it allows
    "gpu_power_w": "power_w",
    "gpu_sm_clock_mhz": "sm_clock_mhz",
}
SEED_HOST_FIGURES = {"cpu_util_percent": "cpu_percent", "ram_used_bytes": "ram_used_bytes"}


def seed_figures(values: dict[str, np.ndarray], gpu_count: int, gpu_reason: str | None) -> dict[str, Any]:
    """The seed's five figures as ``{"mean", "max"}``; GPU ones also ``per_gpu`` and, when absent, ``reason``.

    GPU ``mean``/``max`` pool every GPU's samples (mean utilisation of the GPUs, busiest moment of any).
    """
    out: dict[str, Any] = {}
    for figure, suffix in SEED_GPU_FIGURES.items():
        columns = [values[f"gpu{i}_{suffix}"] for i in range(gpu_count) if f"gpu{i}_{suffix}" in values]
        pooled = _stats(np.concatenate(columns)) if columns else _stats(np.empty(0))
        entry: dict[str, Any] = {
            "mean": pooled["mean"],
            "max": pooled["max"],
            "per_gpu": [{k: s[k] for k in ("mean", "max")} for s in map(_stats, columns)],
        }
        if pooled["count"] == 0:
            entry["reason"] = gpu_reason or "the GPU did not report this figure"
        out[figure] = entry
    for figure, name in SEED_HOST_FIGURES.items():
        s = _stats(values.get(name, np.empty(0)))
        entry = {"mean": s["mean"], "max": s["max"]}
        if s["count"] == 0:
            entry["reason"] = "no sample in the window"
        out[figure] = entry
    return out


#: Other processes' CPU above this (percent of one core, median over the window) make the machine busy.
BUSY_CPU_PERCENT = 10.0


def noise_summary(values: dict[str, np.ndarray]) -> dict[str, Any]:
    """How much the rest of the machine ran beside the benchmark, and whether that makes it busy:
    other processes above :data:`BUSY_CPU_PERCENT` of a core for at least half the samples (the
    median: kernel threads doing the benchmark's own I/O and processes of the run that end between
    two samples make short spikes that are not someone else's load), or any other GPU process."""
    others = values.get("others_cpu_percent", np.empty(0))
    cpu = _stats(others)
    finite = others[np.isfinite(others)]
    cpu["median"] = float(np.median(finite)) if finite.size else None
    gpu = _stats(values.get("others_gpu_processes", np.empty(0)))
    reasons = []
    if cpu["median"] is not None and cpu["median"] > BUSY_CPU_PERCENT:
        reasons.append(f"other processes used {cpu['median']:.0f} % of a CPU core (median; mean {cpu['mean']:.0f} %, "
                       f"up to {cpu['max']:.0f} %) while it ran")
    if gpu["max"]:
        reasons.append(f"{gpu['max']:.0f} other process(es) used the GPU while it ran")
    return {"others_cpu_percent": {"median": cpu["median"], "mean": cpu["mean"], "max": cpu["max"]},
            "others_gpu_processes_max": gpu["max"], "busy": bool(reasons), "reasons": reasons,
            "threshold_cpu_percent": BUSY_CPU_PERCENT}


def busy_warning(summary: dict[str, Any] | None) -> str | None:
    """The warning a result carries when its telemetry ``summary`` marked the machine busy, else None."""
    noise = (summary or {}).get("noise") if isinstance((summary or {}).get("noise"), dict) else {}
    if not noise.get("busy"):
        return None
    return "busy machine: " + "; ".join(noise.get("reasons") or []) + " (figures may be low and spread wide)"
