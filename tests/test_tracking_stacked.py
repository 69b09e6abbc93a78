"""People one behind the other, seen from above, come out of background subtraction as one tall blob:
the motion detector learns how tall a person is on each image row (a line, on a ground plane) and
cuts a blob much taller than that into the person in front and the person behind. A small
generated clip from an elevated camera; deterministic (boxes of a seeded clip, no timing)."""

from __future__ import annotations

import numpy as np
import pytest

from hwbench_gui.demos.tracking import synthetic
from hwbench_gui.demos.tracking.blobs import PersonHeights, split_stacked
from hwbench_gui.demos.tracking.deepsort import iou_matrix
from hwbench_gui.demos.tracking.detectors import MotionDetector
from hwbench_gui.demos.tracking.scenes import Camera, walker

CAMERA = Camera(width=384, height=288, horizon_y=-300.0, near_height_px=100.0, foreshorten=0.85)
FPS = 10.0


def _heights(slope: float = 0.5, offset: float = -20.0) -> PersonHeights:
    """A model fed upright boxes of height slope · foot row + offset (and a few wide ones it must ignore)."""
    model = PersonHeights(min_samples=10, refit_every=1)
    for y in np.linspace(80, 280, 30):
        h = slope * y + offset
        model.add(100, y - h, 100 + h / 2.5, y)
        model.add(100, y - h, 100 + h, y)  # too wide for one person: not a sample
    return model


def test_person_height_is_a_line_in_the_foot_row():
    """Known answers: h = 0.5 y - 20 gives 80 px at row 200; a head at row 120 belongs to a person
    h = 0.5 (120 + h) - 20 = 80 px tall. Rows that do not tell heights (spread ±40 %) give none."""
    model = _heights()
    assert model.expected(200.0) == pytest.approx(80.0, abs=0.01)
    assert model.head_to_height(120.0) == pytest.approx(80.0, abs=0.01)
    mixed = PersonHeights(min_samples=10, refit_every=1)
    for k, y in enumerate(np.linspace(80, 280, 30)):
        h = 60.0 * (0.6 if k % 2 else 1.4)
        mixed.add(100, y - h, 100 + h / 2.5, y)
    assert mixed.expected(200.0) is None


def test_a_blob_twice_a_persons_height_is_cut_in_two():
    """Mask of two people stacked (h = 0.5 y - 20), the one behind 12 px to the left: cut into
    boxes that each match their person; one person a little taller than expected is not cut."""
    model = _heights()
    mask = np.zeros((140, 60), bool)  # the blob's box; its top-left is at frame (50, 80)
    # x1, y1, x2, y2 in the mask, heights on the model's line: behind's feet on frame row 80 + 50 = 130
    # (0.5 · 130 - 20 = 45 px; 50 drawn), front's on row 220 (90 px).
    behind = (2, 0, 22, 50)
    front = (14, 50, 50, 140)
    for x1, y1, x2, y2 in (behind, front):
        mask[y1:y2, x1:x2] = True
    parts = split_stacked(mask, 50, 80, model, stack_ratio=1.35)
    assert parts is not None and len(parts) == 2
    iou = iou_matrix(np.array(parts, float), np.array([behind, front], float))
    assert iou[0, 0] >= 0.6 and iou[1, 1] >= 0.6, (parts, iou)
    one = np.zeros((100, 40), bool)
    one[10:100, 5:41] = True  # one 90-px person with feet at frame row 180 (expected 70 px): not cut
    assert split_stacked(one, 50, 80, model, stack_ratio=1.35) is None
    crowd = np.zeros((140, 100), bool)
    crowd[:] = True  # as tall as the two, but wider than two people: a crowd, left to the tracker
    assert split_stacked(crowd, 50, 80, model, stack_ratio=1.35) is None


def _stacked_clip() -> synthetic.SequenceSpec:
    """6 s at 10 fps from an elevated camera (people 45-85 px): four people cross alone at different
    depths (the detector learns heights from them), then two walk in from the left together, one
    2 m behind the other, in line as the camera sees them (the one behind's feet at the height of
    the front one's chest)."""
    n = int(6 * FPS)
    figures = []
    for k, (z, start) in enumerate(((16.0, 1), (22.0, 3), (15.0, 6), (19.0, 9))):
        edge = CAMERA.half_width_m(z) * 1.2
        side = 1 if k % 2 else -1
        figures.append(walker(k + 1, CAMERA, [(side * edge, z, 0.0), (-side * edge, z, 2.2)], start, n, FPS, seed=k))
    for k, z in enumerate((16.0, 17.5)):
        # Same image column and image speed for both: metres scale with depth.
        x_start, x_end = -(CAMERA.width / 2 + 30) * z / 800, 40 * z / 800
        figures.append(walker(5 + k, CAMERA, [(x_start, z, 0.0), (x_end, z, 1.3 * z / 16.0)], 25, n, FPS,
                              seed=5 + k))
    return synthetic.SequenceSpec(CAMERA.width, CAMERA.height, n, figures, [], noise_sigma=2.0, seed=3, fps=FPS,
                                  figure_shape="people")


def _pair_found(split: bool) -> float:
    """Fraction of the frames with both people of the pair whole in view and overlapping in which
    both are matched (IoU ≥ 0.5) by the detector's boxes."""
    detector = MotionDetector(fps=FPS, split_stacked=split)
    found = []
    for _, frame, gt in synthetic.render(_stacked_clip()):
        boxes = detector.detect(frame).boxes
        pair = [g for g in gt if g.object_id in (5, 6) and g.visibility > 0.6]
        if len(pair) < 2 or iou_matrix(np.array([pair[0].box]), np.array([pair[1].box]))[0, 0] <= 0:
            continue
        iou = iou_matrix(np.array([g.box for g in pair]), boxes.reshape(-1, 4)) if len(boxes) else np.zeros((2, 1))
        found.append(bool((iou.max(axis=1) >= 0.5).all()))
    assert len(found) >= 5, found
    return float(np.mean(found))


def test_the_detector_cuts_two_people_one_behind_the_other():
    """Both matched in 90 % of the frames where they overlap (45 % by the row and column dips alone)."""
    assert _pair_found(split=True) >= 0.8
    assert _pair_found(split=False) <= 0.6
