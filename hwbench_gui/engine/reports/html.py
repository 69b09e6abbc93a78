"""One self-contained HTML file per report (Jinja2 template, charts as PNG ``data:`` URIs).

The file loads nothing from anywhere: no scripts, no style sheets, no images by URL. Links to a
published figure's source are plain ``<a href>`` anchors, followed only if the reader clicks, and only
for http(s) addresses.
"""

from __future__ import annotations

import base64
import os
import re
from pathlib import Path
from urllib.parse import urlsplit

from jinja2 import Environment, PackageLoader, select_autoescape

from hwbench_gui.engine.atomic import write_atomic
from hwbench_gui.engine.reports import compare, comparison_text
from hwbench_gui.engine.reports.charts import to_png
from hwbench_gui.engine.reports.report import Report, side_facts
from hwbench_gui.engine.results import describe, formatting, library

_env = Environment(loader=PackageLoader("hwbench_gui.engine.reports", "templates"),
                   autoescape=select_autoescape(["html", "j2"]), trim_blocks=True, lstrip_blocks=True)

MARK_CLASSES = {
    compare.MARK_BETTER: "better", compare.MARK_WORSE: "worse", compare.MARK_NOT_SIGNIFICANT: "ns",
    compare.MARK_UNTESTED: "ns", compare.MARK_TOO_FEW: "ns", compare.MARK_FAILED: "failed",
    compare.MARK_CANCELLED: "failed", compare.MARK_NOT_COMPARABLE: "nc",
    compare.MARK_NO_BASELINE: "nc", compare.MARK_MISSING: "missing", compare.MARK_BASELINE: "baseline",
}


def web_link(url: object) -> str | None:
    """``url`` when it is an http(s) address, else None (a ``javascript:`` or ``file:`` source is
    shown as text, never as a live link)."""
    if not isinstance(url, str):
        return None
    url = url.strip()
    scheme = urlsplit(url).scheme.lower()
    return url if scheme in ("http", "https") and not _UNSAFE_URL.search(url) else None


_UNSAFE_URL = re.compile(r"[\x00-\x20\x7f]")


def render_html(report: Report) -> str:
    template = _env.get_template("report.html.j2")
    charts = [{"title": c.title, "caption": c.caption,
               "src": "data:image/png;base64," + base64.b64encode(to_png(c.figure)).decode("ascii")}
              for c in report.charts]
    return template.render(
        report=report, comparison=report.comparison, charts=charts,
        sides=[{"name": s.name, "published": s.published, "facts": side_facts(s)} for s in report.comparison.sides],
        marks=MARK_CLASSES, fmt=formatting.format_value, spread=comparison_text.spread_text,
        row_label=comparison_text.row_label,
        older_runs_text=comparison_text.older_runs_text, resolved=comparison_text.resolved_text,
        rows_docs=[{**describe.row(d), "published": describe.is_published(d), "method": d.get("method") or "",
                    "warnings": d.get("warnings") or [], "reference": d.get("reference") or {},
                    "link": web_link((d.get("reference") or {}).get("source_url"))}
                   for d in report.docs],
        errors=library.errors_text(report.errors))


def write_html(report: Report, path: str | os.PathLike) -> Path:
    return write_atomic(Path(path), render_html(report).encode("utf-8"))
