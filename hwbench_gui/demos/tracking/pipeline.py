"""Detector → appearance features → Deep SORT, one frame at a time, timed per stage.

``detect_s`` covers the detector end to end (for YOLO on CUDA: upload, letterbox, network, decode,
NMS and the copy back, which waits for the GPU); ``embed_s`` the appearance features (CPU);
``associate_s`` Kalman prediction, matching and track bookkeeping.

Each step runs with numpy's BLAS held to one thread. The tracker's matrix products are small
(a few hundred rows at most), so extra BLAS threads cannot speed them up; but OpenBLAS threads
busy-wait after every product, and on a 16-core H200 box they took the cores the thread that feeds
the GPU needed: YOLOv3 detect went from 8.5 to 22.7 ms per frame and the demo from 69 to 31 FPS
(``scripts/tracking_blas_threads.sh``).

:meth:`TrackingPipeline.run` overlaps the two halves of the work: the next frame's detection (GPU
work and its waits, in a thread) runs while this frame's appearance features and association run
on the CPU. Detection needs nothing from the tracker, so the results are those of calling
:meth:`~TrackingPipeline.step` frame by frame; only the wall time shrinks, towards the slower of
the two halves instead of their sum. ``frame_s`` is that wall time per frame as the caller sees
it (the wait for the detection, then embed and associate); with overlap the stage times add up
to more than it.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator

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
    held: bool = False  # inside a merged blob: the box is the track's prediction, not a detection


@dataclass
class FrameResult:
    index: int  # from 1
    tracks: list[TrackBox]
    detections: Detections
    timing_s: dict[str, float]  # the STAGES, and frame_s: the wall time this frame cost the caller
    frame: np.ndarray | None = None  # the BGR frame the result belongs to (run() hands it back for drawing)


@dataclass
class TimingStats:
    """Per-stage times of every frame stepped (seconds), and summaries of them."""

    samples: dict[str, list[float]] = field(default_factory=lambda: {k: [] for k in (*STAGES, "frame_s")})

    def add(self, timing_s: dict[str, float]) -> None:
        for k in (*STAGES, "frame_s"):
            self.samples[k].append(timing_s[k])

    @property
    def frames(self) -> int:
        return len(self.samples["detect_s"])

    def summary(self, skip: int = 0) -> dict:
        """Mean, median and p95 in ms per stage and of the frame wall time (``frame_ms``), and frames
        per second over the summed frame wall times, after ``skip`` frames."""
        out: dict = {"frames": max(0, self.frames - skip)}
        if out["frames"] == 0:
            return out
        for k in (*STAGES, "frame_s"):
            a = np.asarray(self.samples[k][skip:]) * 1e3
            out[k.replace("_s", "_ms")] = {"mean": float(a.mean()), "median": float(np.median(a)),
                                           "p95": float(np.percentile(a, 95))}
        out["fps"] = float(out["frames"] / (sum(self.samples["frame_s"][skip:]) or float("inf")))
        return out


class TrackingPipeline:
    """``step(frame)`` runs detector, embedder and tracker on one BGR frame.

    ``embedder=None`` turns appearance off (the cascade then ranks by Mahalanobis distance).
    Reported boxes are the matched detections' boxes (Deep SORT's Kalman box lags behind size
    changes); ids come from the tracker. Without a ``tracker`` the pipeline builds Deep SORT, made
    occlusion-aware (merged blobs split, their tracks held) when the detector says it merges
    crowds into one detection (``detector.merges_objects``, the motion detector).
    """

    def __init__(self, detector, embedder: ColorHogEmbedder | None = None, tracker: Tracker | None = None,
                 use_appearance: bool = True) -> None:
        self.detector = detector
        self.embedder = (embedder or ColorHogEmbedder()) if use_appearance else None
        self.tracker = tracker or Tracker(occlusion_aware=bool(getattr(detector, "merges_objects", False)))
        self.stats = TimingStats()
        self.frame_index = 0
        self.fps = 25.0  # the source's frames per second (set_frame_rate)
        self.still_speed_px_s = 12.5  # a confirmed track slower than this (px per second) stands still,
        self.still_heights_s = 0.15  # or slower than this many of its own heights per second (walking is ~0.8)
        self._still: dict[int, np.ndarray] = {}  # frame index → boxes of the tracks standing still after it
        self._threadpools = ThreadpoolController()

    def set_frame_rate(self, fps: float) -> None:
        """The source's frames per second: the motion detector learns its background, a track counts
        as standing still and the tracker's ages run by seconds, not frames
        (:meth:`MotionDetector.set_frame_rate`, :meth:`Tracker.set_frame_rate`)."""
        if not fps > 0:
            raise ValueError(f"fps must be > 0, got {fps}")
        self.fps = float(fps)
        if hasattr(self.detector, "set_frame_rate"):
            self.detector.set_frame_rate(fps)
        self.tracker.set_frame_rate(fps)

    @property
    def still_speed(self) -> float:
        """Pixels per frame below which a confirmed track stands still."""
        return self.still_speed_px_s / self.fps

    def reset(self) -> None:
        self.detector.reset()
        self.tracker.reset()
        self.stats = TimingStats()
        self.frame_index = 0
        self._still.clear()

    def step(self, frame: np.ndarray) -> FrameResult:
        """Detect, embed and associate one frame, in that order, in this thread."""
        with self._threadpools.limit(limits=1, user_api="blas"):
            start = time.perf_counter()
            dets, detect_s = self._detect(frame, self._keep_for(self.frame_index + 1))
            return self._track(frame, dets, detect_s, start)

    def run(self, frames: Iterable[np.ndarray], overlap: bool = True) -> Iterator[FrameResult]:
        """Results for ``frames`` in order, as :meth:`step` would give them; with ``overlap`` the
        next frame's detection runs in a thread meanwhile. ``frames`` is read one frame ahead."""
        if not overlap:
            for frame in frames:
                yield self.step(frame)
            return
        with self._threadpools.limit(limits=1, user_api="blas"), \
                ThreadPoolExecutor(1, thread_name_prefix="hwbench-detect") as pool:
            source = iter(frames)
            frame = next(source, None)
            pending = pool.submit(self._detect, frame, self._keep_for(self.frame_index + 1)) \
                if frame is not None else None
            while pending is not None:
                following = next(source, None)
                queued = pool.submit(self._detect, following, self._keep_for(self.frame_index + 2)) \
                    if following is not None else None
                start = time.perf_counter()
                dets, detect_s = pending.result()
                yield self._track(frame, dets, detect_s, start)
                frame, pending = following, queued

    def _keep_for(self, index: int) -> np.ndarray | None:
        """Boxes of the tracks standing still for the detection of frame ``index``: those after
        frame ``index - 2``, the latest that :meth:`run` has when it starts that detection (and
        :meth:`step` uses the same, so both give the same results)."""
        return self._still.get(index - 2)

    def _detect(self, frame: np.ndarray, keep_boxes: np.ndarray | None = None) -> tuple[Detections, float]:
        start = time.perf_counter()
        dets = self.detector.detect(frame, keep_boxes) if getattr(self.detector, "keeps_still_objects", False) \
            else self.detector.detect(frame)
        return dets, time.perf_counter() - start

    def _track(self, frame: np.ndarray, dets: Detections, detect_s: float, start: float) -> FrameResult:
        """Embed and associate ``dets``; ``start`` is when this frame began to cost the caller time."""
        self.frame_index += 1
        t1 = time.perf_counter()
        features = self.embedder.embed(frame, dets.boxes) if self.embedder is not None and len(dets) else None
        t2 = time.perf_counter()
        self.tracker.predict()
        blobs = dets.blobs
        self.tracker.update([Detection(dets.boxes[i], float(dets.scores[i]), int(dets.class_ids[i]),
                                       None if features is None else features[i],
                                       None if blobs is None else int(blobs[i])) for i in range(len(dets))],
                            frame_wh=(frame.shape[1], frame.shape[0]))
        if getattr(self.detector, "keeps_still_objects", False):
            self._still[self.frame_index] = self.tracker.still_boxes(self.still_speed, self.still_heights_s / self.fps)
            self._still.pop(self.frame_index - 3, None)
        tracks = [TrackBox(t.track_id, np.array(box, np.float64), float(t.score), int(t.class_id), list(t.trail),
                           t.held_box is not None)
                  for t, box in self.tracker.reported_tracks()]
        t3 = time.perf_counter()
        timing = {"detect_s": detect_s, "embed_s": t2 - t1, "associate_s": t3 - t2, "frame_s": t3 - start}
        self.stats.add(timing)
        return FrameResult(self.frame_index, tracks, dets, timing, frame)


def track_video(pipeline: TrackingPipeline, source: str | int, tracks_path: str | os.PathLike | None = None,
                video_path: str | os.PathLike | None = None, max_frames: int | None = None,
                class_names: list[str] | None = None,
                on_frame: Callable[[FrameResult], None] | None = None,
                should_stop: Callable[[], bool] | None = None, overlap: bool = True) -> TimingStats:
    """Run ``pipeline`` over a file or camera; write MOT text and/or an annotated MP4 if paths are given.
    ``overlap``: detect the next frame while this one is tracked (:meth:`TrackingPipeline.run`).

    ``source`` is what :func:`~hwbench_gui.demos.video.open_source` takes (a camera opens at its default size);
    raises :class:`~hwbench_gui.demos.video.SourceError` when it cannot be opened.
    """
    from hwbench_gui.demos.tracking.io import MotWriter
    from hwbench_gui.demos.tracking.render import draw_tracks
    from hwbench_gui.demos.video import Mp4Writer, open_source

    mot = MotWriter(tracks_path) if tracks_path else None
    writer = None

    def frames(src) -> Iterator[np.ndarray]:
        for n, frame in enumerate(src):
            if (max_frames is not None and n >= max_frames) or (should_stop and should_stop()):
                return
            yield frame

    try:
        with open_source(source, camera_size_wh=None) as src:
            pipeline.set_frame_rate(src.fps)
            for result in pipeline.run(frames(src), overlap=overlap):
                frame = result.frame
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
