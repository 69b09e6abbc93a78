"""Motion transfer that never tears, on generated clips: a scene cut and a face leaving the frame hold
the target at rest and re-acquire; keypoints that jump or are lost are not followed; no frame of any
clip folds the target (checked on the full-resolution map, not on the grid the warp checks itself)."""

from __future__ import annotations

import numpy as np
import pytest

from hwbench_gui.demos.motion import synthetic as syn
from hwbench_gui.demos.motion.continuity import ContinuityGuard, GuardSettings
from hwbench_gui.demos.motion.fold import (
    KeypointMesh,
    folded_cells,
    grid_triangles,
    largest_unfolded_share,
    signed_areas,
)
from hwbench_gui.demos.motion.keypoints import DriverKeypoints
from hwbench_gui.demos.motion.pipeline import MotionPipeline, run_to_files
from hwbench_gui.demos.motion.targets import load_target, shipped_targets
from hwbench_gui.demos.motion.warp import ThinPlateWarp
from hwbench_gui.demos.video import VideoFileSource

CUT_AT = 30


def _robot():
    return load_target(next(p for p in shipped_targets() if p.stem == "robot"))


def _full_res_folds(warp: ThinPlateWarp, src, dst) -> int:
    """Folded triangles of the map ``warp`` renders with, on a 4-pixel lattice of the whole image (the
    warp's own check is on its 16-pixel grid)."""
    map_x, map_y = warp.maps(src, dst)
    return folded_cells(np.dstack([map_x, map_y])[::4, ::4].astype(np.float64))


def _run(path, guard: GuardSettings | None = None, **options) -> tuple[dict, list[int]]:
    """The clip's trace, and the full-resolution folds of every frame's warp."""
    pipe = MotionPipeline(VideoFileSource(path), _robot(), guard=guard, **options)
    folds: list[int] = []
    doc = run_to_files(pipe, on_frame=lambda r: folds.append(
        _full_res_folds(pipe.warp, pipe.target.keypoints, r.pose.points)))
    return doc, folds


@pytest.fixture(scope="module")
def clips(tmp_path_factory):
    """A talking head that cuts at frame 30 to another scene (another face, elsewhere, smaller); a face
    that walks out of the right side of the frame and back (12 px a frame); a talking head with no cut."""
    folder = tmp_path_factory.mktemp("continuity")
    poses, scenes = syn.cut_clip(60, CUT_AT)
    return {
        "cut": syn.write_video(folder / "cut.mp4", poses, scenes=scenes),
        "leave": syn.write_video(folder / "leave.mp4", syn.leaving_clip(70, 12.0)),
        "talk": syn.write_video(folder / "talk.mp4", syn.talking_motion(60)),
    }


def test_scene_cut_holds_at_rest_and_reacquires(clips):
    doc, folds = _run(clips["cut"])
    held = {f["index"]: f for f in doc["frames"] if f["held"]}
    assert list(held) == [CUT_AT] and held[CUT_AT]["held"] == "cut", held
    assert "scene cut" in held[CUT_AT]["status"] and "frame difference" in held[CUT_AT]["held_why"]
    assert np.allclose(held[CUT_AT]["target"], doc["target"]["keypoints"])  # at rest, at once
    after = doc["frames"][CUT_AT + 1]
    assert after["reacquired"] and after["driver"] is not None
    # The new shot's face drives from its own neutral pose: the target moves as little as the face does
    # in the frames after the cut, not by the 90 px the face jumped between shots.
    moved = [np.abs(np.array(f["target"]) - doc["target"]["keypoints"]).max() for f in doc["frames"][CUT_AT:CUT_AT + 5]]
    assert max(moved) < 15, moved
    assert doc["continuity"]["held_frames"]["cut"] == 1 and doc["continuity"]["reacquired"] == 1
    assert not any(folds), folds


def test_face_leaving_the_frame_is_not_followed(clips):
    doc, folds = _run(clips["leave"])
    frames = doc["frames"]
    first = next(f for f in frames if f["held"])
    assert first["held"] == "leaving" and "of the face box inside the frame" in first["held_why"]
    assert np.allclose(first["target"], doc["target"]["keypoints"])
    # Held from there while the face is out (about 40 % of its box and less in view), then found again.
    out = [f for f in frames if f["index"] > first["index"] and 12.0 * min(f["index"], 70 - f["index"]) > 250]
    assert out and all(f["held"] for f in out)
    back = next(f for f in frames if f["reacquired"])
    assert back["index"] > 45 and back["driver"] is not None
    assert not any(folds), folds


def test_continuous_motion_is_never_held(clips):
    doc, folds = _run(clips["talk"])
    assert not any(f["held"] for f in doc["frames"]), [(f["index"], f["held_why"]) for f in doc["frames"] if f["held"]]
    assert not any(folds)


def _keypoints(tx=0.0, scale=1.0, roll_deg=0.0, kept=1.0) -> DriverKeypoints:
    c, s = scale * np.cos(np.radians(roll_deg)), scale * np.sin(np.radians(roll_deg))
    centre = np.array([300.0, 240.0])
    rot = np.array([[c, -s], [s, c]])
    sim = np.hstack([rot, (centre - rot @ centre + [tx, 0.0])[:, None]])
    pts = np.random.default_rng(0).uniform(250, 350, (20, 2)).astype(np.float32)
    return DriverKeypoints(pts, np.ones(20, bool), pts, (250.0, 190.0, 100.0, 100.0), sim, kept)


FAST = {"tx": 20.0, "scale": 1.1, "roll_deg": 10.0}  # a fast, real move from rest: 0.18 face sizes, ×1.1, 10°


@pytest.mark.parametrize("jump, reason", [
    ({"tx": 60.0}, "jump"),  # 40 px more, 0.36 face sizes in one frame
    ({"scale": 1.1 * 1.3}, "jump"),
    ({"roll_deg": 35.0}, "jump"),
    ({"kept": 0.3}, "lost"),
    ({"tx": 400.0}, "leaving"),  # the face box moved off the 640-wide frame
])
def test_keypoints_that_jump_or_are_lost_are_held(jump, reason):
    guard = ContinuityGuard()
    assert guard.check(_keypoints(), (480, 640)) is None
    assert guard.check(_keypoints(**FAST), (480, 640)) is None
    hold = guard.check(_keypoints(**{**FAST, **jump}), (480, 640))
    assert hold is not None and hold.reason == reason, hold
    assert guard.check(None, (480, 640)).reason == "no_face"


def test_crossing_keypoints_do_not_fold_the_target():
    """The lower lip pushed past the chin, and two eyes swapped: both would turn the image over."""
    target = _robot()
    rest = target.keypoints
    by = {label: i for i, label in enumerate(target.labels)}
    lip_past_chin = rest.copy()
    lip_past_chin[by["lip_lower"]] = rest[by["chin"]] + [0.0, 40.0]
    mesh = KeypointMesh(rest)
    bounded = mesh.bound(lip_past_chin)
    assert bounded.flipped >= 1 and bounded.shrink < 1.0
    assert (KeypointMesh(rest)._areas(bounded.points) > 0).all()
    # Keypoints far from the crossing keep their motion: the eyes did not move, and still do not.
    assert np.allclose(bounded.points[by["eye_left"]], rest[by["eye_left"]])
    swapped = rest.copy()
    swapped[[by["eye_left"], by["eye_right"]]] = rest[[by["eye_right"], by["eye_left"]]]
    warp = ThinPlateWarp(*target.size)
    for moved in (lip_past_chin, swapped, rest + [150.0, 0.0]):  # the last: the face pushed across the border
        assert _full_res_folds(warp, rest, mesh.bound(moved).points) == 0
        assert warp.last_folded == 0 or warp.last_shrink < 1.0


def test_large_head_motion_is_shrunk_not_folded(tmp_path):
    """(50, 25) px, ×1.25 and 15° on the driver would carry the robot's jaw past the image border:
    every frame stays fold-free, and the trace says where the motion was shrunk."""
    poses = syn.phased_motion(hold=3, ramp=8, shift_px=(50.0, 25.0), scale=1.25, rotation_deg=15.0)
    doc, folds = _run(syn.write_video(tmp_path / "large.mp4", poses), roi=syn.patch_roi())
    assert not any(folds), folds
    shrunk = [f for f in doc["frames"] if f["fold"]["warp_kept"] < 1.0]
    assert shrunk and all(f["fold"]["warp_folded"] > 0 for f in shrunk)
    assert doc["continuity"]["warp_shrunk_frames"] == len(shrunk)


def test_largest_unfolded_share_known_answer():
    """One unit cell whose bottom-right corner is pulled by (-2, -2): its triangle (tr, br, bl) has area
    1 - 4t, so it keeps 5 % of its area up to t = 0.95 / 4; (tl, tr, br) and (tl, br, bl) have 1 - 2t."""
    nodes = np.array([[[0.0, 0.0], [1.0, 0.0]], [[0.0, 1.0], [1.0, 1.0]]])
    disp = np.zeros_like(nodes)
    disp[1, 1] = (-2.0, -2.0)
    assert folded_cells(nodes + disp) == 3 and folded_cells(nodes) == 0
    t = largest_unfolded_share(nodes, disp)
    assert t == pytest.approx(0.95 / 4)
    assert folded_cells(nodes + t * disp) == 0
    assert largest_unfolded_share(nodes, -0.1 * disp) == 1.0  # pushed outwards: nothing folds
    # The per-frame count on grid slices is the count over grid_triangles (rows and columns unequal).
    rng = np.random.default_rng(1)
    grid = np.stack(np.meshgrid(np.arange(7.0), np.arange(5.0)), 2) + rng.normal(0, 0.45, (5, 7, 2))
    flipped = int((signed_areas(grid.reshape(-1, 2), grid_triangles(5, 7)) <= 0).sum())
    assert flipped > 0 and folded_cells(grid) == flipped
