"""One burn-in: start every load at once, watch every GPU each 0.5 s until the time is up, stop, judge.

Plain Python with its loads and its watch handed in, so the tests drive it with a stand-in NVML and
loads of their own; :mod:`hwbench_gui.engine.benchmarks.health_burnin` hands in the real ones.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

from hwbench_gui.engine.health import burns, rules
from hwbench_gui.engine.health.load import Load
from hwbench_gui.engine.health.watch import MAX_POINTS, HealthWatch

WATCH_INTERVAL_S = 0.5
#: The progress message's time left is rounded up to this (one log line per change, not per tick).
ETA_STEP_S = 5
#: Each load's latest rate goes out as a metric event this often (the live plot; one log line each).
METRIC_EVERY_S = 10.0
#: Wrong results kept in the document per load (all count in the verdict; a failing GPU can give thousands).
MAX_ERRORS_KEPT = 50
#: How long a load may take to finish its window after stop before the burn-in gives up on it.
STOP_GRACE_S = 30.0


@dataclass
class BurninPlan:
    """What to run: ``gpu_loads`` keyed by NVML index of the GPU each loads (a GPU NVML sees without a load
    gets the reason in ``gpu_skipped``), the host loads, and how long."""

    duration_s: float
    gpu_loads: dict[int, Load] = field(default_factory=dict)
    gpu_skipped: dict[int, str] = field(default_factory=dict)
    host_loads: list[Load] = field(default_factory=list)
    no_gpu_reason: str | None = None


def run_burnin(plan: BurninPlan, watch: HealthWatch, *, progress: Callable[[float, str], None] = lambda f, m: None,
               phase: Callable[[str, str], None] = lambda p, s: None,
               metric: Callable[..., None] = lambda name, value, unit, **extra: None,
               clock: Callable[[], float] = time.monotonic,
               sleep: Callable[[float], None] = time.sleep) -> dict[str, Any]:
    """Run ``plan`` under ``watch`` and return the document's ``health`` section (verdict, reasons,
    per-GPU and host parts, timelines, counters before and after, what was not available)."""
    loads = list(plan.gpu_loads.values()) + plan.host_loads
    t0 = clock()
    for load in loads:
        load.t0 = t0
        try:
            load.prepare()
        except Exception as exc:  # an allocation error or a failed first check: that load's verdict
            load.load_error = f"{type(exc).__name__}: {exc}"
            load.release()
    t0 = clock()
    running = [load for load in loads if load.load_error is None]
    for load in loads:
        load.t0 = t0
    phase("timed", "start")
    for load in running:
        load.start()
    next_tick, next_metric = t0, 2.0  # the loads have a rate after their first windows
    while True:
        now = clock()
        t = now - t0
        watch.sample(t, now)
        left = max(0.0, plan.duration_s - t)
        progress(min(1.0, t / plan.duration_s) if plan.duration_s > 0 else 1.0, eta_text(left))
        if t >= next_metric:
            next_metric += METRIC_EVERY_S
            for load in running:
                if load.rate:
                    metric(load.name, load.rate[-1][1], load.unit, t=round(t, 1))
        if t >= plan.duration_s:
            break
        next_tick += WATCH_INTERVAL_S
        sleep(max(0.0, min(next_tick - clock(), left)))
    for load in running:
        load.stop()
    for load in running:
        if not load.join(STOP_GRACE_S):
            load.load_error = load.load_error or f"its window did not end within {STOP_GRACE_S:g} s of stop"
    phase("timed", "end")
    end = clock() - t0
    watch.finish(end)
    return _section(plan, watch, end)


def eta_text(left_s: float) -> str:
    """"burn-in: 2 min 05 s left", the seconds rounded up to :data:`ETA_STEP_S`."""
    left = int(-(-left_s // ETA_STEP_S) * ETA_STEP_S)
    minutes, seconds = divmod(left, 60)
    return "burn-in: " + (f"{minutes} min {seconds:02d} s left" if minutes else f"{seconds} s left")


def _section(plan: BurninPlan, watch: HealthWatch, duration_s: float) -> dict[str, Any]:
    evidence = []
    gpus_out = []
    for i in range(watch.count):
        ev = watch.evidence(i)
        load = plan.gpu_loads.get(i)
        if load is not None:
            ev.rate = list(load.rate)
            ev.check_errors = list(load.check_errors)
            ev.load_error = load.load_error
        else:
            ev.load_error = plan.gpu_skipped.get(i, "no load was started on this GPU")
        evidence.append(ev)
        gpus_out.append({
            "index": i, "name": watch.names[i], "load": _load_facts(load),
            "timeline": watch.timeline(i), "link_max": watch.link_max[i],
            "counters_before": ev.counters_before, "counters_after": ev.counters_after,
            "xid_events": ev.xid_events, "not_available": {**watch.unavailable[i], **ev.counter_reasons,
                                                           **({"xid": ev.xid_reason} if ev.xid_reason else {})},
        })
    host_ev = None
    host_out: dict[str, Any] | None = None
    if plan.host_loads:
        host_ev = rules.HostEvidence(
            check_errors=[err for load in plan.host_loads for err in load.check_errors],
            load_error="; ".join(f"{load.name}: {load.load_error}" for load in plan.host_loads if load.load_error)
            or None,
            compared_nothing=[load.name for load in plan.host_loads
                              if load.check and not load.checked and not load.load_error])
        host_out = {"loads": [_load_facts(load) for load in plan.host_loads]}
    no_gpu = plan.no_gpu_reason or (watch.reason if watch.count == 0 else None)
    judged = rules.verdict(evidence, host_ev, no_gpu_reason=no_gpu)
    for part, facts, ev in zip(judged["gpus"], gpus_out, evidence):
        part.update(facts)
        if facts["load"] is not None:
            # what the run alone can say; a reader holding gpu.matmul's sustained rate judges again with it
            part["burn"] = burns.judge(
                burns.settled_rate(facts["load"]), None,
                *([float(s[k]) for s in ev.samples if s.get(k) is not None] for k in ("power_w", "power_limit_w")),
                [int(s["reasons"]) for s in ev.samples if s.get("reasons") is not None],
                _memory_mib(plan.gpu_loads.get(facts["index"])))
    if host_out is not None:
        judged["host"].update(host_out)
    judged.update({"duration_s": round(duration_s, 3), "watch_interval_s": WATCH_INTERVAL_S,
                   "no_gpu_reason": no_gpu})
    return judged


def _memory_mib(load: Load | None) -> int | None:
    memory_bytes = getattr(load, "memory_bytes", None)
    return memory_bytes >> 20 if isinstance(memory_bytes, int) else None


def _load_facts(load: Load | None) -> dict[str, Any] | None:
    """A load's facts for the document; its rate merged to at most MAX_POINTS windows (mean rate each)."""
    if load is None:
        return None
    k = max(1, -(-len(load.rate) // MAX_POINTS))
    buckets = [load.rate[i:i + k] for i in range(0, len(load.rate), k)]
    return {"name": load.name, "unit": load.unit, "checked": load.check, "results_compared": load.checked,
            "check_errors": list(load.check_errors[:MAX_ERRORS_KEPT]), "check_errors_total": len(load.check_errors),
            "load_error": load.load_error, "rate_step": k,
            "rate_t": [round(b[0][0], 3) for b in buckets], "rate": [sum(r for _, r in b) / len(b) for b in buckets]}
