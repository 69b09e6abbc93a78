"""disk.read on a temporary folder: real figures, its method named, and no file left behind."""

from __future__ import annotations

import os

import pytest
from recording import Recorder

from hwbench_gui.engine.benchmarks import disk_read as disk
from hwbench_gui.engine.spec.benchmark import BenchmarkUnavailable

BENCHMARK = disk.BENCHMARK
TINY = {"file_size_mib": 4, "random_reads": 200, "repeats": 2}


def _run(folder, **overrides):
    return BENCHMARK.run(BENCHMARK.resolve_params({**TINY, "folder": str(folder), **overrides}), Recorder())


def test_reads_and_cleans_up(tmp_path):
    rec = Recorder()
    outcome = BENCHMARK.run(BENCHMARK.resolve_params({**TINY, "folder": str(tmp_path)}), rec)
    assert os.listdir(tmp_path) == []
    assert outcome.unit == "MB/s" and len(outcome.samples) == 2
    assert all(s > 0 for s in outcome.samples)
    iops = outcome.figures["random 4 KiB read IOPS"]
    assert iops["value"] > 0 and len(iops["samples"]) == 2
    assert outcome.figures["random 4 KiB read"]["unit"] == "MB/s"
    bypass = outcome.details["cache_bypass"]
    assert bypass in ("O_DIRECT", "fadvise(DONTNEED)", "none")
    assert f"Page cache bypass: {bypass}" in outcome.method
    assert outcome.details["file_size_bytes"] == 4 << 20
    assert rec.progress_calls[-1][0] == 1.0
    assert {m[0] for m in rec.metrics} == {"sequential read", "random 4 KiB read"}


@pytest.mark.skipif(not hasattr(os, "posix_fadvise"), reason="needs posix_fadvise")
def test_falls_back_to_fadvise_without_o_direct(tmp_path, monkeypatch):
    monkeypatch.delattr(os, "O_DIRECT", raising=False)
    outcome = _run(tmp_path)
    in_ram = outcome.details["filesystem"] in disk.RAM_FILESYSTEMS
    assert outcome.details["cache_bypass"] == ("none" if in_ram else "fadvise(DONTNEED)")
    assert os.listdir(tmp_path) == []


def test_file_is_deleted_when_a_read_fails(tmp_path, monkeypatch):
    def broken_read(fd, buf, offset):
        raise OSError("simulated read error")

    monkeypatch.setattr(disk, "_pread", broken_read)
    with pytest.raises(OSError, match="simulated"):
        _run(tmp_path)
    assert os.listdir(tmp_path) == []


def test_written_file_is_not_zeros(tmp_path):
    path = tmp_path / "f.bin"
    disk._write_random_file(str(path), 1 << 20)
    data = path.read_bytes()
    assert len(data) == 1 << 20
    assert len(set(data[:4096])) > 200  # bytes spread over the whole range


@pytest.mark.skipif(not os.path.isdir("/dev/shm")
                    or disk.filesystem_of("/dev/shm")[1] not in disk.RAM_FILESYSTEMS, reason="no tmpfs at /dev/shm")
def test_warns_on_memory_backed_folder():
    before = set(os.listdir("/dev/shm"))
    outcome = _run("/dev/shm", file_size_mib=2, random_reads=50, repeats=1)
    assert outcome.details["cache_bypass"] == "none"
    assert any("RAM speed" in w for w in outcome.warnings)
    assert not [n for n in set(os.listdir("/dev/shm")) - before if n.startswith("hwbench-disk-")]


def test_missing_folder_is_unavailable(tmp_path):
    with pytest.raises(BenchmarkUnavailable, match="does not exist"):
        _run(tmp_path / "nope")


def _dead_pid() -> int:
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_killed_runs_test_file_is_removed_by_the_next_run(tmp_path):
    abandoned = tmp_path / f"{disk.TEST_FILE_PREFIX}{_dead_pid()}-abcd.bin"
    in_use = tmp_path / f"{disk.TEST_FILE_PREFIX}{os.getpid()}-efgh.bin"  # a live run's file stays
    not_ours = tmp_path / "hwbench-disk-notes.bin"
    for path in (abandoned, in_use, not_ours):
        path.write_bytes(b"x")
    rec = Recorder()
    BENCHMARK.run(BENCHMARK.resolve_params({**TINY, "folder": str(tmp_path)}), rec)
    assert sorted(os.listdir(tmp_path)) == sorted([in_use.name, not_ours.name])
    assert any(f"removed {abandoned}" in line for line in rec.logs)


@pytest.mark.parametrize("signame", ["SIGTERM", "SIGHUP"])
def test_a_signalled_cli_leaves_no_test_file(tmp_path, cli_env, signame):
    """SIGTERM or SIGHUP of ``hwbench run disk.read`` cancels the run, and the child deletes its file."""
    import json
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    folder, out = tmp_path / "disk", tmp_path / "out"
    folder.mkdir()
    out.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "hwbench_gui.cli", "run", "disk.read", "-p", f"folder={folder}",
                             "-p", "file_size_mib=16", "-p", "repeats=100", "-p", "random_reads=100000",
                             "--out", str(out)], env=cli_env, cwd=Path(__file__).resolve().parents[1],
                            stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not any(n.startswith(disk.TEST_FILE_PREFIX) for n in os.listdir(folder)):
            assert time.monotonic() < deadline and proc.poll() is None, "the run never wrote its test file"
            time.sleep(0.05)
        proc.send_signal(getattr(signal, signame))
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert "hwbench run: cancelled" in stderr
    assert os.listdir(folder) == []
    (doc,) = [json.loads(p.read_text()) for p in out.glob("*.json")]
    assert doc["status"] == "cancelled"


def test_the_rates_unit_is_1e6_bytes_per_second(tmp_path, monkeypatch):
    """MB/s is 10^6 bytes/s, as the method says (not MiB/s): with the timer answering known durations, a
    4 MiB file read in 0.5 s is 8.388608 MB/s, and 200 random 4 KiB reads in 0.25 s are 800 IOPS, 3.2768 MB/s."""
    durations = {"read_sequential": 0.5, "read_random": 0.25}
    monkeypatch.setattr(disk, "time_cpu", lambda fn, **_: [durations[fn.__name__]])
    outcome = _run(tmp_path)
    assert outcome.samples == pytest.approx([8.388608, 8.388608])
    assert outcome.figures["random 4 KiB read IOPS"]["samples"] == pytest.approx([800, 800])
    assert outcome.figures["random 4 KiB read"]["samples"] == pytest.approx([3.2768, 3.2768])
    assert "MB/s = 1e6 bytes/s" in outcome.method
