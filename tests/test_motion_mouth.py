"""An open mouth carried from the driver to the target: the jaw drop read from the driver's keypoints,
given to the target's lower lip and chin, and measured against the generated clip's known opening."""

from __future__ import annotations

import numpy as np
import pytest

from hwbench_gui.demos.motion import synthetic as syn
from hwbench_gui.demos.motion.mouth import (
    MouthFollow,
    apply_jaw_drop,
    jaw_drop_from_lips,
    jaw_drop_from_points,
    jaw_shares,
)
from hwbench_gui.demos.motion.pipeline import MotionPipeline, run_to_files
from hwbench_gui.demos.motion.targets import load_target, shipped_targets
from hwbench_gui.demos.video import VideoFileSource

BOX = (0.0, 0.0, 100.0, 100.0)


def _head(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A head motion (scale 1.2, roll 10°, a shift) applied to face-frame points: what the tracker sees,
    and that similarity."""
    a = np.radians(10.0)
    m = np.array([[np.cos(a), -np.sin(a), 30.0], [np.sin(a), np.cos(a), -12.0]]) * [[1.2, 1.2, 1], [1.2, 1.2, 1]]
    return points @ m[:, :2].T + m[:, 2], m


def _grid() -> np.ndarray:
    ys, xs = np.mgrid[0:7, 0:7] * (100.0 / 6)
    return np.stack([xs.ravel(), ys.ravel()], 1)


def test_jaw_drop_from_unnamed_points_known_answer():
    """Points below 80 % of the box drop 10 px (a 100 px face: 0.10) under a head that turns, scales and
    shifts; a head that pitches (the face stretched vertically, 8 % about its middle) opens nothing, and
    with the drop as well the drop is still read."""
    neutral = _grid()
    jaw = np.where(neutral[:, 1] >= 80.0, 10.0, 0.0)
    pitch = 0.08 * (neutral[:, 1] - 50.0)
    for dy, expected in ((jaw, 0.10), (pitch, 0.0), (jaw + pitch, 0.10), (0 * jaw, 0.0)):
        moved, m = _head(neutral + np.stack([0 * dy, dy], 1))
        assert jaw_drop_from_points(moved, neutral, m, BOX) == pytest.approx(expected, abs=1e-6)
    assert jaw_drop_from_points(neutral[:5], neutral[:5], np.eye(2, 3), BOX) is None  # no lower face


def test_a_lower_face_that_moves_no_more_than_the_upper_face_is_not_the_jaw():
    """The points above the mouth slip 4 px sideways off the head's motion (a turn out of the image plane):
    a 3 px drop of the lower face reads as closed, a 10 px drop as the 6 px beyond that slip."""
    neutral = _grid()
    slip = np.where(neutral[:, 1] < 55.0, np.where(np.arange(len(neutral)) % 2, 4.0, -4.0), 0.0)
    for drop_px, expected in ((3.0, 0.0), (10.0, 0.06)):
        dy = np.where(neutral[:, 1] >= 80.0, drop_px, 0.0)
        moved, m = _head(neutral + np.stack([slip, dy], 1))
        assert jaw_drop_from_points(moved, neutral, m, BOX) == pytest.approx(expected, abs=1e-6)


def test_jaw_drop_from_named_lips_known_answer():
    neutral = np.array([[50.0, 70.0], [50.0, 74.0], [50.0, 78.0], [50.0, 84.0], [20.0, 30.0]])
    now = neutral + [[0, 0], [0, 1.0], [0, 9.0], [0, 13.0], [0, 0]]  # upper lips 0, 1; lower lips 2, 3
    moved, m = _head(now)
    assert jaw_drop_from_lips(moved, neutral, m, BOX, (0, 1), (2, 3)) == pytest.approx((11.0 - 0.5) / 100)


def test_jaw_drop_replaces_the_mouth_keypoints_vertical_motion_only():
    shares = jaw_shares(["eye_left", "lip_upper", "lip_lower", "mouth_left", "p4"])
    local = np.array([[1.0, 2.0], [0.5, 3.0], [-1.0, 1.0], [2.0, -1.0], [0.0, 4.0]])
    out = apply_jaw_drop(local, shares, np.array([0.0, 1.0]), 10.0)
    np.testing.assert_allclose(out, [[1.0, 2.0], [0.5, 0.0], [-1.0, 10.0], [2.0, 4.0], [0.0, 4.0]])
    assert jaw_shares(["p0", "p1", "p2"]) is None  # clicked points: the local blend alone


def test_mouth_follow_summary_known_answer():
    rest = np.array([[50.0, 70.0], [50.0, 80.0]])
    follow = MouthFollow(rest, ["lip_upper", "lip_lower"], (0.0, 0.0, 100.0, 100.0))
    for driver, gap_px in ((0.0, 0.0), (0.1, 5.0), (0.2, 10.0)):
        # the head at twice the size: the opening is read over the head's scale
        opening = follow.add(2 * (rest + [[0, 0], [0, gap_px]]), 2 * np.eye(2, 3), driver)
        assert opening == pytest.approx(gap_px / 100)
    s = follow.summary()
    assert s["frames"] == 3 and s["gain"] == pytest.approx(0.5) and s["correlation"] == pytest.approx(1.0)
    assert s["driver_max"] == pytest.approx(0.2) and s["target_max"] == pytest.approx(0.1)


def _robot():
    return load_target(next(p for p in shipped_targets() if p.stem == "robot"))


def test_an_open_mouth_is_carried_to_the_target(tmp_path):
    """A still generated head opens its mouth wide, a little and most of the way: the target's mouth
    opening (lower to upper lip, share of its face size) follows the known jaw drop (share of the
    tracked region's size) with correlation ≥ 0.8 and gain within ±40 %; its eyes stay; its keypoints
    stay inside the image. (Before the jaw drop was carried, gain 0.04, correlation 0.79.)"""
    poses = syn.mouth_clip(90)
    path = syn.write_video(tmp_path / "mouth.mp4", poses)
    target = _robot()
    doc = run_to_files(MotionPipeline(VideoFileSource(path), target, roi=syn.patch_roi()))
    _, _, w, h = syn.patch_roi()
    truth = np.array([syn.jaw_drop_px(p) for p in poses]) / np.sqrt(w * h)
    opening = np.array([f["mouth"]["target"] for f in doc["frames"]])
    gain = float((truth * opening).sum() / (truth * truth).sum())
    correlation = float(np.corrcoef(truth, opening)[0, 1])
    assert correlation >= 0.8 and 0.6 <= gain <= 1.4, (correlation, gain)
    assert doc["framing"]["frames_inside"] == len(poses)
    eyes = [target.labels.index(n) for n in ("eye_left", "eye_right")]
    moved = np.abs(np.array([f["target"] for f in doc["frames"]])[:, eyes] - target.keypoints[eyes]).max()
    assert moved < 1.5, moved
    summary = doc["mouth"]
    assert summary["frames"] == len(poses) and summary["correlation"] >= 0.8, summary


def test_a_closed_mouth_stays_closed(tmp_path):
    """A still face with its mouth shut: the target's mouth opens by less than 0.5 % of its face size."""
    path = syn.write_video(tmp_path / "still.mp4", [syn.Pose()] * 20)
    doc = run_to_files(MotionPipeline(VideoFileSource(path), _robot(), roi=syn.patch_roi()))
    assert max(abs(f["mouth"]["target"]) for f in doc["frames"]) < 0.005
    assert doc["mouth"]["driver_max"] < 0.005
