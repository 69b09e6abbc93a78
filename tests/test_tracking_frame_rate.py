"""The motion detector's background learns by seconds, not frames: small generated clips at 10 and
30 fps of a figure that arrives and stays, and of one that stood in frame 1 and walked off
(deterministic: frame counts of a seeded clip, no timing)."""

from __future__ import annotations

import numpy as np
import pytest

from hwbench_gui.demos.tracking.detectors import MotionDetector
from hwbench_gui.demos.tracking.pipeline import TrackingPipeline

W, H = 160, 120
FIGURE = (70, 30, 90, 90)  # x1 y1 x2 y2: a 20×60 px figure


def _clip(fps: float, seconds: float, there, seed: int = 0):
    """Frames of a textured, noisy background; the flat figure drawn at FIGURE in the frames where
    ``there(t)`` (t in seconds) is true, elsewhere at the left edge or not at all."""
    rng = np.random.default_rng(seed)
    background = rng.integers(60, 160, (H, W, 3), dtype=np.uint8)
    for n in range(int(round(seconds * fps))):
        frame = np.clip(background.astype(np.int16) + rng.normal(0, 2, (H, W, 3)), 0, 255).astype(np.uint8)
        if there(n / fps):
            x1, y1, x2, y2 = FIGURE
            frame[y1:y2, x1:x2] = (30, 200, 230)
        yield frame


def _on_figure(dets) -> bool:
    if not len(dets):
        return False
    from hwbench_gui.demos.tracking.deepsort import iou_matrix

    return bool(iou_matrix(np.array([FIGURE], float), dets.boxes).max() >= 0.5)


def _seconds_seen(fps: float, arrive_s: float = 1.0, seconds: float = 4.0, **options) -> float:
    """Seconds for which a figure that arrives at ``arrive_s`` and stays is still detected."""
    detector = MotionDetector(scale=1.0, fps=fps, still_learnt_s=1.5, start_s=0.5, split_figures=False,
                              light_compensation=False, **options)
    seen = [_on_figure(detector.detect(f)) for f in _clip(fps, seconds, lambda t: t >= arrive_s)]
    return sum(seen) / fps


def test_learning_rate_is_set_in_seconds():
    """Known answers: learnt in 0.84 s at 25 fps is MOG2's rate 0.005 (ln 0.9 / ln 0.995 = 21 frames);
    the same seconds at 10 and 30 fps are 8.4 and 25.2 frames."""
    detector = MotionDetector(still_learnt_s=0.84, start_s=0.0)
    assert detector.learning_rate == pytest.approx(0.005, abs=2e-5)
    for fps in (10.0, 30.0):
        detector.set_frame_rate(fps)
        frames = np.log(0.9) / np.log(1 - detector.learning_rate)
        assert frames == pytest.approx(0.84 * fps, rel=1e-9)
    with pytest.raises(ValueError, match="fps"):
        detector.set_frame_rate(0.0)


def test_a_figure_that_stays_is_learnt_in_the_same_seconds_at_10_and_30_fps():
    """MOG2 on the clip: the figure is foreground for about ``still_learnt_s`` (1.5 s) at both rates
    (at a fixed per-frame rate it would last three times as long, in seconds, at 10 fps as at 30)."""
    at_10, at_30 = _seconds_seen(10.0), _seconds_seen(30.0)
    assert 1.0 <= at_10 <= 2.0 and 1.0 <= at_30 <= 2.0, (at_10, at_30)
    assert abs(at_10 - at_30) <= 0.3, (at_10, at_30)


def test_what_stood_in_frame_1_fades_at_the_start_rate():
    """A figure in frame 1 that walks off at 0.2 s leaves a ghost (ghost test off) that the start
    phase learns away within ``start_learnt_s``; a figure that arrives after the start phase stays
    foreground for ``still_learnt_s``."""
    def ghost_seconds(start_s: float) -> float:
        detector = MotionDetector(scale=1.0, fps=25.0, still_learnt_s=4.0, start_s=start_s, start_learnt_s=0.5,
                                  split_figures=False, light_compensation=False, drop_ghosts=False)
        seen = [_on_figure(detector.detect(f)) for f in _clip(25.0, 5.0, lambda t: t < 0.2)]
        return sum(seen) / 25.0

    assert ghost_seconds(start_s=2.0) <= 0.8
    assert ghost_seconds(start_s=0.0) >= 3.0  # without the start phase it lasts still_learnt_s


def test_pipeline_counts_standing_still_in_pixels_per_second():
    pipeline = TrackingPipeline(MotionDetector(), use_appearance=False)
    pipeline.set_frame_rate(10.0)
    slow_at_10 = pipeline.still_speed
    pipeline.set_frame_rate(30.0)
    assert slow_at_10 == pytest.approx(3 * pipeline.still_speed)
    assert pipeline.detector.fps == 30.0  # the detector follows the source's rate


def _seconds_lived_unseen(fps: float, **options) -> float:
    """Seconds a confirmed track lives after its detections stop, the tracker at ``fps``: 8 frames of
    a steady 20×50 box in mid-frame, then nothing."""
    from hwbench_gui.demos.tracking.deepsort import Detection, Tracker

    tracker = Tracker(n_init=1, occlusion_aware=True, **options)
    tracker.set_frame_rate(fps)
    for _ in range(8):
        tracker.predict()
        tracker.update([Detection(np.array([100.0, 100, 120, 150]))], frame_wh=(320, 240))
    for frame in range(1, 200):
        tracker.predict()
        tracker.update([], frame_wh=(320, 240))
        if not tracker.tracks:
            return frame / fps
    return 200 / fps


def test_tracker_ages_are_seconds_at_any_frame_rate():
    """max_age 25 frames at 25 fps is one second: a track lost in mid-frame is deleted after its
    26th frame unseen at 25 fps, the 11th at 10 fps and the 31st at 30 fps; rejoin_frames and the
    growing gates follow (known answers)."""
    from hwbench_gui.demos.tracking.deepsort import Tracker

    assert [_seconds_lived_unseen(fps, max_age=25) * fps for fps in (25.0, 10.0, 30.0)] == \
        pytest.approx([26, 11, 31])
    tracker = Tracker(max_age=25, max_age_held=75, rejoin_frames=100, reid_growth=0.1, rejoin_growth=0.03)
    tracker.set_frame_rate(10.0)
    assert (tracker.max_age, tracker.max_age_held, tracker.rejoin_frames) == (10, 30, 40)
    assert (tracker.reid_growth, tracker.rejoin_growth) == pytest.approx((0.25, 0.075))


def test_a_scene_kind_renders_the_same_scene_at_another_frame_rate():
    """Speeds are in m/s: at 10 fps the clip lasts as long and every walker covers the same ground
    as at its own 25 fps, in 2.5 times fewer frames."""
    from hwbench_gui.demos.tracking import scenes

    own, slow = scenes.scene_spec("street-level-25fps", 0), scenes.scene_spec("street-level-25fps", 0, fps=10.0)
    assert (own.fps, slow.fps) == (25.0, 10.0)
    assert own.n_frames / own.fps == pytest.approx(slow.n_frames / slow.fps)
    for a, b in zip(own.figures, slow.figures):
        walked_a, walked_b = np.nanmax(a.path[:, 4]), np.nanmax(b.path[:, 4])
        assert walked_b == pytest.approx(walked_a, rel=0.05)
        assert np.isfinite(b.path[:, 0]).sum() == pytest.approx(np.isfinite(a.path[:, 0]).sum() / 2.5, rel=0.05)
