"""CPU cost of the telemetry sampler thread, as % of one core, at 2 Hz and 10 Hz.

Measures ``time.thread_time()`` inside the sampler thread (Sampler.thread_cpu_s), so other threads
in this process do not count. Goal: <= 1 % of one core at 2 Hz.

    python scripts/telemetry_overhead.py --seconds 60 [--watch PID]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from hwbench_gui.engine.telemetry import Sampler  # noqa: E402


def measure(interval_s: float, seconds: float, watch: int | None) -> dict:
    sampler = Sampler(interval_s=interval_s)
    if watch is not None:
        sampler.watch(watch)
    sampler.start()
    t0 = time.monotonic()
    time.sleep(seconds)
    sampler.stop()
    wall = time.monotonic() - t0
    t, _ = sampler.history(metrics=["cpu_percent"])
    return {
        "interval_s": interval_s,
        "wall_s": wall,
        "samples": len(t),
        "thread_cpu_s": sampler.thread_cpu_s,
        "percent_of_one_core": 100.0 * sampler.thread_cpu_s / wall,
        "cpu_ms_per_sample": 1e3 * sampler.thread_cpu_s / max(1, len(t)),
        "gpus": sampler.gpu_count,
        "cores": sampler.cpu_count,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=60.0, help="seconds per rate (default 60)")
    parser.add_argument("--watch", type=int, help="also follow this process tree (proc_* metrics)")
    args = parser.parse_args()
    for interval in (0.5, 0.1):
        r = measure(interval, args.seconds, args.watch)
        print(
            f"{1 / interval:4.0f} Hz: sampler thread {r['percent_of_one_core']:.3f} % of one core "
            f"({r['thread_cpu_s'] * 1e3:.0f} ms CPU over {r['wall_s']:.1f} s, {r['samples']} samples, "
            f"{r['cpu_ms_per_sample']:.3f} ms/sample; {r['cores']} cores, {r['gpus']} GPUs"
            f"{', watching ' + str(args.watch) if args.watch else ''})",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
