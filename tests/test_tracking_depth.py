"""People at different depths who overlap (one in front, one behind and beside, the head standing
out above) come out of background subtraction as one blob: :func:`split_by_depth` cuts it from the
learnt per-row person height, and the occlusion-aware tracker reports a track held in a merged
blob with the part it recognises as its own. Generated masks and boxes with known answers."""

from __future__ import annotations

import numpy as np

from hwbench_gui.demos.tracking.blobs import PersonHeights, split_by_depth
from hwbench_gui.demos.tracking.deepsort import Detection, Tracker

# The blob's box's top-left in the frame: every mask below is drawn there.
X0, Y0 = 50, 80


def _heights(slope: float = 0.5, offset: float = -20.0) -> PersonHeights:
    """A model fed upright boxes of height slope · foot row + offset: 90 px tall with feet on frame
    row 220 (mask row 140), 80 px on row 200 (mask row 120)."""
    model = PersonHeights(min_samples=10, refit_every=1)
    for y in np.linspace(80, 280, 30):
        h = slope * y + offset
        model.add(100, y - h, 100 + h / 2.5, y)
    return model


def _front(mask: np.ndarray) -> np.ndarray:
    """The person in front: 90 px tall (as expected at their foot row), 36 wide, feet on mask row 140."""
    mask[50:140, 30:66] = True
    return mask


def test_a_person_behind_and_beside_is_cut_from_the_one_in_front():
    """Behind: 80 px tall (as expected at their foot row 120), columns 8-40, their right side hidden
    by the front person's left. Known answer: the front person's box and theirs, exactly."""
    mask = _front(np.zeros((140, 70), bool))
    mask[40:120, 8:40] = True
    parts = split_by_depth(mask, X0, Y0, _heights())
    assert parts == [(30, 50, 66, 140), (8, 40, 40, 120)]


def test_a_person_with_an_arm_out_or_in_a_stride_is_not_cut():
    """An arm held out with a bag (20 rows, as many pixels as a person's 0.3: far too short for a
    person standing on its bottom row) and legs apart (the feet span the whole blob: nothing lies
    outside the front person) leave one person."""
    arm = _front(np.zeros((140, 70), bool))
    arm[70:90, 0:30] = True
    assert split_by_depth(arm, X0, Y0, _heights()) is None
    stride = np.zeros((140, 70), bool)
    stride[50:110, 30:54] = True
    stride[110:140, 14:26] = True
    stride[110:140, 56:68] = True
    stride[105:112, 14:68] = True  # the hips joining the legs
    assert split_by_depth(stride, X0, Y0, _heights()) is None


def test_a_taller_persons_own_head_and_arms_are_not_someone_behind():
    """110 px tall where 90 are expected, feet narrower than the body: what lies outside the front
    box (head above it, sides of the body) is one piece of a person's height, but it stands above
    the front person's own feet, so it is theirs."""
    mask = np.zeros((140, 70), bool)
    mask[30:132, 30:66] = True
    mask[132:140, 42:54] = True  # the feet
    assert split_by_depth(mask, X0, Y0, _heights()) is None


def test_no_heights_known_no_cut():
    mask = _front(np.zeros((140, 70), bool))
    mask[40:120, 8:40] = True
    assert split_by_depth(mask, X0, Y0, PersonHeights()) is None


def _feature(k: int) -> np.ndarray:
    f = np.zeros(8, np.float32)
    f[k] = 1.0
    return f


def _merged_frame(parts: list[tuple[np.ndarray, np.ndarray]], **tracker_options) -> dict[int, np.ndarray]:
    """Two figures (features 0 and 1), one partly behind the other, stand for 5 frames, each its
    own blob; then one blob covering both is cut into ``parts`` (box, feature). Returns each
    track's reported box that frame (track 1: the figure in front, feature 0)."""
    tracker = Tracker(n_init=2, occlusion_aware=True, **tracker_options)
    front, behind = np.array([100.0, 100, 130, 175]), np.array([120.0, 102, 150, 177])
    for _ in range(5):
        tracker.predict()
        tracker.update([Detection(front, feature=_feature(0), blob=1), Detection(behind, feature=_feature(1), blob=2)])
    tracker.predict()
    tracker.update([Detection(box, feature=f, blob=3) for box, f in parts])
    reported = {t.track_id: box for t, box in tracker.reported_tracks()}
    assert set(reported) == {1, 2} and all(t.held_box is not None for t in tracker.tracks), reported
    return reported


def test_a_held_track_is_reported_with_the_part_that_is_its_own():
    """The front figure's part fits its prediction and looks like it: its box; the one behind is
    seen in part (its upper two thirds: IoU 0.64 with its prediction, but not its height): the
    prediction clipped to the blob."""
    a, b_top = np.array([101.0, 100, 131, 175]), np.array([120.0, 102, 150, 150])
    reported = _merged_frame([(a, _feature(0)), (b_top, _feature(1))])
    np.testing.assert_allclose(reported[1], a)
    assert reported[2][3] > 170, "the part half its height is not taken for the track behind"


def test_a_held_track_takes_its_part_where_its_prediction_drifted_off_it():
    """The prediction coasts on while the person slows inside the blob: their part, 30 px above it
    (IoU 0.40, centres 0.4 of a height apart), is still theirs."""
    a, b_top = np.array([101.0, 100, 131, 175]), np.array([120.0, 102, 150, 150])
    above = a + [0, -30, 0, -30]
    np.testing.assert_allclose(_merged_frame([(above, _feature(0)), (b_top, _feature(1))])[1], above)
    # With recognition turned off, the prediction moved into the blob instead.
    assert not np.allclose(_merged_frame([(above, _feature(0)), (b_top, _feature(1))], held_reach=0)[1], above)


def test_a_part_that_looks_like_another_track_or_covers_two_is_not_taken():
    """The same part looking like no one, or like the other figure more, is not the front figure's,
    nor is a part away from its prediction; a part over both predictions is a merged blob itself."""
    # 3 px narrower than the prediction, so that it is not also where the prediction moved into the
    # blob would be.
    a, b_top = np.array([101.0, 100, 128, 175]), np.array([120.0, 102, 150, 150])
    reported = _merged_frame([(a, _feature(2)), (b_top, _feature(1))])  # like no one
    assert not np.allclose(reported[1], a)
    # Within a looser max_cosine_distance of the front figure (0.4) but nearer the one behind (0.2).
    mixed = np.array([0.6, 0.8, 0, 0, 0, 0, 0, 0], np.float32)
    assert np.allclose(_merged_frame([(a, _feature(0)), (b_top, _feature(1))], max_cosine_distance=0.5)[1], a)
    assert not np.allclose(_merged_frame([(a, mixed), (b_top, _feature(1))], max_cosine_distance=0.5)[1], a)
    # Its height and looks, but its centre more than its predicted height (75 px) from the prediction's.
    away = a + [-80, 0, -80, 0]
    assert not np.allclose(_merged_frame([(away, _feature(0)), (b_top, _feature(1))])[1], away)
    both = np.array([100.0, 100, 150, 177])
    reported = _merged_frame([(both, _feature(0)), (b_top, _feature(1))])
    assert not np.allclose(reported[1], both)
