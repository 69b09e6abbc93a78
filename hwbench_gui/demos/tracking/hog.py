"""OpenCV's HOG + linear SVM people detector, with boxes fitted to the person inside the window."""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from hwbench_gui.demos.tracking.detection import Detections, nms_numpy
from hwbench_gui.demos.tracking.scenery import SceneryFilter


@dataclass(frozen=True)
class HogModel:
    """One of OpenCV's trained HOG people models: its window and the person inside it."""

    window_px: tuple[int, int]  # width, height
    person_px: int  # height of the people it was trained on, inside the window
    svm: str  # the cv2 function that returns its SVM coefficients

    @property
    def margin(self) -> tuple[float, float]:
        """Fractions of the window left empty on each side of the person (x, y): a found window is
        shrunk by them, so the box is the person's, not the window's (boxes of about 0.41 width per
        height, a standing pedestrian's)."""
        w, h = self.window_px
        return (w - 0.41 * self.person_px) / 2 / w, (h - self.person_px) / 2 / h


#: Dalal–Triggs (INRIA people, 96 px tall in a 64×128 window) and Daimler (72 px tall in 48×96).
HOG_MODELS = {
    "dalal": HogModel((64, 128), 96, "HOGDescriptor_getDefaultPeopleDetector"),
    "daimler": HogModel((48, 96), 72, "HOGDescriptor_getDaimlerPeopleDetector"),
}


class HogPeopleDetector:
    """OpenCV's HOG + linear SVM people detector: no weights needed.

    ``model="daimler"`` (default) is OpenCV's 48×96 Daimler pedestrian model, ``"dalal"`` the 64×128
    Dalal–Triggs one. The frame is scaled so a person ``min_height_px`` tall fills the model's person
    height, and the model's scale pyramid (step ``scale_step``) runs from there up to the whole frame:
    people shorter than :attr:`min_height_px` are not seen. Boxes are the person inside the window
    (:attr:`HogModel.margin`). Score is the SVM margin (typically 0–3), kept from ``conf_threshold``;
    NMS at IoU ``nms_threshold`` removes the windows HOG reports at neighbouring scales. ``scenery``
    (default): detections on pixels that do not change (a pillar, a door, a tripod) are dropped
    (:class:`~.scenery.SceneryFilter`), for a fixed camera. Recall, precision and speed figures behind
    the defaults: docs/demos-tuning.md.
    """

    name = "hog"
    device = "cpu"
    class_names = ["person"]

    def __init__(self, conf_threshold: float = 0.6, nms_threshold: float = 0.2, model: str = "daimler",
                 min_height_px: float = 60.0, scale_step: float = 1.1, scenery: bool = True,
                 fps: float = 25.0) -> None:
        self.conf_threshold, self.nms_threshold = conf_threshold, nms_threshold
        if model not in HOG_MODELS:
            raise ValueError(f"HOG model must be one of {', '.join(HOG_MODELS)}, got {model!r}")
        if not min_height_px > 0 or not scale_step > 1.0:
            raise ValueError(f"min_height_px must be > 0 and scale_step > 1, got {min_height_px}, {scale_step}")
        if not hasattr(cv2, "HOGDescriptor"):
            raise RuntimeError(f"the HOG people detector needs OpenCV 4.x; this is OpenCV {cv2.__version__}, "
                               "which dropped it (pip install 'opencv-python>=4.10,<5')")
        self.model = HOG_MODELS[model]
        self.model_name = model
        self.min_height_px, self.scale_step = float(min_height_px), float(scale_step)
        self._hog = cv2.HOGDescriptor(self.model.window_px, (16, 16), (8, 8), (8, 8), 9)
        self._hog.setSVMDetector(getattr(cv2, self.model.svm)())
        self.scenery = SceneryFilter(fps) if scenery else None

    @property
    def frame_scale(self) -> float:
        """What the frame is scaled by before the pyramid: a ``min_height_px`` person becomes the model's."""
        return self.model.person_px / self.min_height_px

    def set_frame_rate(self, fps: float) -> None:
        """The source's frames per second (the scenery filter's times are in seconds)."""
        if self.scenery is not None:
            self.scenery.set_frame_rate(fps)

    def reset(self) -> None:
        if self.scenery is not None:
            self.scenery.reset()

    def detect(self, frame: np.ndarray) -> Detections:
        dets = self._detect_people(frame)
        if self.scenery is None:
            return dets
        keep = self.scenery.keep(frame, dets.boxes)
        return Detections(dets.boxes[keep], dets.scores[keep], dets.class_ids[keep])

    def _detect_people(self, frame: np.ndarray) -> Detections:
        f = self.frame_scale
        win_w, win_h = self.model.window_px
        if frame.shape[1] * f < win_w or frame.shape[0] * f < win_h:
            return Detections()
        scaled = frame if abs(f - 1.0) < 1e-6 else cv2.resize(
            frame, None, fx=f, fy=f, interpolation=cv2.INTER_LINEAR if f > 1 else cv2.INTER_AREA)
        rects, weights = self._hog.detectMultiScale(scaled, winStride=(8, 8), padding=(0, 0), scale=self.scale_step)
        if len(rects) == 0:
            return Detections()
        rects = np.asarray(rects, np.float32).reshape(-1, 4) / f
        scores = np.asarray(weights, np.float32).reshape(-1)
        mx, my = self.model.margin
        dx, dy = rects[:, 2] * mx, rects[:, 3] * my
        boxes = np.stack([rects[:, 0] + dx, rects[:, 1] + dy, rects[:, 0] + rects[:, 2] - dx,
                          rects[:, 1] + rects[:, 3] - dy], 1)
        ok = scores >= self.conf_threshold
        boxes, scores = boxes[ok], scores[ok]
        keep = nms_numpy(boxes, scores, self.nms_threshold)
        return Detections(boxes[keep], scores[keep], np.zeros(len(keep), np.int64))
