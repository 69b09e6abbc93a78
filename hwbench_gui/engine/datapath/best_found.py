"""The fastest loader configuration the analyzer measured end to end (overall, and per JPEG decode placement),
held against the slowest stage alone that applies to it, with the code that sets it up."""

from __future__ import annotations

from typing import Any

from hwbench_gui.engine.datapath import tryouts
from hwbench_gui.engine.datapath.stages import STAGES


def config_limit(config: Any, base: Any, rates: dict[str, Any]) -> tuple[float | None, str | None]:
    """(rate, stage key) of the slowest stage alone that applies to ``config``: the stages measured
    with its settings (channels-last compute when it switches the layout; no CPU decode or copy
    stage when the GPU decodes or normalises)."""
    compute = "compute_channels_last" if config.channels_last != base.channels_last else "compute"
    # The CPU and copy stages were measured with float batches made in the workers.
    in_workers_as_measured = not config.gpu_decode and not config.normalize_on_device
    keys = ["disk_cached", compute] + (["transfer"] if in_workers_as_measured else [])
    if in_workers_as_measured and config.workers == base.workers:
        keys.append("cpu_n")  # measured with the default's workers only
    present = [(rates[k], k) for k in keys if rates.get(k)]
    return min(present) if present else (None, None)


def best_found(base: Any, e2e_rate: float, tried: list[Any], rates: dict[str, Any], params: dict[str, Any],
                label: str, kind: str) -> dict[str, Any]:
    """The fastest configuration measured (overall, and per decode placement) with its code."""
    def entry(top: Any) -> dict[str, Any] | None:
        if top is None:
            return None
        limit, stage = config_limit(top.config, base, rates)
        if kind == "cpu" and top.config.workers != base.workers:
            limit, stage = None, None  # compute alone ran with the threads the default's workers left
        return {"key": top.key, "config": top.config.to_json(), "describe": top.config.describe(),
                "changes": top.config.changes_from(base), "rate_images_per_s": top.rate, "samples": top.samples,
                "gain": top.rate / e2e_rate if e2e_rate else None, "slowest_stage_alone": stage,
                "slowest_stage_rate": limit, "of_slowest_stage": top.rate / limit if limit else None,
                "code": tryouts.snippet(top.config, model=params["model"], precision=label, batch=params["batch"],
                                        image_size=params["image_size"], cuda=kind == "cuda")}

    overall = entry(tryouts.best(e2e_rate, base, tried))
    out = {**overall, "cpu_decode": entry(tryouts.best(e2e_rate, base, tried, gpu_decode=False)),
           "gpu_decode": entry(tryouts.best(e2e_rate, base, tried, gpu_decode=True)) if kind == "cuda" else None}
    if overall["key"] == "default":
        out["text"] = (f"Best configuration measured: the default ({base.describe()}); no what-if beat it by more "
                       f"than {tryouts.BETTER_BY:.0%}.")
    else:
        out["text"] = (f"Best configuration measured: {overall['changes']} — {overall['rate_images_per_s']:,.0f} "
                       f"images/s end to end (×{overall['gain']:.2f} the default)")
        if overall["slowest_stage_rate"]:
            stage = STAGES[overall["slowest_stage_alone"]]
            out["text"] += (f", {overall['of_slowest_stage']:.0%} of its slowest stage alone "
                            f"({stage.phrase or stage.title}, {overall['slowest_stage_rate']:,.0f} images/s)")
        out["text"] += "."
    return out
