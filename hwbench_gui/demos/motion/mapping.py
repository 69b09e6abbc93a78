"""Carry the driver's motion (relative to its neutral frame) to the target's keypoints.

Two parts, both in the target's pixels:

- global: the driver's similarity S (neutral → now: head translation, scale, roll) is conjugated by the
  alignment A that maps the driver's neutral box onto the target's face box, ``M = A·S·A⁻¹``; so the
  target moves as much, relative to its face, as the driver did relative to its own;
- local: what each driver point moved beyond S (eyes, brows, a smile) is scaled by A and given to
  the target keypoints near where that point lands after A (Gaussian weights), so the driver's mouth
  moves the target's mouth;
- the jaw: where the keypoint source gives the driver's jaw drop and the target names its mouth
  keypoints, the lower lip and chin drop by it (:mod:`.mouth`) instead of by the blend above, which
  gave the upper lip part of the jaw's drop and the lower lip too little.

The result is smoothed over time with a One Euro filter (Casiez et al., CHI 2012): little lag on fast
motion, little jitter when still.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from hwbench_gui.demos.motion.keypoints import DriverKeypoints, apply_affine, similarity_params
from hwbench_gui.demos.motion.mouth import apply_jaw_drop, jaw_shares
from hwbench_gui.demos.motion.targets import Target


@dataclass
class MappingSettings:
    local_gain: float = 1.0  # >1 exaggerates expressions
    local_sigma_frac: float = 0.15  # reach of a driver point, as a fraction of the target face size
    local_clip_frac: float = 0.2  # a residual larger than this (of the driver face size) is clipped
    smoothing: bool = True
    min_cutoff_hz: float = 1.5
    beta: float = 0.02  # cutoff rise per px/s of speed


class OneEuroFilter:
    """Element-wise One Euro filter over arrays of a fixed shape."""

    def __init__(self, min_cutoff_hz: float = 1.5, beta: float = 0.02, d_cutoff_hz: float = 1.0) -> None:
        self.min_cutoff_hz, self.beta, self.d_cutoff_hz = min_cutoff_hz, beta, d_cutoff_hz
        self.reset()

    def reset(self) -> None:
        self._x = self._dx = None
        self._t = None

    @staticmethod
    def _alpha(cutoff_hz, dt_s):
        tau = 1.0 / (2 * math.pi * cutoff_hz)
        return 1.0 / (1.0 + tau / dt_s)

    def __call__(self, x: np.ndarray, t_s: float) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        if self._x is None or self._x.shape != x.shape or t_s <= self._t:
            self._x, self._dx, self._t = x.copy(), np.zeros_like(x), t_s
            return x.copy()
        dt = t_s - self._t
        dx = (x - self._x) / dt
        self._dx += self._alpha(self.d_cutoff_hz, dt) * (dx - self._dx)
        a = self._alpha(self.min_cutoff_hz + self.beta * np.abs(self._dx), dt)
        self._x = self._x + a * (x - self._x)
        self._t = t_s
        return self._x.copy()


@dataclass
class MappedPose:
    points: np.ndarray  # (K, 2) target keypoints now
    global_matrix: np.ndarray  # 2×3, target neutral → target now (before the local part and smoothing)
    driver: dict | None  # similarity_params of the driver's S, None without keypoints
    local_max_px: float  # largest local displacement given to a target keypoint


def alignment(driver_box, target_box) -> np.ndarray:
    """3×3 similarity (no rotation) taking the driver's neutral box centre and size onto the target's."""
    dx, dy, dw, dh = driver_box
    tx, ty, tw, th = target_box
    a = math.sqrt((tw * th) / max(dw * dh, 1e-9))
    dc = np.array([dx + dw / 2, dy + dh / 2])
    tc = np.array([tx + tw / 2, ty + th / 2])
    m = np.eye(3)
    m[:2, :2] *= a
    m[:2, 2] = tc - a * dc
    return m


class MotionMapper:
    """Maps :class:`DriverKeypoints` to the target's keypoints; ``map()`` once per frame."""

    def __init__(self, target: Target, settings: MappingSettings | None = None) -> None:
        self.target = target
        self.settings = settings or MappingSettings()
        s = self.settings
        self._filter = OneEuroFilter(s.min_cutoff_hz, s.beta)
        _, _, tw, th = target.face_box
        self._target_size = math.sqrt(tw * th)
        self._jaw_shares = jaw_shares(target.labels)

    def reset(self) -> None:
        """Forget the smoothing history (after a new neutral pose or a new target)."""
        self._filter.reset()

    def map(self, kp: DriverKeypoints | None, t_s: float) -> MappedPose:
        rest = self.target.keypoints
        if kp is None or len(kp.points) < 3:
            raw, m, params, local_max = rest.copy(), np.eye(2, 3), None, 0.0
        else:
            A = alignment(kp.neutral_box, self.target.face_box)
            S = np.vstack([kp.similarity, [0, 0, 1]])
            m = (A @ S @ np.linalg.inv(A))[:2]
            raw = apply_affine(m, rest)
            local = self._local(kp, A)
            if kp.jaw_drop is not None and self._jaw_shares is not None and len(local):
                local = self._jaw(local, kp.jaw_drop, m)
            local_max = float(np.linalg.norm(local, axis=1).max()) if len(local) else 0.0
            raw = raw + local
            params = similarity_params(kp.similarity)
        points = self._filter(raw, t_s) if self.settings.smoothing else raw
        return MappedPose(points, m, params, local_max)

    def _jaw(self, local: np.ndarray, jaw_drop: float, m: np.ndarray) -> np.ndarray:
        """``local`` with the mouth keypoints dropped by the driver's jaw, along the face's down now (``m``
        turns and scales the target's face), clipped as any local motion is."""
        s = self.settings
        down = m[:, :2] @ np.array([0.0, 1.0])
        scale = float(np.linalg.norm(down)) or 1.0
        drop_px = s.local_gain * min(jaw_drop, s.local_clip_frac) * self._target_size * scale
        return apply_jaw_drop(local, self._jaw_shares, down / scale, drop_px)

    def _local(self, kp: DriverKeypoints, A: np.ndarray) -> np.ndarray:
        s = self.settings
        pts, neutral = kp.points[kp.valid].astype(np.float64), kp.neutral[kp.valid].astype(np.float64)
        residual = pts - apply_affine(kp.similarity, neutral)
        a = A[0, 0]
        driver_size = self._target_size / a
        norm = np.linalg.norm(residual, axis=1, keepdims=True)
        limit = s.local_clip_frac * driver_size
        residual = residual * np.minimum(1.0, limit / np.maximum(norm, 1e-9))
        landed = apply_affine(A[:2], neutral)  # where each driver point sits on the target at neutral
        sigma = s.local_sigma_frac * self._target_size
        d2 = ((self.target.keypoints[:, None, :] - landed[None, :, :]) ** 2).sum(axis=2)
        w = np.exp(-d2 / (2 * sigma * sigma))
        # The constant in the denominator is a pull towards "no local motion" where no driver point is near.
        return s.local_gain * a * (w @ residual) / (w.sum(axis=1, keepdims=True) + 0.5)
