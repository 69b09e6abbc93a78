"""Deep SORT (Wojke, Bewley & Paulus 2017) with additions for detectors that see a crowd as one blob.

Per frame every track's Kalman filter predicts; confirmed tracks are matched to detections by a matching
cascade on appearance, gated by the Mahalanobis distance; leftovers and tentative tracks are matched on IoU.
``occlusion_aware`` adds: merged blobs held (their tracks coast), tracks cut by a pillar or lost in a crowd
kept longer, a last re-identification stage, fragments of one person rejoined under one id, and one box per
person in what is reported. Why each step is there, and what it changed on the tuning scenes:
docs/demos-tuning.md. Boxes, the Kalman filter, tracks and the appearance gallery live in their own modules.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
from scipy.optimize import linear_sum_assignment

from hwbench_gui.demos.tracking.boxes import coverage as _coverage
from hwbench_gui.demos.tracking.boxes import one_figure, stacked
from hwbench_gui.demos.tracking.boxes import iou_matrix, xyah_to_xyxy  # noqa: F401 (re-exported)
from hwbench_gui.demos.tracking.boxes import xyxy_to_xyah  # noqa: F401 (re-exported)
from hwbench_gui.demos.tracking.kalman import CHI2INV95, KalmanFilter
from hwbench_gui.demos.tracking.matching import INFTY_COST, NearestNeighborDistance, min_cost_matching
from hwbench_gui.demos.tracking.tracks import DELETED, Detection, LostTrack, Track  # noqa: F401 (re-exported)


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
    ``occlusion_aware``: split merged blobs (docs/demos-tuning.md); a blob is merged when at least
    ``held_coverage`` of each of two or more predicted boxes lies inside it. A track that came out
    of a blob unmatched lives ``max_age_held`` frames unseen instead of ``max_age``; tracks and
    detections left after the IoU stage meet once more on appearance with a looser, distance-only
    gate (:meth:`_reidentify`: ``reid_radius``, ``reid_min_area``). A confirmed track lost at least
    ``border_px`` from every frame edge with its box shrunk below ``cut_ratio`` of its recent largest
    also lives ``max_age_held`` frames (docs/demos-tuning.md). A newly confirmed track takes the id of a
    lost one (kept ``rejoin_frames`` frames after it died unseen) or of one unseen all its life, that it
    looks like (cosine distance ≤ ``rejoin_cosine``) and that could have walked to it (:meth:`_rejoin`,
    ``rejoin_radius``); ``rejoin_frames=0`` turns this off. A track held in a merged blob is
    reported with the part of it that lies near its prediction (centres at most ``held_reach`` of
    its predicted height apart), is as tall within a factor ``held_height`` and looks like it
    (:meth:`_parts_recognised`); ``held_reach`` 0 turns this off. ``same_person_iou``: a held
    box on one already reported, of a track that looks alike, is the same person, not shown twice
    (:meth:`reported_tracks`); an unmatched detection lying ``part_inside`` or more inside a
    reported box is a piece of that person and starts no track (occlusion-aware only; 0 turns it off).
    A track that walked out of the frame is deleted at once (the next person in gets a new id); for
    ``exit_frames`` a detection at that edge on its last box starts no track (:meth:`_walking_out`).
    A track started on a part of a blob whose other part a confirmed track took shows no box and takes no
    id until it walks apart from that track, that track is gone, or both have been seen in ``beside_frames``
    frames in a row (:meth:`_held_back`; occlusion-aware only, as only the motion detector cuts blobs into
    parts). A part above or below a track's part of its blob, the two halves of one person
    (:func:`~.boxes.one_figure`), starts no track: it joins that track's box.

    Ages are given in frames at ``fps`` (25: the rate they were tuned at) and mean seconds: what
    decides whether a person hidden behind a post comes back under their id is how long they were
    hidden, not how many frames the camera took meanwhile. :meth:`set_frame_rate` (the pipeline
    calls it with the source's rate) keeps ``max_age``, ``max_age_held``, ``rejoin_frames``,
    ``exit_frames`` and ``beside_frames`` at the same seconds, and the gates that grow with every
    frame unseen (``reid_growth`` and ``rejoin_growth`` heights a frame at ``fps``) at the same growth
    per second.
    """

    def __init__(self, max_cosine_distance: float = 0.3, nn_budget: int | None = 30, max_iou_distance: float = 0.7,
                 max_age: int = 30, n_init: int = 3, gating_threshold: float = CHI2INV95[4],
                 occlusion_aware: bool = False, held_coverage: float = 0.5, max_age_held: int = 90,
                 reid_radius: float = 0.5, reid_min_area: float = 0.2, cut_ratio: float = 0.7,
                 border_px: float = 8.0, split_iou: float = 0.3, rejoin_frames: int = 125,
                 rejoin_cosine: float = 0.25, rejoin_radius: float = 0.6, reid_growth: float = 0.1,
                 rejoin_growth: float = 0.03, held_reach: float = 1.0, held_height: float = 1.25,
                 same_person_iou: float = 0.6, part_inside: float = 0.7, exit_frames: int = 25,
                 beside_frames: int = 10, fps: float = 25.0) -> None:
        if not fps > 0:
            raise ValueError(f"fps must be > 0, got {fps}")
        self.fps = float(fps)
        # What the frame counts and per-frame growths mean, in seconds (see the class's doc).
        self._per_s = {"max_age": max_age / fps, "max_age_held": max_age_held / fps,
                       "rejoin_frames": rejoin_frames / fps, "exit_frames": exit_frames / fps,
                       "beside_frames": beside_frames / fps}
        self._growth_per_s = {"reid_growth": reid_growth * fps, "rejoin_growth": rejoin_growth * fps}
        self.rejoin_cosine, self.rejoin_radius = rejoin_cosine, rejoin_radius
        self.lost: list[LostTrack] = []
        self.exits: list[tuple[int, np.ndarray]] = []  # (frame, last box) of tracks that walked out of the frame
        self.frame_count = 0
        self.cut_ratio, self.border_px = cut_ratio, border_px
        self.same_person_iou, self.part_inside = same_person_iou, part_inside
        self.split_iou, self.held_reach, self.held_height = split_iou, held_reach, held_height
        self.occlusion_aware, self.held_coverage = occlusion_aware, held_coverage
        self.reid_radius, self.reid_min_area = reid_radius, reid_min_area
        self.kf = KalmanFilter()
        self.metric = NearestNeighborDistance(nn_budget)
        self.max_cosine_distance, self.max_iou_distance = max_cosine_distance, max_iou_distance
        self.n_init = n_init
        self.gating_threshold = gating_threshold
        self.tracks: list[Track] = []
        self._next_id = 1  # the id the next confirmed track takes
        self._tentative_id = 0  # the last provisional (negative) id a tentative track took
        self.set_frame_rate(fps)

    def set_frame_rate(self, fps: float) -> None:
        """The source's frames per second: ages and growing gates keep their meaning in seconds."""
        if not fps > 0:
            raise ValueError(f"fps must be > 0, got {fps}")
        self.fps = float(fps)
        self.max_age, self.max_age_held, self.rejoin_frames, self.exit_frames, self.beside_frames = (
            int(round(self._per_s[k] * fps))
            for k in ("max_age", "max_age_held", "rejoin_frames", "exit_frames", "beside_frames"))
        self.reid_growth, self.rejoin_growth = (self._growth_per_s[k] / fps for k in ("reid_growth", "rejoin_growth"))
        for t in self.tracks:
            t.max_age = self.max_age

    def reset(self) -> None:
        self.tracks, self._next_id, self._tentative_id = [], 1, 0
        self.metric.samples.clear()
        self.lost, self.exits, self.frame_count = [], [], 0

    def predict(self) -> None:
        if not self.tracks:
            return
        if self.occlusion_aware:  # coasting tracks keep their size (docs/demos-tuning.md)
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
        # Each confirmed track matched to a part of a cut blob, by blob, with its last full view (its box
        # before the blob was cut, as it is seen whole again the view moves on).
        before = [(detections[di].blob, detections[di].box, self.tracks[ti]) for ti, di in matches
                  if detections[di].part and self.tracks[ti].is_confirmed() and self.tracks[ti].full_view is not None]
        # The confirmed tracks that took a part of each cut blob (before this frame's matches confirm others).
        blob_owners: dict[int, list[Track]] = {}
        for ti, di in matches:
            if detections[di].part and self.tracks[ti].is_confirmed():
                blob_owners.setdefault(detections[di].blob, []).append(self.tracks[ti])
        tentative = {ti for ti, _ in matches if self.tracks[ti].is_tentative()}
        seen = {self.tracks[ti] for ti, _ in matches}  # a Track hashes by identity
        for ti, di in matches:
            self._held_back(self.tracks[ti], detections[di], seen, frame_wh, blob_owners)
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
                self.exits.append((self.frame_count, t.last_box.copy()))
            elif rejoining and t.is_deleted() and t.hits > t.n_init and t.full_view is not None and t.track_id > 0:
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
                if t.is_confirmed() and ti in tentative:
                    self._rejoin(t)
        for ti, _ in matches:
            t = self.tracks[ti]
            if t.is_confirmed() and t.track_id < 0 and t.beside is None:  # shown from now, not rejoined: its id
                gallery = self.metric.samples.pop(t.track_id, None)  # gathered while it was held back
                t.track_id, self._next_id = self._next_id, self._next_id + 1
                if gallery is not None:
                    self.metric.samples[t.track_id] = gallery
        shown = np.array([box for _, box in self.reported_tracks()]).reshape(-1, 4) \
            if self.occlusion_aware and self.part_inside > 0 and unmatched_dets else np.zeros((0, 4))
        self.exits = [(n, box) for n, box in self.exits if self.frame_count - n <= self.exit_frames]
        for di in unmatched_dets:
            # A piece of someone already tracked (an arm that moves while the rest stands still, a part
            # cut from their blob) starts no track: it would be a second box and a second id on them.
            if len(shown) and _coverage(detections[di].box[None], shown).max() >= self.part_inside:
                continue
            if frame_wh is not None and self._walking_out(detections[di].box, frame_wh):
                continue
            # A part cut from the blob whose other part a person's track took, above or below that part and
            # inside the person's last full view: the blob was them, cut at the waist as they set off.
            # (Parts side by side are people walking together more often than one person's legs.) Or
            # the two halves of one person, the track's part too squat to be them whole: their legs cut
            # off before it ever saw them whole. Those join its box: it is what keeps them out of the
            # background model while they stand (Tracker.still_boxes).
            d = detections[di]
            if d.part and any(blob == d.blob and stacked(d.box, taken_box) and
                              _coverage(d.box[None], t.full_view[1][None])[0, 0] >= self.part_inside
                              for blob, taken_box, t in before):
                continue
            halves = [t for blob, taken_box, t in before if blob == d.blob and one_figure(d.box, taken_box)] \
                if d.part else []
            if halves:
                halves[0].last_box = np.concatenate([np.minimum(halves[0].last_box[:2], d.box[:2]),
                                                     np.maximum(halves[0].last_box[2:], d.box[2:])])
                continue
            self._initiate(detections[di], blob_owners[d.blob][0] if d.part and d.blob in blob_owners else None)
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
                       if t is not track and t.is_confirmed() and t.unseen >= track.age and t.full_view is not None
                       and t.track_id > 0]
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
        would take the id of the next figure to enter there. A box that reaches from an edge past the
        frame's middle is someone close to the camera whom that edge cuts (their head, above a table
        they walk to), not someone walking out of it."""
        x1, y1, x2, y2 = track.last_box
        px1, py1, px2, py2 = track.box
        m, (w, h) = self.border_px, frame_wh
        across, down = x2 - x1 < w / 2, y2 - y1 < h / 2
        return bool((across and x1 <= m and px1 < 0 and track.mean[4] < 0) or
                    (down and y1 <= m and py1 < 0 and track.mean[5] < 0) or
                    (across and x2 >= w - m and px2 > w and track.mean[4] > 0) or
                    (down and y2 >= h - m and py2 > h and track.mean[5] > 0))

    def _walking_out(self, box: np.ndarray, frame_wh: tuple[int, int]) -> bool:
        """Whether ``box`` touches the frame's edge on the last box of a track that walked out there
        within ``exit_frames``: the rest of that person (a trailing leg, an arm) still in view. Its own
        track would live a few frames under an id of its own."""
        m, (w, h) = self.border_px, frame_wh
        x1, y1, x2, y2 = box
        if not (x1 <= m or y1 <= m or x2 >= w - m or y2 >= h - m):
            return False
        return any(min(x2, b[2]) > max(x1, b[0]) and min(y2, b[3]) > max(y1, b[1]) for _, b in self.exits)

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

    def _initiate(self, detection: Detection, beside: Track | None = None) -> None:
        """A tentative track under a provisional negative id: ids from 1 go to tracks as they are
        confirmed, so the ids a viewer sees run 1, 2, 3… and the largest is how many were shown, not
        how many detections once started a track that died tentative. ``beside``: the confirmed track
        that took another part of ``detection``'s blob (:meth:`_held_back`)."""
        mean, cov = self.kf.initiate(detection.xyah)
        self._tentative_id -= 1
        track = Track(mean, cov, self._tentative_id, self.n_init, self.max_age, detection)
        track.beside = beside if self.beside_frames > 0 else None
        self.tracks.append(track)

    def _held_back(self, track: Track, detection: Detection, seen: set[Track],
                   frame_wh: tuple[int, int] | None, blob_owners: dict[int, list[Track]]) -> None:
        """Let ``track``, started on a part of a confirmed track's blob, be shown (take an id, be
        reported) once it shows it is someone else: that track took a detection of its own this frame
        and ``detection`` is not a part of the same blob (they walked apart), that track is gone (but
        for the rest of a person walking out where they did), or ``track`` has been seen beside that track,
        both matched, in ``beside_frames`` frames in a row (someone walking with them). A frame in which
        ``track`` was seen and that track not starts the count again: ``track`` took what may have been
        the person (their blob whole, or the part they were), and must show anew that it is someone else
        (counted, such tracks gave people setting off on the pedestrian clip ids of their own:
        docs/demos-tuning.md). Until then it is tracked as any other (confirmed after ``n_init`` hits, kept
        out of the background model while it stands) but shows no box and takes no id: a person setting off
        from where they stood is cut into parts side by side for a few frames, and each part that started a
        track was an id of its own (docs/demos-tuning.md).
        Held back, not dropped: dropping such parts lost people walking side by side for as long as they
        stayed one blob. ``seen``: the tracks matched this frame;
        ``blob_owners``: the confirmed tracks that took a part of each cut blob this frame."""
        owner = track.beside
        if owner is None:
            return
        if owner.is_deleted() and frame_wh is not None and self._walking_out(detection.box, frame_wh):
            return
        track.beside_seen = track.beside_seen + 1 if owner in seen else 0
        apart = owner in seen and not (detection.part and owner in blob_owners.get(detection.blob, []))
        if apart or owner.is_deleted() or track.beside_seen >= self.beside_frames:
            track.beside = None

    def still_boxes(self, max_speed: float, max_speed_heights: float = 0.0) -> np.ndarray:
        """(N, 4) xyxy boxes of the confirmed tracks seen or held this frame that move slower than
        ``max_speed`` pixels per frame, or ``max_speed_heights`` of their own height per frame
        (:meth:`Track.recent_speed`), after walking at least their own width: objects that stopped.
        (A track that never moved may sit on a false detection the background model would let fade;
        keeping it would keep the detection alive.) Width and height, not pixels: someone close to the
        camera is hundreds of pixels tall, walks less than their height into view and, standing, moves
        their box's centre by pixels a frame as they turn a page."""
        boxes = [t.last_box if t.held_box is None else t.held_box for t in self.tracks
                 if t.is_confirmed() and (t.time_since_update == 0 or t.held_box is not None)
                 and t.travelled >= t.mean[2] * t.mean[3]
                 and t.recent_speed() < max(max_speed, max_speed_heights * t.mean[3])]
        return np.array(boxes, np.float64).reshape(-1, 4)

    def active_tracks(self) -> list[Track]:
        """Confirmed tracks matched to a detection this frame (what Deep SORT reports), but for those not
        shown yet (:meth:`_held_back`)."""
        return [t for t in self.tracks if t.is_confirmed() and t.time_since_update == 0 and t.track_id > 0]

    def reported_tracks(self) -> list[tuple[Track, np.ndarray]]:
        """(track, xyxy box) to show for this frame, one per person: :meth:`active_tracks` with their
        detection's box, and tracks held inside a merged blob with the part they recognise or their
        predicted box moved into the blob (:meth:`Track.hold`). A held box that covers a box already
        reported at IoU ``same_person_iou`` or more, or lies ``part_inside`` within it or it within the
        held box, of a track that looks alike (appearance within
        ``max_cosine_distance``; without appearance no two tracks are taken for one), is the same person seen
        twice (a second track that grew on them, a prediction that drifted onto them) and is left out:
        seen tracks first, then held ones from the oldest id."""
        shown = [(t, t.last_box) for t in self.active_tracks()]
        held = sorted(((t, t.held_box) for t in self.tracks
                       if t.is_confirmed() and t.held_box is not None and t.track_id > 0),
                      key=lambda pair: pair[0].track_id)
        for t, box in held:
            if not any(self._same_person(t, box, other, other_box) for other, other_box in shown):
                shown.append((t, box))
        return shown

    def _same_person(self, a: Track, box_a: np.ndarray, b: Track, box_b: np.ndarray) -> bool:
        iou = float(iou_matrix(box_a[None], box_b[None])[0, 0])
        gallery_a, gallery_b = self.metric.samples.get(a.track_id), self.metric.samples.get(b.track_id)
        if gallery_a is None or gallery_b is None or not len(gallery_a) or not len(gallery_b):
            return False  # people crossing share a box too: without appearance, they cannot be told apart
        alike = float(1.0 - (gallery_a @ gallery_b.T).max()) <= self.max_cosine_distance
        inside = max(_coverage(box_a[None], box_b[None])[0, 0], _coverage(box_b[None], box_a[None])[0, 0])
        return alike and (iou >= self.same_person_iou or inside >= self.part_inside)
