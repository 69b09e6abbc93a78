"""When the driver must not be followed: a scene cut, a face that is lost or leaves the frame,
keypoints that jump or are mostly lost.

Following the driver through any of these tears the target: after a cut, Lucas–Kanade's points land
on whatever the new shot shows and the motion "since neutral" belongs to another face; a face leaving
the frame drags its points along the border. :class:`ContinuityGuard` names the frame where this
happens; the pipeline then holds the target at rest and lets the keypoint source start again (a new
neutral pose on the face it finds next), instead of following.

A cut is a frame that changes at once: the mean absolute difference of two consecutive frames,
both shrunk to a blurred 64×48 thumbnail, or the Bhattacharyya distance of their grey-level
histograms, above a threshold. Head motion moves a part of the frame and changes neither much;
lighting that drifts changes them slowly. On the generated clips (``synthetic``), a head that sways,
rolls 20° and scales ±20 % within a third of a second stays under 3.2 and 0.04; cuts to another scene
give 33–49 and 0.49–0.58; the thresholds (20, 0.3) sit between. A cut between two shots that look
alike may pass under both; its keypoints then jump or are lost, which the other rules catch.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from hwbench_gui.demos.motion.keypoints import DriverKeypoints, apply_affine, box_corners, similarity_params

#: Why the target was held: key → what the trace and the status say.
HOLD_REASONS = {
    "cut": "scene cut",
    "no_face": "no face",
    "leaving": "face leaving the frame",
    "jump": "keypoints jumped",
    "lost": "most keypoints lost",
}


@dataclass
class GuardSettings:
    thumb_px: tuple[int, int] = (64, 48)
    cut_mean_diff: float = 20.0  # mean absolute grey difference (0–255) of consecutive thumbnails
    cut_hist_distance: float = 0.3  # Bhattacharyya distance of their 32-bin grey histograms (0–1)
    min_inside: float = 0.6  # least fraction of the driver's face box inside the frame
    max_step_frac: float = 0.3  # largest move of the face centre in one frame, in face sizes
    max_scale_step: float = 1.25  # largest change of the face's size in one frame (either way)
    max_roll_step_deg: float = 20.0  # largest roll of the face in one frame
    min_kept: float = 0.5  # least fraction of the last frame's points tracked into this one


@dataclass(frozen=True)
class Hold:
    """One held frame: ``reason`` is a key of :data:`HOLD_REASONS`, ``detail`` the measured cause."""

    reason: str
    detail: str

    @property
    def text(self) -> str:
        return f"held at rest: {HOLD_REASONS[self.reason]} ({self.detail})"


class ContinuityGuard:
    """Per frame: :meth:`scene_cut` on the grey frame before keypoints are tracked into it, then
    :meth:`check` on what the keypoint source returned. :meth:`restart` after the source starts again."""

    def __init__(self, settings: GuardSettings | None = None) -> None:
        self.settings = settings or GuardSettings()
        self._thumb: np.ndarray | None = None
        self._hist: np.ndarray | None = None
        self.restart()

    def restart(self) -> None:
        """Forget the last frame's keypoints (the source has a new neutral pose)."""
        self._last_sim: np.ndarray | None = None

    def scene_cut(self, gray: np.ndarray) -> Hold | None:
        """A :class:`Hold` when ``gray`` is not the continuation of the last frame given here."""
        s = self.settings
        thumb = cv2.GaussianBlur(cv2.resize(gray, s.thumb_px, interpolation=cv2.INTER_AREA), (5, 5), 0)
        hist = cv2.calcHist([thumb], [0], None, [32], [0, 256])
        cv2.normalize(hist, hist, 1.0, 0.0, cv2.NORM_L1)
        prev_thumb, prev_hist = self._thumb, self._hist
        self._thumb, self._hist = thumb, hist
        if prev_thumb is None:
            return None
        diff = float(cv2.absdiff(thumb, prev_thumb).mean())
        dist = float(cv2.compareHist(prev_hist, hist, cv2.HISTCMP_BHATTACHARYYA))
        if diff > s.cut_mean_diff or dist > s.cut_hist_distance:
            return Hold("cut", f"frame difference {diff:.0f}/255, histogram distance {dist:.2f}")
        return None

    def check(self, kp: DriverKeypoints | None, frame_shape: tuple[int, ...]) -> Hold | None:
        """A :class:`Hold` when these keypoints must not drive the target."""
        s = self.settings
        if kp is None:
            self._last_sim = None
            return Hold("no_face", "the keypoint source found nothing to track")
        last, self._last_sim = self._last_sim, kp.similarity.copy()
        h, w = frame_shape[:2]
        corners = kp.box_corners.astype(np.float32)
        box_area = abs(float(cv2.contourArea(corners)))
        frame = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
        inside_area, _ = cv2.intersectConvexConvex(corners, frame)
        inside = float(inside_area) / box_area if box_area > 0 else 0.0
        if inside < s.min_inside:
            return Hold("leaving", f"{inside:.0%} of the face box inside the frame")
        if kp.kept_fraction < s.min_kept:
            return Hold("lost", f"{kp.kept_fraction:.0%} of the points tracked from the last frame")
        if last is None:
            return None
        now, before = similarity_params(kp.similarity), similarity_params(last)
        centre = box_corners(kp.neutral_box).mean(axis=0)
        step = float(np.linalg.norm(apply_affine(kp.similarity, centre) - apply_affine(last, centre)))
        size = float(np.sqrt(kp.neutral_box[2] * kp.neutral_box[3])) * now["scale"]
        scale_step = now["scale"] / max(before["scale"], 1e-9)
        roll_step = abs((now["rotation_deg"] - before["rotation_deg"] + 180.0) % 360.0 - 180.0)
        if step > s.max_step_frac * size:
            return Hold("jump", f"face moved {step:.0f} px in one frame, {step / size:.2f} face sizes")
        if not 1 / s.max_scale_step <= scale_step <= s.max_scale_step:
            return Hold("jump", f"face size changed ×{scale_step:.2f} in one frame")
        if roll_step > s.max_roll_step_deg:
            return Hold("jump", f"face rolled {roll_step:.0f}° in one frame")
        return None
