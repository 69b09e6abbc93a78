"""Issue #19, a newcomer's first hour: start-up on a fresh machine, entry flags, top processes, compare --json."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from hwbench_gui.ui import platform_check
from hwbench_gui.ui.platform_check import SystemLib


def test_xcb_is_expected_only_on_linux_with_an_x_display_and_no_override():
    assert platform_check.will_use_xcb({"DISPLAY": ":0"}, "linux")
    assert not platform_check.will_use_xcb({"DISPLAY": ":0", "QT_QPA_PLATFORM": "offscreen"}, "linux")
    assert platform_check.will_use_xcb({"DISPLAY": ":0", "QT_QPA_PLATFORM": "xcb"}, "linux")
    assert not platform_check.will_use_xcb({"DISPLAY": ":0"}, "darwin")
    assert not platform_check.will_use_xcb({"DISPLAY": ":0"}, "win32")
    assert not platform_check.will_use_xcb({"DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0",
                                            "XDG_SESSION_TYPE": "wayland"}, "linux")


def test_a_missing_library_is_named_in_one_line_with_its_package():
    libs = platform_check.XCB_LIBS + (
        SystemLib("libhwbench-no-such-lib.so.7", "libhwbench-nothing7", "hwbench-nothing"),)
    problem = platform_check.startup_problem({"DISPLAY": ":0"}, "linux", libs=libs)
    assert problem is not None and "\n" not in problem
    assert "libhwbench-no-such-lib.so.7" in problem
    assert "apt-get install" in problem and "libhwbench-nothing7" in problem and "hwbench-nothing" in problem


def test_the_names_of_the_missing_libraries_and_packages_come_from_the_table():
    missing = {"libxcb-cursor.so.0", "libxcb-icccm.so.4"}
    problem = platform_check.startup_problem({"DISPLAY": ":0"}, "linux", loads=lambda so: so not in missing)
    assert "sudo apt-get install libxcb-cursor0 libxcb-icccm4" in problem
    assert "xcb-util-cursor xcb-util-wm" in problem
    assert platform_check.startup_problem({"DISPLAY": ":0"}, "linux", loads=lambda so: True) is None
    assert platform_check.startup_problem({"DISPLAY": ":0", "QT_QPA_PLATFORM": "offscreen"}, "linux",
                                          loads=lambda so: False) is None


def test_no_display_at_all_is_said_before_qt_aborts():
    problem = platform_check.startup_problem({}, "linux")
    assert problem is not None and "DISPLAY" in problem and "xvfb-run" in problem


def _run_gui(*args, env_extra=None):
    env = dict(os.environ)
    env.pop("QT_QPA_PLATFORM", None)
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-X", "importtime", "-m", "hwbench_gui", *args], capture_output=True,
                          text=True, timeout=60, env=env)


def test_version_and_help_print_and_exit_without_qt():
    from hwbench_gui import __version__

    for flag, expected in (("--version", f"hwbench-gui {__version__}"), ("--help", "usage: hwbench-gui")):
        done = _run_gui(flag, env_extra={"DISPLAY": ""})
        assert done.returncode == 0, done.stderr[-2000:]
        assert expected in done.stdout
        assert "PySide6" not in done.stderr  # -X importtime lists every module imported


def test_the_window_command_says_what_is_missing_instead_of_aborting():
    done = _run_gui(env_extra={"DISPLAY": "", "WAYLAND_DISPLAY": ""})
    assert done.returncode == 1
    last = [line for line in done.stderr.splitlines() if not line.startswith("import time:")]
    assert len(last) == 1 and "no display" in last[0]


def test_top_processes_lists_this_busy_process():
    from hwbench_gui.engine.telemetry.processes import TopProcesses

    top = TopProcesses()
    top.sample(limit=10_000)
    end = time.process_time() + 0.2
    while time.process_time() < end:  # CPU time of our own, so the second sample has an interval to measure
        pass
    rows = top.sample(limit=10_000)
    me = next(row for row in rows if row.pid == os.getpid())
    assert me.cpu_percent > 0 and (me.rss_bytes or 0) > 0
    assert rows == sorted(rows, key=lambda r: (-r.cpu_percent, -(r.rss_bytes or 0)))


def test_pdf_report_holds_the_machines_and_the_spreads(tmp_path):
    """Issue #19: the PDF dropped the HTML report's system table and every value's spread."""
    from test_reports import seed_like_docs

    from hwbench_gui.engine.reports import compare, pdf
    from hwbench_gui.engine.reports.report import make_report, side_facts

    report = make_report(seed_like_docs(), with_charts=False)
    texts = []
    for figure in pdf._table_pages(report) + [pdf._systems_page(report)]:
        texts += [text.get_text() for text in figure.texts]  # the side-by-side table: one text per line
        for ax in figure.axes:
            for table in ax.tables:
                texts += [cell.get_text().get_text() for cell in table.get_celld().values()]
    joined = " ".join(" ".join(texts).split())
    for side in report.comparison.sides:
        for value in side_facts(side).values():
            assert value.split("\n")[0][:30] in joined.replace("\n", " ") or value[:30] in joined
    spreads = [compare.spread_text(cell.metric) for row in report.comparison.rows for cell in row.cells]
    assert any(spreads) and all(s.split(",")[0] in joined for s in spreads if s)


def test_chart_labels_are_wrapped_not_cut():
    from hwbench_gui.engine.reports.charts import _short

    name = "ResNet-50 training · PyTorch · FP16-AMP · batch 256 · workstation-with-a-long-name"
    wrapped = _short(name, 28)
    assert "\n" in wrapped and wrapped.replace("\n", " ").replace("  ", " ").startswith("ResNet-50 training")
    assert "workstation-with-a-long-name" in wrapped.replace("\n", "")


def test_machine_label_names_the_cpu_when_there_is_no_gpu():
    from hwbench_gui.engine.results import describe

    doc = {"hostname": "vm", "inventory": {"gpus": [], "cpu": {"model": "Intel Xeon 8480", "logical_cores": 2}}}
    assert describe.machine_name(doc) == "vm · Intel Xeon 8480 (2 threads)"
    doc["inventory"]["gpus"] = [{"name": "NVIDIA H200"}]
    assert describe.machine_name(doc) == "vm · NVIDIA H200"


def test_compare_json_carries_values_spreads_ratios_and_marks(cli_env):
    import json

    from support import run_cli

    from hwbench_gui.engine.results import library

    reference = library.reference_dir()
    proc = run_cli(["compare", str(reference / "h200"), *map(str, sorted(reference.glob("*.json"))), "--json"],
                   cli_env)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["baseline_name"] == data["sides"][0]["name"]
    assert len(data["summaries"]) == len(data["sides"]) >= 2
    row = next(r for r in data["rows"] if any(c["ratio"] is not None and c["mark"] != "baseline" for c in r["cells"]))
    assert {"benchmark", "figure", "unit", "precision", "params", "cells"} <= set(row)
    measured = next(c for c in row["cells"] if c["metric"] and not c["metric"]["failed"])
    assert measured["metric"]["value"] is not None and "spread" in measured["metric"]
