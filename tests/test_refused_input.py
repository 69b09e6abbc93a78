"""Input that would trip the child or read without bound is refused up front, in one line that names the
real problem: JSON nested too deeply, a weights file of the wrong size, non-finite or empty parameters,
a size of 0, an unknown device, a missing pid, a folder given for a file."""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest
from reports_data import make_doc, write_docs
from support import REPO_ROOT, no_traceback, one_line, run_cli

from hwbench_gui.engine.results import store
from hwbench_gui.engine.spec.benchmark import Param, ParamError

posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX signals and file-size limits")
needs_dev_full = pytest.mark.skipif(not (os.path.exists("/dev/full") and stat.S_ISCHR(os.stat("/dev/full").st_mode)),
                                    reason="no /dev/full character device here")


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
        no_traceback(proc)
        assert proc.returncode == 0 and "skipped deep.json: " in proc.stderr
    report = library.import_documents([tmp_path], tmp_path / "imported")
    assert len(report.imported) == 1 and [e.path for e in report.skipped] == [hostile]


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


def test_motion_size_zero_is_refused_by_the_parser(cli_env, tmp_path):
    proc = run_cli(["demo", "motion", "--source", "0", "--target", "x.png", "--out", str(tmp_path / "o.mp4"),
                    "--size", "0"], cli_env)
    no_traceback(proc)
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[-1].endswith("argument --size: must be at least 16, got 0")


def test_snake_eval_on_an_unknown_device(cli_env):
    proc = run_cli(["demo", "snake", "eval", "--device", "bogus"], cli_env)
    no_traceback(proc)
    assert proc.returncode == 2
    line = one_line(proc.stderr)
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
    assert one_line(proc.stderr) == f"error: {tmp_path}: a folder: not read as a snake checkpoint"
