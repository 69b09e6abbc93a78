"""Motion transfer frame rate, end to end: 640×480 video in → keypoints → map → 512×512 warp out.

The driving video is generated (a drawn face that sways, nods, rolls and talks: demos/motion/synthetic.py)
and decoded from an MP4 like any file; the face is found with the Haar cascade and tracked with
Lucas–Kanade. Reported: frames over wall time (warm-up excluded), per-stage mean and p95, and the
same with the driver overlay drawn and the output written to MP4 (what the GUI and CLI add), each
with the load average of the machine when it ran and this process's CPU time per frame (all its
threads; others' load changes it little). Goals on a 2-core machine: ≥ 60 FPS for the pipeline end
to end, ≥ 30 FPS with recording.

Then continuity and folds on generated clips (``synthetic``: a cut to another scene, a face walking
out of the frame and back, a talking head, a head motion too large for the target): frames held at
rest by reason, re-acquisitions, frames where a fold bound shrank the motion, and the folded
triangles of every frame's full-resolution map (on a 4-pixel lattice), which must be 0.

    python scripts/motion_fps.py [--frames 300] [--target robot|cat] [--threads N] [--no-clips]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import cv2  # noqa: E402
import numpy as np  # noqa: E402

from hwbench_gui.demos.motion import synthetic as syn  # noqa: E402
from hwbench_gui.demos.motion.fold import folded_cells  # noqa: E402
from hwbench_gui.demos.motion.pipeline import MotionPipeline, draw_driver, run_to_files  # noqa: E402
from hwbench_gui.demos.motion.targets import load_target, shipped_targets  # noqa: E402
from hwbench_gui.demos.video import Mp4Writer, VideoFileSource  # noqa: E402


def measure(video: str, target, frames: int, warmup: int, record_to: str | None) -> dict:
    pipe = MotionPipeline(VideoFileSource(video, loop=True), target, out_size_px=512)
    recorder = Mp4Writer(record_to, 30.0, (512, 512)) if record_to else None
    stages: list[dict] = []
    tracked = 0
    try:
        for i in range(warmup + frames):
            if i == warmup:
                start, cpu_start, load = time.perf_counter(), time.process_time(), os.getloadavg()[0]
            r = pipe.step()
            if record_to:
                draw_driver(r)
                recorder.write(r.output)
            if i >= warmup:
                stages.append(r.timing_ms)
                tracked += r.keypoints is not None
        wall_s = time.perf_counter() - start
        cpu_ms = 1e3 * (time.process_time() - cpu_start) / frames
    finally:
        pipe.close()
        if recorder:
            recorder.close()
    out = {"fps": frames / wall_s, "wall_s": wall_s, "tracked": tracked, "load": load, "cpu_ms": cpu_ms}
    for k in stages[0]:
        v = np.array([s[k] for s in stages])
        out[k] = (float(v.mean()), float(np.percentile(v, 95)))
    return out


def clips(folder: Path) -> dict:
    """The generated clips the continuity figures are measured on: name → (video, ROI or None)."""
    poses, scenes = syn.cut_clip()
    return {
        "cut to another scene": (syn.write_video(folder / "cut.mp4", poses, scenes=scenes), None),
        "face leaves the frame and returns": (syn.write_video(folder / "leave.mp4", syn.leaving_clip()), None),
        "talking head": (syn.write_video(folder / "talk.mp4", syn.talking_motion(120)), None),
        "head motion too large for the target": (syn.write_video(folder / "large.mp4", syn.phased_motion(
            hold=3, ramp=8, shift_px=(50.0, 25.0), scale=1.25, rotation_deg=15.0)), syn.patch_roi()),
    }


def continuity(folder: Path, target) -> bool:
    """Holds and fold bounds per clip; True when no frame of any clip folds at full resolution."""
    print("\ncontinuity and folds on generated clips (face mode unless an ROI is given):")
    fold_free = True
    for name, (video, roi) in clips(folder).items():
        pipe = MotionPipeline(VideoFileSource(video), target, roi=roi, out_size_px=512)
        folds: list[int] = []

        def check(result, pipe=pipe, folds=folds):
            map_x, map_y = pipe.warp.maps(pipe.target.keypoints, result.pose.points)
            folds.append(folded_cells(np.dstack([map_x, map_y])[::4, ::4].astype(np.float64)))
        doc = run_to_files(pipe, on_frame=check)
        c = doc["continuity"]
        held = ", ".join(f"{k} {v}" for k, v in c["held_frames"].items() if v) or "none"
        when = sorted({f["index"] for f in doc["frames"] if f["held"]})
        span = f" (frames {when[0]}-{when[-1]})" if when else ""
        print(f"  {name}: {len(doc['frames'])} frames; held: {held}{span}; re-acquired {c['reacquired']}; "
              f"keypoint mesh bounded in {c['mesh_bounded_frames']} frames ({c['mesh_flips_prevented']} flips "
              f"prevented); warp shrunk in {c['warp_shrunk_frames']} frames; folded frames at full resolution: "
              f"{sum(f > 0 for f in folds)}")
        fold_free &= not any(folds)
    return fold_free


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument("--target", default="robot")
    parser.add_argument("--threads", type=int, help="cv2.setNumThreads (default: OpenCV's choice)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-clips", action="store_true", help="leave out the continuity and fold figures")
    args = parser.parse_args(argv)
    if args.threads is not None:
        cv2.setNumThreads(args.threads)
    target = load_target(next(p for p in shipped_targets() if p.stem == args.target))
    print(f"CPU cores: {os.cpu_count()}, OpenCV threads: {cv2.getNumThreads()}, target {args.target} → 512×512, "
          f"{args.frames} frames after {args.warmup} warm-up, {args.repeats} repeats")
    with tempfile.TemporaryDirectory() as tmp:
        video = syn.write_video(Path(tmp) / "drive.mp4", syn.talking_motion(240), frame_size=(640, 480))
        verdicts = []
        for label, record, goal in (("pipeline end to end (read, keypoints, map, warp)", None, 60),
                                    ("+ driver overlay + MP4 writing", str(Path(tmp) / "out.mp4"), 30)):
            runs = [measure(video, target, args.frames, args.warmup, record) for _ in range(args.repeats)]
            fps = sorted(r["fps"] for r in runs)
            best = runs[int(np.argmin([abs(r["fps"] - fps[len(fps) // 2]) for r in runs]))]
            stages = ", ".join(f"{k} {m:.2f}/{p:.2f}" for k, (m, p) in
                               ((k, best[k]) for k in ("read", "keypoints", "map", "warp", "total")))
            loads = ", ".join(f"{r['load']:.1f}" for r in runs)
            cpu = sorted(r["cpu_ms"] for r in runs)[len(runs) // 2]
            print(f"{label}: {fps[len(fps) // 2]:.1f} FPS median of {args.repeats} (min {fps[0]:.1f}, max "
                  f"{fps[-1]:.1f}; load average {loads}); CPU {cpu:.2f} ms a frame; face tracked in "
                  f"{best['tracked']}/{args.frames} frames")
            print(f"  per stage, mean/p95 ms: {stages}")
            verdicts.append(f"goal ≥ {goal} FPS {label.split(' (')[0]}: {'meets' if fps[0] >= goal else 'MISSES'} "
                            f"it (slowest run {fps[0]:.1f} FPS)")
        print("\n".join(verdicts))
        if not args.no_clips:
            fold_free = continuity(Path(tmp), target)
            print(f"no folded frame in any clip: {'yes' if fold_free else 'NO'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
