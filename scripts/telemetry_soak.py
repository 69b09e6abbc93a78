"""Soak test: run the sampler at 10 Hz for N seconds and report RSS growth of this process.

The ring buffer is preallocated, so RSS should level off once the ring is full (30 min at 10 Hz =
18000 samples); growth before that is the ring's pages being touched for the first time.

    python scripts/telemetry_soak.py --seconds 3600
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import psutil  # noqa: E402

from hwbench_gui.engine.telemetry import Sampler  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=3600.0)
    parser.add_argument("--interval", type=float, default=0.1)
    parser.add_argument("--history", type=float, default=1800.0, help="ring length in seconds (default 1800)")
    parser.add_argument("--report-every", type=float, default=60.0)
    args = parser.parse_args()
    proc = psutil.Process()
    sampler = Sampler(interval_s=args.interval, history_s=args.history)
    latest_count = [0]
    sampler.add_listener(lambda s: latest_count.__setitem__(0, latest_count[0] + 1))
    sampler.start()
    time.sleep(min(5.0, args.seconds))  # let imports, NVML and the first samples settle
    rss0 = proc.memory_info().rss
    t0 = time.monotonic()
    print(f"ring: {sampler.capacity} samples x {len(sampler.metric_names())} metrics; "
          f"RSS at start {rss0 / 2**20:.1f} MiB", flush=True)
    while (elapsed := time.monotonic() - t0) < args.seconds - 5.0:
        time.sleep(min(args.report_every, args.seconds - 5.0 - elapsed))
        rss = proc.memory_info().rss
        print(f"{time.monotonic() - t0:7.0f} s  samples {latest_count[0]:7d}  RSS {rss / 2**20:8.1f} MiB  "
              f"growth {(rss - rss0) / 2**20:+.2f} MiB", flush=True)
    sampler.stop()
    rss = proc.memory_info().rss
    print(f"done: {latest_count[0]} samples in {time.monotonic() - t0 + 5:.0f} s, "
          f"RSS growth {(rss - rss0) / 2**20:+.2f} MiB (ring preallocated: {sampler._ring.nbytes / 2**20:.1f} MiB), "
          f"sampler CPU {sampler.thread_cpu_s:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
