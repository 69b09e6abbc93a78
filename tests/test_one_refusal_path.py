"""An expected refusal (a bad parameter, a bad file, cannot run here) reaches the user as one line naming the
parameter or the file, with exit status 1 or 2 and no traceback, on the CLI and in the GUI log; a real bug
shows its traceback's tail and where the whole log is. A parameter of thousands of digits meets the range
check; a reader that goes away (``| head -1``) ends the CLI quietly."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from support import no_traceback, one_line, run_cli

from hwbench_gui.engine.run import protocol
from hwbench_gui.engine.spec.benchmark import Param, ParamError


@pytest.mark.parametrize("what, line", [
    ("param", "hwbench run: test.refuses failed: path: /x is not a folder"),
    ("file", "hwbench run: test.refuses failed: /x: not a regular file (a pipe, device or socket): not read as a test"),
])
def test_a_refusal_in_the_child_is_one_line_on_the_cli(env, tmp_path, what, line):
    proc = run_cli(["run", "test.refuses", "-p", f"what={what}", "-p", "path=/x", "--out", str(tmp_path), "-q"], env)
    no_traceback(proc)
    assert proc.returncode == 1 and one_line(proc.stderr) == line


def test_a_refusal_carries_no_traceback_and_its_kind(fixture_benchmarks, tmp_path):
    from hwbench_gui.engine.run.runner import run_benchmark

    for what, kind in (("param", "bad_params"), ("file", "bad_file")):
        doc = run_benchmark("test.refuses", {"what": what}, results_dir=tmp_path).document
        assert doc["error_kind"] == kind and kind in protocol.REFUSAL_KINDS
        assert not any("Traceback" in line or "File \"" in line for line in doc["log_tail"]), doc["log_tail"]


def test_a_real_bug_shows_its_traceback_and_where_the_log_is(env, tmp_path):
    proc = run_cli(["run", "test.raises", "--out", str(tmp_path)], env)
    assert proc.returncode == 1
    assert "Traceback" in proc.stderr and "RuntimeError" in proc.stderr
    saved = next(tmp_path.glob("*.json"))
    assert f"is in {saved} under log_tail" in proc.stderr


@pytest.mark.parametrize("bench, params, shown", [
    ("test.refuses", {"what": "file", "path": "/x"}, "/x: not a regular file"),
    ("test.cuda_oom", {}, "CUDA out of memory. Tried to allocate 20.00 GiB"),
])
def test_the_gui_log_shows_a_refusal_once_without_a_traceback(qtbot, qsettings, tmp_path, fixture_benchmarks,
                                                                bench, params, shown):
    from hwbench_gui.ui.benchmarks import BenchmarksTab
    from hwbench_gui.ui.context import AppContext

    context = AppContext(settings=qsettings, results_dir=tmp_path / "results")
    tab = BenchmarksTab(context)
    qtbot.addWidget(tab)
    try:
        tab.enqueue(bench, params)
        qtbot.waitUntil(lambda: not tab.is_running() and not tab.queue.pending(), timeout=30000)
        qtbot.waitUntil(lambda: "finished: failed" in tab.log.toPlainText(), timeout=5000)
        log = tab.log.toPlainText()
        assert log.count(shown) == 1 and "Traceback" not in log and 'File "' not in log, log
    finally:
        tab.shutdown()
        context.workers.shutdown(timeout_s=10)


@pytest.mark.parametrize("digits", ["9" * 5000, "-" + "9" * 5000])
def test_a_parameter_of_thousands_of_digits_meets_the_range_check(digits):
    batch = Param("batch", "int", 1, "batch", minimum=1, maximum=1024)
    side = "above the maximum 1024" if digits[0] == "9" else "below the minimum 1"
    with pytest.raises(ParamError, match=f"batch: a number of about 5000 digits is {side}"):
        batch.parse(digits)
    with pytest.raises(ParamError, match="a number of 20000 digits"):  # never built as an int
        batch.parse("9" * 20000)


def test_a_cli_parameter_of_thousands_of_digits_is_one_line(env):
    proc = run_cli(["run", "test.timed", "-p", "repeats=" + "9" * 5000], env)
    no_traceback(proc)
    assert proc.returncode == 2
    assert one_line(proc.stderr) == "hwbench run: bad parameter: repeats: a number of about 5000 digits is above " \
                                    "the maximum 20"


@pytest.mark.parametrize("extra", [[], ["--csv", "/dev/stdout"]])
def test_a_reader_that_goes_away_ends_the_cli_quietly(cli_env, extra):
    if extra and not os.path.exists("/dev/stdout"):
        pytest.skip("no /dev/stdout here")
    proc = subprocess.Popen([sys.executable, "-m", "hwbench_gui.cli", "monitor", "--interval", "0.1",
                             "--duration", "30", *extra], env=cli_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.readline()
    proc.stdout.close()  # as `| head -1` does
    try:
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    err = err.decode()
    assert proc.returncode == 0 and "Broken pipe" not in err and "Exception ignored" not in err, err


def test_an_out_of_memory_refusal_that_gives_its_advice_is_not_given_more():
    from hwbench_gui.engine.run.worker import error_event

    own = error_event(MemoryError("out of memory: needs about 22.5 GiB, more than 92% of 21 GiB: try a smaller "
                                  "micro_batch"))
    assert own["message"] == "out of memory: needs about 22.5 GiB, more than 92% of 21 GiB: try a smaller micro_batch"
    bare = error_event(MemoryError("DefaultCPUAllocator: can't allocate memory"))
    assert bare["message"] == "out of memory: DefaultCPUAllocator: can't allocate memory (try smaller sizes or batch)"
