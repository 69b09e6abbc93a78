"""What a detector hands the tracker: boxes with scores, classes and the blob each was cut from; and NMS."""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np


@dataclass
class Detections:
    """Boxes in frame pixels, x1 y1 x2 y2 (float32, (N, 4)), with score and class id per box."""

    boxes: np.ndarray = field(default_factory=lambda: np.zeros((0, 4), np.float32))
    scores: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))
    class_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    # Which foreground blob each box was cut from (boxes of one blob share a number), for a detector
    # that splits blobs; None: every box stands alone.
    blobs: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.boxes)


def nms_numpy(boxes: np.ndarray, scores: np.ndarray, iou_threshold: float) -> np.ndarray:
    """Indices kept by greedy NMS (OpenCV's, through cv2.dnn.NMSBoxes), best score first."""
    if len(boxes) == 0:
        return np.zeros(0, np.int64)
    xywh = [[float(x1), float(y1), float(x2 - x1), float(y2 - y1)] for x1, y1, x2, y2 in boxes]
    keep = cv2.dnn.NMSBoxes(xywh, [float(s) for s in scores], 0.0, float(iou_threshold))
    return np.asarray(keep, np.int64).reshape(-1)

