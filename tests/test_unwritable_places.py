"""A results folder, report or CSV that cannot be written: said in one line before the work or where the
write fails, and nothing measured is lost. Unwritable places that stop root too: a path under a regular
file (``file/sub``), a folder given where a file is wanted, ``/dev/full`` (every write fails with ENOSPC).
"""

from __future__ import annotations

import os
import resource
import stat
import subprocess
import sys

import pytest
from reports_data import make_doc, write_docs
from support import no_traceback, one_line, run_cli

from hwbench_gui.engine.results import store

posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX signals and file-size limits")
needs_dev_full = pytest.mark.skipif(not (os.path.exists("/dev/full") and stat.S_ISCHR(os.stat("/dev/full").st_mode)),
                                    reason="no /dev/full character device here")


def test_check_writable_probes_the_folder(tmp_path, blocker):
    assert store.check_writable(tmp_path / "new" / "results") is None
    assert list((tmp_path / "new" / "results").iterdir()) == []  # the probe leaves nothing behind
    assert store.check_writable(blocker / "results") == f"{blocker / 'results'} cannot be written: Not a directory"
    assert store.check_writable(blocker).startswith(f"{blocker} cannot be written: ")


def test_run_checks_the_results_folder_before_starting(env, blocker):
    proc = run_cli(["run", "test.ok", "--out", str(blocker / "results")], env)
    assert proc.returncode == 2
    line = one_line(proc.stderr)
    assert line == f"hwbench run: {blocker / 'results'} cannot be written: Not a directory"
    assert proc.stdout == ""


def test_runner_keeps_the_document_when_saving_fails(blocker, fixture_benchmarks):
    from hwbench_gui.engine.run import runner

    result = runner.run_benchmark("test.ok", {"samples": [1, 2]}, results_dir=blocker / "results")
    assert result.status == "ok" and result.path is None
    assert result.fallback_path is not None and result.fallback_path.is_file()
    assert store.load_result(result.fallback_path)["id"] == result.document["id"]
    assert str(blocker / "results") in result.save_error and str(result.fallback_path) in result.save_error
    result.fallback_path.unlink()


def _report_targets(tmp_path, blocker):
    targets = {"under a file": str(blocker / "out.x"), "a folder": str(tmp_path)}
    if os.path.exists("/dev/full") and stat.S_ISCHR(os.stat("/dev/full").st_mode):
        targets["disk full"] = "/dev/full"
    return targets


@pytest.mark.parametrize("option", ["--csv", "--html", "--pdf"])
def test_report_into_an_unwritable_place_says_so_inone_line(cli_env, tmp_path, blocker, option):
    docs = write_docs(tmp_path / "results", [make_doc("t.rate")])
    for what, target in _report_targets(tmp_path, blocker).items():
        proc = run_cli(["report", str(docs[0]), option, target], cli_env)
        no_traceback(proc)
        assert proc.returncode == 1, (what, proc.stderr)
        line = one_line(proc.stderr)
        assert line.startswith(f"hwbench report: cannot write {target}: "), (what, line)
    if os.path.exists("/dev/full"):
        assert stat.S_ISCHR(os.stat("/dev/full").st_mode), "the atomic write replaced /dev/full with a file"


@posix_only
def test_monitor_csv_into_an_unwritable_place_says_so_inone_line(cli_env, tmp_path, blocker):
    for what, target in _report_targets(tmp_path, blocker).items():
        proc = run_cli(["monitor", "--interval", "0.1", "--duration", "0.3", "--csv", target], cli_env)
        no_traceback(proc)
        assert proc.returncode == 1, (what, proc.stderr)
        assert proc.stderr.splitlines()[-1].startswith(f"hwbench monitor: cannot write {target}: "), what


@posix_only
def test_monitor_csv_on_a_full_disk_leaves_no_empty_file(cli_env, tmp_path):
    target = tmp_path / "telemetry.csv"

    def no_file_growth():  # every write fails with EFBIG (Python ignores SIGXFSZ), as on a full disk
        resource.setrlimit(resource.RLIMIT_FSIZE, (0, resource.RLIM_INFINITY))

    proc = subprocess.run([sys.executable, "-B", "-m", "hwbench_gui.cli", "monitor", "--interval", "0.1",
                           "--duration", "0.3", "--csv", str(target)], env=cli_env, capture_output=True, text=True,
                          timeout=60, preexec_fn=no_file_growth)
    no_traceback(proc)
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[-1].startswith(f"hwbench monitor: cannot write {target}: ")
    assert not target.exists(), "a 0-byte CSV was left behind"


@pytest.mark.parametrize("episodes", ["0", "-1"])
def test_snake_eval_needs_at_least_one_episode(cli_env, episodes):
    proc = run_cli(["demo", "snake", "eval", "--episodes", episodes], cli_env)
    no_traceback(proc)
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[-1].endswith(f"argument --episodes: must be at least 1, got {episodes}")


def test_import_into_an_unwritable_results_folder_shows_why(qtbot, qsettings, tmp_path, blocker):
    from hwbench_gui.ui.context import AppContext
    from hwbench_gui.ui.reports import ReportsTab

    incoming = tmp_path / "incoming"
    write_docs(incoming, [make_doc("t.rate")])
    messages = []
    context = AppContext(settings=qsettings, results_dir=blocker / "results",
                         show_status=lambda message, timeout_ms=0: messages.append(message))
    tab = ReportsTab(context)
    qtbot.addWidget(tab)
    try:
        report = tab.import_paths([incoming])
        assert report.imported == [] and report.write_error
        assert "Not a directory" in messages[-1] and str(blocker / "results") in messages[-1]
        assert not tab.errors_label.isHidden() and report.write_error in tab.errors_label.text()
    finally:
        tab.shutdown()
