"""Demos tab → Motion transfer page, offscreen, on a generated video."""

from __future__ import annotations

import re

import cv2
import numpy as np
import pytest
from PySide6.QtCore import Qt

from hwbench_gui.demos.motion import synthetic as syn


@pytest.fixture
def page(demos_tab):
    return demos_tab.page("Motion transfer")


@pytest.fixture(scope="module")
def video(tmp_path_factory):
    return syn.write_video(tmp_path_factory.mktemp("motion-page") / "drive.mp4", syn.talking_motion(60))


def test_runs_on_a_video_records_and_stops(page, qtbot, video, tmp_path):
    assert page.target is not None and page.target_view.image is not None  # a shipped target is preselected
    page.start(video)
    qtbot.waitUntil(lambda: page.frames_shown >= 5, timeout=20_000)
    assert re.match(r"\d+ FPS · processing \d+ FPS", page.fps_label.text()), page.fps_label.text()
    assert "tracking" in page.status.text()
    assert page.driver_view.image.size().toTuple() == (640, 480)
    assert page.target_view.image.size().toTuple() == (512, 512)
    page.set_neutral()
    out = tmp_path / "rec.mp4"
    page.start_recording(out)
    shown = page.frames_shown
    qtbot.waitUntil(lambda: page.frames_shown >= shown + 5, timeout=20_000)
    page.stop_recording()
    qtbot.waitUntil(lambda: page.recorded is not None, timeout=10_000)
    assert page.recorded.startswith(str(out))
    shown = page.frames_shown
    qtbot.waitUntil(lambda: page.frames_shown > shown, timeout=10_000)
    assert f"Recorded {out}" in page.status.text()  # the frames after it keep the line
    cap = cv2.VideoCapture(str(out))
    assert cap.read()[0] and int(cap.get(cv2.CAP_PROP_FRAME_COUNT)) >= 3
    cap.release()
    worker = page.worker
    page.grab()  # paints
    page.shutdown()
    page.context.workers.shutdown(timeout_s=10)  # the window's wait, after every tab's shutdown
    assert page.worker is None and worker.is_finished()
    assert page.start_button.isEnabled()


def test_missing_camera_shows_the_message_and_the_page_lives(page, qtbot):
    page.start(99)
    qtbot.waitUntil(lambda: "tried indices" in page.status.text(), timeout=10_000)
    qtbot.waitUntil(lambda: page.worker is None, timeout=10_000)
    assert "no camera at index 99" in page.status.text() and page.start_button.isEnabled()


def test_image_without_keypoints_takes_clicks(page, qtbot, tmp_path):
    image = np.full((240, 320, 3), 180, np.uint8)
    path = tmp_path / "blob.png"
    cv2.imwrite(str(path), image)
    assert not page.set_target_path(path)
    assert "has no keypoints" in page.status.text() and page.target_view.mode == "click"
    view = page.target_view
    for x, y in ((100, 100), (200, 100), (150, 180)):
        qtbot.mouseClick(view, Qt.LeftButton, pos=view._to_widget(x, y).toPoint())
    assert np.allclose(view.points, [(100, 100), (200, 100), (150, 180)], atol=2)
    page.use_clicked_keypoints()
    assert page.target is not None and page.target.name == "blob" and len(page.target.keypoints) == 3
    assert (tmp_path / "blob.keypoints.json").is_file()


def test_a_run_leaves_a_demo_motion_document(page, qtbot, video):
    from hwbench_gui.engine.results import list_results

    page.start(video)
    qtbot.waitUntil(lambda: page.frames_shown >= 5, timeout=20_000)
    page.stop()
    qtbot.waitUntil(lambda: page.result_label.text() != "", timeout=10_000)
    assert page.result_label.text().startswith("result saved"), page.result_label.text()
    docs, errors = list_results(page.context.results_dir)
    assert not errors and [d["benchmark"]["id"] for d in docs] == ["demo.motion"]
    assert docs[0]["details"]["frames"] >= 5 and docs[0]["samples"] and docs[0]["params"]["region"] == "face"
    continuity = docs[0]["details"]["continuity"]  # frames held by reason, as `hwbench demo motion` records
    assert set(continuity["held_frames"]) == {"cut", "no_face", "leaving", "jump", "lost"}
    assert {"reacquired", "warp_shrunk_frames", "mesh_bounded_frames"} <= set(continuity)
    assert page.last_result_path.parent == page.context.results_dir


def test_an_unwritable_results_folder_is_a_line_not_a_crash(page, qtbot, video, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    page.context.results_dir = blocker / "results"
    page.start(video)
    qtbot.waitUntil(lambda: page.frames_shown >= 2, timeout=20_000)
    page.stop()
    qtbot.waitUntil(lambda: page.result_label.text() != "", timeout=10_000)
    assert page.result_label.text().startswith("result not saved:") and "\n" not in page.result_label.text()
    assert page.start_button.isEnabled()


@pytest.mark.parametrize("where, error", [
    ("hwbench_gui.demos.motion.keypoints.FaceDetector.__init__", "FaceDetectorUnavailable"),
    ("hwbench_gui.demos.motion.pipeline.MotionPipeline.__init__", "TargetError"),
])
def test_known_failures_show_their_reason_in_one_line(page, qtbot, video, monkeypatch, where, error):
    """OpenCV 5 has no CascadeClassifier; a target can be unusable: the user reads the reason, not a
    traceback with the exception's class name."""
    from hwbench_gui.demos.motion.keypoints import FaceDetectorUnavailable
    from hwbench_gui.demos.motion.targets import TargetError

    exc_type = {"FaceDetectorUnavailable": FaceDetectorUnavailable, "TargetError": TargetError}[error]
    reason = f"this reason is for the user ({error})"

    def fail(*args, **kwargs):
        raise exc_type(reason)

    monkeypatch.setattr(where, fail)
    page.start(video)
    qtbot.waitUntil(lambda: page.worker is None or page.worker.is_finished(), timeout=10_000)
    qtbot.waitUntil(lambda: reason in page.status.text(), timeout=10_000)
    assert page.status.text() == reason
