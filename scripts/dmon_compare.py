"""A result's timed-phase GPU utilisation against `nvidia-smi dmon` over the same windows.

    python3 scripts/dmon_compare.py RESULT.json DMON.txt     (dmon run as: nvidia-smi dmon -s u -o DT -d 1)

dmon prints one line a second (date, time, gpu, sm %, mem %, ...); the lines whose second falls in
one of the result's timed windows are averaged, as are those over the whole child process.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime, tzinfo


def dmon_rows(path: str, tz: tzinfo | None = None) -> list[tuple[float, float]]:
    """(Unix time of the stamp, sm %) per line; dmon prints local time (``tz``, default this machine's)."""
    rows = []
    for line in open(path, encoding="utf-8", errors="replace"):
        parts = line.split()
        if len(parts) < 4 or line.startswith("#"):
            continue
        try:
            t = datetime.strptime(parts[0] + parts[1], "%Y%m%d%H:%M:%S").replace(tzinfo=tz).timestamp()
            rows.append((t, float(parts[3])))
        except ValueError:
            continue
    return rows


def main(argv: list[str]) -> int:
    doc = json.load(open(argv[0]))
    rows = dmon_rows(argv[1])
    windows = doc["telemetry"].get("windows") or []
    # dmon stamps a line with the second it starts and prints the reading taken as it ends: on the
    # H200 the line stamped with the second a busy GPU went idle in still read 0 %, and the one of
    # the second its warm-up began read the busy fraction of that second (gpu_box_trust.sh, dmon.txt).
    # So a line at s stands for (s, s + 1]; count it when that second's middle lies in a window.
    inside = [sm for t, sm in rows if any(a <= t + 0.5 <= b for a, b in windows)]
    whole = doc["telemetry_whole_run"]
    span = (whole["since"], whole["until"])
    during = [sm for t, sm in rows if span[0] <= t + 0.5 <= span[1]]
    ours = doc["telemetry"]["seed"]["gpu_util_percent"]["mean"]
    theirs = sum(inside) / len(inside) if inside else None
    print(json.dumps({
        "figure": doc["figure"], "n": doc["stats"]["n"], "p5": doc["stats"]["p5"], "p95": doc["stats"]["p95"],
        "samples": doc["samples"], "windows": len(windows), "window_s": doc["details"].get("window_s"),
        "timed_gpu_util_hwbench": ours, "timed_gpu_util_dmon": theirs, "dmon_lines_in_windows": len(inside),
        "difference_points": None if theirs is None or ours is None else ours - theirs,
        "whole_run_gpu_util_hwbench": whole["seed"]["gpu_util_percent"]["mean"],
        "whole_run_gpu_util_dmon": sum(during) / len(during) if during else None,
        "power_w": doc["telemetry"]["seed"].get("gpu_power_w"), "sm_clock_mhz": doc["telemetry"]["seed"].get(
            "gpu_sm_clock_mhz"), "noise": doc["telemetry"].get("noise"), "warnings": doc["warnings"]}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
