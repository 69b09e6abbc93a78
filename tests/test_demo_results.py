"""Demo runs as result documents: built from a demo's timings, written by the CLI demo commands,
loaded and compared by the reports library like benchmark results."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from support import run_cli

from hwbench_gui.demos.results import demo_document, frame_times_from_stamps, save_demo_document, window_fps
from hwbench_gui.engine.results import list_results, load_result


def test_window_fps_is_frames_over_time_per_window():
    times = [0.01] * 30 + [0.02] * 30 + [0.5] * 5  # the last 5 frames: under half a window, dropped
    assert window_fps(times, window=30) == pytest.approx([100.0, 50.0])
    assert window_fps([0.1] * 4, window=30) == pytest.approx([10.0])
    assert window_fps([]) == []
    assert frame_times_from_stamps([1.5, 2.0, 2.25], start_s=1.0) == pytest.approx([0.5, 0.5, 0.25])


def _doc(device: str, frame_s: float, n: int = 90, **kw):
    return demo_document("track", {"detector": "yolov3", "device": device, "precision": "FP32", "size": 416},
                         [frame_s * (1 + 0.01 * (i % 7)) for i in range(n)], started_at=datetime.now(timezone.utc),
                         duration_s=n * frame_s, device=device, precision="FP32",
                         stage_ms={"detect_ms": {"mean": 1e3 * frame_s}}, **kw)


def test_demo_document_has_the_benchmark_schema():
    doc = _doc("cpu", 0.05, metrics={"MOTA": 0.8, "IDF1": 0.75, "IDSW": 3, "HOTA": 0.7})
    assert doc["schema_version"] >= 1 and doc["status"] == "ok"
    assert doc["benchmark"]["id"] == "demo.track"
    fig = doc["figure"]
    assert fig["unit"] == "frames/s" and fig["higher_is_better"] is True
    assert len(doc["samples"]) == 3 and fig["value"] == pytest.approx(sorted(doc["samples"])[1])
    assert doc["stats"]["n"] == 3 and doc["stats"]["p5"] < doc["stats"]["p95"]
    assert doc["figures"]["IDF1"]["value"] == 0.75 and doc["figures"]["IDSW"]["higher_is_better"] is False
    assert doc["details"]["stage_ms"]["detect_ms"]["mean"] == pytest.approx(50.0)
    assert doc["details"]["metrics"]["MOTA"] == 0.8
    assert doc["params"]["device"] == "cpu" and doc["precision"] == "FP32"


def test_a_demo_without_frames_is_a_failed_result():
    doc = demo_document("motion", {"device": "cpu"}, [], started_at=datetime.now(timezone.utc), duration_s=0.1,
                        device="cpu")
    assert doc["status"] == "failed" and doc["figure"] is None


def test_reports_compare_a_cpu_and_a_gpu_demo_run(tmp_path):
    from hwbench_gui.engine.reports import compare, comparison_text

    # 150 frames = 5 windows a side: enough samples for Mann-Whitney to tell them apart (3 vs 3 is not)
    for doc in (_doc("cpu", 0.1, n=150), _doc("cuda:0", 0.01, n=150)):
        save_demo_document(doc, tmp_path)
    docs, errors = list_results(tmp_path)
    assert not errors and len(docs) == 2
    result = compare.compare(compare.sides_by_run(docs), 0)
    rows = [r for r in result.rows if r.benchmark_id == "demo.track" and r.headline]
    assert len(rows) == 1, "device is not a parameter that makes runs incomparable"
    marks = sorted(c.mark for c in rows[0].cells)
    assert marks in (["baseline", "better"], ["baseline", "worse"])
    ratio = next(c.ratio for c in rows[0].cells if c.mark != "baseline")
    assert ratio == pytest.approx(10.0, rel=0.05) or ratio == pytest.approx(0.1, rel=0.05)
    assert "demo.track" in comparison_text.format_table(result)


def test_track_cli_leaves_a_result_with_metrics_that_compare_loads(tmp_path, cli_env):
    from hwbench_gui.demos.tracking import synthetic

    spec = synthetic.converging_spec(n_frames=40, width=320, height=240, n_objects=3, seed=5)
    video = synthetic.write_sequence(spec, tmp_path / "scene.mp4", tmp_path / "gt.txt")
    results = tmp_path / "results"
    proc = run_cli(["demo", "track", "--source", str(video), "--out", str(tmp_path / "t.txt"), "--gt",
                    str(tmp_path / "gt.txt"), "--results-dir", str(results)], cli_env)
    assert proc.returncode == 0, proc.stderr
    assert "MOTA" in proc.stdout and "result →" in proc.stdout
    (path,) = results.glob("*.json")
    doc = load_result(path)
    assert doc["benchmark"]["id"] == "demo.track" and doc["status"] == "ok"
    assert doc["params"]["detector"] == "motion" and doc["params"]["frame_wh"] == [320, 240]
    assert doc["precision"] == "n/a" and doc["device"] == "cpu"
    assert doc["details"]["frames"] == 40 and set(doc["details"]["metrics"]) >= {"MOTA", "IDF1", "IDSW"}
    assert "IDF1" in doc["figures"] and doc["samples"] and all(s > 0 for s in doc["samples"])
    proc = run_cli(["compare", str(results), "--by", "run"], cli_env)
    assert proc.returncode == 0, proc.stderr
    assert "demo.track" in proc.stdout


def test_motion_cli_leaves_a_result_and_no_result_leaves_none(tmp_path, cli_env):
    from hwbench_gui.demos.motion import synthetic as syn
    from hwbench_gui.demos.motion.targets import shipped_targets

    video = syn.write_video(tmp_path / "drive.mp4", syn.talking_motion(20))
    cat = str(next(p for p in shipped_targets() if p.stem == "cat"))
    roi = ",".join(map(str, syn.patch_roi()))
    args = ["demo", "motion", "--source", video, "--target", cat, "--roi", roi, "--out", str(tmp_path / "o.mp4")]
    proc = run_cli([*args, "--results-dir", str(tmp_path / "r")], cli_env)
    assert proc.returncode == 0, proc.stderr
    (path,) = (tmp_path / "r").glob("*.json")
    doc = load_result(path)
    assert doc["benchmark"]["id"] == "demo.motion" and doc["params"]["region"] == "roi"
    assert doc["details"]["frames"] == 20 and "warp_ms" in doc["details"]["stage_ms"]
    proc = run_cli([*args, "--results-dir", str(tmp_path / "none"), "--no-result"], cli_env)
    assert proc.returncode == 0 and not (tmp_path / "none").exists()
