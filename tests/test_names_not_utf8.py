"""Nothing finished is lost for a name: a run whose input's name is not UTF-8 is saved, the name kept exact
in the file (the JSON escape of os.fsdecode's surrogate, which reads back as the same bytes) and shown
escaped by every reader; CSV and HTML reports take it; and whatever stops a save, the document is kept in
the unsaved-results folder."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from support import no_traceback, run_cli

from hwbench_gui.engine.results import library, store
from hwbench_gui.engine.run import runner

posix_only = pytest.mark.skipif(os.name != "posix", reason="file names as bytes")


@posix_only
def test_a_run_naming_a_file_not_utf8_is_saved_exact_and_shown_escaped(fixture_benchmarks, tmp_path):
    name = os.path.join(os.fsencode(tmp_path), b"bad\xffname")
    result = runner.run_benchmark("test.params", {"path": os.fsdecode(name)}, results_dir=tmp_path / "r")
    assert result.status == "ok" and result.save_error is None and result.path is not None
    text = result.path.read_bytes().decode("utf-8")  # valid UTF-8 throughout
    assert "bad\\udcffname" in text
    assert os.fsencode(store.load_result(result.path)["params"]["path"]) == name  # exact
    shown = library.load_document(result.path)
    assert shown["params"]["path"] == f"{tmp_path}/bad\\udcffname"  # escaped for every view
    shown["params"]["path"].encode("utf-8")


@posix_only
def test_the_cli_saves_and_reports_a_name_not_utf8(env, tmp_path):
    name = os.path.join(os.fsencode(tmp_path), b"bad\xffname")
    proc = run_cli([b"run", b"test.params", b"-p", b"path=" + name, b"--out", os.fsencode(tmp_path / "r"), b"-q"], env)
    no_traceback(proc)
    assert proc.returncode == 0 and proc.stdout.strip().endswith(".json"), proc.stderr
    out = [tmp_path / "report.csv", tmp_path / "report.html"]
    proc = run_cli(["report", str(tmp_path / "r"), "--csv", str(out[0]), "--html", str(out[1])], env)
    no_traceback(proc)
    assert proc.returncode == 0 and "skipped" not in proc.stderr, proc.stderr
    assert "bad\\\\udcffname" in out[0].read_text(encoding="utf-8")  # the escape, inside params' JSON
    assert "test.params" in out[1].read_text(encoding="utf-8")


def test_a_lone_surrogate_that_no_file_name_makes_is_still_refused(tmp_path):
    doc_path = tmp_path / "d.json"
    doc_path.write_text('{"schema_version": 1, "benchmark": {"id": "t.x"}, "status": "failed", '
                        '"hostname": "\\ud800"}', encoding="utf-8")
    with pytest.raises(store.ResultFileError, match="not valid Unicode"):
        library.load_document(doc_path)


def test_whatever_stops_a_save_the_document_is_kept_elsewhere(fixture_benchmarks, tmp_path, monkeypatch):
    real = store.write_result
    refused = tmp_path / "r"

    def write(doc, directory=None):
        if directory == refused:  # not an OSError: an encoding or a serialising failure
            raise UnicodeEncodeError("utf-8", "\udcff", 0, 1, "surrogates not allowed")
        return real(doc, directory)

    monkeypatch.setattr(store, "write_result", write)
    result = runner.run_benchmark("test.ok", {"samples": [1, 2, 3]}, results_dir=refused)
    assert result.path is None and result.fallback_path is not None
    assert "UnicodeEncodeError" in result.save_error and str(result.fallback_path) in result.save_error
    assert store.load_result(result.fallback_path)["status"] == "ok"


@posix_only
def test_the_cli_prints_a_path_not_utf8_as_its_bytes(env, tmp_path):
    folder = os.path.join(os.fsencode(tmp_path), b"out\xffdir")
    strict = {**env, "PYTHONIOENCODING": "utf-8"}  # stdout as a UTF-8 terminal has it: surrogates not allowed
    run = subprocess.run([sys.executable, "-m", "hwbench_gui.cli", "run", "test.ok", "--out", folder, "-q"],
                         env=strict, capture_output=True, timeout=120)
    assert run.returncode == 0 and b"Traceback" not in run.stderr, run.stderr
    saved = run.stdout.strip()
    assert saved.startswith(folder + b"/") and os.path.isfile(saved)  # usable as printed
    csv = os.path.join(folder, b"r.csv")
    report = subprocess.run([sys.executable, "-m", "hwbench_gui.cli", "report", folder, "--csv", csv, "--html",
                             os.path.join(folder, b"r.html")], env=strict, capture_output=True, timeout=120)
    assert report.returncode == 0 and b"Traceback" not in report.stderr, report.stderr
    assert b"CSV:  " + csv in report.stdout and os.path.getsize(csv) > 0


@posix_only
def test_the_gui_shows_a_name_not_utf8_escaped(qtbot, qsettings, tmp_path, fixture_benchmarks):
    from hwbench_gui.ui.benchmarks import BenchmarksTab
    from hwbench_gui.ui.context import AppContext

    context = AppContext(settings=qsettings, results_dir=os.fsdecode(os.path.join(os.fsencode(tmp_path), b"r\xffs")))
    tab = BenchmarksTab(context)
    qtbot.addWidget(tab)
    try:
        tab.enqueue("test.refuses", {"what": "param", "path": os.fsdecode(b"/x\xfey")})
        qtbot.waitUntil(lambda: not tab.is_running() and not tab.queue.pending(), timeout=30000)
        qtbot.waitUntil(lambda: "finished: failed" in tab.log.toPlainText(), timeout=5000)
        assert "path: /x\\udcfey is not a folder" in tab.log.toPlainText()  # Qt alone would show "/xy"
        assert "r\\udcffs" in tab.run_status.text() and "path: /x\\udcfey" in tab.run_status.text()
    finally:
        tab.shutdown()
        context.workers.shutdown(timeout_s=10)
