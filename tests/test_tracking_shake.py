"""A camera that shakes a little: the motion detector finds the frame's offset from its background
model (phase correlation) and subtracts the background where it belongs, so the edges of a textured
background that sways by two pixels are not figures, and boxes stay where the people are in the
frame given. A small generated clip; deterministic (no timing)."""

from __future__ import annotations

import numpy as np
import pytest

from hwbench_gui.demos.tracking import synthetic
from hwbench_gui.demos.tracking.deepsort import iou_matrix
from hwbench_gui.demos.tracking.detectors import MotionDetector


def _clip(shake_px: float) -> synthetic.SequenceSpec:
    """4 s at 25 fps, 320×240: one figure walks across a textured background; the camera shakes."""
    figure = synthetic.FigureSpec(1, 22, 56, 30, -22.0, 100.0, 2.5, 0.0, ((200, 180, 160), (40, 60, 200),
                                                                           (60, 60, 60)))
    return synthetic.SequenceSpec(320, 240, 100, [figure], [], noise_sigma=2.0, seed=4, fps=25.0,
                                  shake_px=shake_px)


def _errors(stabilise: bool, shake_px: float = 2.0) -> tuple[int, float, float]:
    """After 1 s: boxes on nothing, the fraction of the figure's frames with a box on it at IoU ≥ 0.5,
    and the mean distance (px) of that box's top-left corner (the head and shoulders: MOG2 loses
    some of the dark legs) from the figure's, over the frames the model found shaken by a pixel or
    more."""
    detector = MotionDetector(stabilise=stabilise, start_s=0.5)
    false_boxes, hits, along = 0, [], []
    for n, frame, gt in synthetic.render(_clip(shake_px)):
        boxes = detector.detect(frame).boxes.reshape(-1, 4)
        if n <= 25:
            continue
        truth = np.array([g.box for g in gt], float).reshape(-1, 4)
        iou = iou_matrix(truth, boxes) if len(truth) and len(boxes) else np.zeros((len(truth), len(boxes)))
        false_boxes += int((iou.max(axis=0) < 0.1).sum()) if len(truth) else len(boxes)
        if len(truth) and gt[0].visibility > 0.99:
            hits.append(bool(len(boxes)) and iou[0].max() >= 0.5)
            shift = np.array(detector.shift)
            if hits[-1] and np.hypot(*shift) >= 1.0:
                along.append(float(np.hypot(*(boxes[int(iou[0].argmax())][:2] - truth[0, :2]))))
    return false_boxes, float(np.mean(hits)), float(np.mean(along)) if along else float("nan")


def test_a_shaking_camera_gives_no_blobs_on_the_background():
    false_stable, found_stable, off_stable = _errors(stabilise=True)
    false_shaking, _, _ = _errors(stabilise=False)
    assert false_shaking >= 20, false_shaking  # the sway's edges, without stabilising
    assert false_stable <= 3, false_stable
    # The figure's boxes are where it is in the frame given, not where the background model has it.
    assert found_stable >= 0.9, found_stable
    assert off_stable <= 2.5, off_stable


def _crossing_behind_a_post() -> synthetic.SequenceSpec:
    """A steady camera: two people cross each other behind an 80 px post (they pull a phase
    correlation by a pixel as they come out, with a weak peak)."""
    from hwbench_gui.demos.tracking import scenes

    camera = scenes.Camera(width=320, height=240, horizon_y=30.0, near_height_px=110.0)
    figures = []
    for k, (z, direction) in enumerate(((17.0, 1), (19.0, -1))):
        edge = camera.half_width_m(z) * 1.15
        figures.append(scenes.walker(k + 1, camera, [(-direction * edge, z, 0.0), (direction * edge, z, 1.0)], 1,
                                     170, 25.0, seed=1))
    return synthetic.SequenceSpec(320, 240, 170, figures, [(120, 10, 200, 240)], seed=4, fps=25.0,
                                  figure_shape="people")


@pytest.mark.parametrize("clip", [lambda: _clip(0.0), _crossing_behind_a_post], ids=["walker", "crossing-post"])
def test_a_steady_camera_is_left_as_it_is(clip):
    detector = MotionDetector()
    for n, frame, gt in synthetic.render(clip()):
        detector.detect(frame)
        if n > 2:
            assert detector.shift == (0.0, 0.0), n
