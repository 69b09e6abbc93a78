"""Motion transfer frame rate, end to end: 640×480 video in → keypoints → map → 512×512 warp out.

The driving video is generated (a drawn face that sways, nods, rolls and talks: demos/motion/synthetic.py)
and decoded from an MP4 like any file; the face is found with the Haar cascade and tracked with
Lucas–Kanade. Reported: frames over wall time (warm-up excluded), per-stage mean and p95, and the
same with the driver overlay drawn and the output written to MP4 (what the GUI and CLI add). Goal on
the 2-core development machine: ≥ 30 FPS.

    python scripts/motion_fps.py [--frames 300] [--target robot|cat] [--threads N]
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
from hwbench_gui.demos.motion.pipeline import MotionPipeline, draw_driver  # noqa: E402
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
                start = time.perf_counter()
            r = pipe.step()
            if record_to:
                draw_driver(r)
                recorder.write(r.output)
            if i >= warmup:
                stages.append(r.timing_ms)
                tracked += r.keypoints is not None
        wall_s = time.perf_counter() - start
    finally:
        pipe.close()
        if recorder:
            recorder.close()
    out = {"fps": frames / wall_s, "wall_s": wall_s, "tracked": tracked}
    for k in stages[0]:
        v = np.array([s[k] for s in stages])
        out[k] = (float(v.mean()), float(np.percentile(v, 95)))
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument("--target", default="robot")
    parser.add_argument("--threads", type=int, help="cv2.setNumThreads (default: OpenCV's choice)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    if args.threads is not None:
        cv2.setNumThreads(args.threads)
    target = load_target(next(p for p in shipped_targets() if p.stem == args.target))
    print(f"CPU cores: {os.cpu_count()}, OpenCV threads: {cv2.getNumThreads()}, target {args.target} → 512×512, "
          f"{args.frames} frames after {args.warmup} warm-up, {args.repeats} repeats")
    with tempfile.TemporaryDirectory() as tmp:
        video = syn.write_video(Path(tmp) / "drive.mp4", syn.talking_motion(240), frame_size=(640, 480))
        for label, record in (("pipeline (read, keypoints, map, warp)", None),
                              ("+ driver overlay + MP4 writing", str(Path(tmp) / "out.mp4"))):
            runs = [measure(video, target, args.frames, args.warmup, record) for _ in range(args.repeats)]
            fps = sorted(r["fps"] for r in runs)
            best = runs[int(np.argmin([abs(r["fps"] - fps[len(fps) // 2]) for r in runs]))]
            stages = ", ".join(f"{k} {m:.2f}/{p:.2f}" for k, (m, p) in
                               ((k, best[k]) for k in ("read", "keypoints", "map", "warp", "total")))
            print(f"{label}: {fps[len(fps) // 2]:.1f} FPS median of {args.repeats} (min {fps[0]:.1f}, max "
                  f"{fps[-1]:.1f}); face tracked in {best['tracked']}/{args.frames} frames")
            print(f"  per stage, mean/p95 ms: {stages}")
    goal = "meets" if fps[0] >= 30 else "MISSES"
    print(f"goal ≥ 30 FPS end to end with recording: {goal} it (slowest run {fps[0]:.1f} FPS)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
