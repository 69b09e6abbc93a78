"""``hwbench compare`` and ``hwbench report``: result documents side by side, and saved reports.

    hwbench compare FILE_OR_DIR... [--by machine|run] [--baseline NAME] [--reference] [--all-figures] [--json]
    hwbench report  FILE_OR_DIR... [--html F] [--pdf F] [--csv F] [--baseline NAME] [--reference] ...

Folders are searched recursively for ``*.json`` (hidden folders such as ``.trash`` skipped). Files
that are not usable result documents are listed on stderr with the reason and skipped. Exit
status: 0 done, 1 nothing usable to compare or an output that cannot be written, 2 bad arguments
(unknown baseline, an output that would overwrite an input or another result document).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_NOTHING, EXIT_USAGE = 0, 1, 2


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="FILE_OR_DIR", help="result documents or folders of them")
    parser.add_argument("--by", choices=("machine", "host", "run"), default="machine",
                        help="one side per machine (default: what decides the figures, i.e. GPUs, CPU, RAM and "
                             "the software that matters, so cloud loans of one kind are one side), per host "
                             "(two identical boxes apart) or per run")
    parser.add_argument("--baseline", metavar="NAME",
                        help="the side the others are compared with: its name or a unique part of it "
                             "(default: the first side)")
    parser.add_argument("--reference", action="store_true",
                        help="add the shipped published reference figures as sides of their own")
    parser.add_argument("--all-figures", action="store_true",
                        help="also compare each result's further named figures (not in the composite)")


def add_parser(subparsers) -> None:
    """Adds two subcommands, ``compare`` and ``report``."""
    comparer = subparsers.add_parser(
        "compare", help="print result documents side by side, against a baseline",
        description="Compare result documents side by side: value, spread, ratio to the baseline, significance "
                    "mark, and the geometric-mean composite.")
    _common(comparer)
    comparer.add_argument("--json", action="store_true",
                          help="print the comparison as JSON (sides, summaries, rows with each side's value, "
                               "spread, ratio and mark) instead of the table")
    comparer.set_defaults(handler=compare_command)

    reporter = subparsers.add_parser(
        "report", help="write a comparison report as HTML, PDF and/or CSV",
        description="Write the comparison of result documents as one self-contained HTML file, a PDF and/or a "
                    "CSV (one row per result). Without an output option it prints the table like 'compare'.")
    _common(reporter)
    reporter.add_argument("--html", metavar="FILE", help="write a self-contained HTML report")
    reporter.add_argument("--pdf", metavar="FILE", help="write a PDF report")
    reporter.add_argument("--csv", metavar="FILE", help="write a CSV with one row per result")
    reporter.add_argument("--title", help="report title")
    reporter.add_argument("--layout", choices=("auto", "evaluation", "comparison"), default="auto",
                          help="evaluation: one machine's results as the seed evaluation reads (a matrix of model "
                               "× framework × mode × precision, the micro-benchmarks, the data-path verdict); "
                               "comparison: sides against a baseline; auto (default): evaluation when every "
                               "document comes from one machine")
    reporter.set_defaults(handler=report_command)


def terminal_text(text: str) -> str:
    """``text`` with control, zero-width and bidi characters shown as ``\\x1b``, ``\\u202e`` etc.
    (:func:`hwbench_gui.engine.shown_text.escape`, the one escaping every view uses): a document's
    host or GPU name must not drive the terminal or read as another. Newlines and tabs stay."""
    from hwbench_gui.engine.shown_text import escape

    return escape(text)


def _load(args: argparse.Namespace):
    from hwbench_gui.engine.results import library

    found = library.scan(args.paths)
    if args.reference:
        found.extend(library.scan([library.reference_dir()]))
    for line in library.errors_text(found.errors):
        print(terminal_text(f"skipped {line}"), file=sys.stderr)
    return found


def compare_command(args: argparse.Namespace) -> int:
    from hwbench_gui.engine.reports import compare, comparison_text

    found = _load(args)
    if not found.docs:
        print("no usable result documents", file=sys.stderr)
        return EXIT_NOTHING
    sides = compare.sides_by(found.docs, args.by)
    try:
        baseline = compare.find_side(sides, args.baseline)
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return EXIT_USAGE
    comparison = compare.compare(sides, baseline, all_figures=args.all_figures)
    if getattr(args, "json", False):
        json.dump(comparison_json(comparison), sys.stdout, indent=2, ensure_ascii=False, allow_nan=False)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(terminal_text(comparison_text.format_table(comparison)))
    return EXIT_OK


def _number(value: Any) -> Any:
    """JSON has no NaN or infinity: those become null."""
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return None
    return value


def comparison_json(comparison) -> dict[str, Any]:
    """``hwbench compare --json``: what the table shows, with each value's spread, ratio and mark."""
    from hwbench_gui.engine.reports import compare, comparison_text
    from hwbench_gui.engine.results import describe

    def metric_json(metric) -> dict[str, Any] | None:
        if metric is None:
            return None
        stats = metric.stats or {}
        return {"value": _number(metric.value), "unit": metric.unit, "failed": metric.failed,
                "published": metric.published, "n": stats.get("n"), "p5": _number(stats.get("p5")),
                "p95": _number(stats.get("p95")), "spread": comparison_text.spread_text(metric),
                "file": metric.doc.get("_path"), "started_at": metric.doc.get("started_at")}

    return {
        "baseline": comparison.baseline,
        "baseline_name": comparison.baseline_name,
        "alpha": comparison.alpha,
        "sides": [{"name": side.name, "published": side.published, "results": len(side.docs), "grouping": side.grouping,
                   "gpu": describe.gpu_summary(side.docs[0]) if side.docs else None,
                   "cpu": describe.cpu_summary(side.docs[0]) if side.docs else None} for side in comparison.sides],
        "summaries": [{key: _number(value) for key, value in dataclasses.asdict(summary).items()}
                      for summary in comparison.summaries],
        "rows": [{
            "benchmark": row.benchmark_id, "title": row.title, "figure": row.figure_name, "unit": row.unit,
            "higher_is_better": row.higher_is_better, "precision": row.precision, "params": row.params,
            "headline": row.headline,
            "cells": [{"metric": metric_json(cell.metric), "mark": cell.mark, "ratio": _number(cell.ratio),
                       "test": cell.test, "p_value": _number(cell.p_value), "note": cell.note,
                       "busy": cell.busy, "resolved": compare.resolved_params(cell.metric.doc)
                       if cell.metric is not None else {}, "text": comparison_text.cell_text(cell)}
                      for cell in row.cells],
        } for row in comparison.rows],
        "notes": list(comparison.notes),
        # per side (1-based, as the table numbers them): the baseline's files to run like on that machine
        "run_like": {str(index + 1): [d.get("_path") for d in docs]
                     for index, docs in compare.runs_to_match(comparison).items()},
    }


def _write_outputs(args: argparse.Namespace, docs, *, html, pdf) -> int:
    """Write each output the user asked for (--csv of ``docs``, --html, --pdf, in that order; ``html`` and
    ``pdf`` return what to print after the label); 0, or EXIT_NOTHING after one line when a write fails
    (read-only, full, a folder, or a path under a file: one line, not a traceback)."""
    from hwbench_gui.engine.atomic import write_error_text
    from hwbench_gui.engine.reports.csv_export import write_csvs

    writers = {"csv": lambda target: ", ".join(str(p) for p in write_csvs(docs, target)), "html": html, "pdf": pdf}
    for name in ("csv", "html", "pdf"):
        target = getattr(args, name)
        if not target:
            continue
        try:
            written = writers[name](target)
        except OSError as exc:
            print(f"hwbench report: {write_error_text(target, exc)}", file=sys.stderr)
            return EXIT_NOTHING
        print(f"{name.upper() + ':':5} {written}")
    return 0


def _evaluation_report(args: argparse.Namespace, found) -> int:
    from hwbench_gui.engine.atomic import write_atomic
    from hwbench_gui.engine.reports import evaluation

    ev = evaluation.build_evaluation(found.docs, found.errors, title=args.title,
                                     with_charts=bool(args.html or args.pdf))
    failed = _write_outputs(args, ev.docs,
                            html=lambda target: write_atomic(Path(target),
                                                             evaluation.render_evaluation_html(ev).encode("utf-8")),
                            pdf=lambda target: write_atomic(Path(target), evaluation.evaluation_pdf_bytes(ev)))
    if failed:
        return failed
    if not (args.csv or args.html or args.pdf):
        sys.stdout.write(terminal_text(evaluation.format_evaluation(ev)))
    return EXIT_OK


def report_command(args: argparse.Namespace) -> int:
    from hwbench_gui.engine.reports import comparison_text
    from hwbench_gui.engine.reports.outputs import same_file_twice
    from hwbench_gui.engine.reports.report import make_report

    if why := same_file_twice({"--csv": args.csv, "--html": args.html, "--pdf": args.pdf}):
        print(terminal_text(f"hwbench report: {why}"), file=sys.stderr)
        return EXIT_USAGE
    found = _load(args)
    if not found.docs:
        print("no usable result documents", file=sys.stderr)
        return EXIT_NOTHING
    from hwbench_gui.engine.reports.outputs import refuse_to_overwrite

    for option, target in (("--csv", args.csv), ("--html", args.html), ("--pdf", args.pdf)):
        why = refuse_to_overwrite(target, found.docs) if target else None
        if why:
            print(terminal_text(f"hwbench report: {option} {why}"), file=sys.stderr)
            return EXIT_USAGE
    from hwbench_gui.engine.reports import evaluation

    if args.layout == "evaluation" or (args.layout == "auto" and args.by == "machine" and not args.baseline
                                       and evaluation.is_one_machine(found.docs)):
        return _evaluation_report(args, found)
    wants_charts = bool(args.html or args.pdf)
    try:
        report = make_report(found.docs, found.errors, group=args.by, baseline=args.baseline, title=args.title,
                             all_figures=args.all_figures, with_charts=wants_charts)
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return EXIT_USAGE

    def html(target):
        from hwbench_gui.engine.reports.html import write_html

        return write_html(report, target)

    def pdf(target):
        from hwbench_gui.engine.reports.pdf import write_pdf

        return f"{write_pdf(report, target)} ({1 + len(report.charts)}+ pages: table, {len(report.charts)} chart(s))"

    failed = _write_outputs(args, report.docs, html=html, pdf=pdf)
    if failed:
        return failed
    if not (args.csv or args.html or args.pdf):
        sys.stdout.write(terminal_text(comparison_text.format_table(report.comparison)))
    return EXIT_OK
