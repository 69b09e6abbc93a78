"""What a burn-in document says against the burn-in's targets, in a few lines.

    python3 scripts/health_summary.py BURNIN.json [--unchecked UNCHECKED.json] [--matmul MATMUL.json]

Prints the verdict and its reasons; per GPU the mean GEMM rate after the settling seconds, the mean power
against its limit and the share of samples under each clock-event reason; with ``--unchecked`` (the same
load with check=false) what checking costs; with ``--matmul`` (gpu.matmul mode=sustained, same precision
and size) the load's rate against it. Targets: cost <= 5 %, rate >= 0.95 x sustained matmul,
power >= 0.85 x limit, or the reasons show what holds it lower.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hwbench_gui.engine.health import burns
from hwbench_gui.engine.health.rules import RATE_SETTLE_S
from hwbench_gui.engine.telemetry.gpu_metrics import decode_throttle_reasons


def _load(path: str) -> dict:
    return json.loads(Path(path).read_text())


def _optional(path: str | None, what: str) -> dict | None:
    """The document at ``path``, or None with one line saying why it cannot be read."""
    if not path:
        return None
    try:
        doc = _load(path)
    except (OSError, ValueError) as exc:
        print(f"{what} {path}: not readable ({exc})")
        return None
    if doc.get("status") != "ok":
        print(f"{what} {path}: {doc.get('status')}: {doc.get('reason')}")
        return None
    return doc


def settled_rates(doc: dict) -> dict[int, float]:
    """Mean GEMM rate per GPU over the windows after the settling seconds (TFLOP/s)."""
    rates = {gpu["index"]: burns.settled_rate(gpu.get("load")) for gpu in doc["details"]["health"]["gpus"]}
    return {i: r for i, r in rates.items() if r is not None}


def _settled_clock(gpu: dict) -> float | None:
    """Mean SM clock of a GPU's timeline after the settling seconds (MHz)."""
    tl = gpu.get("timeline") or {}
    clocks = [c for t, c in zip(tl.get("t") or [], tl.get("sm_clock_mhz") or []) if t >= RATE_SETTLE_S and c]
    return statistics.fmean(clocks) if clocks else None


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("burnin")
    parser.add_argument("--unchecked")
    parser.add_argument("--matmul")
    args = parser.parse_args()
    doc = _load(args.burnin)
    health = doc["details"]["health"]
    print(f"verdict {health['verdict']} over {health['duration_s']:.0f} s; precision {doc.get('precision')}; "
          f"checking {'on' if health.get('checking', True) else 'OFF'}")
    for r in health["reasons"]:
        print(f"  {r['level']} {r['scope']}: {r['text']}")
    rates = settled_rates(doc)
    unchecked_doc = _optional(args.unchecked, "unchecked burn-in")
    unchecked = settled_rates(unchecked_doc) if unchecked_doc else {}
    matmul = None
    mm = _optional(args.matmul, "gpu.matmul")
    if mm:
        matmul = (mm.get("figures") or {}).get(doc.get("precision"), {}).get("value")
        print(f"gpu.matmul {mm['params'].get('mode')} {doc.get('precision')} sizes={mm['params'].get('sizes')}: "
              f"{matmul} TFLOP/s")
    judged = {j["index"]: j for j in burns.judge_document(doc, [mm] if mm else [])}
    for gpu in health["gpus"]:
        i = gpu["index"]
        tl = gpu["timeline"]
        power = [p for p in tl["power_w"] if p is not None]
        limit = [p for p in tl["power_limit_w"] if p is not None]
        masks = [m for m in tl["reasons"] if m is not None]
        line = (f"gpu{i} {gpu['name']}: {gpu['verdict']}; rate {rates.get(i, float('nan')):.1f} TFLOP/s "
                f"after {RATE_SETTLE_S:g} s")
        if i in unchecked and i in rates:
            cost = (1 - rates[i] / unchecked[i]) * 100
            line += f"; unchecked {unchecked[i]:.1f} (checking costs {cost:.1f} %, target <= 5 %"
            clocks = (_settled_clock(gpu), _settled_clock(next((g for g in unchecked_doc["details"]["health"]["gpus"]
                                                                 if g["index"] == i), {})))
            if all(clocks):  # the two runs' clocks differ (temperature, the cap): the cost per SM MHz is time alone
                per_clock = (1 - rates[i] / clocks[0] / (unchecked[i] / clocks[1])) * 100
                line += f"; per SM MHz {per_clock:.1f} % at {clocks[0]:.0f} and {clocks[1]:.0f} MHz"
            line += ")"
        if matmul and i in rates:
            line += f"; {rates[i] / matmul:.3f} x gpu.matmul sustained (target >= 0.95)"
        if power and limit:
            line += (f"; power {statistics.fmean(power):.0f} / {statistics.fmean(limit):.0f} W = "
                     f"{statistics.fmean(power) / statistics.fmean(limit):.2f} (target >= 0.85)")
        print(line)
        if i in judged:
            print(f"   {judged[i]['level']} whether it burns: {judged[i]['text']}")
        names: dict[str, int] = {}
        for mask in masks:
            for name in decode_throttle_reasons(mask) or ["none"]:
                names[name] = names.get(name, 0) + 1
        print("   clock-event reasons (share of samples): "
              + ", ".join(f"{n} {c / len(masks) * 100:.0f} %" for n, c in sorted(names.items(), key=lambda x: -x[1])))
        sm = [c for c in tl["sm_clock_mhz"] if c is not None]
        temps = [c for c in tl["temp_c"] if c is not None]
        mem_t = [c for c in tl["mem_temp_c"] if c is not None]
        print(f"   SM clock mean {statistics.fmean(sm):.0f} MHz (min {min(sm):.0f}); GPU temp max {max(temps):.0f} °C"
              + (f"; memory temp max {max(mem_t):.0f} °C" if mem_t else "") if sm and temps else "   no clock/temp")
        print(f"   counters before {gpu['counters_before']}\n   counters after  {gpu['counters_after']}")
        print(f"   XID events {gpu['xid_events']}; not available: {gpu['not_available']}")
    for load in (health.get("host") or {}).get("loads") or []:
        print(f"host {load['name']}: {statistics.fmean(load['rate']) if load['rate'] else 0:.4g} {load['unit']}, "
              f"{load['results_compared']} compared, {len(load['check_errors'])} wrong, error {load['load_error']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
