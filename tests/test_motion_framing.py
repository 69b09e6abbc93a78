"""The motion-transfer target kept whole inside its image, and its outline's jitter measured."""

from __future__ import annotations

import numpy as np
import pytest

from hwbench_gui.demos.motion import synthetic as syn
from hwbench_gui.demos.motion.framing import OutlineStability, keep_inside, outside_px
from hwbench_gui.demos.motion.keypoints import DriverKeypoints
from hwbench_gui.demos.motion.mapping import MappingSettings
from hwbench_gui.demos.motion.pipeline import MotionPipeline, run_to_files
from hwbench_gui.demos.motion.targets import load_target, shipped_targets
from hwbench_gui.demos.video import VideoFileSource


def test_keep_inside_moves_the_whole_set_by_the_least_shift():
    pts = np.array([[-10.0, 5.0], [20.0, 30.0], [50.0, 60.0]])
    out, pushed = keep_inside(pts, (100, 100), margin_px=2.0)
    np.testing.assert_allclose(out, pts + [12.0, 0.0])
    assert pushed == pytest.approx(12.0)
    assert outside_px(pts, (100, 100)) == pytest.approx(10.0) and outside_px(out, (100, 100)) == 0.0


def test_keep_inside_shrinks_a_set_wider_than_the_image_about_its_centre():
    pts = np.array([[-50.0, 40.0], [150.0, 60.0]])  # 200 px wide in a 101 px image
    out, _ = keep_inside(pts, (101, 101), margin_px=0.0)
    np.testing.assert_allclose(out, [[0.0, 45.0], [100.0, 55.0]])  # one scale for both axes: its shape kept


def test_keep_inside_leaves_points_inside_alone():
    pts = np.array([[10.0, 10.0], [80.0, 90.0]])
    out, pushed = keep_inside(pts, (100, 100))
    np.testing.assert_array_equal(out, pts) and pushed == 0.0


def _driver(shift_px: float = 0.0) -> DriverKeypoints:
    sim = np.eye(2, 3)
    sim[0, 2] = shift_px
    pts = np.array([[10.0, 10.0], [50.0, 10.0], [30.0, 50.0]], np.float32)
    return DriverKeypoints(pts, np.ones(3, bool), pts, (0.0, 0.0, 100.0, 100.0), sim)


def test_outline_stability_counts_steps_over_still_frames_as_shares_of_the_face_size():
    """A 100 px face whose keypoints step 1 px every frame while the driver does not move: jitter 1 %.
    Frames where the driver moved are left out."""
    stability = OutlineStability((0.0, 0.0, 100.0, 100.0))
    base = np.array([[30.0, 30.0], [70.0, 30.0], [50.0, 80.0]])
    for i in range(6):
        stability.add(base + [i % 2, 0.0], _driver())
    stability.add(base + [40.0, 0.0], _driver(shift_px=30.0))  # the driver moved: motion, not jitter
    summary = stability.summary()
    assert summary["still_frames"] == 5
    assert summary["outline_jitter"]["mean"] == pytest.approx(0.01)
    assert summary["outline_jitter"]["max"] == pytest.approx(0.01)


def _robot():
    return load_target(next(p for p in shipped_targets() if p.stem == "robot"))


def test_a_driver_moving_far_keeps_the_target_in_its_image(tmp_path):
    """The driver's face slides 120 px left and 90 px down: unbounded, the target's keypoints leave its
    image; every frame keeps them inside, and the trace says how far they were moved back."""
    poses = syn.phased_motion(hold=3, ramp=10, shift_px=(-120.0, 90.0), scale=1.0, rotation_deg=0.0)[:16]
    path = syn.write_video(tmp_path / "far.mp4", poses)
    pipe = MotionPipeline(VideoFileSource(path), _robot(), roi=syn.patch_roi(),
                          settings=MappingSettings(smoothing=False))
    doc = run_to_files(pipe)
    w, h = doc["target"]["size"]
    assert all(outside_px(np.array(f["target"]), (w, h)) == 0.0 for f in doc["frames"])
    framing = doc["framing"]
    assert framing["frames_pushed_back"] >= 3 and framing["farthest_outside_px"] > 5.0, framing
    assert framing["frames_inside"] == len(doc["frames"])


def test_a_still_driver_gives_a_steady_outline(tmp_path):
    """A generated face that does not move for 20 frames: the target's outline steps less than 1 % of its
    face size between frames (the trace's measure), and the still frames are counted."""
    path = syn.write_video(tmp_path / "still.mp4", [syn.Pose()] * 20)
    doc = run_to_files(MotionPipeline(VideoFileSource(path), _robot(), roi=syn.patch_roi()))
    framing = doc["framing"]
    assert framing["still_frames"] >= 15, framing
    assert framing["outline_jitter"]["p95"] < 0.01, framing
    assert all("outline_step" in f["framing"] for f in doc["frames"])
