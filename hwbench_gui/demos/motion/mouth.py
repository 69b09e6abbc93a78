"""An open mouth carried over: the driver's jaw drop, given to the target's lower lip and chin, and measured.

Lucas–Kanade points on the lips lose the mouth as it opens (its inside appears where the lips were),
and the mapping's local motion is a Gaussian blend of nearby points: the upper lip took part of the
jaw's drop and the lower lip lost part of it, so the target's mouth hardly opened. Instead the opening
is one number per frame, the *jaw drop*: how far the lower face moved down in the face's own frame,
beyond the head motion, as a share of the driver's neutral face size:

- from MediaPipe's lip landmarks (:func:`jaw_drop_from_lips`): the lower lip's drop against the upper's;
- from Lucas–Kanade points (:func:`jaw_drop_from_points`), which carry no names: points in the lower
  face move down with the jaw, points above the mouth do not. A head that pitches stretches or squeezes
  the face vertically (the similarity cannot hold that); the vertical residual of the points above the
  mouth, linear in their height, says by how much, and is taken off before the lower face is read; what
  the points above the mouth move beyond that (a turn out of the image plane, points that slip) is a
  floor the lower face's drop must pass to count as the jaw's.

The mapping gives the target's labelled mouth keypoints (:data:`JAW_SHARE`) that drop, scaled to the
target's face size, along the face's "down" in place of the vertical part of their local motion.
:class:`MouthFollow` measures, per frame, the target's opening (lower lip to upper lip, beyond rest)
against the driver's jaw drop.
"""

from __future__ import annotations

import math

import numpy as np

#: How much of the jaw's drop each target keypoint takes (by label): the lower lip and the chin ride on
#: the jaw, the mouth corners part of the way; the upper lip none (its local motion's vertical part,
#: borrowed from the jaw below it, is what closed the target's mouth).
JAW_SHARE = {"lip_lower": 1.0, "chin": 1.0, "mouth_left": 0.4, "mouth_right": 0.4, "lip_upper": 0.0}

#: Lucas–Kanade points: the lower face is below this share of the neutral box's height (a Haar box puts
#: the nose at ~0.58, the mouth at ~0.75), within this share of its width about the centre line (the
#: outline's edge, where points slide on the background, left out); the face above UPPER_FACE_V
#: measures how the head's pitch stretches it.
LOWER_FACE_V, LOWER_FACE_HALF_U, UPPER_FACE_V = 0.6, 0.45, 0.55
#: The points of the lower face that moved down most show the jaw: points above the mouth line fall in
#: the band too and stay, points towards the cheeks move less than the chin, and the points on the lips
#: themselves are lost as the mouth opens. This quantile of their drop.
JAW_QUANTILE = 0.9
MIN_POINTS = 3


def _face_frame_residual(points, neutral, similarity) -> np.ndarray:
    """Each point's motion beyond the similarity, turned and scaled back into the neutral face's frame."""
    m = np.asarray(similarity, np.float64)
    now = np.asarray(points, np.float64).reshape(-1, 2)
    rest = np.asarray(neutral, np.float64).reshape(-1, 2)
    residual = now - (rest @ m[:, :2].T + m[:, 2])
    return residual @ np.linalg.inv(m[:, :2]).T


def jaw_drop_from_points(points, neutral, similarity, neutral_box) -> float | None:
    """The jaw's drop as a share of the neutral box's size, from unnamed tracked points (see the module's
    doc); None with fewer than :data:`MIN_POINTS` in the lower face."""
    x, y, w, h = neutral_box
    rest = np.asarray(neutral, np.float64).reshape(-1, 2)
    r = _face_frame_residual(points, rest, similarity)
    u, v = (rest[:, 0] - x) / max(w, 1e-9) - 0.5, (rest[:, 1] - y) / max(h, 1e-9)
    lower = (v >= LOWER_FACE_V) & (np.abs(u) <= LOWER_FACE_HALF_U)
    if lower.sum() < MIN_POINTS:
        return None
    dy = r[:, 1]
    upper = v < UPPER_FACE_V
    if upper.sum() >= 2 * MIN_POINTS and np.ptp(v[upper]) > 0.2:
        # Pitch: the face above the mouth stretches linearly with height; carry that line down.
        slope, intercept = np.polyfit(v[upper], dy[upper], 1)
        dy = dy - (slope * v + intercept)
    drop = float(np.quantile(dy[lower], JAW_QUANTILE))
    if upper.sum() >= MIN_POINTS:
        # What the head's motion leaves unexplained above the mouth (a turn out of the image plane, points
        # that slip) moves the lower face as much: a drop no larger than that is not the jaw's.
        drop -= float(np.quantile(np.hypot(r[upper, 0], dy[upper]), JAW_QUANTILE))
    return max(0.0, drop) / math.sqrt(max(w * h, 1e-9))


def jaw_drop_from_lips(points, neutral, similarity, neutral_box, upper, lower) -> float:
    """The jaw's drop as a share of the neutral box's size, from named lip points: the mean vertical
    motion (face frame, beyond the head's) of the ``lower`` indices less that of the ``upper`` ones."""
    _, _, w, h = neutral_box
    dy = _face_frame_residual(points, neutral, similarity)[:, 1]
    drop = float(dy[list(lower)].mean() - dy[list(upper)].mean())
    return max(0.0, drop) / math.sqrt(max(w * h, 1e-9))


def jaw_shares(labels) -> np.ndarray | None:
    """Per target keypoint its :data:`JAW_SHARE` (NaN for keypoints the jaw does not drive); None when
    the target names no mouth keypoint (clicked points are ``p0``, ``p1``…)."""
    shares = np.array([JAW_SHARE.get(label, np.nan) for label in labels], np.float64)
    return None if np.isnan(shares).all() else shares


def apply_jaw_drop(local: np.ndarray, shares: np.ndarray, down: np.ndarray, drop_px: float) -> np.ndarray:
    """``local`` (K, 2) with the mouth keypoints' motion along ``down`` (a unit vector: the face's down in
    the target now) replaced by their share of ``drop_px``; the other keypoints' motion unchanged."""
    out = np.array(local, np.float64)
    mouth = ~np.isnan(shares)
    along = out[mouth] @ down
    out[mouth] += (shares[mouth] * drop_px - along)[:, None] * down[None, :]
    return out


def _opening_pair(labels) -> tuple[int, int] | None:
    names = list(labels)
    if "lip_upper" not in names:
        return None
    low = "lip_lower" if "lip_lower" in names else "chin" if "chin" in names else None
    return None if low is None else (names.index("lip_upper"), names.index(low))


class MouthFollow:
    """Per frame: the target's mouth opening (lower lip, else chin, to upper lip, over the head's scale,
    beyond rest) as a share of the target's face size, beside the driver's jaw drop. :meth:`summary`
    says how the one follows the other."""

    def __init__(self, rest: np.ndarray, labels, target_face_box) -> None:
        _, _, w, h = target_face_box
        self.target_size = math.sqrt(max(w * h, 1e-9))
        self._pair = _opening_pair(labels)
        self._rest = None
        if self._pair is not None:
            i, j = self._pair
            self._rest = float(np.linalg.norm(np.asarray(rest)[j] - np.asarray(rest)[i]))
        self.reset()

    def reset(self) -> None:
        self.driver: list[float] = []
        self.target: list[float] = []

    def add(self, target_points: np.ndarray, global_matrix: np.ndarray, driver_drop: float | None
            ) -> float | None:
        """The target's opening in this frame (None when the target has no lip keypoints); frames where
        the driver's drop is known too go into the summary."""
        if self._pair is None:
            return None
        i, j = self._pair
        scale = float(np.hypot(global_matrix[0, 0], global_matrix[1, 0])) or 1.0
        gap = float(np.linalg.norm(np.asarray(target_points)[j] - np.asarray(target_points)[i])) / scale
        opening = (gap - self._rest) / self.target_size
        if driver_drop is not None:
            self.driver.append(float(driver_drop))
            self.target.append(opening)
        return opening

    def summary(self) -> dict:
        """Over frames with both: the largest openings, their correlation and the gain (least-squares
        slope of the target's opening on the driver's, through 0; 1: carried in full)."""
        d, t = np.asarray(self.driver), np.asarray(self.target)
        out: dict = {"frames": int(d.size), "driver_max": None, "target_max": None, "correlation": None,
                     "gain": None,
                     "measure": "mouth opening beyond rest as a share of the face size: the target's lower lip to "
                                "upper lip, the driver's jaw drop from its keypoints"}
        if not d.size:
            return out
        out.update(driver_max=round(float(d.max()), 5), target_max=round(float(t.max()), 5))
        if float((d * d).sum()) > 0:
            out["gain"] = round(float((d * t).sum() / (d * d).sum()), 4)
        if d.std() > 0 and t.std() > 0:
            out["correlation"] = round(float(np.corrcoef(d, t)[0, 1]), 4)
        return out
