"""Tracking through merges: occlusion-aware Deep SORT holds tracks inside a merged blob, the median
background keeps no ghost of an object that stood in frame 1. No window, no GPU."""

from __future__ import annotations

import numpy as np
import pytest

from hwbench_gui.demos.tracking import synthetic
from hwbench_gui.demos.tracking.deepsort import Detection, Tracker
from hwbench_gui.demos.tracking.detectors import Detections, MotionDetector
from hwbench_gui.demos.tracking.pipeline import TrackingPipeline


def _walkers(frame: int) -> list[np.ndarray]:
    """Three 20×50 boxes, two walking towards the third from the left and right (4 px/frame)."""
    return [np.array([100.0 + 4 * frame, 100, 120 + 4 * frame, 150]),
            np.array([300.0 - 4 * frame, 104, 320 - 4 * frame, 154]),
            np.array([200.0, 98, 220, 148])]


def _run_crossing(occlusion_aware: bool):
    """Boxes seen apart for frames 0-14, as one union blob for 15-34 (they overlap), apart again after."""
    tracker = Tracker(n_init=2, occlusion_aware=occlusion_aware)
    ids_before, ids_after, held_frames = {}, {}, 0
    for frame in range(50):
        boxes = _walkers(frame)
        merged = 15 <= frame < 35
        if merged:
            b = np.array(boxes)
            dets = [Detection(np.concatenate([b[:, :2].min(0), b[:, 2:].max(0)]))]
        else:
            dets = [Detection(box) for box in boxes]
        tracker.predict()
        tracker.update(dets)
        reported = tracker.reported_tracks()
        if merged:
            held_frames += sum(t.held_box is not None for t, _ in reported) == 3
            blob = dets[0].box
            assert all(box[0] >= blob[0] - 1e-6 and box[2] <= blob[2] + 1e-6 for _, box in reported)
            continue
        for t, box in reported:
            k = int(np.argmin([np.abs(box - b).sum() for b in boxes]))
            (ids_before if frame < 15 else ids_after).setdefault(k, set()).add(t.track_id)
    return ids_before, ids_after, held_frames, tracker


def test_tracks_are_held_through_a_merged_blob_and_keep_their_ids():
    before, after, held_frames, tracker = _run_crossing(occlusion_aware=True)
    assert held_frames == 20, "all three tracks are held and reported in every merged frame"
    assert all(len(ids) == 1 for ids in before.values()) and len(before) == 3
    assert after == before
    assert tracker._next_id == 4 and tracker._tentative_id == -3, "the blob itself started no track"


def test_plain_deep_sort_drops_the_tracks_of_a_merged_blob():
    """The same input without the occlusion step: at most one track is reported per merged frame."""
    tracker = Tracker(n_init=2)
    for frame in range(35):
        b = np.array(_walkers(frame))
        dets = [Detection(np.concatenate([b[:, :2].min(0), b[:, 2:].max(0)]))] if frame >= 15 else \
            [Detection(box) for box in b]
        tracker.predict()
        tracker.update(dets)
        if frame >= 15:
            assert len(tracker.reported_tracks()) <= 1


def test_a_blob_covering_one_track_is_matched_as_usual():
    tracker = Tracker(n_init=1, occlusion_aware=True)
    for frame in range(5):
        tracker.predict()
        tracker.update([Detection(b) for b in _walkers(frame)[:2]])
    tracker.predict()
    tracker.update([Detection(_walkers(5)[0] + [-2, -2, 2, 2]), Detection(_walkers(5)[1])])
    assert sorted(t.track_id for t in tracker.active_tracks()) == [1, 2]
    assert all(t.held_box is None for t in tracker.tracks)


def _boxes_near(dets, x_range):
    return [b for b in dets.boxes if x_range[0] <= (b[0] + b[2]) / 2 <= x_range[1]]


@pytest.mark.parametrize("background, drop_ghosts, ghost_expected",
                         [("median", True, False), ("mog2", False, True), ("mog2", True, False)])
def test_an_object_standing_in_frame_1_leaves_no_ghost(background, drop_ghosts, ghost_expected):
    """A figure stands at x≈60 for 20 frames, then walks right (it has left its spot by frame 38).
    MOG2 learnt it from frame 1 and still sees its ghost at frame 45: reported as a blob unless
    ghosts are dropped (outline an edge in the background image, not in the frame); the median
    background learns it away. All see the walker."""
    fig = synthetic.FigureSpec(1, 30, 66, 1, 45.0, 200.0, 3.0, 0.0, ((180, 160, 150), (40, 40, 220), (220, 60, 40)),
                               stand_frames=20)
    spec = synthetic.SequenceSpec(320, 320, 45, [fig], [], seed=3)
    detector = MotionDetector(background=background, drop_ghosts=drop_ghosts)
    for n, frame, gt in synthetic.render(spec):
        dets = detector.detect(frame)
    walker_x = (gt[0].box[0] + gt[0].box[2]) / 2
    assert len(_boxes_near(dets, (walker_x - 20, walker_x + 20))) == 1
    assert bool(_boxes_near(dets, (40, 80))) == ghost_expected


def test_five_converging_figures_keep_more_of_their_ids_with_the_occlusion_step():
    """Five figures in view from frame 1 meet in one blob mid-way (generated; seed 11, not one of the
    quality suite's): the demo's pipeline (occlusion-aware) beats plain Deep SORT on IDF1 and MOTA
    and hands out fewer ids."""
    pytest.importorskip("trackers")
    from hwbench_gui.demos.tracking.io import MotRow
    from hwbench_gui.demos.tracking.metrics import evaluate
    from hwbench_gui.demos.tracking.pipeline import TrackingPipeline

    spec = synthetic.converging_spec(n_frames=140, n_objects=5, seed=11)
    figures = {}
    for name, tracker in (("plain", Tracker()), ("occlusion-aware", None)):
        pipeline = TrackingPipeline(MotionDetector(), tracker=tracker)
        gt, hyp = [], []
        for n, frame, boxes in synthetic.render(spec):
            gt += [MotRow(n, g.object_id, g.box, 1.0) for g in boxes]
            hyp += [MotRow(n, t.track_id, tuple(t.box), 1.0) for t in pipeline.step(frame).tracks]
        figures[name] = {**evaluate(gt, hyp, n_frames=spec.n_frames), "ids": len({r.object_id for r in hyp})}
    plain, aware = figures["plain"], figures["occlusion-aware"]
    assert aware["IDF1"] > plain["IDF1"] + 0.1, figures
    assert aware["MOTA"] > plain["MOTA"], figures
    assert aware["ids"] < plain["ids"], figures


def _feature(k: int) -> np.ndarray:
    f = np.zeros(8, np.float32)
    f[k] = 1.0
    return f


def _reappearing(tracker: Tracker, emerge_box) -> list[int]:
    """Two figures (features 0 and 1) walk right 4 px/frame for 10 frames; the first disappears
    (behind something) for 12 frames, then shows up as ``emerge_box`` (relative to where it would
    be) with its own appearance. Returns the id reported for it on emerging."""
    def box(frame, k):
        return np.array([100.0 + 4 * frame, 100 + 150 * k, 120 + 4 * frame, 150 + 150 * k])
    ids = []
    for frame in range(30):
        dets = [Detection(box(frame, 1), feature=_feature(1))]
        if frame < 10:
            dets.append(Detection(box(frame, 0), feature=_feature(0)))
        elif frame >= 22:
            dets.append(Detection(box(frame, 0) + emerge_box, feature=_feature(0)))
        tracker.predict()
        tracker.update(dets)
        if frame == 9:
            first_id = next(t.track_id for t in tracker.active_tracks() if t.last_box[1] < 200)
        if frame >= 22:
            ids += [t.track_id for t in tracker.active_tracks() if t.last_box[1] < 200]
    return [first_id] + ids


def test_a_figure_seen_in_part_after_an_occlusion_keeps_its_id():
    """Only its top half shows at first (as from behind a pillar): the Kalman gate refuses the
    half-height box, the appearance + distance stage of the occlusion-aware tracker takes it."""
    top_half = np.array([0.0, 0, 0, -25])
    ids = _reappearing(Tracker(n_init=2, occlusion_aware=True), top_half)
    assert set(ids) == {ids[0]}, ids
    plain = _reappearing(Tracker(n_init=2), top_half)
    assert plain[0] not in plain[1:], "without the stage the figure is born again (the gate refuses it)"


def test_the_loose_stage_refuses_slivers_and_far_boxes():
    """A box under ``reid_min_area`` of the track's area (a figure leaving the frame, a strip beside a
    pillar: slivers look like anyone) or centred too far from the prediction is not taken."""
    tracker = Tracker(n_init=1, occlusion_aware=True)
    for frame in range(3):
        tracker.predict()
        tracker.update([Detection(np.array([100.0 + 4 * frame, 100, 120 + 4 * frame, 150]), feature=_feature(0))])
    tracker.predict()  # predicted near x 112-132, y 100-150
    half = Detection(np.array([112.0, 100, 132, 125]), feature=_feature(0))
    sliver = Detection(np.array([112.0, 100, 115, 150]), feature=_feature(0))  # 3 × 50: 15 % of the area
    far = Detection(np.array([200.0, 100, 220, 150]), feature=_feature(0))
    for det, taken in ((half, True), (sliver, False), (far, False)):
        matches, _, _ = tracker._reidentify([det], [0], [0])
        assert bool(matches) == taken, det.box


def test_a_track_that_left_a_blob_unmatched_lives_max_age_held_frames():
    tracker = Tracker(n_init=1, occlusion_aware=True, max_age=5, max_age_held=40)
    boxes = [np.array([100.0, 100, 120, 150]), np.array([110.0, 102, 130, 152])]
    for frame in range(3):
        tracker.predict()
        tracker.update([Detection(b) for b in boxes])
    tracker.predict()
    tracker.update([Detection(np.array([98.0, 98, 132, 154]))])  # one blob over both: held
    assert sum(t.held_box is not None for t in tracker.tracks) == 2
    for frame in range(20):  # then nothing at all, past max_age
        tracker.predict()
        tracker.update([])
    assert len(tracker.tracks) == 2


def _coast_after_growth(occlusion_aware: bool) -> np.ndarray:
    """A 20×50 box seen for 5 frames while its blob grows 4 px wider and 2 px taller per frame (as
    when another figure starts to merge into it), then seen no more for 15 frames: the predicted box."""
    tracker = Tracker(n_init=1, occlusion_aware=occlusion_aware)
    for frame in range(5):
        tracker.predict()
        tracker.update([Detection(np.array([100.0, 100, 120 + 4 * frame, 150 + 2 * frame]))])
    for _ in range(15):
        tracker.predict()
        tracker.update([])
    return tracker.tracks[0].box


def test_a_coasting_track_keeps_its_size():
    """Occlusion-aware: a track that goes uncorrected keeps the size it had when last seen; the
    growth rate taken from a merging blob's edges is not extrapolated. Plain Deep SORT extrapolates it."""
    last_seen_h = 58.0
    h = np.ptp(_coast_after_growth(True)[1::2])
    assert 50 <= h <= last_seen_h + 2, h
    h_plain = np.ptp(_coast_after_growth(False)[1::2])
    assert h_plain > last_seen_h + 15, h_plain



def _lives_after_loss(widths: list[float], x1: float = 100.0, frame_wh=(320, 240)) -> int:
    """Frames a track lives unseen (max_age 5, max_age_held 40) after its last detections stop:
    8 frames of a steady 20×50 box at ``x1``, then boxes of ``widths`` from the same left edge."""
    tracker = Tracker(n_init=1, occlusion_aware=True, max_age=5, max_age_held=40)
    for w in [20.0] * 8 + widths:
        tracker.predict()
        tracker.update([Detection(np.array([x1, 100, x1 + w, 150]))], frame_wh=frame_wh)
    assert [t.track_id for t in tracker.tracks] == [1]
    for frame in range(60):
        tracker.predict()
        tracker.update([], frame_wh=frame_wh)
        if not tracker.tracks:
            return frame
    return 60


def test_a_track_cut_in_mid_frame_lives_max_age_held_frames():
    """Its box shrinks from one side (a pillar the background model learnt hides more of it every
    frame) and then it is gone: it went behind something, so it lives max_age_held frames unseen.
    A track that vanishes whole, one that only shrank a little and one whose tracker is not told
    the frame size keep max_age; one cut at the frame's edge walked out of the view: it is deleted
    at once (test_tracking_crowd.py pins that rule)."""
    cut = [16.0, 12.0, 8.0]
    assert _lives_after_loss(cut) == 40
    assert _lives_after_loss([]) == 5, "vanished whole"
    assert _lives_after_loss(cut, x1=2.0) == 0, "cut at the frame's edge: it left"
    assert _lives_after_loss([18.0]) == 5, "10 % narrower: noise in the blob's edge, not a cut"
    assert _lives_after_loss(cut, frame_wh=None) == 5, "no frame size: nothing counts as cut"


def test_the_pipeline_tells_the_tracker_the_frame_size():
    """Without the frame size the tracker counts no track as cut: the pipeline must pass it on."""
    widths = iter([20.0] * 8 + [16.0, 12.0, 8.0])

    class ScriptedDetector:
        merges_objects = True

        def detect(self, frame):
            w = next(widths, None)
            if w is None:
                return Detections()
            return Detections(np.array([[100, 100, 100 + w, 150]], np.float32), np.ones(1, np.float32),
                              np.zeros(1, np.int64))

    tracker = Tracker(n_init=1, occlusion_aware=True, max_age=5, max_age_held=40)
    pipeline = TrackingPipeline(ScriptedDetector(), tracker=tracker, use_appearance=False)
    frame = np.zeros((240, 320, 3), np.uint8)
    for _ in range(11 + 20):  # the 11 detections, then 20 frames with none: past max_age
        pipeline.step(frame)
    assert [t.was_cut for t in tracker.tracks] == [True]


@pytest.mark.parametrize("parts, fit", [
    ([[0, 0, 10, 20], [12, 0, 22, 20]], True),  # each prediction has its own part
    ([[0, 0, 22, 20]], False),  # fewer parts than tracks
    ([[0, 0, 10, 20], [0, 0, 10, 20]], False),  # both parts on the first prediction: not one each
    ([[0, 0, 10, 20], [19, 0, 29, 20]], False),  # the second part overlaps its prediction too little
    ([[0, 0, 10, 20], [12, 0, 22, 20], [30, 0, 40, 20]], True),  # a spare part is allowed
], ids=["one each", "too few", "shared", "below split_iou", "one spare"])
def test_a_blobs_parts_fit_its_tracks_only_one_each_at_split_iou_or_more(parts, fit):
    tracker = Tracker(split_iou=0.3)
    predictions = np.array([[0.0, 0, 10, 20], [12.0, 0, 22, 20]])
    assert tracker._parts_fit(predictions, [np.array(p, dtype=float) for p in parts]) is fit


def test_a_part_at_exactly_split_iou_fits():
    part = np.array([0.0, 0, 10, 20])
    prediction = np.array([[0.0, 0, 10, 20]])
    shifted = np.array([5.0, 0, 15, 20])  # IoU with the prediction: 100 / 300
    assert Tracker(split_iou=1 / 3)._parts_fit(prediction, [shifted])
    assert not Tracker(split_iou=1 / 3 + 1e-9)._parts_fit(prediction, [shifted])
    assert Tracker(split_iou=1.0)._parts_fit(prediction, [part])


def test_two_overlapping_predictions_cannot_both_take_the_one_part_that_covers_them():
    """One part each: a part between two overlapping predictions (IoU 0.67 with both) stands for one of them,
    and a far part for neither, so the tracks are held rather than split."""
    predictions = np.array([[0.0, 0, 10, 20], [4.0, 0, 14, 20]])
    parts = [np.array([2.0, 0, 12, 20]), np.array([40.0, 0, 50, 20])]
    assert not Tracker(split_iou=0.3)._parts_fit(predictions, parts)


def test_a_group_that_stands_together_longer_than_max_age_held_keeps_its_ids():
    """Two people stand side by side, seen apart for 25 frames, then as one blob for 60 frames (three
    times max_age_held: they lean in to talk), then walk apart: held all the while, each comes out
    under the id it went in with. (A held track coasts on the velocity it had: one still walking when
    the blob formed drifts out of a group that stands, and is released; not pinned here.)"""
    tracker = Tracker(n_init=2, occlusion_aware=True, max_age=5, max_age_held=20)

    def boxes(frame: int) -> list[np.ndarray]:
        walk = max(0, frame - 85)
        return [np.array([130.0 - 3 * walk, 100, 150 - 3 * walk, 150]),
                np.array([145.0 + 3 * walk, 102, 165 + 3 * walk, 152])]

    ids, held = {0: set(), 1: set()}, 0
    for frame in range(100):
        b = boxes(frame)
        merged = 25 <= frame < 85
        dets = [Detection(np.concatenate([np.min(b, 0)[:2], np.max(b, 0)[2:]]) + [-2, 0, 2, 0])] if merged \
            else [Detection(x) for x in b]
        tracker.predict()
        tracker.update(dets)
        if merged:
            held += sum(t.held_box is not None for t in tracker.tracks) == 2
            continue
        for t in tracker.active_tracks():
            ids[int(np.argmin([np.abs(t.last_box - x).sum() for x in b]))].add(t.track_id)
    assert held == 60
    assert ids == {0: {1}, 1: {2}}


def test_a_held_track_that_coasts_past_its_blob_is_reported_whole_inside_it():
    """Two people walk right together (4 px/frame) and stop in one blob; their held predictions
    coast on, the front one's past the blob's right edge. It is reported as a box of its own size
    moved back inside the blob (flush with the edge it ran past), not the sliver left by clipping."""
    tracker = Tracker(n_init=2, occlusion_aware=True)
    for frame in range(8):
        tracker.predict()
        tracker.update([Detection(np.array([100.0 + 4 * frame, 100, 120 + 4 * frame, 150])),
                        Detection(np.array([112.0 + 4 * frame, 104, 132 + 4 * frame, 156]))])
    blob = np.array([128.0, 100, 164, 156])  # where they stopped, as one blob from now on
    for _ in range(2):
        tracker.predict()
        tracker.update([Detection(blob)])
    back, front = tracker.tracks
    assert front.box[2] > blob[2] + 2.5, "the prediction ran past the blob"
    assert front.held_box == pytest.approx([144.0, 104, 164, 156], abs=0.6)
    assert back.held_box == pytest.approx(back.box), "a prediction inside the blob is reported as it is"
