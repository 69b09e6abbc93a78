"""Nothing a result document holds can hang, blow up or break a reader: the one checked load
(``library.load_document``) every reader uses, import per file, and where reports may be written."""

from __future__ import annotations

import json
import os
import threading

import pytest
from support import run_cli
from reports_data import make_doc, write_docs

from hwbench_gui.engine.reports import compare
from hwbench_gui.engine.reports.csv_export import csv_text
from hwbench_gui.engine.reports.html import render_html, web_link
from hwbench_gui.engine.reports.pdf import pdf_bytes
from hwbench_gui.engine.reports.report import make_report
from hwbench_gui.engine.results import library

posix_only = pytest.mark.skipif(os.name != "posix", reason="FIFOs and /dev/zero")


def _scan_within(sources, seconds: float = 30.0):
    """``library.scan`` on a thread: a reader that blocks fails the test instead of hanging it."""
    out = {}
    worker = threading.Thread(target=lambda: out.setdefault("lib", library.scan(sources)), daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), "reading the folder blocked"
    return out["lib"]


@posix_only
def test_a_fifo_and_a_link_to_dev_zero_are_refused_unread(tmp_path):
    good = write_docs(tmp_path, [make_doc("t.rate")])[0]
    os.mkfifo(tmp_path / "pipe.json")
    os.symlink("/dev/zero", tmp_path / "zero.json")
    found = _scan_within([tmp_path / "pipe.json", tmp_path / "zero.json", tmp_path])
    assert [d["_path"] for d in found.docs] == [str(good)]
    reasons = {e.path.name: e.reason for e in found.errors}
    assert set(reasons) == {"pipe.json", "zero.json"}
    assert all("not a regular file" in r for r in reasons.values())


def test_a_file_over_the_cap_is_refused_with_a_bounded_read(tmp_path, monkeypatch):
    from hwbench_gui.engine.results import store

    path = write_docs(tmp_path, [make_doc("t.rate")])[0]
    monkeypatch.setattr(store, "MAX_FILE_BYTES", 100)
    with pytest.raises(store.ResultFileError, match="too large"):
        store.read_document_text(path, 100)


def _hostile(field: str) -> dict:
    doc = make_doc("t.rate", host="hostile")
    if field == "reason":
        doc["reason"] = ["a", "list"]
    elif field == "started_at":
        doc["started_at"] = "9999-12-31T23:59:59+00:00"
    elif field == "series.x":
        doc["series"] = [{"label": "s", "x": 5, "y": [1.0]}]
    elif field == "noise.reasons":
        doc["telemetry"] = {"noise": {"busy": True, "reasons": 3}}
    elif field == "warnings":
        doc["warnings"] = 7
    elif field == "surrogate":
        doc["hostname"] = "\ud800"
    elif field == "long id":
        doc["benchmark"]["id"] = "t." + "x" * 300
    return doc


HOSTILE = ("reason", "started_at", "series.x", "noise.reasons", "warnings", "surrogate", "long id")


def _write_raw(folder, name: str, doc: dict) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    # ensure_ascii keeps a lone surrogate as the "\ud800" escape a hostile file would hold
    (folder / name).write_text(json.dumps(doc, ensure_ascii=True), encoding="utf-8")


@pytest.mark.parametrize("field", HOSTILE)
def test_a_document_of_the_wrong_shape_is_skipped_by_every_reader_and_refused_by_import(tmp_path, field):
    good = make_doc("t.rate")
    write_docs(tmp_path / "in", [good])
    _write_raw(tmp_path / "in", "hostile.json", _hostile(field))
    found = library.scan([tmp_path / "in"])
    assert len(found.docs) == 1 and [e.path.name for e in found.errors] == ["hostile.json"]
    assert found.errors[0].reason
    listed = library.list_results(tmp_path / "in")
    assert len(listed.docs) == 1 and [e.path.name for e in listed.errors] == ["hostile.json"]
    report = make_report(found.docs, found.errors)
    assert "hostile.json" in render_html(report) and pdf_bytes(report) and csv_text(report.docs)
    imported = library.import_documents([tmp_path / "in"], tmp_path / "results")
    assert len(imported.imported) == 1 and [e.path.name for e in imported.skipped] == ["hostile.json"]
    assert imported.write_error is None


def test_the_cli_skips_hostile_documents_without_a_traceback(tmp_path, cli_env):
    folder = tmp_path / "in"
    write_docs(folder, [make_doc("t.rate")])
    for field in HOSTILE:
        _write_raw(folder, f"hostile-{field.replace(' ', '-').replace('.', '-')}.json", _hostile(field))
    for args in (["compare", str(folder)], ["report", str(folder), "--html", str(tmp_path / "r.html"),
                                            "--pdf", str(tmp_path / "r.pdf"), "--csv", str(tmp_path / "r.csv")]):
        proc = run_cli(args, cli_env, timeout=180)
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
        assert proc.stderr.count("skipped hostile-") == len(HOSTILE)


def test_a_folder_import_reports_each_file_and_goes_on(tmp_path):
    folder = tmp_path / "in"
    write_docs(folder, [make_doc("t.a"), make_doc("t.b", minutes=1)])
    _write_raw(folder, "long.json", _hostile("long id"))
    report = library.import_documents([folder], tmp_path / "results")
    assert len(report.imported) == 2 and report.write_error is None
    outcomes = {path.name: text for path, text in report.outcomes}
    assert len(outcomes) == 3 and "characters long" in outcomes["long.json"]
    assert sum(text.startswith("imported as") for text in outcomes.values()) == 2


def test_a_report_never_writes_over_its_input_or_a_result_document(tmp_path, cli_env):
    folder = tmp_path / "in"
    (source,) = write_docs(folder, [make_doc("t.rate")])
    other = write_docs(tmp_path / "elsewhere", [make_doc("t.other")])[0]
    before = source.read_bytes(), other.read_bytes()
    for target in (source, other):
        proc = run_cli(["report", str(folder), "--html", str(target)], cli_env)
        assert proc.returncode == 2 and ("never writes over" in proc.stderr or "input results" in proc.stderr)
    assert (source.read_bytes(), other.read_bytes()) == before


def test_only_http_links_are_live(tmp_path):
    assert web_link("https://example.org/x") == "https://example.org/x"
    for url in ("javascript:alert(1)", " JavaScript:alert(1)", "file:///etc/passwd", "data:text/html,x", 3):
        assert web_link(url) is None
    doc = json.loads((library.reference_dir() / "lambda-h200-resnet50-train-amp.json").read_text())
    doc["reference"]["source_url"] = "javascript:alert(document.cookie)"
    doc["_path"] = str(tmp_path / "x.json")
    html = render_html(make_report([doc], with_charts=False))
    assert "javascript:alert(document.cookie)" in html and 'href="javascript' not in html


def test_compare_escapes_control_characters_in_the_terminal(tmp_path, cli_env):
    write_docs(tmp_path, [make_doc("t.rate", host="evil\x1b]0;owned\x07\x1b[2J")])
    proc = run_cli(["compare", str(tmp_path)], cli_env)
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stdout and "\x07" not in proc.stdout and "evil\\x1b]0;owned\\x07" in proc.stdout


def test_compare_down_samples_huge_sample_lists():
    doc = make_doc("t.rate", samples=[float(i % 1000) for i in range(200_000)])
    (metric,) = compare.metrics_of(doc)
    assert len(metric.samples) <= compare.MAX_SAMPLES
    assert min(metric.samples) == 0.0 and max(metric.samples) == 999.0  # the spread's ends are kept


def test_a_file_that_cannot_be_written_is_skipped_with_its_own_reason(tmp_path, monkeypatch):
    """Were an id over the file-name limit to pass the check, its write fails for its own reason
    (the name is too long): that file is skipped, the others are imported, the folder is not blamed."""
    from hwbench_gui.engine.results import document_check

    monkeypatch.setattr(document_check, "MAX_ID_CHARS", 10_000)
    folder = tmp_path / "in"
    _write_raw(folder, "long.json", _hostile("long id"))
    write_docs(folder, [make_doc("t.a"), make_doc("t.b", minutes=1)])
    report = library.import_documents([folder], tmp_path / "results")
    assert len(report.imported) == 2 and report.write_error is None
    assert [e.path.name for e in report.skipped] == ["long.json"] and "cannot be written" in report.skipped[0].reason
