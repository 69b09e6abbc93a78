"""Result documents: statistics, building, atomic writing, loading and listing (no child processes)."""

from __future__ import annotations

import json
import math
import os
import re
import types
from datetime import datetime, timezone

import pytest

from hwbench_gui.engine.measure import stats
from hwbench_gui.engine.results import document, store
from hwbench_gui.engine.results.document import SCHEMA_VERSION, build_document
from hwbench_gui.engine.results.library import list_results
from hwbench_gui.engine.results.store import ResultFileError, load_result, write_result
from hwbench_gui.engine.run.protocol import outcome_to_json
from hwbench_gui.engine.spec.benchmark import Benchmark, Outcome, Param, Series

BENCH = Benchmark(id="gpu.matmul", title="Matmul", category="GPU", description="d",
                  params=[Param("size", "int", 1024, "n")], run=lambda p, r: None, version="3")
STARTED = datetime(2026, 12, 2, 12, 34, 56, 789000, tzinfo=timezone.utc)
MACHINE = {"inventory": {"cpu": {"model": "test"}}, "inventory_reason": None, "software": {"python": "3"},
           "software_reason": None}


def outcome(**overrides):
    fields = dict(figure_name="tflops", unit="TFLOP/s", samples=[3.0, 1.0, 2.0], precision="TF32",
                  method="m", device="cuda:0 (test)",
                  series=[Series("s", [1.0, 2.0], [1.0, 2.0], "x", "y")])
    fields.update(overrides)
    return outcome_to_json(Outcome(**fields))


def build(status="ok", out=None, **kwargs):
    kwargs.setdefault("machine", MACHINE)
    return build_document(BENCH, {"size": 1024}, status=status, outcome=out, started_at=STARTED, duration_s=1.5,
                          **kwargs)


# -- stats -----------------------------------------------------------------------------------------

def test_summarize_one_to_ten():
    summary = stats.summarize(range(1, 11))
    assert summary["median"] == 5.5 and summary["mean"] == 5.5 and summary["n"] == 10
    assert summary["p5"] == pytest.approx(1.45) and summary["p95"] == pytest.approx(9.55)
    assert summary["stdev"] == pytest.approx(math.sqrt(55 / 6))
    assert (summary["min"], summary["max"]) == (1.0, 10.0)
    assert list(summary) == list(stats.STAT_KEYS)


def test_summarize_skips_what_is_not_a_number():
    summary = stats.summarize([1.0, None, float("nan"), float("inf"), "7", True, 3.0])
    assert summary["n"] == 2 and summary["median"] == 2.0


def test_summarize_small_inputs():
    one = stats.summarize([4.0])
    assert one["median"] == one["p5"] == one["p95"] == 4.0 and one["stdev"] is None and one["n"] == 1
    none = stats.summarize([])
    assert none["n"] == 0 and all(none[k] is None for k in stats.STAT_KEYS if k != "n")


# -- building --------------------------------------------------------------------------------------

def test_ok_document_fields():
    doc = build(out=outcome(figures={"d2h": {"unit": "GB/s", "samples": [1.0, 5.0], "higher_is_better": True},
                                     "peak": {"value": 9.0, "unit": "GB/s"}}),
                telemetry={"samples": 4}, exit_code=0, log_tail=["x"], warnings=["runner warning"], timeout_s=60)
    assert doc["schema_version"] == SCHEMA_VERSION == 1
    assert re.fullmatch(r"[0-9a-f]{32}", doc["id"])
    assert doc["benchmark"] == {"id": "gpu.matmul", "title": "Matmul", "category": "GPU", "version": "3",
                                "comparability_params": ["size"]}
    assert doc["params"] == {"size": 1024}
    assert doc["precision"] == "TF32"
    assert doc["figure"] == {"name": "tflops", "value": 2.0, "unit": "TFLOP/s", "higher_is_better": True}
    assert doc["samples"] == [3.0, 1.0, 2.0]
    assert doc["stats"]["median"] == 2.0 and doc["stats"]["n"] == 3
    assert doc["figures"]["d2h"]["value"] == 3.0 and doc["figures"]["d2h"]["stats"]["n"] == 2
    assert doc["figures"]["peak"]["value"] == 9.0 and doc["figures"]["peak"]["stats"] is None
    assert doc["series"][0]["label"] == "s" and doc["method"] == "m" and doc["device"] == "cuda:0 (test)"
    assert doc["status"] == "ok" and doc["reason"] is None and doc["error_kind"] is None
    assert doc["log_tail"] is None  # only failed runs keep the log
    assert doc["warnings"] == ["runner warning"]
    assert doc["started_at"] == "2026-12-02T12:34:56.789+00:00"
    assert doc["duration_s"] == 1.5 and doc["timeout_s"] == 60 and doc["exit_code"] == 0
    assert doc["inventory"] == {"cpu": {"model": "test"}} and doc["software"] == {"python": "3"}
    assert doc["telemetry"] == {"samples": 4} and doc["telemetry_reason"] is None
    assert doc["hostname"] and doc["hwbench_version"]
    json.dumps(doc, allow_nan=False)


def test_unmeasured_samples_are_null_with_a_warning():
    doc = build(out=outcome(samples=[1.0, float("nan"), 3.0], warnings=["fell back to CPU"]))
    assert doc["samples"] == [1.0, None, 3.0]
    assert doc["figure"]["value"] == 2.0 and doc["stats"]["n"] == 2
    assert "fell back to CPU" in doc["warnings"]
    assert any("1 of 3 samples of tflops could not be measured" in w for w in doc["warnings"])
    json.dumps(doc, allow_nan=False)


def test_ok_without_any_sample_becomes_failed():
    doc = build(out=outcome(samples=[float("nan")]))
    assert doc["status"] == "failed" and doc["error_kind"] == "no_samples" and doc["figure"] is None
    assert doc["reason"] == "the benchmark reported no valid samples"


def test_failed_and_cancelled_documents():
    failed = build("failed", reason="the worker was killed by SIGSEGV", error_kind="crash", exit_code=-11,
                   exit_signal="SIGSEGV", log_tail=["a", "b"])
    assert failed["figure"] is None and failed["stats"] is None and failed["samples"] == []
    assert failed["reason"] == "the worker was killed by SIGSEGV" and failed["log_tail"] == ["a", "b"]
    assert failed["exit_signal"] == "SIGSEGV"
    cancelled = build("cancelled", error_kind="cancelled")
    assert cancelled["status"] == "cancelled" and cancelled["reason"] == "run cancelled"
    assert cancelled["telemetry"] is None and cancelled["telemetry_reason"]
    with pytest.raises(ValueError):
        build("weird")


def test_machine_facts_are_null_with_reason_when_inventory_breaks(monkeypatch):
    broken = types.ModuleType("hwbench_gui.engine.inventory")

    def collect(use_torch_probe=True):
        raise RuntimeError("lspci exploded")

    broken.collect = collect
    broken.software_versions = lambda: {"torch": "2.x"}
    monkeypatch.setitem(__import__("sys").modules, "hwbench_gui.engine.inventory", broken)
    import hwbench_gui.engine as engine_pkg

    monkeypatch.setattr(engine_pkg, "inventory", broken, raising=False)
    monkeypatch.setattr(document, "_machine_cache", {})
    facts = document.machine_facts()
    assert facts["inventory"] is None and "lspci exploded" in facts["inventory_reason"]
    assert facts["software"] == {"torch": "2.x"} and facts["software_reason"] is None
    broken.software_versions = lambda: {"torch": "changed"}
    assert document.machine_facts()["software"] == {"torch": "2.x"}  # collected once per process


def test_machine_facts_when_inventory_is_missing(monkeypatch):
    import hwbench_gui.engine as engine_pkg

    monkeypatch.setitem(__import__("sys").modules, "hwbench_gui.engine.inventory", None)  # import fails
    monkeypatch.delattr(engine_pkg, "inventory", raising=False)
    monkeypatch.setattr(document, "_machine_cache", {})
    facts = document.machine_facts()
    assert facts["inventory"] is None and facts["software"] is None
    assert "inventory module unavailable" in facts["inventory_reason"]


# -- store -----------------------------------------------------------------------------------------

def test_write_is_atomic_and_named_by_time_id_and_run(tmp_path):
    doc = build(out=outcome())
    path = write_result(doc, tmp_path / "new")
    assert path.name == f"2026-12-02T12-34-56_gpu.matmul_{doc['id'][:8]}.json"
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary file left
    loaded = load_result(path)
    assert loaded["_path"] == str(path)
    assert {k: v for k, v in loaded.items() if k != "_path"} == doc
    # A loaded document written again does not carry the load-time key.
    again = write_result(loaded, tmp_path / "again")
    assert "_path" not in json.loads(again.read_text())


def test_same_name_does_not_overwrite(tmp_path):
    doc = build(out=outcome())
    first = write_result(doc, tmp_path)
    second = write_result(doc, tmp_path)
    assert first != second and first.is_file() and second.is_file()


def test_failed_write_leaves_nothing_behind(tmp_path, monkeypatch):
    def refuse(src, dst):
        raise OSError("disk full (test)")

    monkeypatch.setattr(store.os, "replace", refuse)
    with pytest.raises(OSError, match="disk full"):
        write_result(build(out=outcome()), tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_results_dir_precedence(tmp_path, monkeypatch):
    monkeypatch.setenv("HWBENCH_RESULTS_DIR", str(tmp_path / "env"))
    assert store.results_dir(tmp_path / "flag") == tmp_path / "flag"
    assert store.results_dir() == tmp_path / "env"
    monkeypatch.delenv("HWBENCH_RESULTS_DIR")
    monkeypatch.setenv("HWBENCH_DATA_DIR", str(tmp_path / "data"))
    assert store.results_dir() == tmp_path / "data" / "results"


@pytest.mark.parametrize("content, reason", [
    ("{not json", "not valid JSON"),
    ("[1, 2]", "JSON is not an object"),
    ('{"benchmark": {}, "status": "ok"}', "no schema_version"),
    ('{"schema_version": "1", "benchmark": {}, "status": "ok"}', "is not an integer"),
    ('{"schema_version": 99, "benchmark": {}, "status": "ok"}', "newer hwbench"),
    ('{"schema_version": 1}', "no benchmark or status"),
    (b"\xff\xfe\x00garbage", "cannot be read"),
])
def test_load_rejects_bad_files(tmp_path, content, reason):
    path = tmp_path / "bad.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(ResultFileError) as info:
        load_result(path)
    assert info.value.path == path and reason in info.value.reason and str(path) in str(info.value)


def test_list_skips_and_reports_corrupt_files(tmp_path):
    later = build(out=outcome())
    earlier = build_document(BENCH, {}, status="failed", reason="x",
                             started_at=datetime(2026, 1, 1, tzinfo=timezone.utc), duration_s=0.0, machine=MACHINE)
    good_later = write_result(later, tmp_path)
    good_earlier = write_result(earlier, tmp_path)
    (tmp_path / "broken.json").write_text('{"schema_version": 1, "benchm')
    (tmp_path / "future.json").write_text('{"schema_version": 2, "benchmark": {}, "status": "ok"}')
    (tmp_path / ".partial.json.tmp").write_text("{")
    (tmp_path / "notes.txt").write_text("not a result")

    docs, errors = list_results(tmp_path)
    assert [d["_path"] for d in docs] == [str(good_earlier), str(good_later)]  # oldest first
    assert sorted(e.path.name for e in errors) == ["broken.json", "future.json"]
    assert all(isinstance(e, ResultFileError) and e.reason for e in errors)


def test_list_of_a_missing_folder_is_empty(tmp_path):
    assert list_results(tmp_path / "nothing here") == ([], [])


def test_list_checks_every_document_the_way_the_reports_do(tmp_path):
    """One listing for every view: a document that parses but whose figure is not a number is skipped
    with its reason, not shown in one tab and refused in the other."""
    good = write_result(build(out=outcome()), tmp_path)
    bad = build(out=outcome())
    bad["figure"]["value"] = "fast"
    bad_path = write_result(bad, tmp_path)
    docs, errors = list_results(tmp_path)
    assert [d["_path"] for d in docs] == [str(good)]
    assert [(e.path, e.reason) for e in errors] == [(bad_path, "figure.value 'fast' is not a finite number")]


def test_written_file_is_complete_json_even_for_large_documents(tmp_path):
    big = build(out=outcome(samples=[float(i) for i in range(20000)]))
    path = write_result(big, tmp_path)
    assert os.path.getsize(path) > 100_000
    assert load_result(path)["stats"]["n"] == 20000


def test_a_failed_run_keeps_the_precision_it_asked_for():
    from hwbench_gui.engine.spec.precision import requested_label

    assert requested_label({"precision": "fp16-amp"}.get("precision")) == "FP16-AMP"
    assert requested_label({"precision": "tf32"}.get("precision")) == "TF32"
    assert requested_label({"precision": "all"}.get("precision")) is None
    assert requested_label({}.get("precision")) is None


def test_deciding_params_are_read_as_recorded_else_as_the_caller_declares():
    from hwbench_gui.engine.results.describe import deciding_params

    recorded = {"benchmark": {"id": "b", "comparability_params": ["size"]}, "params": {"size": 1, "device": 0}}
    older = {"benchmark": {"id": "b"}, "params": {"size": 1, "device": 0}}
    declared = {"b": ["size", "dtype"]}.get
    assert deciding_params(recorded, declared) == frozenset({"size"})
    assert deciding_params(older, declared) == frozenset({"size", "dtype"})
    assert deciding_params(older) is None and deciding_params({"benchmark": {"id": "x"}}, declared) is None


def test_a_save_removes_the_temporaries_a_killed_save_left(tmp_path):
    from hwbench_gui.engine import atomic

    stale = tmp_path / ".2026-01-01T00-00-00_host.membw_abcd.json.0123abcd.tmp"
    fresh = tmp_path / ".2026-01-01T00-00-01_host.membw_abcd.json.4567ef01.tmp"  # a save under way now
    not_ours = tmp_path / ".notes.tmp"
    for path in (stale, fresh, not_ours):
        path.write_text("{")
    old = datetime.now(timezone.utc).timestamp() - atomic.STALE_AFTER_S - 5
    os.utime(stale, (old, old))
    os.utime(not_ours, (old, old))
    written = write_result({"schema_version": SCHEMA_VERSION, "id": "x1", "benchmark": {"id": "host.membw"},
                            "started_at": "2026-01-01T00:00:00+00:00", "status": "ok"}, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([written.name, fresh.name, not_ours.name])
