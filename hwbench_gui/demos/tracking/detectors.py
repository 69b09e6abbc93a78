"""The detectors the tracker can use, by name: the motion detector (no weights), OpenCV's HOG people
detector (no weights) and YOLOv3 (user-supplied Darknet weights).

Every detector has ``detect(frame_bgr) -> Detections`` and mutable ``conf_threshold`` / ``nms_threshold``
(the GUI's sliders change them between frames). torch is imported only when a YOLO detector is built.
"""

from __future__ import annotations

from hwbench_gui.demos.tracking.detection import Detections, nms_numpy  # noqa: F401 (re-exported)
from hwbench_gui.demos.tracking.detector_notes import DETECTOR_SUMMARIES  # noqa: F401 (re-exported)
from hwbench_gui.demos.tracking.hog import HOG_MODELS, HogModel, HogPeopleDetector  # noqa: F401 (re-exported)
from hwbench_gui.demos.tracking.motion_detector import BACKGROUNDS, MotionDetector  # noqa: F401 (re-exported)
from hwbench_gui.demos.tracking.yolo_detector import (  # noqa: F401 (re-exported)
    YOLO_PRECISIONS,
    YoloDetector,
    yolo_unavailable_reason,
)

DETECTORS = ("motion", "hog", "yolov3")


def make_detector(name: str, **options) -> MotionDetector | HogPeopleDetector | YoloDetector:
    """Build a detector by name (``motion``, ``hog``, ``yolov3``); options go to its constructor."""
    if name == "motion":
        return MotionDetector(**options)
    if name == "hog":
        return HogPeopleDetector(**options)
    if name == "yolov3":
        return YoloDetector(**options)
    raise ValueError(f"unknown detector {name!r}; choose from {', '.join(DETECTORS)}")
