"""Issue #18: faults that lost work or showed a traceback where one line belongs.

Each test drives the real code (CLI subprocesses, the runner, real files). Unwritable places that
stop root too: a path under a regular file (``file/sub``), a folder given where a file is wanted,
``/dev/full`` (every write fails with ENOSPC) and a file-size limit (writes fail with EFBIG).
"""

from __future__ import annotations

import json
import math
import os
import re
import resource
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from conftest import REPO_ROOT, run_cli
from reports_data import make_doc, write_docs

from hwbench_gui.engine.results import store
from hwbench_gui.engine.spec.benchmark import Param, ParamError

TESTS_DIR = Path(__file__).resolve().parent
posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX signals and file-size limits")
needs_dev_full = pytest.mark.skipif(not (os.path.exists("/dev/full") and stat.S_ISCHR(os.stat("/dev/full").st_mode)),
                                    reason="no /dev/full character device here")


@pytest.fixture
def blocker(tmp_path) -> Path:
    """A regular file: nothing can be created under it, not even by root."""
    path = tmp_path / "a-file"
    path.write_text("not a folder")
    return path


def _no_traceback(proc) -> None:
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stdout, proc.stdout


def _one_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, text
    return lines[0]


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


# -- 1. results folder not writable ----------------------------------------------------------------

def test_check_writable_probes_the_folder(tmp_path, blocker):
    assert store.check_writable(tmp_path / "new" / "results") is None
    assert list((tmp_path / "new" / "results").iterdir()) == []  # the probe leaves nothing behind
    assert store.check_writable(blocker / "results") == f"{blocker / 'results'} cannot be written: Not a directory"
    assert store.check_writable(blocker).startswith(f"{blocker} cannot be written: ")


def test_run_checks_the_results_folder_before_starting(env, blocker):
    proc = run_cli(["run", "test.ok", "--out", str(blocker / "results")], env)
    assert proc.returncode == 2
    line = _one_line(proc.stderr)
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


# -- 2. children die with the CLI ------------------------------------------------------------------

def _assert_gone_soon(pids: list[int], within_s: float = 10.0) -> None:
    deadline = time.monotonic() + within_s
    for pid in pids:
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(pid), f"pid {pid} outlived the killed CLI"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_sigkilled_cli_takes_the_worker_and_its_decode_pool_along(env, tmp_path):
    pytest.importorskip("cv2")
    proc = subprocess.Popen([sys.executable, "-m", "hwbench_gui.cli", "run", "cpu.decode", "-p", "workers=2",
                             "-p", "count=2", "-p", "image_size=32", "-p", "repeats=100", "-p", "repeat_s=30",
                             "--out", str(tmp_path)],
                            env=env, cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stderr.readline()
        worker_pid = int(re.search(r"running cpu\.decode \(pid (\d+)", line).group(1))
        deadline = time.monotonic() + 60
        pool: list[int] = []
        while time.monotonic() < deadline:
            pool = [p.pid for p in psutil.Process(worker_pid).children()
                    if "spawn_main" in " ".join(p.cmdline())]
            if len(pool) == 2:
                break
            time.sleep(0.1)
        assert len(pool) == 2, "the decode pool did not start"
        time.sleep(0.5)  # the pool workers are past their initializer
        proc.kill()
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    _assert_gone_soon([worker_pid, *pool])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the group guard is Linux's")
def test_sigkilled_cli_takes_what_the_benchmark_started_itself_along(env, tmp_path):
    """test.slow starts a plain ``sleep 60`` that knows nothing of hwbench: it must not outlive the CLI."""
    proc = subprocess.Popen([sys.executable, "-m", "hwbench_gui.cli", "run", "test.slow", "--out", str(tmp_path)],
                            env=env, cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    sleeper = None
    try:
        worker_pid = int(re.search(r"\(pid (\d+)", proc.stderr.readline()).group(1))
        deadline = time.monotonic() + 60
        while sleeper is None and time.monotonic() < deadline:
            sleeper = next((p for p in psutil.Process(worker_pid).children() if p.name() == "sleep"), None)
            time.sleep(0.05)
        assert sleeper is not None, "the benchmark did not start its sleep"
        proc.kill()
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    _assert_gone_soon([worker_pid, sleeper.pid])


def test_a_finished_run_leaves_no_process_of_its_group_behind(tmp_path, fixture_benchmarks):
    """The guard ends with its worker; the runner's pipes close when the worker ends, not later."""
    from hwbench_gui.engine.run import runner

    before = {p.pid for p in psutil.Process().children(recursive=True)}
    result = runner.run_benchmark("test.ok", {"samples": [1, 2, 3]}, results_dir=tmp_path, timeout_s=60)
    assert result.status == "ok"
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        left = [p for p in psutil.Process().children(recursive=True) if p.pid not in before and _alive(p.pid)]
        if not left:
            break
        time.sleep(0.05)
    assert not left, [p.cmdline() for p in left]


# -- 3. one line instead of a traceback ------------------------------------------------------------

def _report_targets(tmp_path, blocker):
    targets = {"under a file": str(blocker / "out.x"), "a folder": str(tmp_path)}
    if os.path.exists("/dev/full") and stat.S_ISCHR(os.stat("/dev/full").st_mode):
        targets["disk full"] = "/dev/full"
    return targets


@pytest.mark.parametrize("option", ["--csv", "--html", "--pdf"])
def test_report_into_an_unwritable_place_says_so_in_one_line(cli_env, tmp_path, blocker, option):
    docs = write_docs(tmp_path / "results", [make_doc("t.rate")])
    for what, target in _report_targets(tmp_path, blocker).items():
        proc = run_cli(["report", str(docs[0]), option, target], cli_env)
        _no_traceback(proc)
        assert proc.returncode == 1, (what, proc.stderr)
        line = _one_line(proc.stderr)
        assert line.startswith(f"hwbench report: cannot write {target}: "), (what, line)
    if os.path.exists("/dev/full"):
        assert stat.S_ISCHR(os.stat("/dev/full").st_mode), "the atomic write replaced /dev/full with a file"


@posix_only
def test_monitor_csv_into_an_unwritable_place_says_so_in_one_line(cli_env, tmp_path, blocker):
    for what, target in _report_targets(tmp_path, blocker).items():
        proc = run_cli(["monitor", "--interval", "0.1", "--duration", "0.3", "--csv", target], cli_env)
        _no_traceback(proc)
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
    _no_traceback(proc)
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[-1].startswith(f"hwbench monitor: cannot write {target}: ")
    assert not target.exists(), "a 0-byte CSV was left behind"


@pytest.mark.parametrize("episodes", ["0", "-1"])
def test_snake_eval_needs_at_least_one_episode(cli_env, episodes):
    proc = run_cli(["demo", "snake", "eval", "--episodes", episodes], cli_env)
    _no_traceback(proc)
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


# -- 4. hostile JSON -------------------------------------------------------------------------------

def test_deeply_nested_json_is_skipped_with_a_reason(cli_env, tmp_path):
    from hwbench_gui.engine.results import library

    good = write_docs(tmp_path, [make_doc("t.rate")])[0]
    hostile = tmp_path / "deep.json"
    hostile.write_text("[" * 100_000)
    with pytest.raises(store.ResultFileError, match="nested too deeply"):
        store.load_result(hostile)
    found = library.scan([tmp_path])
    assert [d["_path"] for d in found.docs] == [str(good)]
    assert [e.path for e in found.errors] == [hostile]
    docs, errors = library.list_results(tmp_path)
    assert len(docs) == 1 and [e.path for e in errors] == [hostile]
    for command in (["compare"], ["report"]):
        proc = run_cli([*command, str(tmp_path)], cli_env)
        _no_traceback(proc)
        assert proc.returncode == 0 and "skipped deep.json: " in proc.stderr
    report = library.import_documents([tmp_path], tmp_path / "imported")
    assert len(report.imported) == 1 and [e.path for e in report.skipped] == [hostile]


# -- 5. Darknet weights are sized before they are read ---------------------------------------------

@posix_only
def test_huge_weights_file_is_refused_by_its_size_unread(tmp_path):
    huge = tmp_path / "huge.weights"
    with open(huge, "wb") as fh:  # sparse: 30 GB that take no disk space
        fh.truncate(30 * 10**9)
    script = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_AS, (3 << 30, resource.RLIM_INFINITY))\n"
        "from hwbench_gui.demos.tracking import darknet\n"
        "net = darknet.parse_cfg(darknet.shipped_cfg('yolov3-tiny'))\n"
        "try:\n"
        "    darknet.read_weights(sys.argv[1], net)\n"
        "except darknet.WeightsError as exc:\n"
        "    print(exc)\n"
    )
    proc = subprocess.run([sys.executable, "-c", script, str(huge)], capture_output=True, text=True, timeout=60,
                          cwd=REPO_ROOT, env={**os.environ, "OPENBLAS_NUM_THREADS": "1"})
    assert proc.returncode == 0, proc.stderr
    assert "got 30,000,000,000 bytes" in proc.stdout and "expected" in proc.stdout


# -- 6. parameters the child would trip on ---------------------------------------------------------

@pytest.mark.parametrize("raw", ["nan", "inf", "-inf", "NaN", float("nan"), float("inf")])
def test_non_finite_floats_are_refused(raw):
    with pytest.raises(ParamError, match="not a finite number"):
        Param("repeat_s", "float", 0.5, "", minimum=0.01, maximum=60).parse(raw)
    with pytest.raises(ParamError, match="not a finite number"):
        Param("scale", "float", 1.0, "").parse(raw)  # no range to catch it


def test_empty_int_lists_only_where_declared():
    from hwbench_gui.engine.run import registry

    with pytest.raises(ParamError, match="threads: give at least one value"):
        registry.get("host.membw").param("threads").parse("")
    with pytest.raises(ParamError, match="workers: give at least one value"):
        registry.get("cpu.decode").param("workers").parse([])
    assert registry.get("gpu.matmul").param("sizes").parse("") == []
    assert registry.get("gpu.p2p").param("devices").parse("") == []


def test_run_refuses_nan_before_starting(env, tmp_path):
    proc = run_cli(["run", "test.ok", "-p", "scale=nan", "--out", str(tmp_path)], env)
    assert proc.returncode == 2 and "scale: 'nan' is not a finite number" in proc.stderr
    proc = run_cli(["run", "host.membw", "-p", "threads=", "--out", str(tmp_path)], env)
    assert proc.returncode == 2 and "threads: give at least one value" in proc.stderr
    assert list(tmp_path.iterdir()) == []


# -- 7. a cancelled decode pool goes quietly -------------------------------------------------------

@posix_only
def test_cancelled_decode_run_logs_no_tracebacks_or_leak_warnings(env, tmp_path):
    pytest.importorskip("cv2")
    proc = subprocess.Popen([sys.executable, "-m", "hwbench_gui.cli", "run", "cpu.decode", "-p", "workers=2",
                             "-p", "count=2", "-p", "image_size=32", "-p", "repeats=100", "-p", "repeat_s=30",
                             "--out", str(tmp_path)],
                            env=env, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        worker_pid = int(re.search(r"\(pid (\d+)", proc.stderr.readline()).group(1))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(psutil.Process(worker_pid).children()) < 3:
            time.sleep(0.1)
        time.sleep(1.0)  # pool started and decoding
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    for noise in ("Traceback", "BrokenPipeError", "leaked semaphore", "resource_tracker"):
        assert noise not in stderr, stderr
    (file,) = tmp_path.glob("*.json")
    doc = json.loads(file.read_text())
    assert doc["status"] == "cancelled"
    assert not any(noise in line for line in doc["log_tail"] for noise in ("Traceback", "leaked"))


# -- 8. messages that name the real problem --------------------------------------------------------

def test_motion_size_zero_is_refused_by_the_parser(cli_env, tmp_path):
    proc = run_cli(["demo", "motion", "--source", "0", "--target", "x.png", "--out", str(tmp_path / "o.mp4"),
                    "--size", "0"], cli_env)
    _no_traceback(proc)
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[-1].endswith("argument --size: must be at least 16, got 0")


def test_snake_eval_on_an_unknown_device(cli_env):
    proc = run_cli(["demo", "snake", "eval", "--device", "bogus"], cli_env)
    _no_traceback(proc)
    assert proc.returncode == 2
    line = _one_line(proc.stderr)
    assert line.startswith("error: unknown device 'bogus'") and "weights" not in line


@posix_only
def test_monitor_watch_of_a_missing_pid(cli_env):
    pid = 2**22 + 12345  # above the kernel's pid_max
    proc = run_cli(["monitor", "--interval", "0.1", "--duration", "0.2", "--watch", str(pid)], cli_env)
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[-1] == f"hwbench monitor: --watch: no process with pid {pid}"


def test_weights_path_that_is_a_folder(cli_env, tmp_path):
    from hwbench_gui.demos.tracking.detectors import yolo_unavailable_reason

    assert yolo_unavailable_reason(tmp_path) == f"YOLOv3 weights {tmp_path} is a folder, not a .weights file"
    proc = run_cli(["demo", "snake", "eval", str(tmp_path)], cli_env)
    assert proc.returncode == 2
    assert _one_line(proc.stderr) == f"error: {tmp_path}: is a folder, not a checkpoint file"


# -- 9. CSV cells that a spreadsheet would run -----------------------------------------------------

def test_report_csv_neutralises_formulas_but_keeps_numbers():
    import csv
    import io

    from hwbench_gui.engine.reports.csv_export import csv_text

    doc = make_doc("t.rate", [-1.5, -1.5, -1.5])
    doc.update(status="failed", reason="=HYPERLINK(\"http://x\",\"y\")", hostname="+cmd|' /C calc'!A0",
               warnings=["@SUM(1+1)", "-2+3"])
    doc["figure"]["value"] = -1.5
    (row,) = csv.DictReader(io.StringIO(csv_text([doc])))
    assert row["reason"] == "'=HYPERLINK(\"http://x\",\"y\")"
    assert row["hostname"] == "'+cmd|' /C calc'!A0"
    assert row["warnings"].startswith("'@SUM(1+1)")
    assert row["value"] == "-1.5" and float(row["median"]) == -1.5


def test_telemetry_csv_neutralises_formulas_but_keeps_numbers():
    import io

    from hwbench_gui.engine.telemetry.csv_export import CsvRowWriter

    buffer = io.StringIO()
    writer = CsvRowWriter(buffer, ["=cmd()", "temp_c"])
    writer.write_sample({"timestamp": 1.0, "=cmd()": "-a text", "temp_c": -1.5})
    header, row = buffer.getvalue().splitlines()
    assert header == "timestamp,'=cmd()" + ",temp_c"
    assert row == "1.000,'-a text,-1.5"
    assert not math.isnan(float(row.split(",")[-1]))
