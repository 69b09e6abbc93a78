"""Motion transfer without a window: known motion on generated video, bad input, the warp, targets."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

from hwbench_gui.demos.motion import synthetic as syn
from hwbench_gui.demos.motion.keypoints import estimate_similarity, similarity_params
from hwbench_gui.demos.motion.mapping import MappingSettings, alignment
from hwbench_gui.demos.motion.pipeline import MotionPipeline, run_to_files
from hwbench_gui.demos.motion.targets import (
    TargetError,
    load_target,
    save_keypoints,
    shipped_targets,
    sidecar_path,
    target_from_points,
)
from hwbench_gui.demos.motion.warp import ThinPlateWarp
from hwbench_gui.demos.video import VideoFileSource

HOLD, RAMP = 6, 20
SHIFT_PX, SCALE, ROTATION_DEG = (15.0, 8.0), 1.1, 10.0


@pytest.fixture(scope="module")
def phased(tmp_path_factory):
    """A 640×480 video: still, translate (15, 8) px, scale ×1.1, rotate 10°, with holds in between (what
    the robot target carries without folding: see test_motion_continuity for larger motion)."""
    poses = syn.phased_motion(hold=HOLD, ramp=RAMP, shift_px=SHIFT_PX, scale=SCALE, rotation_deg=ROTATION_DEG)
    path = syn.write_video(tmp_path_factory.mktemp("motion") / "phased.mp4", poses)
    return path, poses


def _robot():
    return load_target(next(p for p in shipped_targets() if p.stem == "robot"))


def _follow_errors(doc, poses, frames) -> dict:
    """Relative errors of the target's motion against the known driver motion, worst over ``frames``.

    Scale and roll of the target keypoints (a similarity fitted to them) must equal the driver's; the
    target face-box centre must move by the driver's translation times the face-size ratio.
    """
    rest = np.array(doc["target"]["keypoints"])
    tx, ty, tw, th = doc["target"]["face_box"]
    centre = np.array([tx + tw / 2, ty + th / 2])
    x, y, w, h = doc["roi"]
    ratio = np.sqrt(tw * th / (w * h))
    worst = {"scale": 0.0, "rotation": 0.0, "translation": 0.0}
    for i in frames:
        pose = poses[i]
        m = estimate_similarity(rest, np.array(doc["frames"][i]["target"]))
        p = similarity_params(m)
        moved = m[:, :2] @ centre + m[:, 2] - centre
        expected = ratio * np.array([pose.tx_px, pose.ty_px])
        worst["scale"] = max(worst["scale"], abs(p["scale"] - pose.scale) / abs(pose.scale - 1 or 1))
        if pose.rotation_deg:
            worst["rotation"] = max(worst["rotation"], abs(p["rotation_deg"] - pose.rotation_deg) / pose.rotation_deg)
        if np.linalg.norm(expected):
            worst["translation"] = max(worst["translation"],
                                       np.linalg.norm(moved - expected) / np.linalg.norm(expected))
    return worst


def test_target_follows_known_motion_every_frame(phased):
    """Smoothing off: every frame's target pose is the driver's known pose within 10 %."""
    path, poses = phased
    pipe = MotionPipeline(VideoFileSource(path), _robot(), roi=syn.patch_roi(),
                          settings=MappingSettings(smoothing=False))
    doc = run_to_files(pipe, max_frames=len(poses))
    assert len(doc["frames"]) == len(poses)
    assert all(f["driver"] is not None for f in doc["frames"])
    worst = _follow_errors(doc, poses, range(len(poses)))
    assert max(worst.values()) < 0.10, worst


def test_target_follows_known_motion_smoothed_and_traced(phased, tmp_path):
    """Default smoothing: after each hold the target pose is the driver's within 10 %; trace and MP4 written."""
    path, poses = phased
    out, trace = tmp_path / "out.mp4", tmp_path / "trace.json"
    pipe = MotionPipeline(VideoFileSource(path), _robot(), roi=syn.patch_roi())
    run_to_files(pipe, out, trace)
    doc = json.loads(trace.read_text())
    hold_ends = [HOLD - 1 + k * (RAMP + HOLD) for k in range(1, 4)]
    worst = _follow_errors(doc, poses, hold_ends)
    assert max(worst.values()) < 0.10, worst
    frame = doc["frames"][-1]
    assert len(frame["target"]) == len(doc["target"]["labels"]) and len(frame["driver"]) >= 6
    assert len(frame["driver"]) == len(frame["driver_neutral"])
    assert doc["timing"]["fps"] > 0 and doc["timing"]["warp_ms"]["mean"] > 0
    cap = cv2.VideoCapture(str(out))
    assert int(cap.get(cv2.CAP_PROP_FRAME_COUNT)) == len(poses)
    assert (cap.get(cv2.CAP_PROP_FRAME_WIDTH), cap.get(cv2.CAP_PROP_FRAME_HEIGHT)) == (512, 512)
    cap.release()


def test_face_mode_tracks_the_drawn_face(phased):
    """Without an ROI the Haar cascade finds the drawn face and the driver's similarity follows it."""
    path, poses = phased
    pipe = MotionPipeline(VideoFileSource(path), _robot(), settings=MappingSettings(smoothing=False))
    doc = run_to_files(pipe)
    last = doc["frames"][-1]["driver_similarity"]
    assert last is not None, doc["frames"][-1]["status"]
    assert abs(last["scale"] - SCALE) < 0.1 * (SCALE - 1)
    assert abs(last["rotation_deg"] - ROTATION_DEG) < 0.1 * ROTATION_DEG


def test_target_without_keypoints_asks_for_clicks(tmp_path):
    image = np.full((200, 300, 3), 200, np.uint8)
    cv2.circle(image, (150, 100), 50, (0, 0, 255), -1)  # not a face
    path = tmp_path / "blob.png"
    cv2.imwrite(str(path), image)
    with pytest.raises(TargetError, match="has no keypoints.*[Cc]lick at least 3 keypoints"):
        load_target(path)
    with pytest.raises(TargetError, match="at least 3"):
        target_from_points(image, [(1, 1), (2, 2)])
    # clicked points become a sidecar, and the image loads from then on
    clicked = target_from_points(image, [(120, 80), (180, 80), (150, 130)], path=path)
    assert save_keypoints(clicked) == sidecar_path(path)
    again = load_target(path)
    assert np.allclose(again.keypoints, clicked.keypoints) and again.source == "sidecar"
    half = again.resized(150)
    assert half.size == (150, 100) and np.allclose(half.keypoints, again.keypoints * 0.5)
    (tmp_path / "broken.png").write_bytes(path.read_bytes())
    (tmp_path / "broken.keypoints.json").write_text("{not json")
    with pytest.raises(TargetError, match="not readable"):
        load_target(tmp_path / "broken.png")


def test_shipped_targets_are_small_and_marked():
    paths = shipped_targets()
    assert {p.stem for p in paths} >= {"robot", "cat"}
    for p in paths:
        t = load_target(p)
        assert t.size == (512, 512) and len(t.keypoints) >= 12 and t.source == "sidecar"
        assert p.stat().st_size < 200_000
        x, y, w, h = t.face_box
        assert w > 100 and h > 100


def test_warp_moves_keypoints_and_pins_the_border():
    w, h = 160, 120
    # Pixel values encode their own coordinates, so the output says where each pixel was read from.
    xs, ys = np.meshgrid(np.arange(w, dtype=np.float32), np.arange(h, dtype=np.float32))
    image = np.dstack([xs, ys, np.zeros_like(xs)])
    src = np.array([[60.0, 50.0], [100.0, 50.0], [80.0, 80.0]])
    dst = src + [[12.0, -8.0], [12.0, -8.0], [12.0, -8.0]]
    warp = ThinPlateWarp(w, h, grid_step_px=8)
    out = warp(image, src, dst)
    for (sx, sy), (dx, dy) in zip(src, dst):
        got = out[int(dy), int(dx), :2]
        assert np.allclose(got, [sx, sy], atol=1.0), (got, (sx, sy))
    for edge in (np.s_[0, :], np.s_[-1, :], np.s_[:, 0], np.s_[:, -1]):
        assert np.array_equal(out[edge], image[edge])
    assert np.abs(out - image).max() > 5  # the inside did move
    assert np.array_equal(warp(image, src, src), image)  # no motion: untouched


def test_alignment_maps_box_onto_box():
    a = alignment((100, 50, 200, 200), (10, 20, 100, 100))
    corners = np.array([[100, 50, 1], [300, 250, 1]]) @ a.T
    assert np.allclose(corners[:, :2], [[10, 20], [110, 120]])


def test_mediapipe_is_optional_with_a_reason():
    import importlib

    from hwbench_gui.demos.motion import mediapipe_source

    try:
        importlib.import_module("mediapipe")
    except ImportError:
        reason = mediapipe_source.unavailable_reason()
        assert "not installed" in reason and "numpy<2" in reason
        with pytest.raises(RuntimeError, match="not installed"):
            mediapipe_source.MediaPipeKeypointSource()
    else:
        pytest.skip("mediapipe is installed here")


def test_jaw_drop_moves_the_target_chin_not_the_eyes(tmp_path):
    """Local motion: the driver's jaw drops with the head still; the target's chin goes down, its eyes stay."""
    poses = [syn.Pose(mouth_open=min(1.0, max(0.0, (i - 3) / 8))) for i in range(16)]
    path = syn.write_video(tmp_path / "jaw.mp4", poses)
    target = _robot()
    pipe = MotionPipeline(VideoFileSource(path), target, settings=MappingSettings(smoothing=False))
    doc = run_to_files(pipe)
    moved = np.array(doc["frames"][-1]["target"]) - np.array(doc["target"]["keypoints"])
    by = dict(zip(target.labels, moved))
    assert by["chin"][1] > 3.0 and by["lip_lower"][1] > 3.0, by
    assert np.abs(by["eye_left"]).max() < 1.0 and np.abs(by["brow_right"]).max() < 1.0, by


def test_face_detector_without_cascade_classifier_raises_a_typed_reason(monkeypatch, tmp_path):
    """As on OpenCV 5: no cv2.CascadeClassifier. The face detector, a face-mode keypoint source and a
    target without keypoints all say why in one line (the HOG detector's wording), not AttributeError."""
    from hwbench_gui.demos.motion.keypoints import FaceDetector, FaceDetectorUnavailable, LKKeypointSource

    monkeypatch.delattr(cv2, "CascadeClassifier")
    for build in (FaceDetector, LKKeypointSource):
        with pytest.raises(FaceDetectorUnavailable, match=r"needs OpenCV 4\.x; this is OpenCV .*dropped") as info:
            build()
        assert "\n" not in str(info.value)
    LKKeypointSource(roi=(10, 10, 50, 50))  # a region to track needs no face detector
    plain = tmp_path / "plain.png"
    cv2.imwrite(str(plain), np.full((64, 64, 3), 128, np.uint8))
    with pytest.raises(TargetError, match="has no keypoints.*needs OpenCV 4"):
        load_target(plain)
