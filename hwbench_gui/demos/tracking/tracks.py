"""A track's life: what a detection is to the tracker, a track's state and history, a lost track kept for
re-identification."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from hwbench_gui.demos.tracking.boxes import area as _area
from hwbench_gui.demos.tracking.boxes import moved_inside as _moved_inside
from hwbench_gui.demos.tracking.boxes import xyah_to_xyxy, xyxy_to_xyah
from hwbench_gui.demos.tracking.kalman import KalmanFilter

TENTATIVE, CONFIRMED, DELETED = 1, 2, 3


@dataclass
class Detection:
    """One detection as the tracker sees it: xyxy box, score, class, appearance feature (or None)."""

    box: np.ndarray
    score: float = 1.0
    class_id: int = 0
    feature: np.ndarray | None = None
    blob: int | None = None  # detections cut from one foreground blob share a number (see _split_merged)
    part: bool = False  # set by the tracker: one of two or more detections cut from one blob

    def __post_init__(self) -> None:
        self.xyah = xyxy_to_xyah(self.box)[0]


class Track:
    def __init__(self, mean, covariance, track_id: int, n_init: int, max_age: int, detection: Detection,
                 trail_len: int = 40) -> None:
        self.mean, self.covariance = mean, covariance
        self.track_id = track_id
        self.hits, self.age, self.time_since_update = 1, 1, 0
        self.unseen = 0  # frames since it was last matched or held (time_since_update counts only matches)
        self.state = TENTATIVE
        self.n_init, self.max_age = n_init, max_age
        self.features: list[np.ndarray] = [] if detection.feature is None else [detection.feature]
        self.last_box = np.asarray(detection.box, np.float64)
        self.score, self.class_id = detection.score, detection.class_id
        self.trail: deque[tuple[float, float]] = deque(maxlen=trail_len)
        self.held_box: np.ndarray | None = None  # set while held inside a merged blob (xyxy)
        self.was_held = False  # held in a merged blob since it was last matched: it may stay unseen longer
        self.was_cut = False  # lost in mid-frame just after its box shrank: it may stay unseen longer too
        self.areas: deque[float] = deque(maxlen=15)  # its last detections' box areas (px²), newest last
        self.areas.append(_area(self.last_box))
        self._add_trail_point()
        self.origin = self.trail[-1]
        self.from_part = detection.part  # its last detection was one of several cut from one blob
        self.travelled = 0.0  # farthest its detections' centre has been from the first one (px)
        # Its last full view, for re-identification after a gap: (tracker frame, xyxy box, centre
        # velocity px/frame) when its box was last near the largest of its recent ones. The boxes
        # just before it is lost are often cut by what hides it, and shrinking boxes skew velocity.
        self.full_view: tuple[int, np.ndarray, np.ndarray] | None = None
        # The confirmed track whose blob it was cut from when it started, until it shows it is someone
        # else: till then it takes no id and is not reported (Tracker._held_back).
        self.beside: Track | None = None
        self.beside_seen = 1  # frames in a row it was seen while that track was seen too (as when it started)

    def _add_trail_point(self) -> None:
        x1, y1, x2, y2 = self.last_box
        self.trail.append(((x1 + x2) / 2, (y1 + y2) / 2))

    def recent_speed(self, frames: int = 5) -> float:
        """Pixels per frame its detections' centre moved over its last ``frames`` detections (the
        Kalman velocity takes some 15 frames to settle after a stop, longer than the background model
        took to learn a standing figure as first shipped)."""
        if len(self.trail) <= frames:
            return float("inf")
        (x0, y0), (x1, y1) = self.trail[-1 - frames], self.trail[-1]
        return float(np.hypot(x1 - x0, y1 - y0)) / frames

    @property
    def box(self) -> np.ndarray:
        """The Kalman estimate as xyxy."""
        return xyah_to_xyxy(self.mean[:4])[0]

    def is_confirmed(self) -> bool:
        return self.state == CONFIRMED

    def is_tentative(self) -> bool:
        return self.state == TENTATIVE

    def is_deleted(self) -> bool:
        return self.state == DELETED

    def update(self, kf: KalmanFilter | None, detection: Detection) -> None:
        """Take ``detection``; with ``kf`` None the caller has already set the corrected mean/covariance."""
        if kf is not None:
            self.mean, self.covariance = kf.update(self.mean, self.covariance, detection.xyah)
        if detection.feature is not None:
            self.features.append(detection.feature)
        self.last_box = np.asarray(detection.box, np.float64)
        self.score, self.class_id = detection.score, detection.class_id
        self.hits += 1
        self.time_since_update = self.unseen = 0
        self.held_box = None
        self.was_held = self.was_cut = False
        self.areas.append(_area(self.last_box))
        self._add_trail_point()
        self.from_part = detection.part
        self.travelled = max(self.travelled, float(np.hypot(self.trail[-1][0] - self.origin[0],
                                                            self.trail[-1][1] - self.origin[1])))
        if self.state == TENTATIVE and self.hits >= self.n_init:
            self.state = CONFIRMED

    def mark_missed(self, max_age_held: int | None = None) -> None:
        """Unmatched this frame: tentative tracks die; confirmed ones after ``max_age`` frames unseen,
        or ``max_age_held`` when given and the track came out of a merged blob unmatched or was cut."""
        self.held_box = None
        long_life = self.was_held or self.was_cut
        max_age = max_age_held if long_life and max_age_held is not None else self.max_age
        if self.state == TENTATIVE or self.unseen > max_age:
            self.state = DELETED

    def hold(self, blob_box: np.ndarray, part_box: np.ndarray | None = None) -> None:
        """Inside a merged blob this frame: coast (no correction), report ``part_box``, the part of the
        blob recognised as this track's, or else the prediction moved into the blob (:func:`~.boxes.moved_inside`).
        No age limit while held: the blob is the person, with others (docs/demos-tuning.md)."""
        self.held_box = _moved_inside(self.box, blob_box) if part_box is None else np.asarray(part_box, np.float64)
        self.unseen = 0
        self.was_held = True


@dataclass
class LostTrack:
    """A confirmed track that died unseen in mid-frame, kept for re-identification (docs/demos-tuning.md)."""

    track_id: int
    box: np.ndarray  # its last full view's xyxy box (:attr:`Track.full_view`)
    velocity: np.ndarray  # its centre's velocity then (px per frame, Kalman)
    seen_at: int  # the tracker's frame count of that view
    lost_at: int  # the tracker's frame count when it was last seen at all
    gallery: np.ndarray | None  # its appearance features, newest last

