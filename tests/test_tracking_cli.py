"""``hwbench demo track`` as a real subprocess on a generated video."""

from __future__ import annotations

import cv2
import pytest
from support import run_cli

from hwbench_gui.demos.tracking import darknet, synthetic
from hwbench_gui.demos.tracking.io import read_mot


@pytest.fixture(scope="module")
def video(tmp_path_factory):
    folder = tmp_path_factory.mktemp("track")
    spec = synthetic.random_spec(n_frames=60, width=320, height=240, n_objects=3, seed=4)
    return synthetic.write_sequence(spec, folder / "scene.mp4", folder / "gt.txt")


def test_motion_detector_writes_tracks_and_an_annotated_mp4(video, tmp_path, cli_env):
    out, mp4 = tmp_path / "tracks.txt", tmp_path / "annotated.mp4"
    proc = run_cli(["demo", "track", "--source", str(video), "--detector", "motion", "--out", str(out),
                    "--video", str(mp4)], cli_env)
    assert proc.returncode == 0, proc.stderr
    assert "60 frames" in proc.stdout and "FPS" in proc.stdout and "associate" in proc.stdout
    assert "detector: motion, moving blobs from background subtraction (OpenCV MOG2), no weights" in proc.stdout
    rows = read_mot(out)
    assert rows and len({r.object_id for r in rows}) >= 2
    assert all(1 <= r.frame <= 60 for r in rows)
    cap = cv2.VideoCapture(str(mp4))
    assert cap.isOpened() and int(cap.get(cv2.CAP_PROP_FRAME_COUNT)) == 60
    ok, frame = cap.read()
    assert ok and frame.shape == (240, 320, 3)


def test_the_result_document_names_the_detector_and_carries_the_scores(video, tmp_path, cli_env):
    import json

    results = tmp_path / "results"
    proc = run_cli(["demo", "track", "--source", str(video), "--out", str(tmp_path / "tracks.txt"),
                    "--gt", str(video.parent / "gt.txt"), "--results-dir", str(results)], cli_env)
    assert proc.returncode == 0, proc.stderr
    assert "against" in proc.stdout and "MOTA" in proc.stdout
    (doc_path,) = results.glob("*.json")
    doc = json.loads(doc_path.read_text())
    assert doc["params"]["detector"] == "motion"
    assert doc["details"]["detector_summary"].startswith("moving blobs from background subtraction")
    assert json.dumps(doc).count('"MOTA"') >= 1 and '"IDF1"' in json.dumps(doc)


def test_hog_says_the_smallest_person_it_sees(video, tmp_path, cli_env):
    import json

    proc = run_cli(["demo", "track", "--source", str(video), "--detector", "hog", "--max-frames", "2", "--out",
                    str(tmp_path / "t.txt"), "--json", "--no-result"], cli_env)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout[proc.stdout.index("{"):])
    assert summary["smallest_person_px"] == 60.0 and "60 px tall or more" in summary["detector_summary"]


def test_yolov3_without_weights_fails_with_the_reason(video, tmp_path, cli_env):
    proc = run_cli(["demo", "track", "--source", str(video), "--detector", "yolov3", "--out",
                    str(tmp_path / "t.txt")], cli_env)
    assert proc.returncode == 2
    assert "no YOLOv3 weights" in proc.stderr and "pjreddie.com" in proc.stderr
    assert not (tmp_path / "t.txt").exists()


def test_yolov3_tiny_with_a_weights_file_runs_on_cpu(video, tmp_path, cli_env):
    tiny = darknet.parse_cfg(darknet.shipped_cfg("yolov3-tiny"))
    weights = darknet.write_weights(tmp_path / "tiny.weights", darknet.random_weights(tiny, seed=0))
    proc = run_cli(["demo", "track", "--source", str(video), "--detector", "yolov3", "--cfg",
                    str(darknet.shipped_cfg("yolov3-tiny")), "--weights", str(weights), "--size", "128",
                    "--max-frames", "5", "--out", str(tmp_path / "t.txt"), "--json"], cli_env)
    assert proc.returncode == 0, proc.stderr
    assert '"frames": 5' in proc.stdout and '"precision": "FP32"' in proc.stdout


def test_a_yolov3_result_records_what_decides_its_speed_so_a_graph_run_never_pairs_with_an_eager_one(
        video, tmp_path, cli_env):
    import json

    from hwbench_gui.engine.reports import comparability

    tiny = darknet.parse_cfg(darknet.shipped_cfg("yolov3-tiny"))
    weights = darknet.write_weights(tmp_path / "tiny.weights", darknet.random_weights(tiny, seed=0))
    results = tmp_path / "results"
    proc = run_cli(["demo", "track", "--source", str(video), "--detector", "yolov3", "--cfg",
                    str(darknet.shipped_cfg("yolov3-tiny")), "--weights", str(weights), "--size", "128",
                    "--conf", "0.25", "--max-det", "20", "--max-frames", "40", "--out", str(tmp_path / "t.txt"),
                    "--results-dir", str(results)], cli_env)
    assert proc.returncode == 0, proc.stderr
    (doc_path,) = results.glob("*.json")
    doc = json.loads(doc_path.read_text())
    assert {k: doc["params"][k] for k in ("cuda_graph", "conf", "max_det")} == \
        {"cuda_graph": False, "conf": 0.25, "max_det": 20}
    graph = {**doc, "params": {**doc["params"], "cuda_graph": True}}
    assert comparability.comparability_key(graph) != comparability.comparability_key(doc)


def test_missing_video_is_an_error(tmp_path, cli_env):
    proc = run_cli(["demo", "track", "--source", str(tmp_path / "none.mp4"), "--out", str(tmp_path / "t.txt")],
                   cli_env)
    assert proc.returncode == 2 and "video file not found" in proc.stderr
