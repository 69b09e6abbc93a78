"""Demos tab → Tracking page, offscreen, on a generated video: live view, figures, record, export."""

from __future__ import annotations

import pytest


@pytest.fixture
def page(demos_tab):
    return demos_tab.page("Tracking")


def test_tracks_a_generated_video_records_and_exports(page, qtbot, tmp_path):
    assert type(page).__name__ == "TrackingPage"
    page.use_generated_scene(str(tmp_path / "scene.mp4"), n_frames=40)
    page.realtime_check.setChecked(False)
    page.start_recording(str(tmp_path / "rec.mp4"))
    page.start()
    assert page.worker is not None and not page.start_button.isEnabled()
    qtbot.waitUntil(lambda: page.worker is None, timeout=30000)
    assert "stopped after 40 frames" in page.status_label.text() and "result saved" in page.status_label.text()
    assert page.view.pixmap() is not None and not page.view.pixmap().isNull()
    assert "FPS:" in page.fps_label.text() and "detect" in page.split_label.text()
    assert page.gpu_label.text().startswith(("no GPU:", "GPU utilisation:", "GPU:"))
    n = page.export_tracks(str(tmp_path / "tracks.txt"))
    lines = (tmp_path / "tracks.txt").read_text().splitlines()
    assert n == len(lines) > 0 and lines[0].count(",") == 9
    assert (tmp_path / "rec.mp4").stat().st_size > 1000
    page.grab()  # paints without error
    # the run left its demo.track document in the app's results folder
    from hwbench_gui.engine.results import list_results

    docs, errors = list_results(page.context.results_dir)
    assert not errors and [d["benchmark"]["id"] for d in docs] == ["demo.track"]
    assert page.last_result_path is not None and page.last_result_path.parent == page.context.results_dir
    assert len(docs[0]["samples"]) == 1 and docs[0]["samples"][0] > 0, "40 frames: one 30-frame window"
    assert docs[0]["params"]["detector"] == "motion" and docs[0]["details"]["frames"] == 40


def test_a_result_that_cannot_be_saved_is_reported(page, qtbot, tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    page.context.results_dir = blocker / "results"
    page.use_generated_scene(str(tmp_path / "scene.mp4"), n_frames=12)
    page.realtime_check.setChecked(False)
    page.start()
    qtbot.waitUntil(lambda: page.worker is None, timeout=30000)
    assert "stopped after 12 frames" in page.status_label.text()
    assert "result not saved" in page.status_label.text() and page.last_result_path is None
    assert page.start_button.isEnabled()


def test_sliders_reach_the_running_worker_and_stop_works(page, qtbot, tmp_path):
    page.use_generated_scene(str(tmp_path / "scene.mp4"), n_frames=200)
    page.start()
    qtbot.waitUntil(lambda: page.worker is not None and page.job.frames_done > 2, timeout=20000)
    page.conf_slider.setValue(40)
    page.nms_slider.setValue(30)
    assert page.job.conf_threshold == pytest.approx(0.40) and page.job.nms_threshold == pytest.approx(0.30)
    page.stop()
    qtbot.waitUntil(lambda: page.worker is None, timeout=10000)
    assert page.start_button.isEnabled()


def test_yolov3_without_weights_says_so_and_cannot_start(page):
    page.detector_combo.setCurrentIndex(page.detector_combo.findData("yolov3"))
    assert "no YOLOv3 weights" in page.yolo_note.text() and "pjreddie.com" in page.yolo_note.text()
    assert not page.start_button.isEnabled()
    page.detector_combo.setCurrentIndex(page.detector_combo.findData("motion"))
    assert page.start_button.isEnabled() and page.yolo_note.text() == ""


def test_a_missing_file_is_reported_not_raised(page, qtbot, tmp_path):
    page.source_edit.setText(str(tmp_path / "missing.mp4"))
    page.start()
    qtbot.waitUntil(lambda: page.worker is None, timeout=10000)
    assert "video file not found" in page.status_label.text()


def test_the_page_names_the_detector_and_what_it_is_good_for(page):
    note = page.controls.detector_note
    page.detector_combo.setCurrentIndex(page.detector_combo.findData("motion"))
    assert note.text().startswith("motion: moving blobs from background subtraction (OpenCV MOG2), no weights")
    assert "fixed camera" in note.text()
    assert "same distance from the camera are one blob" in note.text()  # what it cannot do, said too
    page.detector_combo.setCurrentIndex(page.detector_combo.findData("hog"))
    assert note.text().startswith("hog: OpenCV's HOG people detector")


def test_a_view_that_falls_behind_gets_the_newest_frames_not_a_backlog(tmp_path):
    """The job tracks every frame but sends the view at most MAX_FRAMES_IN_FLIGHT it has not drawn yet;
    each drawn frame lets one more through."""
    import threading

    from hwbench_gui.demos.tracking import synthetic
    from hwbench_gui.ui.demos.frames import MAX_FRAMES_IN_FLIGHT
    from hwbench_gui.ui.demos.tracking.job import TrackJob

    video = tmp_path / "scene.mp4"
    synthetic.write_sequence(synthetic.random_spec(n_frames=30, seed=0), video)

    class Control:  # the worker's control, with a view that draws nothing until told
        abort_event = threading.Event()

        def __init__(self):
            self.frames = []

        def emit(self, message):
            if message[0] == "frame":
                self.frames.append(message[2]["index"])
                if len(self.frames) == 1:
                    job.frame_shown()  # the first one is drawn at once, then the view stalls

    job = TrackJob({"source": str(video), "detector": "motion", "conf": 0.25, "nms": 0.5, "realtime": False})
    control = Control()
    job.run(control)
    assert job.frames_done == 30 and job.document["details"]["frames"] == 30
    assert len(control.frames) == MAX_FRAMES_IN_FLIGHT + 1
    assert control.frames == sorted(control.frames)


def test_on_a_short_screen_the_controls_scroll_and_none_is_squeezed(demos_tab, page, qtbot):
    """In a 1024×520 window the left column is taller than the page: it scrolls, each of its
    widgets at the height it needs (squeezed, the detector's note was cut off mid-sentence)."""
    demos_tab.tabs.setCurrentIndex(demos_tab.tabs.indexOf(page.parentWidget()))
    demos_tab.resize(1024, 520)
    column = page.start_button.parentWidget()
    for key in ("motion", "hog", "yolov3"):
        page.detector_combo.setCurrentIndex(page.detector_combo.findData(key))
        qtbot.wait(20)
        assert column.height() >= column.minimumSizeHint().height(), key
        note = page.controls.detector_note
        assert note.height() >= note.heightForWidth(note.width()), key
    assert page.left_area.verticalScrollBar().maximum() > 0
