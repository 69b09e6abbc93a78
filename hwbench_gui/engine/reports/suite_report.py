"""A suite's report, written when its last run ends: by ``hwbench run --suite`` and by the Benchmarks tab alike."""

from __future__ import annotations

import time
from typing import Any


def write_suite_report(name: str, docs: list[dict[str, Any]], folder) -> tuple[list[Any], str]:
    """The suite's report in ``folder``: (the files, what they are). The one-machine evaluation report
    (``engine.reports.evaluation.write_evaluation_report``: HTML and PDF) where this install has it,
    else the HTML comparison report of the suite's documents. OSError/ValueError when it cannot be
    written."""
    from pathlib import Path

    try:
        from hwbench_gui.engine.reports.evaluation import write_evaluation_report
    except ImportError:
        write_evaluation_report = None
    if write_evaluation_report is not None:
        return list(write_evaluation_report(docs, folder, title=f"hwbench {name} suite")), "evaluation report"
    from hwbench_gui.engine.reports.html import write_html
    from hwbench_gui.engine.reports.report import make_report

    stamp = time.strftime("%Y-%m-%dT%H-%M-%S")
    report = make_report(docs, group="machine", title=f"hwbench {name} suite")
    return [write_html(report, Path(folder) / f"{name}-suite-report_{stamp}.html")], "report (HTML)"
