"""What a viewer of the tracking demo sees: nothing tracked on scenery, one box and one id per person,
labels that never overlap, and ids that count the tracks shown."""

from __future__ import annotations

import numpy as np
import pytest

from hwbench_gui.demos.tracking import synthetic
from hwbench_gui.demos.tracking.boxes import iou_matrix
from hwbench_gui.demos.tracking.deepsort import Detection, Tracker
from hwbench_gui.demos.tracking.labels import place_labels
from hwbench_gui.demos.tracking.scenery import SceneryFilter

FPS = 10.0  # the generated clips run at a low rate: the seconds that matter, in few frames


def _scene(n_frames: int = 26) -> synthetic.SequenceSpec:
    """A person-shaped object standing still (id 1) beside three people walking, none crossing it."""
    rng = np.random.default_rng(4)
    figures = [synthetic.FigureSpec(1, 40, 96, 1, 60.0, 200.0, 0.0, 0.0, synthetic._figure_colors(rng, 0))]
    for k, (x, y, vx) in enumerate([(200.0, 60.0, 5.0), (520.0, 240.0, -5.0), (300.0, 380.0, 4.0)], start=2):
        figures.append(synthetic.FigureSpec(k, 40, 96, 1, x, y, vx, 0.0, synthetic._figure_colors(rng, k)))
    return synthetic.SequenceSpec(640, 480, n_frames, figures, [], seed=4, fps=FPS, figure_shape="people")


def test_scenery_filter_drops_the_still_figure_and_keeps_the_walkers():
    """Fed every figure's true box as a detection, the filter never keeps the still one and keeps
    the walkers in every frame once it has a frame ``lag_s`` old to compare with."""
    scenery = SceneryFilter(FPS)
    kept = {k: [] for k in range(1, 5)}
    for n, frame, gt in synthetic.render(_scene()):
        keep = scenery.keep(frame, np.array([g.box for g in gt]))
        for g, k in zip(gt, keep):
            if n > scenery.lag:
                kept[g.object_id].append(bool(k))
    assert not any(kept[1])
    assert all(all(kept[k]) for k in (2, 3, 4)), kept


def test_scenery_filter_keeps_a_person_who_pauses_for_less_than_its_memory():
    """A box that moved, then stands still, is kept for ``remember_s`` and dropped after."""
    scenery = SceneryFilter(fps=10.0, lag_s=0.1, remember_s=1.0)
    frame = np.zeros((200, 200, 3), np.uint8)
    box = np.array([[50.0, 50.0, 90.0, 150.0]])
    kept = []
    for n in range(40):
        f = frame.copy()
        if n < 10:  # moving: its pixels change every frame
            f[50:150, 50:90] = 80 + 15 * (n % 2) * 8
        else:
            f[50:150, 50:90] = 80
        kept.append(bool(scenery.keep(f, box)[0]))
    assert all(kept[1:10]), kept
    assert all(kept[10:20]), "paused less than a second: kept"
    assert not any(kept[22:]), "still for longer: scenery"


def test_hog_tracks_nothing_on_a_still_person_shaped_object_for_more_than_two_seconds():
    """End to end with OpenCV's HOG detector: without the filter a track sits on the still figure
    all through the clip (so the clip tests something); with it no track on that figure lasts 2 s,
    and the walkers are tracked."""
    from hwbench_gui.demos.tracking.hog import HogPeopleDetector
    from hwbench_gui.demos.tracking.pipeline import TrackingPipeline

    spec = _scene()
    lives = {}
    for scenery in (False, True):
        pipeline = TrackingPipeline(HogPeopleDetector(scenery=scenery))
        pipeline.set_frame_rate(FPS)
        frames_on_still: dict[int, int] = {}
        walkers = set()
        for n, frame, gt in synthetic.render(spec):
            still = np.array([g.box for g in gt if g.object_id == 1])
            for t in pipeline.step(frame).tracks:
                if iou_matrix(t.box[None], still).max() > 0.3:
                    frames_on_still[t.track_id] = frames_on_still.get(t.track_id, 0) + 1
                else:
                    walkers.add(t.track_id)
        lives[scenery] = (max(frames_on_still.values(), default=0) / FPS, len(walkers))
    assert lives[False][0] > 2.0, lives
    assert lives[True][0] < 2.0, lives
    assert lives[True][1] >= 2, lives


def _feature(k: int) -> np.ndarray:
    f = np.zeros(8, np.float32)
    f[k] = 1.0
    return f


def _held_pair(overlap: str, alike: bool = True) -> Tracker:
    """Two tracks seen for 5 frames, then one blob over both; ``overlap``: the second track's box sits
    on the first's ("on": a second track grown on one person), inside it ("inside": a piece of them) or
    beside it ("beside"); ``alike``: they look the same."""
    tracker = Tracker(occlusion_aware=True)
    a = np.array([100.0, 100.0, 140.0, 200.0])
    b = {"on": a + [4.0, 0.0, 4.0, 0.0], "inside": np.array([105.0, 110.0, 135.0, 150.0]),
         "beside": a + [60.0, 0.0, 60.0, 0.0]}[overlap]
    for _ in range(5):
        tracker.predict()
        tracker.update([Detection(a, feature=_feature(0)), Detection(b, feature=_feature(0 if alike else 1))])
    tracker.predict()
    tracker.update([Detection(np.concatenate([np.minimum(a, b)[:2], np.maximum(a, b)[2:]]))])
    return tracker


@pytest.mark.parametrize("overlap, alike, shown", [("on", True, 1), ("inside", True, 1), ("beside", True, 2),
                                                   ("on", False, 2), ("inside", False, 2)])
def test_held_tracks_on_one_person_are_shown_once(overlap, alike, shown):
    """Two held tracks on one spot, or one inside the other, that look alike are one person, shown
    once; side by side, or looking different (two people crossing), both are shown."""
    tracker = _held_pair(overlap, alike)
    assert sum(t.held_box is not None for t in tracker.tracks) == 2, "both are held"
    assert len(tracker.reported_tracks()) == shown


def test_ids_are_given_when_tracks_are_confirmed():
    """Detections that start a track and vanish before it is confirmed take no id: the ids shown run
    from 1 without gaps."""
    tracker = Tracker()
    box = np.array([10.0, 10.0, 50.0, 110.0])
    for n in range(12):
        tracker.predict()
        flicker = [Detection(box + 200 + 37 * n)] if n % 2 else []  # one frame each: never confirmed
        person = [Detection(box + n)] if n >= 4 else []  # walks in after two flickers
        tracker.update(person + flicker)
    assert [t.track_id for t, _ in tracker.reported_tracks()] == [1]


def _measure(text: str) -> tuple[int, int]:
    return 8 * len(text), 14


def test_labels_never_overlap_and_give_way_by_shortening_then_hiding():
    """Boxes stacked so their labels' first places collide: each label takes a free place, a
    crowded one drops its " held", and one with no room left is hidden; none overlap."""
    boxes = [(100, 100, 140, 200), (102, 100, 142, 200), (104, 100, 144, 200), (106, 100, 146, 200),
             (108, 100, 148, 200)]
    texts = [[f"#{k} held", f"#{k}"] for k in range(1, 6)]
    placed = place_labels(boxes, texts, _measure, (640, 480))
    rects = [p[1] for p in placed if p is not None]
    for i in range(len(rects)):
        for j in range(i + 1, len(rects)):
            a, b = rects[i], rects[j]
            assert not (a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]), (a, b)
    assert placed[0][0] == "#1 held"
    assert any(p is None for p in placed), "five labels over one spot: some hidden"
    assert all(0 <= r[0] and r[2] <= 640 and 0 <= r[1] and r[3] <= 480 for r in rects)


def test_drawn_labels_do_not_overlap_on_a_frame():
    """draw_tracks places its labels with place_labels: two tracks with the same top-left corner get
    their labels in different places (the filled label rectangles, what survives an erosion that
    removes the 2 px box outlines, do not meet)."""
    import cv2

    from hwbench_gui.demos.tracking.detection import Detections
    from hwbench_gui.demos.tracking.pipeline import FrameResult, TrackBox
    from hwbench_gui.demos.tracking.render import draw_tracks, id_color

    frame = np.zeros((240, 320, 3), np.uint8)
    tracks = [TrackBox(1, np.array([100.0, 100.0, 140.0, 200.0]), 1.0, 0, []),
              TrackBox(2, np.array([100.0, 100.0, 150.0, 210.0]), 1.0, 0, [])]
    out = draw_tracks(frame, FrameResult(1, tracks, Detections(), {}))
    filled = [cv2.erode((out == np.array(id_color(k), np.uint8)).all(axis=2).astype(np.uint8), np.ones((5, 5)))
              for k in (1, 2)]
    assert filled[0].any() and filled[1].any()
    grown = [cv2.dilate(f, np.ones((5, 5))) for f in filled]  # back to the labels' full extent
    assert not (grown[0] & grown[1]).any()


def test_the_motion_detector_takes_a_blob_far_shorter_than_a_person_there_for_a_speck():
    """Once it has learnt that people standing on rows 300–400 look 100 px tall, a 20 px blob there is
    a speck (a glint on the floor), a 60 px one is not; before it knows, nothing is a speck."""
    from hwbench_gui.demos.tracking.motion_detector import MotionDetector

    detector = MotionDetector()
    assert not detector._speck(350, 20)
    for k in range(60):
        foot = 300 + (k % 11) * 10
        detector.heights.add(100.0, foot - 100.0, 140.0, float(foot))
    assert detector.heights.expected(350) == pytest.approx(100.0)
    assert detector._speck(350, 20) and not detector._speck(350, 60)
    detector.min_person_share = 0.0
    assert not detector._speck(350, 20)
