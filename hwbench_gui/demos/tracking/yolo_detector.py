"""YOLOv3 as a tracking detector: Darknet cfg and weights (user-supplied, or random for speed tests)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import numpy as np

from hwbench_gui.demos.tracking import darknet
from hwbench_gui.demos.tracking.detection import Detections
from hwbench_gui.engine.spec.precision import FP16, FP32, TF32, apply_torch


#: What YOLOv3 runs in: FP32 with TF32 off, TF32, or FP16 weights and inputs (CUDA only for the last two).
YOLO_PRECISIONS = (FP32, TF32, FP16)


def yolo_unavailable_reason(weights: str | os.PathLike | None, random_weights: bool = False) -> str | None:
    """Why YOLOv3 cannot run with these settings (None when it can). Checks files, not contents."""
    if random_weights:
        return None
    if not weights:
        return ("no YOLOv3 weights: choose a Darknet .weights file (yolov3.weights or yolov3-tiny.weights "
                "from the Darknet project, pjreddie.com/darknet/yolo); hwbench downloads none")
    if Path(weights).is_dir():
        return f"YOLOv3 weights {weights} is a folder, not a .weights file"
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
        declared = {p.key: p for p in YOLO_PRECISIONS}.get(precision)
        if declared is None:
            raise ValueError(f"precision must be {', '.join(p.key for p in YOLO_PRECISIONS)}, got {precision!r}")
        if declared is not FP32 and self.device.type != "cuda":
            raise ValueError(f"precision {precision} needs a CUDA device")
        self.half = declared is FP16
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
        self.precision = declared.label
        if self.device.type == "cuda":
            # cuDNN allows TF32 convolutions by default: switch it off unless asked, so FP32 means FP32.
            apply_torch(declared, self.device.type)

    def run_params(self) -> dict:
        """What decides this detector's speed beyond device, precision and size, as a result document records
        it: the CUDA graph (on an H100 in FP16, 83 frames/s against 49 layer by layer), and the confidence
        threshold and the cap on detections, which decide how many boxes the tracker associates each frame."""
        return {"cuda_graph": self.cuda_graph, "conf": self.conf_threshold, "max_det": self.max_det}

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
