"""``hwbench demo motion``: drive a target image with a webcam or a video file, headless.

Writes the animated target as MP4 and, with ``--trace``, a JSON document holding per frame the driver's
keypoints and the target's; leaves a result document (``demo.motion``: end-to-end FPS and stage
times) in the results folder, as ``hwbench run`` does. OpenCV and scipy are imported only when the
command runs.
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import datetime, timezone

from hwbench_gui.commands.argtypes import at_least, int_between, output_file
from hwbench_gui.commands.demo_track import add_result_arguments, result_folder_problem
from hwbench_gui.demos.motion import MAX_OUT_SIZE_PX, MIN_OUT_SIZE_PX


def _roi(text: str) -> tuple[int, int, int, int]:
    try:
        x, y, w, h = (int(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--roi wants X,Y,W,H in pixels, got {text!r}") from None
    if w <= 0 or h <= 0:
        raise argparse.ArgumentTypeError(f"--roi width and height must be positive, got {text!r}")
    return x, y, w, h


def add_parser(demos: argparse._SubParsersAction) -> None:
    p = demos.add_parser("motion", help="motion transfer: a webcam or video animates a still image",
                         description="Track a face (or --roi) in the source and move the target image with it.")
    p.add_argument("--source", required=True, help="camera index (0, 1, …) or a video file")
    p.add_argument("--target", required=True,
                   help="target image with a NAME.keypoints.json beside it (or a photo with a detectable face); "
                        "shipped: resources/motion/robot.png, cat.png")
    p.add_argument("--roi", type=_roi, help="X,Y,W,H: track this region of the source instead of a face")
    p.add_argument("--out", required=True, type=output_file, help="MP4 to write (the animated target)")
    p.add_argument("--trace", type=output_file,
                   help="JSON to write: per frame the driver's and the target's keypoints, timings")
    p.add_argument("--size", type=int_between(MIN_OUT_SIZE_PX, MAX_OUT_SIZE_PX), default=512,
                   help=f"longer side of the output in pixels, {MIN_OUT_SIZE_PX} to {MAX_OUT_SIZE_PX} (default 512)")
    p.add_argument("--max-frames", type=at_least(1), help="stop after this many frames (a camera runs until Ctrl+C)")
    p.add_argument("--keypoints", choices=("lk", "mediapipe"), default="lk",
                   help="lk: Haar face + Lucas-Kanade (built in); mediapipe: MediaPipe face landmarks if installed")
    p.add_argument("--model", help="face_landmarker.task for --keypoints mediapipe with mediapipe 0.10.30+")
    p.add_argument("--no-smoothing", action="store_true", help="no temporal smoothing of the target keypoints")
    add_result_arguments(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from hwbench_gui.demos.motion.keypoints import FaceDetectorUnavailable
    from hwbench_gui.demos.motion.mapping import MappingSettings
    from hwbench_gui.demos.motion.pipeline import MotionPipeline, run_to_files
    from hwbench_gui.demos.motion.targets import TargetError, load_target
    from hwbench_gui.demos.video import SourceError, open_source

    if problem := result_folder_problem(args):
        print(f"error: {problem}", file=sys.stderr)
        return 2
    try:
        target = load_target(args.target)
    except TargetError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    keypoint_source = None
    if args.keypoints == "mediapipe":
        from hwbench_gui.demos.motion.mediapipe_source import MediaPipeKeypointSource

        try:
            keypoint_source = MediaPipeKeypointSource(args.model)
        except RuntimeError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    try:
        source = open_source(args.source)
    except SourceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        pipeline = MotionPipeline(source, target, roi=args.roi, out_size_px=args.size,
                                  keypoint_source=keypoint_source,
                                  settings=MappingSettings(smoothing=not args.no_smoothing))
    except (FaceDetectorUnavailable, ValueError) as exc:
        source.close()
        print(f"error: {args.source}: {exc}" if isinstance(exc, ValueError) else f"error: {exc}", file=sys.stderr)
        return 2
    last_status = [None]
    stamps: list[float] = []
    frame_size: list[int] = []

    def on_frame(result) -> None:
        stamps.append(time.perf_counter())
        if not frame_size:
            frame_size.extend((int(result.driver.shape[1]), int(result.driver.shape[0])))
        if result.status != last_status[0]:  # print changes only: "no face found" must not flood the terminal
            last_status[0] = result.status
            print(f"frame {result.index}: {result.status}", flush=True)

    from hwbench_gui.demos.machine_watch import MachineWatch

    watch = MachineWatch()  # how busy the machine is beside the run, for its document
    started_at, start = datetime.now(timezone.utc), time.perf_counter()
    try:
        doc = run_to_files(pipeline, args.out, args.trace, max_frames=args.max_frames, on_frame=on_frame)
    except (OSError, FaceDetectorUnavailable) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        pipeline.close()
        telemetry = watch.finish()
    timing = doc["timing"]
    if not timing["frames"]:
        print(f"error: {source.description} delivered no frames", file=sys.stderr)
        return 2
    tracked = sum(1 for f in doc["frames"] if f["driver"] is not None)
    result_file = None
    if not args.no_result:
        from hwbench_gui.demos.results import demo_document, frame_times_from_stamps, save_demo_document

        params = {"keypoints": args.keypoints, "region": "roi" if args.roi else "face", "size": args.size,
                  "smoothing": not args.no_smoothing, "frame_wh": frame_size or None, "device": "cpu"}
        result = demo_document(
            "motion", params, frame_times_from_stamps(stamps, start), started_at=started_at,
            duration_s=timing["wall_s"], device="cpu", precision="n/a",
            stage_ms={k: v for k, v in timing.items() if k.endswith("_ms")},
            details={"source": source.description, "target": doc["target"]["name"], "frames_with_keypoints": tracked,
                     "keypoint_source": doc["keypoint_source"], "continuity": doc["continuity"],
                     "framing": doc["framing"], "mouth": doc["mouth"]},
            telemetry=telemetry)
        try:
            result_file = save_demo_document(result, args.results_dir)
        except OSError as exc:
            print(f"error: cannot write the result document: {exc}", file=sys.stderr)
            return 2
    print(f"{timing['frames']} frames from {source.description} ({tracked} with keypoints) -> {args.out}"
          + (f", trace {args.trace}" if args.trace else ""))
    print(f"{timing['fps']:.1f} frames/s end to end incl. MP4 writing; per frame mean: "
          + ", ".join(f"{k} {timing[f'{k}_ms']['mean']:.1f} ms" for k in ("read", "keypoints", "map", "warp")))
    c = doc["continuity"]
    held = ", ".join(f"{n} {reason}" for reason, n in c["held_frames"].items() if n)
    print(f"target held at rest in {sum(c['held_frames'].values())} frames" + (f" ({held})" if held else "")
          + f", re-acquired {c['reacquired']} times; motion shrunk so the target does not fold in "
          f"{c['warp_shrunk_frames']} frames (warp) and {c['mesh_bounded_frames']} (keypoint mesh)")
    f = doc["framing"]
    jitter = f["outline_jitter"]
    print(f"target keypoints inside the target image in {f['frames_inside']} of {f['frames']} frames "
          f"({f['frames_pushed_back']} moved back in, from up to {f['farthest_outside_px']:.0f} px outside); "
          + (f"outline jitter while the driver was still ({f['still_frames']} frames): mean "
             f"{100 * jitter['mean']:.2f} %, p95 {100 * jitter['p95']:.2f} % of the target's face size"
             if jitter else "the driver was never still: no outline jitter measured"))
    m = doc["mouth"]
    if m["target_max"] is not None:
        print(f"mouth opening, share of the face size, largest: driver {100 * m['driver_max']:.1f} %, target "
              f"{100 * m['target_max']:.1f} %; the target's follows the driver's with correlation "
              + ("n/a" if m["correlation"] is None else f"{m['correlation']:.2f}")
              + ", gain " + ("n/a" if m["gain"] is None else f"{m['gain']:.2f}") + f" over {m['frames']} frames")
    if result_file:
        print(f"result → {result_file}")
    return 0
