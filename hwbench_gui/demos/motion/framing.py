"""The target kept whole and in its image, and how steady its outline is.

:func:`keep_inside` moves the whole set of target keypoints back into the image (and, when it is too
large to fit, shrinks it about its centre) instead of letting the warp push part of the face past the
edge. :class:`OutlineStability` measures, frame by frame, how far the target's keypoints moved against
the target's size, and sums it over the frames where the driver's face was still: that is jitter, not
motion.
"""

from __future__ import annotations

import math

import numpy as np

from hwbench_gui.demos.motion.keypoints import DriverKeypoints


def keep_inside(points: np.ndarray, size_wh: tuple[int, int], margin_px: float = 2.0) -> tuple[np.ndarray, float]:
    """``points`` (K, 2) moved by the least translation that puts them all inside the image of
    ``size_wh`` less ``margin_px`` on every side, shrunk about their centre first where they span more
    than that. Returns the points and how far the farthest point was pushed back (px; 0: already inside)."""
    pts = np.asarray(points, np.float64)
    if not len(pts):
        return pts.copy(), 0.0
    lo = np.array([margin_px, margin_px])
    hi = np.array([size_wh[0] - 1 - margin_px, size_wh[1] - 1 - margin_px])
    span, room = pts.max(axis=0) - pts.min(axis=0), hi - lo
    scale = float(min(1.0, *(room / np.maximum(span, 1e-9))))
    centre = (pts.max(axis=0) + pts.min(axis=0)) / 2
    out = centre + (pts - centre) * scale
    shift = np.maximum(lo - out.min(axis=0), 0.0) + np.minimum(hi - out.max(axis=0), 0.0)
    out = out + shift
    return out, float(np.linalg.norm(out - pts, axis=1).max())


def outside_px(points: np.ndarray, size_wh: tuple[int, int]) -> float:
    """How far the farthest of ``points`` lies outside the image (px; 0 when all are inside)."""
    pts = np.asarray(points, np.float64)
    if not len(pts):
        return 0.0
    over = np.maximum(np.maximum(-pts, pts - (np.array(size_wh, np.float64) - 1)), 0.0)
    return float(over.max())


class OutlineStability:
    """Per frame: the target keypoints' mean step since the previous frame as a share of the target's
    face size (``outline_step``), and whether the driver was still (its tracked region's corners,
    carried by the driver's similarity, moved less than ``still_share`` of the driver's face size).
    :meth:`summary` gives the steps over still frames: the outline's jitter."""

    def __init__(self, target_face_box, still_share: float = 0.005) -> None:
        _, _, w, h = target_face_box
        self.target_size = math.sqrt(max(w * h, 1e-9))
        self.still_share = still_share
        self.reset()

    def reset(self) -> None:
        self._last_points = self._last_corners = None
        self.still_steps: list[float] = []
        self.frames = 0

    def add(self, target_points: np.ndarray, kp: DriverKeypoints | None) -> tuple[float | None, bool]:
        """(outline step as a share of the target's size or None on the first frame, driver still)."""
        self.frames += 1
        pts = np.asarray(target_points, np.float64)
        step = None
        if self._last_points is not None and self._last_points.shape == pts.shape:
            step = float(np.linalg.norm(pts - self._last_points, axis=1).mean()) / self.target_size
        self._last_points = pts.copy()
        still = False
        if kp is not None:
            corners = kp.box_corners
            _, _, dw, dh = kp.neutral_box
            if self._last_corners is not None:
                moved = float(np.linalg.norm(corners - self._last_corners, axis=1).mean())
                still = moved < self.still_share * math.sqrt(max(dw * dh, 1e-9))
            self._last_corners = corners
        else:
            self._last_corners = None
        if still and step is not None:
            self.still_steps.append(step)
        return step, still

    def summary(self) -> dict:
        """Frames, still frames, and the outline's step over them (mean, p95, largest) as shares of the
        target's face size."""
        s = np.asarray(self.still_steps)
        figures = {"mean": float(s.mean()), "p95": float(np.percentile(s, 95)), "max": float(s.max())} if s.size \
            else None
        return {"frames": self.frames, "still_frames": int(s.size), "outline_jitter": figures,
                "measure": "mean step of the target's keypoints between frames where the driver's face was still, "
                           "as a share of the target's face size"}

