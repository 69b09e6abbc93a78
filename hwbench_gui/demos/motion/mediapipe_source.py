"""Optional driver keypoints from MediaPipe's face landmarker (468 landmarks), where it is installed.

Why it is optional, and how to get it (also what :func:`unavailable_reason` tells the user):

- ``mediapipe.solutions.face_mesh`` (the legacy API, its model inside the wheel) exists up to
  mediapipe 0.10.21, whose wheels need numpy < 2 and protobuf < 5. hwbench's main environment has
  numpy 2 (and TensorFlow 2.21 needs protobuf ≥ 5), so it cannot go there. Use a separate
  environment: ``python -m venv mp-env && mp-env/bin/pip install hwbench-gui "mediapipe==0.10.21"
  "numpy<2"`` and run ``mp-env/bin/hwbench demo motion --keypoints mediapipe …`` from it.
- Newer mediapipe (0.10.30+) ships no models: its Tasks API needs a ``face_landmarker.task`` file that
  the user downloads once from Google's model page and passes as ``model_path`` (``--model`` on the
  CLI). hwbench never downloads it.

Neither path can be exercised on the machine this was written on (no mediapipe installed); the code
follows the documented APIs and is kept small.
"""

from __future__ import annotations

import os

import cv2
import numpy as np

from hwbench_gui.demos.motion.keypoints import DriverKeypoints, estimate_similarity
from hwbench_gui.demos.motion.mouth import jaw_drop_from_lips

#: A subset of the 468 FaceMesh landmarks: face oval, brows, eyes, nose, lips.
LANDMARKS = (
    10, 338, 297, 332, 284, 251, 389, 356, 454, 323, 361, 288, 397, 365, 379, 378, 400, 377, 152, 148, 176, 149,
    150, 136, 172, 58, 132, 93, 234, 127, 162, 21, 54, 103, 67, 109,  # face oval
    70, 105, 107, 336, 334, 300,  # brows
    33, 133, 159, 145, 362, 263, 386, 374,  # eyes
    1, 4, 6, 168,  # nose
    61, 291, 0, 17, 13, 14, 78, 308, 81, 311, 178, 402,  # lips
)
#: Positions in LANDMARKS of the upper lip's middle (outer 0, inner 13) and the lower lip's (17, 14).
UPPER_LIP, LOWER_LIP = (LANDMARKS.index(0), LANDMARKS.index(13)), (LANDMARKS.index(17), LANDMARKS.index(14))


def unavailable_reason(model_path: str | os.PathLike | None = None) -> str | None:
    """None when MediaPipe face landmarks can run here, else why not and what to install."""
    try:
        import mediapipe as mp
    except ImportError as exc:
        return ("MediaPipe is not installed in this environment "
                f"({type(exc).__name__}: {exc}). It needs a separate environment: mediapipe 0.10.21 (the last "
                "release with a bundled face model) requires numpy<2 and protobuf<5; or a newer mediapipe plus a "
                "face_landmarker.task model file you download yourself (see hwbench_gui/demos/motion/"
                "mediapipe_source.py).")
    if model_path is not None:
        return None if os.path.isfile(model_path) else f"MediaPipe model file {model_path}: no such file"
    if hasattr(getattr(mp, "solutions", None), "face_mesh"):
        return None
    return (f"mediapipe {getattr(mp, '__version__', '?')} ships no face model: give a face_landmarker.task file "
            "(--model on the CLI), or use mediapipe 0.10.21 in a separate environment.")


class MediaPipeKeypointSource:
    """Same interface as :class:`~hwbench_gui.demos.motion.keypoints.LKKeypointSource`.

    Landmarks are found anew in every frame, so there is no drift; the neutral pose is the landmarks
    of the first frame with a face (again after ``reset_neutral()``).
    """

    name = "MediaPipe face landmarks"
    roi = None

    def __init__(self, model_path: str | os.PathLike | None = None) -> None:
        reason = unavailable_reason(model_path)
        if reason:
            raise RuntimeError(reason)
        import mediapipe as mp

        self._mp = mp
        self._ts_ms = 0
        if model_path is not None:
            from mediapipe.tasks.python import BaseOptions, vision

            options = vision.FaceLandmarkerOptions(base_options=BaseOptions(model_asset_path=str(model_path)),
                                                   running_mode=vision.RunningMode.VIDEO, num_faces=1)
            self._tasks = vision.FaceLandmarker.create_from_options(options)
            self._mesh = None
        else:
            self._tasks = None
            self._mesh = mp.solutions.face_mesh.FaceMesh(static_image_mode=False, max_num_faces=1,
                                                         min_detection_confidence=0.5, min_tracking_confidence=0.5)
        self.status = "waiting for the first frame"
        self.reset_neutral()

    def reset_neutral(self) -> None:
        self._neutral: np.ndarray | None = None
        self._box = None

    def _landmarks(self, frame_bgr: np.ndarray):
        rgb = cv2.cvtColor(frame_bgr, cv2.COLOR_BGR2RGB)
        if self._tasks is not None:
            self._ts_ms += 33  # VIDEO mode wants increasing timestamps; the frame rate only tunes its tracker
            image = self._mp.Image(image_format=self._mp.ImageFormat.SRGB, data=rgb)
            faces = self._tasks.detect_for_video(image, self._ts_ms).face_landmarks
            return faces[0] if faces else None
        result = self._mesh.process(rgb)
        return result.multi_face_landmarks[0].landmark if result.multi_face_landmarks else None

    def update(self, gray: np.ndarray, frame_bgr: np.ndarray | None = None) -> DriverKeypoints | None:
        if frame_bgr is None:
            frame_bgr = cv2.cvtColor(gray, cv2.COLOR_GRAY2BGR)
        landmarks = self._landmarks(frame_bgr)
        if landmarks is None:
            self.status = "no face found by MediaPipe"
            return None
        h, w = frame_bgr.shape[:2]
        pts = np.array([[landmarks[i].x * w, landmarks[i].y * h] for i in LANDMARKS], np.float32)
        if self._neutral is None:
            self._neutral = pts.copy()
            lo, hi = pts.min(axis=0), pts.max(axis=0)
            self._box = (float(lo[0]), float(lo[1]), float(hi[0] - lo[0]), float(hi[1] - lo[1]))
        sim = estimate_similarity(self._neutral, pts)
        if sim is None:
            return None
        self.status = f"MediaPipe: {len(pts)} landmarks"
        return DriverKeypoints(points=pts, valid=np.ones(len(pts), bool), neutral=self._neutral.copy(),
                               neutral_box=self._box, similarity=sim,
                               jaw_drop=jaw_drop_from_lips(pts, self._neutral, sim, self._box, UPPER_LIP, LOWER_LIP))
