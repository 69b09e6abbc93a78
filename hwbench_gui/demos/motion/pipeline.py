"""One frame of motion transfer: read → driver keypoints → map to the target → warp, with timings.

Between keypoints and map, :class:`~.continuity.ContinuityGuard` may hold the target at rest (a scene
cut, a face lost or leaving the frame, keypoints that jump): the keypoint source then starts again on
the face it finds next. Between map and warp, :class:`~.fold.KeypointMesh` keeps every triangle of the
target's keypoint mesh turning the right way, and the warp itself shrinks a motion that would fold its
grid. Each frame's record says when it held and why, and what the fold bounds took.

:class:`MotionPipeline` is used from one thread (the GUI's worker or the CLI's main thread);
``set_neutral``, ``set_roi`` and ``set_target`` may be called from any thread and take effect at the
next ``step()``. :func:`run_to_files` is the headless loop behind ``hwbench demo motion``.
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import cv2
import numpy as np

from hwbench_gui.demos.motion import MAX_OUT_SIZE_PX, MIN_OUT_SIZE_PX
from hwbench_gui.demos.motion.continuity import HOLD_REASONS, ContinuityGuard, GuardSettings, Hold
from hwbench_gui.demos.motion.fold import KeypointMesh
from hwbench_gui.demos.motion.framing import OutlineStability, keep_inside, outside_px
from hwbench_gui.demos.motion.keypoints import DriverKeypoints, LKKeypointSource
from hwbench_gui.demos.motion.mapping import MappedPose, MappingSettings, MotionMapper
from hwbench_gui.demos.motion.mouth import MouthFollow
from hwbench_gui.demos.motion.targets import Target
from hwbench_gui.demos.motion.warp import ThinPlateWarp
from hwbench_gui.demos.video import FrameSource, Mp4Writer

#: 2: frames say when the target was held and what the fold bounds took; 3: how far the keypoints were
#: pushed back into the target image, the outline's step and whether the driver was still; 4: the mouth's
#: opening, the driver's and the target's
TRACE_SCHEMA_VERSION = 4
STAGES = ("read", "keypoints", "map", "warp")


@dataclass
class FrameResult:
    index: int
    t_s: float  # the frame's time: position in a file, wall clock for a camera
    driver: np.ndarray  # the driving frame, BGR
    keypoints: DriverKeypoints | None
    pose: MappedPose
    output: np.ndarray  # the animated target, BGR
    timing_ms: dict  # per stage (STAGES) and "total"
    status: str
    hold: Hold | None = None  # why the target was held at rest in this frame
    reacquired: bool = False  # the first frame followed after held ones
    #: What the fold bounds took: triangles of the keypoint mesh that would have flipped / got too thin,
    #: the smallest share of a keypoint's motion kept, grid triangles the warp would have folded, the
    #: share of the motion it kept.
    fold: dict | None = None
    #: The target kept in its image and its outline's steadiness (:mod:`.framing`): how far the keypoints
    #: reached outside the image before they were moved back, and by how much, the outline's step since
    #: the last frame (share of the target's face size) and whether the driver was still.
    framing: dict | None = None
    #: The driver's jaw drop and the target's mouth opening, as shares of their face sizes (:mod:`.mouth`).
    mouth: dict | None = None


def roi_problem(roi: tuple[int, int, int, int] | None, frame_wh: tuple[int, int] | None) -> str | None:
    """Why ``roi`` (x, y, w, h) cannot be tracked in frames of ``frame_wh``, or None."""
    if roi is None or frame_wh is None:
        return None
    x, y, w, h = roi
    width, height = frame_wh
    if w <= 0 or h <= 0 or x < 0 or y < 0 or x + w > width or y + h > height:
        return f"the region {x},{y},{w},{h} (X,Y,W,H) is not inside the {width}×{height} frame"
    return None


class MotionPipeline:
    """Drives ``target`` with ``source``. ``roi`` (x, y, w, h) tracks a region instead of a face.

    ``keypoint_source`` is anything with ``update(gray, frame_bgr) -> DriverKeypoints | None``, ``reset_neutral()``
    and ``status`` (default: :class:`LKKeypointSource`). The output's longer side is ``out_size_px``.
    ``ValueError`` when that size is outside [MIN_OUT_SIZE_PX, MAX_OUT_SIZE_PX] or ``roi`` is not
    inside the source's frames.
    """

    def __init__(self, source: FrameSource, target: Target, *, roi=None, out_size_px: int = 512,
                 keypoint_source=None, settings: MappingSettings | None = None,
                 guard: GuardSettings | None = None) -> None:
        if not MIN_OUT_SIZE_PX <= out_size_px <= MAX_OUT_SIZE_PX:
            raise ValueError(f"output size {out_size_px} px is not {MIN_OUT_SIZE_PX} to {MAX_OUT_SIZE_PX}")
        if problem := roi_problem(roi, getattr(source, "frame_size", None)):
            raise ValueError(problem)
        self.source = source
        self.out_size_px = out_size_px
        self.settings = settings or MappingSettings()
        self.keypoint_source = keypoint_source or LKKeypointSource(roi=roi)
        self.guard = ContinuityGuard(guard)
        self._install_target(target)
        self.index = 0
        self._held = False
        self._lock = threading.Lock()
        self._pending: list[Callable[[], None]] = []
        self._t0 = time.perf_counter()

    def _install_target(self, target: Target) -> None:
        self.target = target.resized(self.out_size_px)
        w, h = self.target.size
        self.mapper = MotionMapper(self.target, self.settings)
        if getattr(self, "warp", None) is None or (self.warp.width, self.warp.height) != (w, h):
            self.warp = ThinPlateWarp(w, h)
        self.mesh = KeypointMesh(self.target.keypoints)
        self.stability = OutlineStability(self.target.face_box)
        self.mouth = MouthFollow(self.target.keypoints, self.target.labels, self.target.face_box)

    def _later(self, fn: Callable[[], None]) -> None:
        with self._lock:
            self._pending.append(fn)

    def set_neutral(self) -> None:
        """The next frame becomes the neutral pose (keypoints are found again)."""
        self._later(self._restart)

    def set_roi(self, roi) -> None:
        """Track ``roi`` (x, y, w, h in driver pixels) from the next frame; None: back to the face."""
        def apply():
            if hasattr(self.keypoint_source, "set_roi"):
                self.keypoint_source.set_roi(roi)
            self.mapper.reset()
            self.guard.restart()
        self._later(apply)

    def set_target(self, target: Target) -> None:
        self._later(lambda: self._install_target(target))

    def _restart(self) -> None:
        """The keypoint source finds the face again and takes a new neutral pose; smoothing starts over."""
        self.keypoint_source.reset_neutral()
        self.mapper.reset()
        self.guard.restart()

    def _frame_time(self) -> float:
        if self.source.live:
            return time.perf_counter() - self._t0
        return self.index / self.source.fps

    def step(self) -> FrameResult | None:
        """Process the next frame; None when the source has ended."""
        with self._lock:
            pending, self._pending = self._pending, []
        for fn in pending:
            fn()
        t = [time.perf_counter()]
        frame = self.source.read()
        if frame is None:
            return None
        t.append(time.perf_counter())
        gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
        # A cut is seen before tracking into the new shot: the source starts again on this frame.
        hold = self.guard.scene_cut(gray)
        if hold is not None:
            self._restart()
        kp = self.keypoint_source.update(gray, frame)
        if hold is None:
            hold = self.guard.check(kp, gray.shape)
            if hold is not None and hold.reason != "no_face":
                self._restart()
        t.append(time.perf_counter())
        t_s = self._frame_time()
        # No face: the smoothing eases the target to rest (as it always did); any other hold puts it at
        # rest at once (the smoothing was just restarted), since what was followed is not the face.
        pose = self.mapper.map(kp if hold is None else None, t_s)
        bounded = self.mesh.bound(pose.points)
        outside = outside_px(bounded.points, self.target.size)
        pose.points, pushed = keep_inside(bounded.points, self.target.size)
        step, still = self.stability.add(pose.points, kp if hold is None else None)
        driver_drop = kp.jaw_drop if kp is not None and hold is None else None
        opening = self.mouth.add(pose.points, pose.global_matrix, driver_drop)
        t.append(time.perf_counter())
        output = self.warp(self.target.image, self.target.keypoints, pose.points)
        t.append(time.perf_counter())
        timing = {name: (t[i + 1] - t[i]) * 1e3 for i, name in enumerate(STAGES)}
        timing["total"] = (t[-1] - t[0]) * 1e3
        status = self.keypoint_source.status if hold is None else f"{hold.text}; {self.keypoint_source.status}"
        fold = {"mesh_flipped": bounded.flipped, "mesh_thin": bounded.thin, "mesh_kept": round(bounded.shrink, 4),
                "warp_folded": self.warp.last_folded, "warp_kept": round(self.warp.last_shrink, 4)}
        framing = {"outside_px": round(outside, 2), "pushed_px": round(pushed, 2),
                   "outside_after_px": round(outside_px(pose.points, self.target.size), 2),
                   "outline_step": None if step is None else round(step, 5), "driver_still": still}
        mouth = {"driver": None if driver_drop is None else round(driver_drop, 5),
                 "target": None if opening is None else round(opening, 5)}
        result = FrameResult(self.index, t_s, frame, kp, pose, output, timing, status, hold,
                             reacquired=self._held and hold is None, fold=fold, framing=framing, mouth=mouth)
        self._held = hold is not None
        self.index += 1
        return result

    def close(self) -> None:
        self.source.close()


def draw_driver(result: FrameResult) -> np.ndarray:
    """A copy of the driving frame with the tracked region and keypoints drawn on it."""
    img = result.driver.copy()
    kp = result.keypoints
    if kp is not None:
        cv2.polylines(img, [np.round(kp.box_corners).astype(np.int32)], True, (255, 200, 0), 2, cv2.LINE_AA)
        for x, y in kp.points[kp.valid]:
            cv2.circle(img, (int(round(x)), int(round(y))), 3, (0, 255, 0), -1, cv2.LINE_AA)
    return img


def draw_target_points(result: FrameResult) -> np.ndarray:
    """A copy of the animated target with its keypoints drawn on it."""
    img = result.output.copy()
    for x, y in result.pose.points:
        cv2.circle(img, (int(round(x)), int(round(y))), 3, (0, 0, 255), -1, cv2.LINE_AA)
    return img


def _pts(a: np.ndarray) -> list:
    return np.round(np.asarray(a, dtype=np.float64), 2).tolist()


def trace_record(result: FrameResult) -> dict:
    """One frame of the trace: the driver's keypoints (and their neutral spots) and the target's."""
    kp = result.keypoints
    return {
        "index": result.index,
        "t_s": round(result.t_s, 4),
        "status": result.status,
        "driver": None if kp is None else _pts(kp.points[kp.valid]),
        "driver_neutral": None if kp is None else _pts(kp.neutral[kp.valid]),
        "driver_similarity": result.pose.driver,
        "target": _pts(result.pose.points),
        "held": None if result.hold is None else result.hold.reason,
        "held_why": None if result.hold is None else result.hold.detail,
        "reacquired": result.reacquired,
        "fold": result.fold,
        "framing": result.framing,
        "mouth": result.mouth,
        "timing_ms": {k: round(v, 3) for k, v in result.timing_ms.items()},
    }


class ContinuityCounts:
    """Frames held per reason, re-acquisitions, and frames where a fold bound shrank the motion, counted
    frame by frame (a camera session can run for hours: nothing per frame is kept)."""

    def __init__(self) -> None:
        self.held = dict.fromkeys(HOLD_REASONS, 0)
        self.reacquired = self.mesh_bounded = self.mesh_flips = self.warp_shrunk = 0

    def add(self, held: str | None, reacquired: bool, fold: dict | None) -> None:
        fold = fold or {}
        if held is not None:
            self.held[held] += 1
        self.reacquired += bool(reacquired)
        self.mesh_bounded += fold.get("mesh_thin", 0) > 0
        self.mesh_flips += fold.get("mesh_flipped", 0)
        self.warp_shrunk += fold.get("warp_kept", 1.0) < 1.0

    def add_result(self, result: FrameResult) -> None:
        self.add(None if result.hold is None else result.hold.reason, result.reacquired, result.fold)

    def as_dict(self) -> dict:
        return {"held_frames": dict(self.held), "reacquired": self.reacquired,
                "mesh_bounded_frames": self.mesh_bounded, "mesh_flips_prevented": self.mesh_flips,
                "warp_shrunk_frames": self.warp_shrunk}


def summarize_holds(records: list[dict]) -> dict:
    """:class:`ContinuityCounts` over trace records."""
    counts = ContinuityCounts()
    for r in records:
        counts.add(r.get("held"), r.get("reacquired", False), r.get("fold"))
    return counts.as_dict()


def summarize_framing(records: list[dict], stability: OutlineStability) -> dict:
    """Frames whose target keypoints reached outside the target image before they were moved back
    (and the farthest), frames inside after, and the outline's jitter while the driver was still."""
    framing = [r.get("framing") or {} for r in records]
    outside = [f.get("outside_px", 0.0) for f in framing]
    return {"frames": len(records), "frames_pushed_back": sum(o > 0 for o in outside),
            "farthest_outside_px": max(outside, default=0.0),
            "frames_inside": sum(f.get("outside_after_px", 0.0) == 0 for f in framing),
            **stability.summary()}


def summarize_timing(records: list[dict], wall_s: float) -> dict:
    """Mean and p95 per stage and the end-to-end frame rate (frames over wall time)."""
    out: dict = {"frames": len(records), "wall_s": round(wall_s, 3),
                 "fps": round(len(records) / wall_s, 2) if wall_s > 0 and records else None}
    for name in (*STAGES, "total"):
        v = np.array([r["timing_ms"][name] for r in records]) if records else np.zeros(0)
        out[f"{name}_ms"] = ({"mean": round(float(v.mean()), 3), "p95": round(float(np.percentile(v, 95)), 3)}
                             if v.size else None)
    return out


def run_to_files(pipeline: MotionPipeline, out_path=None, trace_path=None, *, max_frames: int | None = None,
                 on_frame: Callable[[FrameResult], None] | None = None,
                 should_stop: Callable[[], bool] = lambda: False) -> dict:
    """Run until the source ends (or ``max_frames``); write the animated target and/or the trace.

    Returns the trace document (also written to ``trace_path`` when given).
    """
    recorder = None
    records: list[dict] = []
    start = time.perf_counter()
    try:
        while (max_frames is None or len(records) < max_frames) and not should_stop():
            result = pipeline.step()
            if result is None:
                break
            if out_path is not None:
                if recorder is None:
                    h, w = result.output.shape[:2]
                    recorder = Mp4Writer(out_path, pipeline.source.fps, (w, h))
                recorder.write(result.output)
            records.append(trace_record(result))
            if on_frame is not None:
                on_frame(result)
    finally:
        if recorder is not None:
            recorder.close()
    wall_s = time.perf_counter() - start
    target = pipeline.target
    doc = {
        "schema_version": TRACE_SCHEMA_VERSION,
        "source": pipeline.source.description,
        "source_fps": pipeline.source.reported_fps,
        "keypoint_source": getattr(pipeline.keypoint_source, "name", type(pipeline.keypoint_source).__name__),
        "roi": list(pipeline.keypoint_source.roi) if getattr(pipeline.keypoint_source, "roi", None) else None,
        "target": {"name": target.name, "path": str(target.path) if target.path else None, "size": list(target.size),
                   "face_box": [round(v, 2) for v in target.face_box], "labels": target.labels,
                   "keypoints": _pts(target.keypoints), "keypoints_from": target.source},
        "output": str(out_path) if out_path is not None else None,
        "timing": summarize_timing(records, wall_s),
        "continuity": summarize_holds(records),
        "framing": summarize_framing(records, pipeline.stability),
        "mouth": pipeline.mouth.summary(),
        "frames": records,
    }
    if trace_path is not None:
        tmp = Path(str(trace_path) + ".tmp")
        tmp.write_text(json.dumps(doc), encoding="utf-8")
        os.replace(tmp, trace_path)
    return doc
