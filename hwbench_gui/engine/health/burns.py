"""Whether the burn-in burned: its GEMM rate against gpu.matmul's sustained rate alone and its power against
the limit (≥ :data:`RATE_TARGET` × the sustained rate and ≥ :data:`POWER_TARGET` × the limit, or
the clock-event reasons show what holds it lower).

The burn-in runs device-memory traffic on a second stream beside its GEMMs, so at a power cap its GEMM
rate is expected below gpu.matmul's alone: that is a load that burns, held by the cap. A load below the
targets with no reason holding it is a WARN: the load did not reach what the GPU can do and nothing in the
GPU says why (a starved launch, a weak load, or a GPU slow without saying so), so its PASS stands for less
than full load. Pure functions over documents: the summary script, the report and the Health page call them.
"""

from __future__ import annotations

import math
import statistics
from typing import Any, Sequence

from hwbench_gui.engine.health.rules import NOTE, POWER_CAP_BIT, RATE_SETTLE_S, SLOWDOWN_BITS, WARN

RATE_TARGET = 0.95
POWER_TARGET = 0.85
#: A clock-event reason holds the load when it is set in at least this share of the samples under load.
HELD_SHARE = 0.5
MATMUL_ID = "gpu.matmul"


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _numbers(values: Any) -> list[float]:
    return [float(v) for v in values if _number(v)] if isinstance(values, list) else []


def settled_rate(load: Any) -> float | None:
    """Mean GEMM rate of a document's load over its windows after :data:`RATE_SETTLE_S` (the boost above the
    sustained clock is over by then); the whole run's mean when it is shorter."""
    if not isinstance(load, dict) or not isinstance(load.get("rate"), list) or not isinstance(load.get("rate_t"), list):
        return None
    pairs = [(float(t), float(r)) for t, r in zip(load["rate_t"], load["rate"]) if _number(t) and _number(r)]
    settled = [r for t, r in pairs if t >= RATE_SETTLE_S] or [r for _, r in pairs]
    return statistics.fmean(settled) if settled else None


def sustained_matmul(docs: Sequence[Any], precision: str, size: Any = None) -> tuple[float, dict[str, Any]] | None:
    """The newest ok gpu.matmul mode=sustained figure of ``precision`` on a GPU (TFLOP/s) and its document;
    with ``size``, only runs that measured that size."""
    best = None
    for doc in docs:
        if not isinstance(doc, dict) or (doc.get("benchmark") or {}).get("id") != MATMUL_ID \
                or doc.get("status") != "ok" or str(doc.get("device") or "").startswith("cpu"):
            continue
        params = doc.get("params") if isinstance(doc.get("params"), dict) else {}
        if params.get("mode") != "sustained":
            continue
        sizes = params.get("sizes") if isinstance(params.get("sizes"), list) else [params.get("sizes")]
        fig = (doc.get("figures") or {}).get(precision) if isinstance(doc.get("figures"), dict) else None
        if not isinstance(fig, dict) or not _number(fig.get("value")) or (size is not None and size not in sizes):
            continue
        if best is None or str(doc.get("started_at") or "") > str(best[1].get("started_at") or ""):
            best = (float(fig["value"]), doc)
    return best


def judge(rate: float | None, matmul: float | None, power_w: list[float], limit_w: list[float],
          masks: list[int], memory_mib: Any = None) -> dict[str, Any]:
    """``{"level", "burns", "text"}`` for one GPU: ``rate`` its settled GEMM rate, ``matmul`` gpu.matmul's
    sustained rate alone (None when not measured), the watch's power and limit readings and its clock-event
    reason masks under load."""
    parts = []
    rate_ok = power_ok = None
    if rate is not None and matmul:
        rate_ok = rate >= RATE_TARGET * matmul
        parts.append(f"{rate / matmul:.2f} × gpu.matmul sustained alone")
    elif rate is not None:
        parts.append("no gpu.matmul sustained run to hold the rate against")
    fraction = statistics.fmean(power_w) / statistics.fmean(limit_w) if power_w and limit_w else None
    if fraction is not None:
        power_ok = fraction >= POWER_TARGET
    beside = f" with {memory_mib} MiB of memory traffic beside it" if _number(memory_mib) else ""
    if rate_ok is not False and power_ok is not False and (rate_ok or power_ok):
        power_text = f"; power {fraction:.2f} of the limit," if fraction is not None else ""
        return {"level": NOTE, "burns": True, "text": f"{'; '.join(parts)}{power_text}{beside}: the load burns"}
    held = []
    if masks:
        capped = sum(1 for m in masks if m & POWER_CAP_BIT) / len(masks)
        if capped >= HELD_SHARE:
            held.append(f"the power cap (SwPowerCap {capped * 100:.0f} % of samples"
                        + (f", {fraction:.2f} of the limit)" if fraction is not None else ")"))
        for bit, name in SLOWDOWN_BITS.items():
            share = sum(1 for m in masks if m & bit) / len(masks)
            if share >= HELD_SHARE:
                held.append(f"{name} ({share * 100:.0f} % of samples)")
    if held:
        return {"level": NOTE, "burns": True,
                "text": f"{'; '.join(parts + ['held by ' + ' and '.join(held)])}{beside}: the load burns"}
    power_text = [f"power {fraction:.2f} of the limit"] if fraction is not None else ["power not available"]
    return {"level": WARN, "burns": False,
            "text": f"{'; '.join(parts + power_text)} and no clock-event reason holds it lower: the burn-in does "
                    f"not burn (below {RATE_TARGET:g} × the sustained rate or {POWER_TARGET:g} × the power limit; "
                    "its verdict stands for less than full load)"}


def judge_document(doc: Any, docs: Sequence[Any] = ()) -> list[dict[str, Any]]:
    """One judgement per GPU of burn-in ``doc`` (``{"index", "level", "burns", "text"}``), each rate held against
    the newest gpu.matmul sustained run of the same precision and size among ``docs``."""
    health = ((doc.get("details") or {}) if isinstance(doc, dict) else {}).get("health")
    if not isinstance(health, dict):
        return []
    params = doc.get("params") if isinstance(doc.get("params"), dict) else {}
    precision = str(doc.get("precision") or "")
    found = sustained_matmul(docs, precision, params.get("matrix_size"))
    matmul = found[0] if found else None
    out = []
    for gpu in health.get("gpus") or []:
        if not isinstance(gpu, dict) or not isinstance(gpu.get("load"), dict):
            continue
        tl = gpu.get("timeline") if isinstance(gpu.get("timeline"), dict) else {}
        masks = [int(m) for m in tl.get("reasons") or [] if _number(m)]
        judged = judge(settled_rate(gpu["load"]), matmul, _numbers(tl.get("power_w")),
                       _numbers(tl.get("power_limit_w")), masks, params.get("gpu_memory_mib"))
        out.append({"index": gpu.get("index"), **judged})
    return out
