"""``hwbench monitor``: live telemetry in the terminal, or streamed to a CSV file.

    hwbench monitor --interval 0.5 --duration 60
    hwbench monitor --interval 0.1 --duration 600 --csv run.csv --watch 1234

Lines go to stdout; where figures come from and why some are N/A goes to stderr first.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from datetime import datetime

from hwbench_gui.commands.argtypes import finite_number, positive_number

GIB = 1024**3
MB = 1e6


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "monitor",
        help="sample GPU/CPU/RAM/disk telemetry; print a line per sample or stream a CSV",
        description="Sample telemetry (NVML + psutil) every --interval seconds.",
    )
    parser.add_argument("--interval", type=finite_number, default=0.5, metavar="S",
                        help="seconds between samples, 0.1-10 (default 0.5)")
    parser.add_argument("--duration", type=positive_number, default=None, metavar="S",
                        help="stop after S seconds (default: until Ctrl-C)")
    parser.add_argument("--csv", metavar="FILE",
                        help="write samples to FILE as they come (one row each, flushed) instead of printing")
    parser.add_argument("--watch", type=int, metavar="PID", help="also report CPU %% and RSS of PID and its children")
    parser.add_argument("--summary", action="store_true", help="print the run's telemetry summary as JSON at the end")
    parser.set_defaults(handler=run)
    return parser


def _fmt(value, scale=1.0, digits=0, unit="") -> str:
    if value is None:
        return "N/A"
    return f"{value / scale:.{digits}f}{unit}"


def format_line(sample: dict, gpu_count: int) -> str:
    """One compact line: time, host figures, then one group per GPU."""
    parts = [
        datetime.fromtimestamp(sample["timestamp"]).strftime("%H:%M:%S.%f")[:-5],
        f"cpu {_fmt(sample.get('cpu_percent'), unit='%')}",
        f"{_fmt(sample.get('cpu_freq_mhz'), unit='MHz')}",
        f"ram {_fmt(sample.get('ram_used_bytes'), GIB, 1, 'GiB')}",
        f"swap {_fmt(sample.get('swap_used_bytes'), GIB, 1, 'GiB')}",
        f"disk r/w {_fmt(sample.get('disk_read_bytes_per_s'), MB, 1)}/"
        f"{_fmt(sample.get('disk_write_bytes_per_s'), MB, 1)} MB/s",
    ]
    if sample.get("proc_rss_bytes") is not None:
        parts.append(
            f"proc {_fmt(sample.get('proc_cpu_percent'), unit='%')} {_fmt(sample['proc_rss_bytes'], GIB, 2, 'GiB')}"
        )
    line = " ".join(parts)
    for i in range(gpu_count):
        g = lambda suffix: sample.get(f"gpu{i}_{suffix}")  # noqa: E731
        throttle = sample.get(f"gpu{i}_throttle_reason_names")
        line += (
            f" | gpu{i} {_fmt(g('util_percent'), unit='%')} mem {_fmt(g('mem_util_percent'), unit='%')}"
            f" {_fmt(g('vram_used_bytes'), GIB, 1, 'GiB')}"
            f" {_fmt(g('power_w'), unit='/')}{_fmt(g('power_limit_w'), unit='W')}"
            f" {_fmt(g('temp_c'), unit='C')} sm {_fmt(g('sm_clock_mhz'))} mem {_fmt(g('mem_clock_mhz'), unit='MHz')}"
            f" pcie rx/tx {_fmt(g('pcie_rx_bytes_per_s'), 1e9, 2)}/{_fmt(g('pcie_tx_bytes_per_s'), 1e9, 2)}GB/s"
            f" nvlink rx/tx {_fmt(g('nvlink_rx_bytes_per_s'), 1e9, 2)}/{_fmt(g('nvlink_tx_bytes_per_s'), 1e9, 2)}GB/s"
            f" throttle {','.join(throttle) if throttle else ('none' if throttle == [] else 'N/A')}"
        )
    return line


def run(args: argparse.Namespace) -> int:
    from hwbench_gui.engine.telemetry import MAX_INTERVAL_S, MIN_INTERVAL_S, Sampler
    from hwbench_gui.engine.telemetry.csv_export import CsvRowWriter

    if not (MIN_INTERVAL_S <= args.interval <= MAX_INTERVAL_S):
        print(f"hwbench monitor: --interval must be {MIN_INTERVAL_S} to {MAX_INTERVAL_S} s", file=sys.stderr)
        return 2
    if args.duration is not None and args.duration <= 0:
        print("hwbench monitor: --duration must be positive", file=sys.stderr)
        return 2
    # Keep the whole run (at least) in memory for --summary; the CSV is the record otherwise.
    history_s = max(1800.0, (args.duration or 0) + 10 * args.interval)
    sampler = Sampler(interval_s=args.interval, history_s=history_s)
    for note in sampler.notes():
        print(f"note: {note}", file=sys.stderr)
    if args.watch is not None:
        import psutil

        if args.watch <= 0 or not psutil.pid_exists(args.watch):
            print(f"hwbench monitor: --watch: no process with pid {args.watch}", file=sys.stderr)
            return 2
        sampler.watch(args.watch)

    fh = None
    errors: list[BaseException] = []
    rows = [0]
    if args.csv:
        # Streamed, not atomic: a killed monitor keeps every row so far. A write that fails before
        # the first row leaves no empty file behind.
        try:
            fh = open(args.csv, "w", newline="", encoding="utf-8")
            writer = CsvRowWriter(fh, sampler.metric_names())
        except OSError as exc:
            return _csv_failed(args.csv, exc, fh, rows=0)

        def on_sample(sample: dict) -> None:
            try:
                writer.write_sample(sample)
                rows[0] += 1
            except BaseException as exc:  # disk full: stop rather than lose data silently
                errors.append(exc)
                done.set()

        print(f"writing {os.path.abspath(args.csv)} every {args.interval} s", file=sys.stderr)
    else:

        def on_sample(sample: dict) -> None:
            try:
                print(format_line(sample, sampler.gpu_count), flush=True)
            except BaseException as exc:  # stdout closed (| head)
                if isinstance(exc, BrokenPipeError):
                    from hwbench_gui.cli import stdout_gone

                    stdout_gone()
                errors.append(exc)
                done.set()

    done = threading.Event()
    started = time.time()
    sampler.add_listener(on_sample)
    sampler.start()
    try:
        done.wait(args.duration)
    finally:
        sampler.stop()
        if fh is not None:
            try:
                fh.close()
            except OSError as exc:  # the last row's flush failed
                errors.append(exc)
    if errors and isinstance(errors[0], BrokenPipeError):  # the reader of a pipe went away (| head): a normal end
        return 0
    if errors and fh is not None and isinstance(errors[0], OSError):
        return _csv_failed(args.csv, errors[0], fh, rows=rows[0])
    if errors and not isinstance(errors[0], BrokenPipeError):
        print(f"hwbench monitor: stopped: {errors[0]}", file=sys.stderr)
        return 1
    if args.summary:
        print(json.dumps(sampler.summary_for_result(since=started), indent=2))
    elif args.csv:
        _, values = sampler.history(since=started, metrics=["cpu_percent"])
        print(f"{len(values['cpu_percent'])} samples written to {args.csv}", file=sys.stderr)
    return 0


def _csv_failed(path: str, exc: OSError, fh, *, rows: int) -> int:
    """Say in one line why the CSV could not be written; a file without a sample row is removed."""
    from hwbench_gui.engine.atomic import write_error_text

    if fh is not None:
        try:
            fh.close()
        except OSError:
            pass
    kept = ""
    if rows:
        kept = f"; the {rows} sample(s) before it are in the file"
    elif os.path.isfile(path):  # never unlink a device such as /dev/full
        try:
            os.unlink(path)
        except OSError:
            pass
    print(f"hwbench monitor: {write_error_text(path, exc)}{kept}", file=sys.stderr)
    return 1


def main(argv: list[str] | None = None) -> int:
    """``python -m hwbench_gui.commands.monitor ...``: the same command without the other subcommands."""
    parser = argparse.ArgumentParser(prog="hwbench")
    add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["monitor", *(sys.argv[1:] if argv is None else argv)])
    try:
        return run(args)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
