"""``hwbench list`` and ``hwbench run``: benchmarks from the command line.

    hwbench list [--json] [--params]
    hwbench run gpu.matmul --param sizes=8192 --param precision=bf16 [--out DIR] [--json] [--timeout S] [--quiet]
    hwbench run --suite seed [--param framework=torch] [--param steps=20] [--resume]
    hwbench maxbatch model.resnet50 --param precision=bf16-amp [--start 8] [--limit 8192] [--step 8]
    hwbench maxbatch llm.train --param model=llama-3.1-8b --param method=lora --param seq=2048   (its own search)

``run`` shows progress on stderr (one updating line on a terminal, plain lines otherwise) and
prints the result file's path on stdout (the whole document with ``--json``). Exit status: 0 ok,
1 failed (the reason on stderr), 2 unknown benchmark, bad parameters or a results folder that
cannot be written (checked before the run), 3 the run ended but its document's health verdict is
FAIL (``health.burnin``: a wrong result, an uncorrectable ECC error, an XID, a pending row remap;
WARN still exits 0), 130 cancelled (Ctrl-C stops the benchmark's processes and still writes the
cancelled document).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import signal
import sys
import threading
import time
from typing import Any, TextIO

from hwbench_gui.commands.argtypes import positive_number, user_path

from hwbench_gui.engine.results.formatting import figure_line, format_value, shown_lines

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_HEALTH_FAIL, EXIT_CANCELLED = 0, 1, 2, 3, 130


def add_parser(subparsers) -> None:
    """Adds the subcommands ``list``, ``run`` and ``maxbatch``."""
    lister = subparsers.add_parser(
        "list", help="list the benchmarks and whether each can run here",
        description="List the benchmarks: id, title, category, and whether each can run on this machine (and why not).")
    lister.add_argument("--json", action="store_true", help="print a JSON list instead of a table")
    lister.add_argument("--params", action="store_true", help="also show every benchmark's parameters")
    lister.set_defaults(handler=list_command)

    runner = subparsers.add_parser(
        "run", help="run one benchmark in a child process and save its result document",
        description="Run benchmark ID in a child process; the result document (also for a failed or "
                    "cancelled run) goes to --out, else $HWBENCH_RESULTS_DIR, else the user data folder. "
                    "See 'hwbench list --params' for each benchmark's parameters.")
    runner.add_argument("id", metavar="ID", nargs="?", help="benchmark id, e.g. gpu.matmul (see 'hwbench list')")
    runner.add_argument("--suite", metavar="NAME",
                        help="run a named suite instead of one benchmark (seed: the seed evaluation's model matrix); "
                             "--param values for an axis the suite varies narrow it, others apply to every run")
    runner.add_argument("--param", "-p", action="append", default=[], metavar="NAME=VALUE",
                        help="set a parameter (repeatable); lists are comma-separated: sizes=1,2,4")
    runner.add_argument("--like", metavar="FILE",
                        help="run what this result document measured (e.g. a shipped reference): its benchmark and "
                             "the parameters that decide comparability; -p overrides")
    runner.add_argument("--out", metavar="DIR", type=user_path, help="folder for the result document")
    runner.add_argument("--json", action="store_true", help="print the whole result document on stdout")
    runner.add_argument("--timeout", type=positive_number, metavar="S",
                        help="kill the run after S seconds (default: the benchmark's own limit)")
    runner.add_argument("--quiet", "-q", action="store_true", help="no progress or log lines on stderr")
    runner.add_argument("--resume", action="store_true",
                        help="with --suite: skip the runs whose ok result is already in the results folder "
                             "(a suite that was killed or cancelled goes on where it stopped)")
    runner.set_defaults(handler=run_command)

    finder = subparsers.add_parser(
        "maxbatch", help="find the largest batch that fits in memory (each try a short child run)",
        description="Double the batch from --start until a run runs out of memory, then bisect to within --step. "
                    "Other parameters as for 'hwbench run'.")
    finder.add_argument("id", metavar="ID", help="benchmark id with a 'batch' parameter, e.g. model.resnet50, or "
                                                 "llm.train (its own micro-batch search, one short run)")
    finder.add_argument("--param", "-p", action="append", default=[], metavar="NAME=VALUE")
    finder.add_argument("--start", type=int, default=8, help="first batch tried (default 8)")
    finder.add_argument("--limit", type=int, default=8192, help="largest batch tried (default 8192)")
    finder.add_argument("--step", type=int, default=8, help="stop when the gap is this small (default 8)")
    finder.add_argument("--steps", type=int, default=3, help="timed steps per try (default 3)")
    finder.add_argument("--json", action="store_true", help="print the result as JSON")
    finder.set_defaults(handler=maxbatch_command)


# -- list ------------------------------------------------------------------------------------------

def list_command(args: argparse.Namespace) -> int:
    from hwbench_gui.engine.run import registry

    rows = []
    for bench in registry.all_benchmarks():
        reason = registry.availability(bench)
        limits = registry.framework_limits(bench) if reason is None else {}
        if limits:  # runnable, in its other framework
            runnable = [label for label in registry.framework_labels(bench) if label not in limits]
            reason = f"{' / '.join(runnable)} only: " + "; ".join(
                f"{label} runs cannot run here: {why}" for label, why in limits.items())
        row = {"id": bench.id, "title": bench.title, "category": bench.category, "version": bench.version,
               "available": reason is None or bool(limits), "reason": reason, "needs": sorted(bench.needs),
               "framework_limits": limits,
               "default_timeout_s": bench.default_timeout_s,
               "params": [_param_json(p) for p in bench.params]}
        rows.append(row)
    for module, reason in registry.module_errors().items():
        rows.append({"id": None, "module": module, "title": None, "category": None, "available": False,
                     "reason": reason})
    if args.json:
        json.dump(rows, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return EXIT_OK
    table = [(r["id"] or f"({r['module']})", r["title"] or "could not be loaded", r["category"] or "",
              "yes" if r["available"] else "no", r["reason"] or "") for r in rows]
    header = ("ID", "TITLE", "CATEGORY", "AVAILABLE", "REASON")
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *table)]
    for line in (header, *table):
        print("  ".join(str(cell).ljust(width) for cell, width in zip(line[:-1], widths)) + "  " + line[-1])
        if args.params and line is not header and line[0] in {r["id"] for r in rows}:
            for p in next(r for r in rows if r["id"] == line[0])["params"]:
                print(f"    --param {p['name']}=...  {_describe_param(p)}")
    return EXIT_OK


def _param_json(p) -> dict[str, Any]:
    from hwbench_gui.engine.jsonable import jsonable

    return jsonable({"name": p.name, "kind": p.kind, "default": p.default, "help": p.help, "minimum": p.minimum,
                     "maximum": p.maximum, "choices": list(p.choices), "unit": p.unit})


def _describe_param(p: dict[str, Any]) -> str:
    text = f"{p['kind']}, default {p['default']!r}"
    if p["unit"]:
        text += f" {p['unit']}"
    if p["choices"]:
        text += f", one of {', '.join(map(str, p['choices']))}"
    if p["minimum"] is not None or p["maximum"] is not None:
        low, high = ("" if p[key] is None else p[key] for key in ("minimum", "maximum"))
        text += f", range {low}..{high}"
    return f"{text}: {p['help']}"


# -- run -------------------------------------------------------------------------------------------

def run_command(args: argparse.Namespace) -> int:
    from hwbench_gui.engine.run import registry, runner
    from hwbench_gui.engine.spec.benchmark import ParamError

    if args.like and (args.suite or args.id):
        print("hwbench run: --like FILE takes neither a benchmark ID nor --suite", file=sys.stderr)
        return EXIT_USAGE
    if (args.suite or not args.id) and not args.like:
        return _suite_command(args)
    try:
        params = parse_param_args(args.param)
        if args.like:
            bench_id, params = _like(args.like, params)
            args.id = bench_id
        bench = registry.get(args.id)
        params = bench.resolve_params(params)  # fail before anything starts; the runner takes them as they are
    except _NotADocument as exc:
        print(f"hwbench run: --like {args.like}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyError as exc:
        print(f"hwbench run: {exc.args[0] if exc.args else exc}", file=sys.stderr)
        errors = registry.module_errors()
        for module, reason in errors.items():
            print(f"  (not loaded: {reason})", file=sys.stderr)
        return EXIT_USAGE
    except ParamError as exc:
        print(f"hwbench run: bad parameter: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.timeout is not None and args.timeout <= 0:
        print("hwbench run: --timeout must be positive", file=sys.stderr)
        return EXIT_USAGE
    if not _results_folder_ok(args.out):
        return EXIT_USAGE

    display = ProgressDisplay(bench.id, sys.stderr, quiet=args.quiet)
    cancel = threading.Event()
    stop = _StopSignals(cancel, display)
    try:
        result = runner.run_benchmark(bench.id, params, on_event=display.on_event, cancel=cancel,
                                      timeout_s=args.timeout, results_dir=args.out)
    except KeyboardInterrupt:  # the runner wrote the cancelled document before re-raising
        display.finish()
        print("hwbench run: cancelled", file=sys.stderr)
        return stop.exit_status()
    finally:
        stop.restore()
    display.finish()
    doc = result.document
    if args.json:
        json.dump(doc, sys.stdout, indent=2)
        sys.stdout.write("\n")
    elif result.path is not None:
        print(result.path)
    if result.save_error:
        print(f"hwbench run: {result.save_error}", file=sys.stderr)
    elif result.path is not None and args.json and not args.quiet:
        print(f"saved {result.path}", file=sys.stderr)
    if result.status == "ok":
        if not args.quiet:
            print(figure_line(doc), file=sys.stderr)
            for line in shown_lines(doc):
                print(f"  {line}", file=sys.stderr)
            for warning in doc.get("warnings") or []:
                print(f"warning: {warning}", file=sys.stderr)
        if result.save_error:
            return EXIT_FAILED
        return _health_exit(doc)
    if result.status == "cancelled":
        print("hwbench run: cancelled", file=sys.stderr)
        return stop.exit_status()
    print(f"hwbench run: {bench.id} failed: {doc.get('reason')}", file=sys.stderr)
    if not args.quiet and doc.get("error_kind") in ("crash", "exception", "timeout"):  # not a refusal: show where
        for line in (doc.get("log_tail") or [])[-10:]:
            print(f"  | {line}", file=sys.stderr)
        where = result.path or result.fallback_path
        if where is not None:
            print(f"  (the run's log, its last {len(doc.get('log_tail') or [])} lines, is in {where} under "
                  "log_tail)", file=sys.stderr)
    return EXIT_FAILED


def _health_exit(doc: dict[str, Any]) -> int:
    """EXIT_HEALTH_FAIL when the document holds a FAIL health verdict (said on stderr), else EXIT_OK."""
    from hwbench_gui.engine.health.rules import FAIL, verdict_of

    verdict = verdict_of(doc)
    if verdict is not None:
        print(f"health verdict: {verdict}", file=sys.stderr)
    if verdict == FAIL:
        print(f"hwbench run: health verdict FAIL (exit status {EXIT_HEALTH_FAIL})", file=sys.stderr)
        return EXIT_HEALTH_FAIL
    return EXIT_OK


class _NotADocument(Exception):
    pass


def _like(path: str, overrides: dict[str, Any]) -> tuple[str, Any]:
    from hwbench_gui.engine.results.library import load_document
    from hwbench_gui.engine.run.rerun import run_like
    from hwbench_gui.engine.results.store import ResultFileError

    try:
        doc = load_document(path)
    except ResultFileError as exc:
        raise _NotADocument(exc.reason) from None
    return run_like(doc, overrides)


def _suite_command(args: argparse.Namespace) -> int:
    """``hwbench run --suite NAME``: what cannot run here listed once and skipped, every other run
    (with ``--resume`` those not yet done) under one progress line with an ETA, then one line per
    run and the suite's evaluation report in the results folder."""
    from hwbench_gui.engine.run import suites
    from hwbench_gui.engine.run.queue import SuiteProgress, plan_suite, results_folder, run_suite
    from hwbench_gui.engine.spec.benchmark import ParamError

    if not args.suite or args.id:
        print("hwbench run: give either a benchmark ID or --suite NAME", file=sys.stderr)
        return EXIT_USAGE
    try:
        overrides = parse_param_args(args.param)
        runs = suites.expand_suite(args.suite, overrides)
        for run in runs:
            _registry_get(run.bench_id).resolve_params(run.params)
    except (KeyError, ParamError) as exc:
        print(f"hwbench run: {exc.args[0] if exc.args else exc}", file=sys.stderr)
        return EXIT_USAGE
    if not _results_folder_ok(args.out):
        return EXIT_USAGE
    started = time.monotonic()
    plan = plan_suite(args.suite, overrides, results_dir=args.out, resume=args.resume)
    _print_plan(plan, quiet=args.quiet)
    cancel = threading.Event()
    progress = SuiteProgress(plan.cells - len(plan.unavailable), done_before=len(plan.finished),
                             estimates=plan.estimates)
    displays: list[ProgressDisplay] = []

    def on_run(i, total, run):
        if displays:
            progress.finish()
            displays[-1].finish()
        progress.start(run.label)
        display = ProgressDisplay(run.bench_id, sys.stderr, quiet=args.quiet, suite=progress)
        displays.append(display)
        display.note(f"[{progress.done + 1}/{progress.total}] {run.label}  ({progress.text()})")
        return display.on_event

    stop = _StopSignals(cancel, ProgressDisplay(args.suite, sys.stderr, quiet=args.quiet))
    resume_hint = "resume with: " + " ".join(["hwbench run --suite", args.suite, *(f"-p {item}" for item in args.param),
                                              *([f"--out {args.out}"] if args.out else []), "--resume"])
    try:
        done = run_suite(args.suite, overrides, on_run=on_run, cancel=cancel, timeout_s=args.timeout,
                         results_dir=args.out, plan=plan)
    except KeyboardInterrupt:
        print(f"hwbench run: suite cancelled; {resume_hint}", file=sys.stderr)
        return stop.exit_status()
    finally:
        stop.restore()
    for display in displays:
        display.finish()
    for run, doc in plan.finished:
        print(f"{run.label}: {figure_line(doc)}  [done before: {doc.get('_path')}]")
    for run, result in done:
        doc = result.document
        shown = figure_line(doc) if result.status == "ok" else f"{result.status}: {doc.get('reason')}"
        print(f"{run.label}: {shown}" + (f"  [{result.path}]" if result.path else ""))
    for run, reason in plan.unavailable:
        print(f"{run.label}: not run here: {reason}")
    took = time.monotonic() - started
    ran = sum(1 for _, result in done if result.status == "ok")
    print(f"suite {args.suite}: {ran + len(plan.finished)} of {plan.cells} runs ok "
          f"({ran} now, {len(plan.finished)} before, {len(plan.unavailable)} cannot run here) in {took:.0f} s",
          file=sys.stderr)
    if cancel.is_set():
        print(f"hwbench run: suite cancelled; {resume_hint}", file=sys.stderr)
        return stop.exit_status()
    docs = [doc for _, doc in plan.finished] + [r.document for _, r in done if r.path is not None]
    _suite_report(args.suite, docs, results_folder(args.out))
    if any(result.status != "ok" for _, result in done):
        print(f"hwbench run: some runs failed; {resume_hint} runs only those again", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


def _print_plan(plan, *, quiet: bool) -> None:
    """The suite's plan on stderr: how many runs, and once, grouped by reason, those that cannot run here."""
    if quiet:
        return
    print(plan.summary(), file=sys.stderr)
    by_reason: dict[str, list[str]] = {}
    for run, reason in plan.unavailable:
        by_reason.setdefault(reason, []).append(run.label)
    for reason, labels in by_reason.items():
        print(f"  skipped, {reason}: {', '.join(labels)}", file=sys.stderr)
    for run, doc in plan.finished:
        print(f"  done before: {run.label} ({doc.get('_path')})", file=sys.stderr)


def _suite_report(name: str, docs: list[dict[str, Any]], folder) -> None:
    """The suite's report written into the results folder, and where it is, on stderr."""
    from hwbench_gui.engine.reports.suite_report import write_suite_report

    if not docs:
        print("hwbench run: no result to report on", file=sys.stderr)
        return
    try:
        paths, kind = write_suite_report(name, docs, folder)
    except (OSError, ValueError) as exc:
        print(f"hwbench run: the suite's report could not be written: {exc}", file=sys.stderr)
        return
    print(f"{kind}: {', '.join(map(str, paths))}", file=sys.stderr)


def _results_folder_ok(out: str | None) -> bool:
    """Probe the results folder before anything runs; says in one line why it cannot be written."""
    from hwbench_gui.engine.results.store import check_writable

    problem = check_writable(out)
    if problem:
        print(f"hwbench run: {problem}", file=sys.stderr)
    return problem is None


def _registry_get(bench_id: str):
    from hwbench_gui.engine.run import registry

    return registry.get(bench_id)


def maxbatch_command(args: argparse.Namespace) -> int:
    """``hwbench maxbatch ID``: prints each try, then the largest batch that fit."""
    from hwbench_gui.engine.run import maxbatch
    from hwbench_gui.engine.spec.benchmark import ParamError

    try:
        params = parse_param_args(args.param)
        bench = _registry_get(args.id)
        searched = bench.searched_batch_param
        if searched is None:
            bench.param("batch")
        elif searched in params:
            raise ParamError(f"{bench.id} searches its own {searched}: leave it out")
        bench.resolve_params(params)
    except (KeyError, ParamError) as exc:
        print(f"hwbench maxbatch: {exc.args[0] if exc.args else exc}", file=sys.stderr)
        return EXIT_USAGE
    if searched is not None:
        return _searched_maxbatch(bench.id, searched, params, args.json)

    def on_try(batch, doc):
        what = "fits" if doc["status"] == "ok" else f"{doc.get('error_kind')}: {doc.get('reason')}"
        print(f"batch {batch}: {what}", file=sys.stderr, flush=True)

    try:
        result = maxbatch.max_batch(bench.id, params, start=args.start, limit=args.limit, step=args.step,
                                    steps=args.steps, on_try=on_try)
    except (maxbatch.MaxBatchError, ValueError) as exc:
        print(f"hwbench maxbatch: {exc}", file=sys.stderr)
        return EXIT_FAILED
    if args.json:
        json.dump({"benchmark": bench.id, "params": params, "largest_batch": result.largest,
                   "smallest_failing_batch": result.smallest_failing, "tries": result.tries}, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        tail = f" ({result.smallest_failing} did not)" if result.smallest_failing else f" (the limit {args.limit})"
        print(f"{bench.id}: largest batch that fits: {result.largest}{tail}")
    return EXIT_OK


def _searched_maxbatch(bench_id: str, param: str, params: dict[str, str], as_json: bool) -> int:
    """maxbatch of a benchmark that searches its own batch: one short run whose search (the same doubling and
    bisection, from its memory estimate up to its own limit) is read back; --start, --limit and --step do not
    apply."""
    from hwbench_gui.engine.run import maxbatch

    print(f"{bench_id} searches its largest {param} itself, as a run with {param}=0 does; --start, --limit and "
          "--step do not apply: one short run", file=sys.stderr, flush=True)
    try:
        result = maxbatch.searched_in_run(bench_id, param, params)
    except maxbatch.MaxBatchError as exc:
        print(f"hwbench maxbatch: {exc}", file=sys.stderr)
        return EXIT_FAILED
    for batch, ok in result.tries:
        print(f"{param} {batch}: {'fits' if ok else 'out of memory'}", file=sys.stderr)
    if as_json:
        json.dump({"benchmark": bench_id, "params": params, "batch_param": param, "largest_batch": result.largest,
                   "smallest_failing_batch": result.smallest_failing, "tries": result.tries}, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        tail = f" ({result.smallest_failing} did not)" if result.smallest_failing else " (its search's limit)"
        print(f"{bench_id}: largest {param} that fits: {result.largest}{tail}")
    return EXIT_OK


def parse_param_args(items: list[str]) -> dict[str, str]:
    """``["size=8192", "dtype=fp16"]`` -> ``{"size": "8192", "dtype": "fp16"}``; ParamError on bad items."""
    from hwbench_gui.engine.spec.benchmark import ParamError

    params: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise ParamError(f"{item!r} is not NAME=VALUE")
        if name in params:
            raise ParamError(f"{name} is given twice")
        params[name] = value
    return params


#: Signals that end a run the way Ctrl-C does: a terminal closed (SIGHUP) or ``kill``/a service manager (SIGTERM).
STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


class _StopSignals:
    """Ctrl-C, SIGTERM and SIGHUP set ``cancel`` (the runner then ends the child's group and writes the
    cancelled document) instead of killing the CLI mid-run; ``received`` is the first one's number."""

    def __init__(self, cancel: threading.Event, display: "ProgressDisplay"):
        self.cancel, self.display = cancel, display
        self.received: int | None = None
        self._previous: dict[int, Any] = {}
        if threading.current_thread() is threading.main_thread():
            for sig in STOP_SIGNALS:
                self._previous[sig] = signal.signal(sig, self._on_signal)

    def _on_signal(self, signum, frame):
        if self.received is None:
            self.received = signum
            name = signal.Signals(signum).name
            self.display.note(f"cancelling ({name}: stopping the benchmark's processes)...")
        self.cancel.set()

    def exit_status(self) -> int:
        """128 + the signal's number, as a shell reports a process ended by it (130 for Ctrl-C)."""
        return 128 + self.received if self.received is not None else EXIT_CANCELLED

    def restore(self) -> None:
        for sig, previous in self._previous.items():
            signal.signal(sig, previous)


class ProgressDisplay:
    """Turns runner events into stderr lines: one rewritten line on a terminal, plain lines otherwise."""

    #: Without a terminal, a progress line is printed when the message changes or after this many percent.
    PLAIN_STEP_PERCENT = 10.0

    #: Without a terminal, a progress line whose text differs only in its numbers is printed at most this often.
    PLAIN_INTERVAL_S = 30.0

    def __init__(self, bench_id: str, stream: TextIO, *, quiet: bool = False, suite: Any = None):
        self.bench_id = bench_id
        self.stream = stream
        self.quiet = quiet
        self.suite = suite  # a queue.SuiteProgress: the whole suite's progress and ETA on the same line
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self._line_shown = False
        self._last_plain: tuple[float, str, float] | None = None

    def on_event(self, event: dict[str, Any]) -> None:
        if self.quiet:
            return
        kind = event.get("type")
        if kind == "progress":
            if self.suite is not None and isinstance(event.get("fraction"), (int, float)):
                self.suite.update(event["fraction"])
            self._progress(event.get("fraction"), str(event.get("message") or ""))
        elif kind == "log":
            self.note(str(event.get("message", "")))
        elif kind == "metric":
            extra = {k: v for k, v in event.items() if k not in ("type", "name", "value", "unit")}
            value = event.get("value")
            # whole numbers (counts, ids) print as they are; measurements as every figure reads
            shown = format_value(value) if isinstance(value, float) else value
            suffix = "  " + " ".join(f"{k}={v}" for k, v in extra.items()) if extra else ""
            self.note(f"{event.get('name')} = {shown} {event.get('unit', '')}".rstrip() + suffix)
        elif kind == "started":
            self.note(f"running {self.bench_id} (pid {event.get('pid')}, timeout {event.get('timeout_s'):g} s)")

    def note(self, text: str) -> None:
        """A line of its own (the progress line, if any, is cleared first and redrawn by the next update)."""
        if self.quiet:
            return
        self._clear()
        print(text, file=self.stream, flush=True)

    def finish(self) -> None:
        self._clear()

    def _progress(self, fraction: Any, message: str) -> None:
        percent = None if not isinstance(fraction, (int, float)) else 100.0 * float(fraction)
        shown = "  ?  %" if percent is None else f"{percent:5.1f}%"
        line = f"{self.bench_id} [{shown}] {message}"
        if self.suite is not None:
            line += f" | {self.suite.text()}"
        if self.tty:
            width = shutil.get_terminal_size((100, 20)).columns - 1
            self.stream.write("\r" + line[:width] + "\x1b[K")
            self.stream.flush()
            self._line_shown = True
            return
        last = self._last_plain
        # "timed step 12/60, 0.1 s/step, ETA 8 s" and "timed step 13/60, ..." are the same kind of line
        kind = re.sub(r"[0-9][0-9.,:]*", "#", message)
        now = time.monotonic()
        if (last is None or kind != last[1] or percent is None or now - last[2] >= self.PLAIN_INTERVAL_S
                or percent - last[0] >= self.PLAIN_STEP_PERCENT or percent >= 100.0 > last[0]):
            self._last_plain = (percent if percent is not None else -1.0, kind, now)
            print(line, file=self.stream, flush=True)

    def _clear(self) -> None:
        if self.tty and self._line_shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._line_shown = False
