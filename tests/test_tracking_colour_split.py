"""People walking abreast at a level camera overlap a little and come out of background subtraction
as one blob with no dip in its outline; they are told apart by what they wear: the blob is cut at
the column where the colours of its two sides differ most, when they differ clearly. Masks with
known colours and a small generated clip; deterministic (boxes, no timing)."""

from __future__ import annotations

import numpy as np

from hwbench_gui.demos.tracking import synthetic
from hwbench_gui.demos.tracking.blobs import split_blob, split_by_colour
from hwbench_gui.demos.tracking.deepsort import iou_matrix
from hwbench_gui.demos.tracking.detectors import MotionDetector

H = 90  # a person's height in the masks (px); people 30 px wide (3 times as tall)


def _abreast(bins_per_person: list[tuple[int, int]], overlap: int = 4):
    """Mask and hue-saturation bins of people side by side, each 30 × 90 px, each overlapping the one
    before by ``overlap`` px (drawn over it): (upper-body bin, lower-body bin) per person; heads dark
    (bin -1, no hue). Returns the mask, the bins and each person's visible box."""
    n = len(bins_per_person)
    width = 30 * n - overlap * (n - 1)
    mask = np.ones((H, width), bool)
    bins = np.full((H, width), -1, np.int32)
    boxes = []
    for k, (upper, lower) in enumerate(bins_per_person):
        x = k * (30 - overlap)
        bins[18:50, x:x + 30] = upper
        bins[50:, x:x + 30] = lower
        boxes.append((x, 0, x + 30, H))
    visible = [(x1, 0, boxes[k + 1][0] if k + 1 < n else x2, H) for k, (x1, _, x2, _) in enumerate(boxes)]
    return mask, bins, visible


def test_two_people_abreast_in_different_clothes_are_cut_at_their_boundary():
    """Red top / blue trousers beside green top / grey trousers, 4 px overlapping: the outline has no
    dip (split_blob leaves it whole) and the colour cut falls on the boundary (column 26)."""
    mask, bins, visible = _abreast([(0, 40), (20, 1)])
    assert len(split_blob(mask)) == 1
    parts = split_by_colour(mask, bins)
    assert parts == [(0, 0, 26, H), (26, 0, 56, H)], parts


def test_three_people_abreast_come_out_as_three():
    mask, bins, visible = _abreast([(0, 40), (20, 1), (33, 40)])
    parts = split_by_colour(mask, bins)
    assert len(parts) == 3
    iou = iou_matrix(np.array(parts, float), np.array(visible, float))
    assert (np.diag(iou) >= 0.9).all(), (parts, visible)


def test_people_dressed_alike_and_one_wide_person_are_not_cut():
    """Same clothes: no colour boundary, the blob stays whole. One person as wide as two narrow ones
    (arms out, 56 × 90) with a different top and trousers: left and right match, not cut. Two people
    only slightly different (the same top, trousers one hue bin apart: distance 0.56 at the boundary)
    are cut at a threshold below that and not above it."""
    mask, bins, _ = _abreast([(0, 40), (0, 40)])
    assert split_by_colour(mask, bins) == [(0, 0, 56, H)]
    wide = np.ones((H, 56), bool)
    one = np.full((H, 56), -1, np.int32)
    one[18:50], one[50:] = 0, 40
    assert split_by_colour(wide, one) == [(0, 0, 56, H)]
    mask, bins, _ = _abreast([(0, 40), (0, 44)])
    assert len(split_by_colour(mask, bins, min_distance=0.7)) == 1
    assert len(split_by_colour(mask, bins, min_distance=0.3)) == 2


def test_slivers_and_low_blobs_are_not_cut_off():
    """A person (30 × 90) carrying a bag 8 px wide in another colour at their side: the bag is
    narrower than any person, so it stays with them. A low wide blob in two colours (56 × 20, a car
    or a dog) is not cut into parts that are not upright."""
    mask = np.ones((H, 38), bool)
    bins = np.full((H, 38), -1, np.int32)
    bins[18:50, :30], bins[50:, :30], bins[30:70, 30:] = 0, 40, 20
    assert split_by_colour(mask, bins) == [(0, 0, 38, H)]
    low = np.ones((20, 56), bool)
    two = np.zeros((20, 56), np.int32)
    two[:, 28:] = 20
    assert split_by_colour(low, two) == [(0, 0, 56, 20)]


def _abreast_clip() -> synthetic.SequenceSpec:
    """3 s at 25 fps, 320 × 240: two people 30 × 84 px walk in from the left abreast, the second
    overlapping the first by 9 px (no dip in their outline), in different clothes."""
    figures = [synthetic.FigureSpec(1, 30, 84, 1, -60.0, 100.0, 2.5, 0.0, ((40, 60, 90), (30, 30, 200), (160, 60, 20))),
               synthetic.FigureSpec(2, 30, 84, 1, -39.0, 100.0, 2.5, 0.0, ((40, 60, 90), (40, 190, 40), (90, 90, 90)))]
    return synthetic.SequenceSpec(width=320, height=240, n_frames=75, figures=figures, noise_sigma=2.0, seed=3)


def _boxes_late_in_clip(detector: MotionDetector) -> list[np.ndarray]:
    spec = _abreast_clip()
    detector.set_frame_rate(spec.fps)
    found = []
    for n, frame, gt in synthetic.render(spec):
        boxes = detector.detect(frame).boxes
        if n > 40:  # both well inside the frame
            found.append((boxes, np.array([g.box for g in gt], float)))
    return found


def test_the_motion_detector_finds_both_walkers_of_a_pair_abreast():
    """Every frame once both are in view: two boxes, each on its own person (IoU ≥ 0.5); with the
    colour cut off the pair is one box."""
    for boxes, truth in _boxes_late_in_clip(MotionDetector()):
        assert len(boxes) == 2, boxes
        iou = iou_matrix(np.asarray(boxes, float), truth)
        assert (iou.max(axis=0) >= 0.5).all(), (boxes, truth)
    assert all(len(b) == 1 for b, _ in _boxes_late_in_clip(MotionDetector(split_colour=False)))
