"""Driver keypoints without any download: a Haar face box (or a user ROI) and Lucas–Kanade tracking.

Points are corners found inside the region and tracked frame to frame. Each point keeps its position
in the *neutral* frame, so motion is always "now relative to neutral": when points are lost and new
ones are seeded, their neutral positions are computed through the current similarity transform, and
the neutral reference stays the same.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np

from hwbench_gui.demos.motion.mouth import jaw_drop_from_points

FACE_CASCADE = "haarcascade_frontalface_default.xml"


@dataclass
class DriverKeypoints:
    """One frame's driver keypoints (image pixels of the driving frame)."""

    points: np.ndarray  # (N, 2) float32, current positions
    valid: np.ndarray  # (N,) bool, tracked in this frame
    neutral: np.ndarray  # (N, 2) float32, the same points in the neutral frame
    neutral_box: tuple[float, float, float, float]  # x, y, w, h of the driving region at neutral
    #: 2×3 similarity taking neutral positions to current ones (head translation, scale, roll).
    similarity: np.ndarray = field(default_factory=lambda: np.eye(2, 3, dtype=np.float64))
    #: Of the points tracked in the last frame, the fraction still tracked in this one (1 on a fresh start).
    kept_fraction: float = 1.0
    #: The jaw's drop beyond neutral as a share of the neutral box's size (:mod:`.mouth`); None: unknown.
    jaw_drop: float | None = None

    @property
    def box_corners(self) -> np.ndarray:
        """The neutral box carried by the similarity into the current frame, (4, 2)."""
        return apply_affine(self.similarity, box_corners(self.neutral_box))


def box_corners(box) -> np.ndarray:
    x, y, w, h = box
    return np.array([[x, y], [x + w, y], [x + w, y + h], [x, y + h]], dtype=np.float64)


def apply_affine(m: np.ndarray, pts: np.ndarray) -> np.ndarray:
    pts = np.asarray(pts, dtype=np.float64).reshape(-1, 2)
    return pts @ m[:, :2].T + m[:, 2]


def invert_affine(m: np.ndarray) -> np.ndarray:
    return cv2.invertAffineTransform(np.asarray(m, dtype=np.float64))


def estimate_similarity(src: np.ndarray, dst: np.ndarray) -> np.ndarray | None:
    """Least-median similarity (rotation, uniform scale, translation) src → dst; None below 3 points."""
    if len(src) < 3:
        return None
    m, _ = cv2.estimateAffinePartial2D(src.astype(np.float32).reshape(-1, 1, 2),
                                       dst.astype(np.float32).reshape(-1, 1, 2), method=cv2.LMEDS)
    return None if m is None else m.astype(np.float64)


def similarity_params(m: np.ndarray) -> dict:
    """Translation (px), scale and roll (degrees) of a 2×3 similarity, for traces and read-outs."""
    scale = float(np.hypot(m[0, 0], m[1, 0]))
    return {"tx": float(m[0, 2]), "ty": float(m[1, 2]), "scale": scale,
            "rotation_deg": float(np.degrees(np.arctan2(m[1, 0], m[0, 0])))}


class FaceDetectorUnavailable(RuntimeError):
    """This OpenCV cannot detect faces; the message says why and what to install (one line)."""


def face_detector_unavailable_reason() -> str | None:
    """Why the Haar face detector cannot run with this OpenCV (None when it can)."""
    if not hasattr(cv2, "CascadeClassifier") or not hasattr(getattr(cv2, "data", None), "haarcascades"):
        return (f"the Haar face detector needs OpenCV 4.x; this is OpenCV {cv2.__version__}, which dropped "
                "CascadeClassifier (pip install 'opencv-python>=4.10,<5'), or track a region with --roi instead")
    return None


class FaceDetector:
    """Largest frontal face with the Haar cascade that ships with opencv-python.

    Raises :class:`FaceDetectorUnavailable` when this OpenCV has no cascade classifier (OpenCV 5).
    """

    def __init__(self, detect_width: int = 320) -> None:
        reason = face_detector_unavailable_reason()
        if reason:
            raise FaceDetectorUnavailable(reason)
        path = cv2.data.haarcascades + FACE_CASCADE
        self._cascade = cv2.CascadeClassifier(path)
        if self._cascade.empty():
            raise FaceDetectorUnavailable(f"OpenCV could not load its face cascade {path}")
        self.detect_width = detect_width

    def detect(self, gray: np.ndarray) -> tuple[int, int, int, int] | None:
        """x, y, w, h of the largest face in full-frame pixels, or None."""
        # Detecting on a smaller copy is ~4× faster and faces in a webcam frame are big anyway.
        f = min(1.0, self.detect_width / gray.shape[1])
        small = cv2.resize(gray, None, fx=f, fy=f, interpolation=cv2.INTER_AREA) if f < 1 else gray
        small = cv2.equalizeHist(small)
        faces = self._cascade.detectMultiScale(small, scaleFactor=1.1, minNeighbors=5, minSize=(30, 30))
        if len(faces) == 0:
            return None
        x, y, w, h = max(faces, key=lambda r: r[2] * r[3])
        return int(x / f), int(y / f), int(w / f), int(h / f)


class LKKeypointSource:
    """Corners inside a face (Haar) or a fixed ROI, tracked with pyramidal Lucas–Kanade.

    ``update(gray)`` returns :class:`DriverKeypoints`, or None while there is nothing to track (then
    :attr:`status` says why: no face found, too little texture). ``reset_neutral()`` makes the next
    frame the neutral pose. Without a ``roi`` the face detector is built at once, so an OpenCV
    without one fails here with :class:`FaceDetectorUnavailable`, not at the first frame.
    """

    name = "Haar face + Lucas–Kanade"
    MIN_POINTS = 6
    #: Re-align points on the neutral frame each frame (see ``_correct_drift``); off: pure frame-to-frame.
    drift_correction = True

    def __init__(self, roi: tuple[int, int, int, int] | None = None, max_points: int = 60,
                 detector: FaceDetector | None = None) -> None:
        self.roi = roi
        self.max_points = max_points
        self._detector = detector if detector is not None or roi is not None else FaceDetector()
        self.status = "waiting for the first frame"
        self._reset()

    def _reset(self) -> None:
        self._prev: np.ndarray | None = None
        self._neutral_gray: np.ndarray | None = None
        self._pts = np.zeros((0, 2), np.float32)
        self._neutral = np.zeros((0, 2), np.float32)
        self._box: tuple[float, float, float, float] | None = None
        self._sim = np.eye(2, 3)
        self._seeded = 0
        self._kept = 1.0

    def reset_neutral(self) -> None:
        self._reset()

    def set_roi(self, roi: tuple[int, int, int, int] | None) -> None:
        """Track inside ``roi`` (x, y, w, h) from the next frame on; None goes back to face detection."""
        self.roi = roi
        self._reset()

    def _region(self, gray: np.ndarray):
        if self.roi is not None:
            x, y, w, h = self.roi
            H, W = gray.shape
            x, y = max(0, int(x)), max(0, int(y))
            w, h = min(int(w), W - x), min(int(h), H - y)
            if w < 8 or h < 8:
                self.status = f"the ROI {self.roi} lies outside the {W}×{H} frame"
                return None
            return x, y, w, h
        if self._detector is None:
            self._detector = FaceDetector()
        face = self._detector.detect(gray)
        if face is None:
            self.status = "no face found: face the camera, or draw a region to track"
        return face

    def _seed(self, gray: np.ndarray, polygon: np.ndarray, size_px: float) -> np.ndarray:
        mask = np.zeros_like(gray)
        cv2.fillConvexPoly(mask, np.round(polygon).astype(np.int32), 255)
        corners = cv2.goodFeaturesToTrack(gray, maxCorners=self.max_points, qualityLevel=0.005,
                                          minDistance=max(3.0, size_px / 14), mask=mask, blockSize=5)
        return np.zeros((0, 2), np.float32) if corners is None else corners.reshape(-1, 2).astype(np.float32)

    def update(self, gray: np.ndarray, frame_bgr: np.ndarray | None = None) -> DriverKeypoints | None:
        if self._box is None:
            box = self._region(gray)
            if box is None:
                return None
            pts = self._seed(gray, box_corners(box), min(box[2], box[3]))
            if len(pts) < self.MIN_POINTS:
                self.status = f"too little texture in the region {tuple(box)}: {len(pts)} corners found"
                return None
            self._box, self._pts, self._neutral, self._sim = tuple(map(float, box)), pts, pts.copy(), np.eye(2, 3)
            self._prev, self._neutral_gray, self._seeded, self._kept = gray, gray, len(pts), 1.0
            self.status = f"neutral pose set: tracking {len(pts)} points"
            return self._result()

        nxt, st, _ = cv2.calcOpticalFlowPyrLK(self._prev, gray, self._pts, None, winSize=(21, 21), maxLevel=3)
        back, st_b, _ = cv2.calcOpticalFlowPyrLK(gray, self._prev, nxt, None, winSize=(21, 21), maxLevel=3)
        fb_err = np.linalg.norm(back - self._pts, axis=1)
        H, W = gray.shape
        valid = ((st.ravel() == 1) & (st_b.ravel() == 1) & (fb_err < 1.0)
                 & (nxt[:, 0] >= 0) & (nxt[:, 1] >= 0) & (nxt[:, 0] < W) & (nxt[:, 1] < H))
        sim = estimate_similarity(self._neutral[valid], nxt[valid])
        if sim is not None and self.drift_correction:
            nxt, sim = self._correct_drift(gray, nxt, valid, sim)
        if sim is None:
            self._reset()
            self.status = "tracking lost: looking for the region again (neutral pose resets)"
            return None
        size = min(self._box[2], self._box[3]) * similarity_params(sim)["scale"]
        # A point far from where the head motion puts it slid onto the background or another feature.
        off = np.linalg.norm(apply_affine(sim, self._neutral) - nxt, axis=1)
        valid &= off < 0.25 * size
        self._kept = float(valid.mean()) if len(valid) else 0.0
        self._pts, self._neutral = nxt[valid].astype(np.float32), self._neutral[valid]
        self._sim, self._prev = sim, gray
        if len(self._pts) < max(self.MIN_POINTS, self._seeded // 2):
            self._reseed(gray, size)
        else:
            self.status = f"tracking {len(self._pts)} points"
        return self._result()

    def _correct_drift(self, gray, nxt, valid, sim):
        """Pull points back onto their neutral appearance, so frame-to-frame errors do not add up.

        The neutral frame warped by the current similarity looks like the current frame (up to
        expressions and lighting); Lucas–Kanade from it, started at the frame-to-frame positions, finds
        what those positions have drifted. Only small corrections are taken: a large one means the
        appearance changed (a mouth opening), where the frame-to-frame position is the better guess.
        """
        H, W = gray.shape
        warped = cv2.warpAffine(self._neutral_gray, sim, (W, H), flags=cv2.INTER_LINEAR)
        start = apply_affine(sim, self._neutral).astype(np.float32)
        corr, st, _ = cv2.calcOpticalFlowPyrLK(warped, gray, start, nxt.copy(), winSize=(21, 21), maxLevel=1,
                                               flags=cv2.OPTFLOW_USE_INITIAL_FLOW)
        ok = valid & (st.ravel() == 1) & (np.linalg.norm(corr - nxt, axis=1) < 3.0)
        nxt = nxt.copy()
        nxt[ok] = corr[ok]
        refined = estimate_similarity(self._neutral[valid], nxt[valid])
        return nxt, (sim if refined is None else refined)

    def _reseed(self, gray: np.ndarray, size: float) -> None:
        """Seed fresh points in the current region; their neutral spots come through the similarity."""
        corners = apply_affine(self._sim, box_corners(self._box))
        fresh = self._seed(gray, corners, size)
        if len(fresh) and len(self._pts):
            dist = np.linalg.norm(fresh[:, None] - self._pts[None], axis=2)
            fresh = fresh[dist.min(axis=1) > size / 14]
        fresh = fresh[: max(0, self.max_points - len(self._pts))]
        self._pts = np.concatenate([self._pts, fresh]).astype(np.float32)
        fresh_neutral = apply_affine(invert_affine(self._sim), fresh).astype(np.float32)
        self._neutral = np.concatenate([self._neutral, fresh_neutral]).astype(np.float32)
        self._seeded = len(self._pts)
        self.status = f"tracking {len(self._pts)} points ({len(fresh)} re-seeded)"

    def _result(self) -> DriverKeypoints:
        return DriverKeypoints(points=self._pts.copy(), valid=np.ones(len(self._pts), bool),
                               neutral=self._neutral.copy(),
                               neutral_box=self._box, similarity=self._sim.copy(), kept_fraction=self._kept,
                               jaw_drop=jaw_drop_from_points(self._pts, self._neutral, self._sim, self._box))
