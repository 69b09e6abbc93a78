"""``hwbench-gui --self-test`` from source: every check passes here, and a failing check fails the run."""

from __future__ import annotations

import io
import subprocess
import sys

from hwbench_gui.ui import self_test
from hwbench_gui.ui.main_window import TABS


def test_self_test_from_source_passes(cli_env, tmp_path):
    env = dict(cli_env)
    env["QT_QPA_PLATFORM"] = "offscreen"
    env["HWBENCH_DATA_DIR"] = str(tmp_path / "data")
    proc = subprocess.run([sys.executable, "-m", "hwbench_gui", "--self-test"], env=env, capture_output=True,
                          text=True, timeout=240)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    for spec in TABS:
        assert any(line.startswith(f"ok   tab {spec.title}: {spec.class_name}") for line in lines), proc.stdout
    for bench_id, _ in self_test.BENCHMARK_RUNS:
        assert any(line.startswith(f"ok   benchmark {bench_id}: ") and "written and read back" in line
                   for line in lines), proc.stdout
    assert lines[-1].startswith("self-test passed"), proc.stdout
    # The results went to the self-test's temporary folder, not the data folder.
    assert not (tmp_path / "data" / "results").exists()


def test_a_failing_check_fails_the_self_test():
    out = io.StringIO()
    test = self_test.SelfTest(out)
    assert test.check("fine", lambda: "detail")

    def broken() -> str:
        raise self_test.CheckFailed("the reason it failed")

    assert not test.check("broken", broken)
    assert test.summary() == 1
    text = out.getvalue()
    assert "ok   fine: detail" in text
    assert "FAIL broken: the reason it failed" in text
    assert text.splitlines()[-1].startswith("self-test FAILED: 1 of 2 checks: broken: the reason it failed")


def test_an_unexpected_exception_is_a_failure_with_its_reason():
    out = io.StringIO()
    test = self_test.SelfTest(out)
    assert not test.check("crash", lambda: 1 / 0)
    assert test.summary() == 1
    assert "FAIL crash: ZeroDivisionError: division by zero" in out.getvalue()


def test_no_checks_is_not_a_pass():
    assert self_test.SelfTest(io.StringIO()).summary() == 1


def test_offscreen_only_without_a_display(monkeypatch):
    monkeypatch.setattr(sys, "platform", "linux")
    assert self_test.needs_offscreen({})
    assert not self_test.needs_offscreen({"DISPLAY": ":0"})
    assert not self_test.needs_offscreen({"WAYLAND_DISPLAY": "wayland-0"})
    assert not self_test.needs_offscreen({"QT_QPA_PLATFORM": "xcb"})
    monkeypatch.setattr(sys, "platform", "darwin")
    assert not self_test.needs_offscreen({})


def test_gui_entry_dispatches_self_test(monkeypatch):
    from hwbench_gui import __main__ as entry

    monkeypatch.setattr(self_test, "main", lambda: 7)
    assert entry.main(["hwbench-gui", "--self-test"]) == 7
