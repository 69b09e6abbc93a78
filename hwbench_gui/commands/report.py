"""``hwbench compare`` and ``hwbench report``: result documents side by side, and saved reports.

    hwbench compare FILE_OR_DIR... [--by machine|run] [--baseline NAME] [--reference] [--all-figures]
    hwbench report  FILE_OR_DIR... [--html F] [--pdf F] [--csv F] [--baseline NAME] [--reference] ...

Folders are searched recursively for ``*.json`` (hidden folders such as ``.trash`` skipped). Files
that are not usable result documents are listed on stderr with the reason and skipped. Exit
status: 0 done, 1 nothing usable to compare or an output that cannot be written, 2 bad arguments
(unknown baseline).
"""

from __future__ import annotations

import argparse
import sys

EXIT_OK, EXIT_NOTHING, EXIT_USAGE = 0, 1, 2


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="FILE_OR_DIR", help="result documents or folders of them")
    parser.add_argument("--by", choices=("machine", "run"), default="machine",
                        help="one side per machine (default) or per run")
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
    reporter.set_defaults(handler=report_command)


def _load(args: argparse.Namespace):
    from hwbench_gui.engine.reports import library

    found = library.scan(args.paths)
    if args.reference:
        found.extend(library.scan([library.reference_dir()]))
    for line in library.errors_text(found.errors):
        print(f"skipped {line}", file=sys.stderr)
    return found


def compare_command(args: argparse.Namespace) -> int:
    from hwbench_gui.engine.reports import compare

    found = _load(args)
    if not found.docs:
        print("no usable result documents", file=sys.stderr)
        return EXIT_NOTHING
    sides = compare.sides_by_machine(found.docs) if args.by == "machine" else compare.sides_by_run(found.docs)
    try:
        baseline = compare.find_side(sides, args.baseline)
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return EXIT_USAGE
    comparison = compare.compare(sides, baseline, all_figures=args.all_figures)
    sys.stdout.write(compare.format_table(comparison))
    return EXIT_OK


def report_command(args: argparse.Namespace) -> int:
    from hwbench_gui.engine.reports import compare
    from hwbench_gui.engine.reports.report import make_report

    found = _load(args)
    if not found.docs:
        print("no usable result documents", file=sys.stderr)
        return EXIT_NOTHING
    wants_charts = bool(args.html or args.pdf)
    try:
        report = make_report(found.docs, found.errors, group=args.by, baseline=args.baseline, title=args.title,
                             all_figures=args.all_figures, with_charts=wants_charts)
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return EXIT_USAGE
    try:
        if args.csv:
            from hwbench_gui.engine.reports.csv_export import write_csv

            target = args.csv
            print(f"CSV:  {write_csv(report.docs, target)}")
        if args.html:
            from hwbench_gui.engine.reports.html import write_html

            target = args.html
            print(f"HTML: {write_html(report, target)}")
        if args.pdf:
            from hwbench_gui.engine.reports.pdf import write_pdf

            target = args.pdf
            print(f"PDF:  {write_pdf(report, target)} ({1 + len(report.charts)}+ pages: table, "
                  f"{len(report.charts)} chart(s))")
    except OSError as exc:  # read-only, full, a folder, or a path under a file: one line, not a traceback
        from hwbench_gui.engine.atomic import write_error_text

        print(f"hwbench report: {write_error_text(target, exc)}", file=sys.stderr)
        return EXIT_NOTHING
    if not (args.csv or args.html or args.pdf):
        sys.stdout.write(compare.format_table(report.comparison))
    return EXIT_OK
