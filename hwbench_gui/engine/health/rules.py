"""The burn-in's verdict: per GPU, for the host and for the machine, PASS / WARN / FAIL with its reasons.

FAIL: a wrong result (GEMM or memory pattern), a load that could not run, an uncorrectable ECC error
during the run, an XID event, a pending or failed row remap (or page retirement). WARN: thermal or
hardware slowdown among the clock-event reasons under load (a power cap alone is normal and said so),
a rate that falls over the run (the last window against the first), a PCIe link below its maximum
under load, a GPU slower than the median of its siblings by more than :data:`SIBLING_LIMIT`. What the
GPU or driver cannot report is a NOTE ("not available" and why), never a failure.

Pure functions over plain data: the burn-in's child calls them with what it watched, the tests with
what a stand-in NVML reported.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

PASS, WARN, FAIL, NOTE = "PASS", "WARN", "FAIL", "NOTE"
_RANK = {PASS: 0, NOTE: 0, WARN: 1, FAIL: 2}

#: Clock-event reason bits (nvmlClocksEventReason*) that mean the GPU was slowed by heat or by hardware:
#: a WARN. SwPowerCap (0x4) alone is the normal state of a GPU at full load.
SLOWDOWN_BITS = {0x8: "HW slowdown", 0x20: "SW thermal slowdown", 0x40: "HW thermal slowdown",
                 0x80: "HW power brake"}
POWER_CAP_BIT = 0x4
#: A rate whose last window is more than this fraction below its first window is falling.
RATE_FALL_LIMIT = 0.05
#: A GPU more than this fraction below the median of its siblings' rates is slow.
SIBLING_LIMIT = 0.10
#: The rate's first seconds are left out of the falling-rate rule: a GPU boosts above its
#: sustained clock until the power limiter acts (within a second or two of full load).
RATE_SETTLE_S = 10.0
#: Length of the first and the last window of the falling-rate rule: a minute, or a third of a
#: shorter run (a 1-minute quick run compares its first and last 17 s after settling).
RATE_WINDOW_S = 60.0

#: Wrong results named one by one in the reasons; the rest are counted in one more reason.
WRONG_LISTED = 5

#: ECC and memory-repair counters a watch reads before and after the load.
COUNTERS = ("ecc_volatile_corrected", "ecc_volatile_uncorrected", "retired_pages_sbe", "retired_pages_dbe",
            "retired_pages_pending", "remapped_rows_correctable", "remapped_rows_uncorrectable",
            "remap_pending", "remap_failure")


@dataclass
class GpuEvidence:
    """What one GPU showed during the burn-in. Times are seconds since the load started.

    ``samples``: the watch's 0.5 s readings under load, each a dict with ``t`` and any of
    ``reasons`` (the clock-event bitmask), ``pcie_gen``, ``pcie_width``, ``power_w``, ``power_limit_w``
    (``None`` where not reported). ``rate``: ``(t, TFLOP/s)`` per load window. ``counters_before`` /
    ``counters_after``: :data:`COUNTERS` values (``None`` where not reported, its reason in
    ``counter_reasons``). ``xid_events``: ``{"t", "xid"}``. ``check_errors``: ``{"t", "what", "text"}``.
    ``load_error``: why the load could not run on this GPU, or None.
    """

    index: int
    name: str = ""
    samples: list[dict[str, Any]] = field(default_factory=list)
    link_max: dict[str, int | None] = field(default_factory=dict)
    rate: list[tuple[float, float]] = field(default_factory=list)
    counters_before: dict[str, int | None] = field(default_factory=dict)
    counters_after: dict[str, int | None] = field(default_factory=dict)
    counter_reasons: dict[str, str] = field(default_factory=dict)
    xid_events: list[dict[str, Any]] = field(default_factory=list)
    xid_reason: str | None = None
    check_errors: list[dict[str, Any]] = field(default_factory=list)
    load_error: str | None = None


@dataclass
class HostEvidence:
    """What the host side showed: its checked computation's and memory test's errors, rates, load error."""

    check_errors: list[dict[str, Any]] = field(default_factory=list)
    load_error: str | None = None
    rate: list[tuple[float, float]] = field(default_factory=list)
    #: Checked loads that compared nothing before the run ended (a RAM pattern pass longer than the run).
    compared_nothing: list[str] = field(default_factory=list)


def reason(level: str, rule: str, scope: str, text: str) -> dict[str, str]:
    return {"level": level, "rule": rule, "scope": scope, "text": text}


def worst(levels: list[str]) -> str:
    """The verdict of a list of reason levels: FAIL over WARN over PASS (NOTE counts as PASS)."""
    top = max((_RANK[level] for level in levels), default=0)
    return {0: PASS, 1: WARN, 2: FAIL}[top]


def _at(t: float) -> str:
    return f"{t:.1f} s"


def _mean_rate(rate: list[tuple[float, float]]) -> float | None:
    values = [r for _, r in rate if r is not None]
    return statistics.fmean(values) if values else None


def rate_windows(rate: list[tuple[float, float]]) -> tuple[float | None, float | None, float]:
    """Mean rate of the first and the last window (see :data:`RATE_WINDOW_S`) after the settling
    seconds, and the window's length; ``None`` when the run is too short to have two windows."""
    settled = [(t, r) for t, r in rate if t >= RATE_SETTLE_S and r is not None]
    if len(settled) < 2:
        return None, None, 0.0
    start, end = settled[0][0], settled[-1][0]
    window = min(RATE_WINDOW_S, (end - start) / 3)
    if window <= 0:
        return None, None, 0.0
    first = [r for t, r in settled if t <= start + window]
    last = [r for t, r in settled if t >= end - window]
    return statistics.fmean(first), statistics.fmean(last), window


def judge_gpu(ev: GpuEvidence, sibling_rates: list[float]) -> list[dict[str, str]]:
    """The reasons of one GPU's verdict. ``sibling_rates``: the other GPUs' mean rates."""
    scope = f"gpu{ev.index}"
    out: list[dict[str, str]] = []
    if ev.load_error:
        out.append(reason(FAIL, "load_error", scope, f"the load could not run: {ev.load_error}"))
    out += _wrong_results(ev.check_errors, scope)
    out += _counter_reasons(ev, scope)
    if ev.xid_reason:
        out.append(reason(NOTE, "xid", scope, f"XID events not available: {ev.xid_reason}"))
    for event in ev.xid_events:
        out.append(reason(FAIL, "xid", scope, f"XID {event['xid']} at {_at(event['t'])} (a driver-reported GPU error)"))
    out += _clock_reasons(ev.samples, scope)
    out += _link_reasons(ev.samples, ev.link_max, scope)
    first, last, window = rate_windows(ev.rate)
    if first and last is not None and last < (1 - RATE_FALL_LIMIT) * first:
        out.append(reason(WARN, "rate_falls", scope,
                          f"the rate fell from {first:.4g} to {last:.4g} TFLOP/s ({(1 - last / first) * 100:.0f} % "
                          f"lower; last {window:.0f} s against the first {window:.0f} s after {RATE_SETTLE_S:g} s)"))
    mine = _mean_rate(ev.rate)
    others = [r for r in sibling_rates if r]
    if mine is not None and others:
        median = statistics.median(others)
        if mine < (1 - SIBLING_LIMIT) * median:
            out.append(reason(WARN, "slow_sibling", scope,
                              f"{mine:.4g} TFLOP/s, {(1 - mine / median) * 100:.0f} % below its siblings' median "
                              f"{median:.4g} TFLOP/s (limit {SIBLING_LIMIT * 100:.0f} %)"))
    return out


def _counter_reasons(ev: GpuEvidence, scope: str) -> list[dict[str, str]]:
    out = []
    before, after = ev.counters_before, ev.counters_after

    def rose(key: str) -> int | None:
        a, b = after.get(key), before.get(key)
        return None if a is None or b is None else a - b

    unc = rose("ecc_volatile_uncorrected")
    if unc:
        out.append(reason(FAIL, "ecc_uncorrected", scope, f"{unc} uncorrectable ECC error(s) during the run"))
    elif before.get("ecc_volatile_uncorrected"):
        out.append(reason(WARN, "ecc_uncorrected", scope, f"{before['ecc_volatile_uncorrected']} uncorrectable ECC "
                                                           "error(s) since the driver loaded, none during the run"))
    corr = rose("ecc_volatile_corrected")
    if corr:
        out.append(reason(NOTE, "ecc_corrected", scope, f"{corr} corrected ECC error(s) during the run (corrected "
                                                         "by the hardware; a rising count is worth watching)"))
    for key, text in (("remap_pending", "a row remap is pending (the GPU needs a reset to apply it)"),
                      ("remap_failure", "a row remap failed (no spare rows left)"),
                      ("retired_pages_pending", "a page retirement is pending (the GPU needs a reset)")):
        if after.get(key):
            out.append(reason(FAIL, key, scope, text))
    for key, why in sorted(ev.counter_reasons.items()):
        out.append(reason(NOTE, "not_available", scope, f"{key} not available: {why}"))
    return out


def _clock_reasons(samples: list[dict[str, Any]], scope: str) -> list[dict[str, str]]:
    masks = [(s["t"], int(s["reasons"])) for s in samples if s.get("reasons") is not None]
    if not samples:
        return []
    if not masks:
        return [reason(NOTE, "not_available", scope, "clock-event reasons not available")]
    out = []
    for bit, name in SLOWDOWN_BITS.items():
        hits = [t for t, mask in masks if mask & bit]
        if hits:
            out.append(reason(WARN, "slowdown", scope, f"{name} in {len(hits) / len(masks) * 100:.0f} % of the "
                                                        f"samples under load (first at {_at(hits[0])})"))
    capped = sum(1 for _, mask in masks if mask & POWER_CAP_BIT)
    if capped:
        out.append(reason(NOTE, "power_cap", scope, f"power cap in {capped / len(masks) * 100:.0f} % of the samples "
                                                     "under load: normal for a GPU at full load"))
    return out


def _link_reasons(samples: list[dict[str, Any]], link_max: dict[str, int | None], scope: str) -> list[dict[str, str]]:
    max_gen, max_width = link_max.get("gen"), link_max.get("width")
    links = [(s["t"], s.get("pcie_gen"), s.get("pcie_width")) for s in samples
             if s.get("pcie_gen") is not None or s.get("pcie_width") is not None]
    if not samples:
        return []
    if not links or (max_gen is None and max_width is None):
        return [reason(NOTE, "not_available", scope, "PCIe link generation/width not available")]
    narrow = [(t, g, w) for t, g, w in links
              if (g is not None and max_gen is not None and g < max_gen)
              or (w is not None and max_width is not None and w < max_width)]
    if not narrow:
        return []
    t, g, w = narrow[0]
    return [reason(WARN, "pcie_link", scope,
                   f"PCIe link at Gen{g} x{w} under load (maximum Gen{max_gen} x{max_width}) in "
                   f"{len(narrow) / len(links) * 100:.0f} % of the samples (first at {_at(t)})")]


def judge_host(ev: HostEvidence) -> list[dict[str, str]]:
    out = []
    if ev.load_error:
        out.append(reason(FAIL, "load_error", "host", f"the host load could not run: {ev.load_error}"))
    for name in ev.compared_nothing:
        out.append(reason(NOTE, "not_checked", "host", f"{name} compared nothing: the run ended before its first "
                                                       "read-back (a longer run or a smaller ram_share checks it)"))
    return out + _wrong_results(ev.check_errors, "host")


def _wrong_results(errors: list[dict[str, Any]], scope: str) -> list[dict[str, str]]:
    out = [reason(FAIL, "wrong_result", scope, f"wrong result at {_at(err['t'])}: {err['text']}")
           for err in errors[:WRONG_LISTED]]
    if len(errors) > WRONG_LISTED:
        out.append(reason(FAIL, "wrong_result", scope, f"{len(errors) - WRONG_LISTED} more wrong results, the last "
                                                       f"at {_at(errors[-1]['t'])}"))
    return out


def verdict(gpus: list[GpuEvidence], host: HostEvidence | None, *, no_gpu_reason: str | None = None
            ) -> dict[str, Any]:
    """The whole verdict: ``{"verdict", "reasons", "gpus": [{index, name, verdict, reasons, rate_*}], "host"}``.
    The machine's verdict is the worst of its parts; its reasons are theirs (each names its scope)."""
    means = {ev.index: _mean_rate(ev.rate) for ev in gpus}
    per_gpu = []
    for ev in gpus:
        siblings = [r for i, r in means.items() if i != ev.index and r is not None]
        reasons = judge_gpu(ev, siblings)
        first, last, _ = rate_windows(ev.rate)
        per_gpu.append({"index": ev.index, "name": ev.name, "verdict": worst([r["level"] for r in reasons]),
                        "reasons": reasons, "rate_mean_tflops": means[ev.index], "rate_first_tflops": first,
                        "rate_last_tflops": last})
    host_part = None
    all_reasons = [r for g in per_gpu for r in g["reasons"]]
    if host is not None:
        host_reasons = judge_host(host)
        host_part = {"verdict": worst([r["level"] for r in host_reasons]), "reasons": host_reasons}
        all_reasons += host_reasons
    if no_gpu_reason:
        all_reasons.insert(0, reason(NOTE, "no_gpu", "machine", f"no GPU was loaded: {no_gpu_reason}"))
    return {"verdict": worst([r["level"] for r in all_reasons]), "reasons": all_reasons, "gpus": per_gpu,
            "host": host_part, "no_gpu_reason": no_gpu_reason}


@dataclass
class Derived:
    """A burn-in's verdicts derived again from its stored rows, and where the stored ones disagree."""

    verdict: str
    gpus: list[str]  # one per entry of ``health["gpus"]`` that is an object, in order
    host: str | None
    disagreements: list[str]


def _levels(reasons: Any) -> list[str]:
    return [r["level"] for r in reasons or [] if isinstance(r, dict) and r.get("level") in _RANK]


def derive(health: dict[str, Any]) -> Derived:
    """The verdicts of a stored burn-in as its own rows make them, never as it states them: a part's verdict is
    the worst of its stated verdict and its reasons' levels (a stated FAIL stays FAIL even without its reason),
    and the machine's the worst of its parts, its own reasons and its stated verdict. Each stated verdict that differs
    from what its rows make it is a disagreement, in words."""
    disagreements = []

    def part(stated: Any, reasons: Any, scope: str) -> str:
        levels = _levels(reasons) + ([stated] if stated in _RANK else [])
        found = worst(levels)
        if stated in (PASS, WARN, FAIL) and stated != found:
            disagreements.append(f"{scope} states {stated} but its reasons make it {found}")
        return found

    gpus = [part(g.get("verdict"), g.get("reasons"), f"gpu{g.get('index')}")
            for g in health.get("gpus") or [] if isinstance(g, dict)]
    host_part = health.get("host") if isinstance(health.get("host"), dict) else None
    host = part(host_part.get("verdict"), host_part.get("reasons"), "the host") if host_part is not None else None
    from_rows = worst(gpus + ([host] if host else []) + _levels(health.get("reasons")))
    stated = health.get("verdict")
    if stated != from_rows:
        disagreements.insert(0, f"the burn-in states {stated if stated in _RANK else 'no verdict'} but its rows make "
                                f"it {from_rows}")
    return Derived(worst([from_rows] + ([stated] if stated in _RANK else [])), gpus, host, disagreements)


def verdict_of(doc: Any) -> str | None:
    """The burn-in verdict of a result document ("PASS" / "WARN" / "FAIL") as its rows make it
    (:func:`derive`), or None if it holds no burn-in with a well-formed verdict."""
    if not isinstance(doc, dict):
        return None
    details = doc.get("details")
    health = details.get("health") if isinstance(details, dict) else None
    if not isinstance(health, dict) or health.get("verdict") not in (PASS, WARN, FAIL):
        return None
    return derive(health).verdict
