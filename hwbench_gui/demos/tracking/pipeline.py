"""Detector → appearance features → Deep SORT, one frame at a time, timed per stage.

``detect_s`` covers the detector end to end (for YOLO on CUDA: upload, letterbox, network, decode,
NMS and the copy back, which waits for the GPU); ``embed_s`` the appearance features (CPU);
``associate_s`` Kalman prediction, matching and track bookkeeping.

Each step runs with numpy's BLAS held to one thread. The tracker's matrix products are small
(a few hundred rows at most), so extra BLAS threads cannot speed them up; but OpenBLAS threads
busy-wait after every product, and on a 16-core H200 box they took the cores the thread that feeds
the GPU needed: YOLOv3 detect went from 8.5 to 22.7 ms per frame and the demo from 69 to 31 FPS
(``scripts/track_diag.sh``).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from threadpoolctl import ThreadpoolController

from hwbench_gui.demos.tracking.appearance import ColorHogEmbedder
from hwbench_gui.demos.tracking.deepsort import Detection, Tracker
from hwbench_gui.demos.tracking.detectors import Detections

STAGES = ("detect_s", "embed_s", "associate_s")


@dataclass
class TrackBox:
    track_id: int
    box: np.ndarray  # xyxy, frame pixels
    score: float
    class_id: int
    trail: list[tuple[float, float]]


@dataclass
class FrameResult:
    index: int  # from 1
    tracks: list[TrackBox]
    detections: Detections
    timing_s: dict[str, float]

    @property
    def total_s(self) -> float:
        return sum(self.timing_s.values())


@dataclass
class TimingStats:
    """Per-stage times of every frame stepped (seconds), and summaries of them."""

    samples: dict[str, list[float]] = field(default_factory=lambda: {k: [] for k in STAGES})

    def add(self, timing_s: dict[str, float]) -> None:
        for k in STAGES:
            self.samples[k].append(timing_s[k])

    @property
    def frames(self) -> int:
        return len(self.samples["detect_s"])

    def summary(self, skip: int = 0) -> dict:
        """Mean, median and p95 per stage in ms, and frames per second over the total, after ``skip`` frames."""
        out: dict = {"frames": max(0, self.frames - skip)}
        if out["frames"] == 0:
            return out
        total = np.zeros(out["frames"])
        for k in STAGES:
            a = np.asarray(self.samples[k][skip:]) * 1e3
            total += a
            out[k.replace("_s", "_ms")] = {"mean": float(a.mean()), "median": float(np.median(a)),
                                           "p95": float(np.percentile(a, 95))}
        out["total_ms"] = {"mean": float(total.mean()), "median": float(np.median(total)),
                           "p95": float(np.percentile(total, 95))}
        out["fps"] = float(out["frames"] / (total.sum() / 1e3))
        return out


class TrackingPipeline:
    """``step(frame)`` runs detector, embedder and tracker on one BGR frame.

    ``embedder=None`` turns appearance off (the cascade then ranks by Mahalanobis distance).
    Reported boxes are the matched detections' boxes (Deep SORT's Kalman box lags behind size
    changes); ids come from the tracker.
    """

    def __init__(self, detector, embedder: ColorHogEmbedder | None = None, tracker: Tracker | None = None,
                 use_appearance: bool = True) -> None:
        self.detector = detector
        self.embedder = (embedder or ColorHogEmbedder()) if use_appearance else None
        self.tracker = tracker or Tracker()
        self.stats = TimingStats()
        self.frame_index = 0
        self._threadpools = ThreadpoolController()

    def reset(self) -> None:
        self.detector.reset()
        self.tracker.reset()
        self.stats = TimingStats()
        self.frame_index = 0

    def step(self, frame: np.ndarray) -> FrameResult:
        with self._threadpools.limit(limits=1, user_api="blas"):
            return self._step(frame)

    def _step(self, frame: np.ndarray) -> FrameResult:
        self.frame_index += 1
        t0 = time.perf_counter()
        dets = self.detector.detect(frame)
        t1 = time.perf_counter()
        features = self.embedder.embed(frame, dets.boxes) if self.embedder is not None and len(dets) else None
        t2 = time.perf_counter()
        self.tracker.predict()
        self.tracker.update([Detection(dets.boxes[i], float(dets.scores[i]), int(dets.class_ids[i]),
                                       None if features is None else features[i]) for i in range(len(dets))])
        tracks = [TrackBox(t.track_id, t.last_box.copy(), float(t.score), int(t.class_id), list(t.trail))
                  for t in self.tracker.active_tracks()]
        t3 = time.perf_counter()
        timing = {"detect_s": t1 - t0, "embed_s": t2 - t1, "associate_s": t3 - t2}
        self.stats.add(timing)
        return FrameResult(self.frame_index, tracks, dets, timing)


def track_video(pipeline: TrackingPipeline, source: str | int, tracks_path: str | os.PathLike | None = None,
                video_path: str | os.PathLike | None = None, max_frames: int | None = None,
                class_names: list[str] | None = None,
                on_frame: Callable[[FrameResult], None] | None = None,
                should_stop: Callable[[], bool] | None = None) -> TimingStats:
    """Run ``pipeline`` over a file or camera; write MOT text and/or an annotated MP4 if paths are given.

    ``source`` is what :func:`~hwbench_gui.demos.video.open_source` takes (a camera opens at its default size);
    raises :class:`~hwbench_gui.demos.video.SourceError` when it cannot be opened.
    """
    from hwbench_gui.demos.tracking.io import MotWriter
    from hwbench_gui.demos.tracking.render import draw_tracks
    from hwbench_gui.demos.video import Mp4Writer, open_source

    mot = MotWriter(tracks_path) if tracks_path else None
    writer = None
    try:
        with open_source(source, camera_size_wh=None) as src:
            for frame in src:
                if (max_frames is not None and pipeline.frame_index >= max_frames) or (should_stop and should_stop()):
                    break
                result = pipeline.step(frame)
                if mot:
                    for t in result.tracks:
                        mot.write(result.index, t.track_id, t.box, t.score)
                if video_path:
                    if writer is None:
                        writer = Mp4Writer(video_path, src.fps, (frame.shape[1], frame.shape[0]))
                    writer.write(draw_tracks(frame, result, class_names))
                if on_frame:
                    on_frame(result)
    finally:
        if mot:
            mot.close()
        if writer:
            writer.close()
    return pipeline.stats
