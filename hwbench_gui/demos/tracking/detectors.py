"""Detectors the tracker can use: YOLOv3 (user-supplied Darknet weights), OpenCV HOG people, MOG2 motion blobs.

Every detector has ``detect(frame_bgr) -> Detections`` and mutable ``conf_threshold`` /
``nms_threshold`` (the GUI's sliders change them between frames). torch is imported only when a
YOLO detector is built.
"""

from __future__ import annotations

import contextlib

import os
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from hwbench_gui.demos.tracking import darknet

DETECTORS = ("motion", "hog", "yolov3")


@dataclass
class Detections:
    """Boxes in frame pixels, x1 y1 x2 y2 (float32, (N, 4)), with score and class id per box."""

    boxes: np.ndarray = field(default_factory=lambda: np.zeros((0, 4), np.float32))
    scores: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))
    class_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))

    def __len__(self) -> int:
        return len(self.boxes)


def nms_numpy(boxes: np.ndarray, scores: np.ndarray, iou_threshold: float) -> np.ndarray:
    """Indices kept by greedy NMS (OpenCV's, through cv2.dnn.NMSBoxes), best score first."""
    if len(boxes) == 0:
        return np.zeros(0, np.int64)
    xywh = [[float(x1), float(y1), float(x2 - x1), float(y2 - y1)] for x1, y1, x2, y2 in boxes]
    keep = cv2.dnn.NMSBoxes(xywh, [float(s) for s in scores], 0.0, float(iou_threshold))
    return np.asarray(keep, np.int64).reshape(-1)


class MotionDetector:
    """Moving blobs from MOG2 background subtraction: a detector that needs no weights.

    Objects that stand still fade into the background within about ``history`` frames. Score is
    the fraction of the box covered by foreground; ``conf_threshold`` filters on it. The model runs
    on the frame scaled by ``scale`` (MOG2 costs ~15 ms per 640×480 frame on one core at full size).
    ``learning_rate`` is fixed (OpenCV's automatic rate starts at 1/2 and absorbs objects that move
    slowly in the first seconds); the first frame still initialises the model completely, so things
    standing in it leave ghosts for a few hundred frames.
    """

    name = "motion"
    device = "cpu"
    class_names = ["moving"]

    def __init__(self, history: int = 200, var_threshold: float = 25.0, min_area_px: int = 150,
                 conf_threshold: float = 0.25, nms_threshold: float = 0.5, scale: float = 0.5,
                 learning_rate: float = 0.005) -> None:
        self.history, self.var_threshold, self.scale = history, var_threshold, scale
        self.learning_rate = learning_rate
        self.min_area_px = min_area_px
        self.conf_threshold, self.nms_threshold = conf_threshold, nms_threshold
        # Kernels sized in full-frame pixels: open removes ~3 px specks, close joins gaps of ~7 px.
        # Odd sizes: an even kernel's anchor is off centre and shifts every blob.
        k_open, k_close = max(1, round(1.5 * scale)) * 2 + 1, max(1, round(3 * scale)) * 2 + 1
        self._kernel_open = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k_open, k_open))
        self._kernel_close = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k_close, k_close))
        self.reset()

    def reset(self) -> None:
        self._mog = cv2.createBackgroundSubtractorMOG2(self.history, self.var_threshold, detectShadows=False)
        self._frames = 0

    def detect(self, frame: np.ndarray) -> Detections:
        if self.scale != 1.0:
            frame = cv2.resize(frame, None, fx=self.scale, fy=self.scale, interpolation=cv2.INTER_AREA)
        mask = self._mog.apply(frame, learningRate=self.learning_rate)
        self._frames += 1
        if self._frames == 1:  # MOG2 marks the whole first frame as foreground: it has no model yet
            return Detections()
        mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, self._kernel_open)
        mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, self._kernel_close)
        n, _, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
        boxes, scores = [], []
        min_area = self.min_area_px * self.scale * self.scale
        for x, y, w, h, area in stats[1:n]:
            if area < min_area:
                continue
            fill = area / float(w * h)
            if fill < self.conf_threshold:
                continue
            boxes.append((x, y, x + w, y + h))
            scores.append(fill)
        if not boxes:
            return Detections()
        boxes_a, scores_a = np.asarray(boxes, np.float32) / self.scale, np.asarray(scores, np.float32)
        keep = nms_numpy(boxes_a, scores_a, self.nms_threshold)
        return Detections(boxes_a[keep], scores_a[keep], np.zeros(len(keep), np.int64))


class HogPeopleDetector:
    """OpenCV's HOG + linear SVM pedestrian detector (Dalal–Triggs, 64×128 window): no weights needed.

    Finds upright people about 100 px tall or more; runs on a frame scaled to ``max_width_px``.
    Score is the SVM margin (typically 0–3); NMS removes the overlapping windows HOG reports.
    """

    name = "hog"
    device = "cpu"
    class_names = ["person"]

    def __init__(self, conf_threshold: float = 0.3, nms_threshold: float = 0.4, max_width_px: int = 640) -> None:
        self.conf_threshold, self.nms_threshold = conf_threshold, nms_threshold
        self.max_width_px = max_width_px
        if not hasattr(cv2, "HOGDescriptor"):
            raise RuntimeError(f"the HOG people detector needs OpenCV 4.x; this is OpenCV {cv2.__version__}, "
                               "which dropped it (pip install 'opencv-python>=4.10,<5')")
        self._hog = cv2.HOGDescriptor()
        self._hog.setSVMDetector(cv2.HOGDescriptor_getDefaultPeopleDetector())

    def reset(self) -> None:
        pass

    def detect(self, frame: np.ndarray) -> Detections:
        scale = min(1.0, self.max_width_px / frame.shape[1])
        small = cv2.resize(frame, None, fx=scale, fy=scale) if scale < 1.0 else frame
        rects, weights = self._hog.detectMultiScale(small, winStride=(8, 8), padding=(8, 8), scale=1.05)
        if len(rects) == 0:
            return Detections()
        rects = np.asarray(rects, np.float32) / scale
        scores = np.asarray(weights, np.float32).reshape(-1)
        boxes = np.stack([rects[:, 0], rects[:, 1], rects[:, 0] + rects[:, 2], rects[:, 1] + rects[:, 3]], 1)
        ok = scores >= self.conf_threshold
        boxes, scores = boxes[ok], scores[ok]
        keep = nms_numpy(boxes, scores, self.nms_threshold)
        return Detections(boxes[keep], scores[keep], np.zeros(len(keep), np.int64))


def yolo_unavailable_reason(weights: str | os.PathLike | None, random_weights: bool = False) -> str | None:
    """Why YOLOv3 cannot run with these settings (None when it can). Checks files, not contents."""
    if random_weights:
        return None
    if not weights:
        return ("no YOLOv3 weights: choose a Darknet .weights file (yolov3.weights or yolov3-tiny.weights "
                "from the Darknet project, pjreddie.com/darknet/yolo); hwbench downloads none")
    if not Path(weights).is_file():
        return f"YOLOv3 weights file not found: {weights}"
    try:
        import torch  # noqa: F401
        import torchvision  # noqa: F401
    except ImportError as exc:
        return f"YOLOv3 needs torch and torchvision: {exc}"
    return None


class YoloDetector:
    """YOLOv3 / YOLOv3-tiny from a Darknet cfg and weights, on CUDA or CPU.

    ``random_weights=True`` fills the network with random numbers instead of reading a file: for
    speed measurements only, its detections are noise (:attr:`random_weights` says so to callers).
    ``precision``: ``fp32`` (TF32 off), ``tf32`` (cuDNN/cuBLAS may use TF32) or ``fp16`` (CUDA only);
    these set torch's process-wide TF32 switches. :attr:`precision` names what ran.
    ``classes`` keeps only those COCO class ids (None: all). ``cuda_graph=True`` (CUDA only) captures
    the network once and replays it per frame, which removes most per-layer launch overhead.
    Raises ``darknet.CfgError`` / ``darknet.WeightsError`` / ``RuntimeError`` (device) with reasons.
    """

    name = "yolov3"

    def __init__(self, cfg: str | os.PathLike | None = None, weights: str | os.PathLike | None = None,
                 device: str = "cpu", size: int = 416, conf_threshold: float = 0.5, nms_threshold: float = 0.45,
                 classes: list[int] | None = None, precision: str = "fp32", random_weights: bool = False,
                 max_det: int = 100, seed: int = 0, cuda_graph: bool = False) -> None:
        reason = yolo_unavailable_reason(weights, random_weights)
        if reason:
            raise FileNotFoundError(reason)
        import torch

        from hwbench_gui.demos.tracking.yolo import YoloV3

        if size % 32:
            raise ValueError(f"YOLOv3 input size must be a multiple of 32, got {size}")
        if device.startswith("cuda") and not torch.cuda.is_available():
            raise RuntimeError("--device cuda asked, but torch sees no CUDA device "
                               f"(torch {torch.__version__}, built for CUDA {torch.version.cuda})")
        self.cfg_path = Path(cfg) if cfg else darknet.shipped_cfg("yolov3")
        self.network = darknet.parse_cfg(self.cfg_path)
        loaded = darknet.random_weights(self.network, seed) if random_weights else \
            darknet.read_weights(weights, self.network)
        self.random_weights = random_weights
        self.weights_path = None if random_weights else Path(weights)
        self.device = torch.device(device)
        if precision not in ("fp32", "tf32", "fp16"):
            raise ValueError(f"precision must be fp32, tf32 or fp16, got {precision!r}")
        if precision != "fp32" and self.device.type != "cuda":
            raise ValueError(f"precision {precision} needs a CUDA device")
        self.half = precision == "fp16"
        self.size = size
        self.conf_threshold, self.nms_threshold = conf_threshold, nms_threshold
        self.classes, self.max_det = classes, max_det
        names = darknet.coco_names()
        self.class_names = names if self.network.num_classes == len(names) else \
            [str(i) for i in range(self.network.num_classes)]
        model = YoloV3(self.network)
        model.load_darknet(loaded)
        model.eval().fuse().to(self.device)
        if self.half:
            model.half()
        if self.device.type == "cuda":
            torch.backends.cudnn.benchmark = True
            model = model.to(memory_format=torch.channels_last)
        self.model = model
        self.cuda_graph = bool(cuda_graph and self.device.type == "cuda")
        self._graph = None
        self.precision = {"fp32": "FP32", "tf32": "TF32", "fp16": "FP16"}[precision]
        if self.device.type == "cuda":
            # cuDNN allows TF32 convolutions by default: switch it off unless asked, so FP32 means FP32.
            torch.backends.cudnn.allow_tf32 = precision == "tf32"
            torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"

    def reset(self) -> None:
        pass

    def detect(self, frame: np.ndarray) -> Detections:
        import torch

        from hwbench_gui.demos.tracking.yolo import letterbox, postprocess

        # The tracking pipeline calls this from its detection thread, whose current CUDA device is
        # cuda:0 until set: make it this detector's (the graph and the default stream follow it).
        cuda_context = torch.cuda.device(self.device) if self.device.type == "cuda" else contextlib.nullcontext()
        with torch.inference_mode(), cuda_context:
            src = torch.from_numpy(np.ascontiguousarray(frame))
            if self.device.type == "cuda":
                src = src.pin_memory().to(self.device, non_blocking=True)
            x, scale, (dx, dy) = letterbox(src, self.size)
            if self.device.type == "cuda":
                x = x.contiguous(memory_format=torch.channels_last)
            if self.half:
                x = x.half()
            raw = self._forward_graph(x) if self.cuda_graph else self.model(x)
            pred = self.model.decode(raw, (self.size, self.size))
            out = postprocess(pred, self.conf_threshold, self.nms_threshold, self.max_det, self.classes)[0]
            out = out.cpu().numpy()  # the copy back synchronises: detect time includes all GPU work
        if len(out) == 0:
            return Detections()
        boxes = out[:, :4].copy()
        boxes[:, [0, 2]] = (boxes[:, [0, 2]] - dx) / scale
        boxes[:, [1, 3]] = (boxes[:, [1, 3]] - dy) / scale
        h, w = frame.shape[:2]
        boxes[:, [0, 2]] = boxes[:, [0, 2]].clip(0, w)
        boxes[:, [1, 3]] = boxes[:, [1, 3]].clip(0, h)
        return Detections(boxes.astype(np.float32), out[:, 4].astype(np.float32), out[:, 5].astype(np.int64))

    def _forward_graph(self, x):
        """The network through a CUDA graph captured on first use (input shape is fixed: 1×3×size×size)."""
        import torch

        if self._graph is None:
            self._static_in = x.clone()
            side = torch.cuda.Stream(self.device)
            side.wait_stream(torch.cuda.current_stream(self.device))
            with torch.cuda.stream(side):
                for _ in range(3):  # warm-up outside the graph: cuDNN picks its algorithms here
                    self.model(self._static_in)
            torch.cuda.current_stream(self.device).wait_stream(side)
            self._graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self._graph):
                self._static_out = self.model(self._static_in)
        self._static_in.copy_(x)
        self._graph.replay()
        return self._static_out


def make_detector(name: str, **options) -> MotionDetector | HogPeopleDetector | YoloDetector:
    """Build a detector by name (``motion``, ``hog``, ``yolov3``); options go to its constructor."""
    if name == "motion":
        return MotionDetector(**options)
    if name == "hog":
        return HogPeopleDetector(**options)
    if name == "yolov3":
        return YoloDetector(**options)
    raise ValueError(f"unknown detector {name!r}; choose from {', '.join(DETECTORS)}")
