"""Start-up on a fresh machine: missing xcb libraries and a missing display named before Qt aborts,
--version/--help without Qt."""

from __future__ import annotations

import os
import subprocess
import sys

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
