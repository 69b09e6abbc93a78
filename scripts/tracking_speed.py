"""Tracking speed: frames per second of detector + appearance features + Deep SORT, with the split.

Frames are a generated 640×480 sequence (or ``--source`` video) held in memory, so video decoding
is not timed; everything after it is: detection (for YOLO on CUDA: upload, letterbox, network,
decode, NMS, copy back), appearance features, association. Warm-up frames are not timed (cuDNN
autotuning, MOG2's first frames). Each repeat restarts the detector and tracker; the figure is
frames / wall-clock time over the timed frames, median of the repeats with min and max. By default
the next frame's detection overlaps this frame's tracking, as in the app (``TrackingPipeline.run``);
``--no-overlap`` runs the three stages one after the other, so the stage times add up to the frame.

Goals: motion detector ≥ 25 FPS on a 2-core machine; YOLOv3 416×416 + Deep SORT on the H200
≥ 60 FPS end to end:

    .venv/bin/python scripts/tracking_speed.py
    .venv/bin/python scripts/tracking_speed.py --detector yolov3 --device cuda --random-weights --size 416

``--random-weights`` builds YOLOv3 with random numbers (no weights file needed): the timing of the
network is the real one, its detections are noise, and the output says so on every line. How many
boxes such a network proposes is arbitrary, so the tracker's load is set explicitly instead: with
random weights the confidence threshold defaults to 0 and ``--max-det`` to 20, i.e. the 20 best
boxes after NMS go to Deep SORT every frame (a crowded scene). Change either flag to see how the
embed and associate times scale with the number of objects.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hwbench_gui.demos.tracking import synthetic  # noqa: E402
from hwbench_gui.demos.tracking.detectors import make_detector  # noqa: E402
from hwbench_gui.demos.tracking.pipeline import TrackingPipeline  # noqa: E402


def load_frames(args) -> list:
    if args.source:
        from hwbench_gui.demos.video import open_source

        with open_source(args.source, camera_size_wh=None) as src:
            frames = [f for _, f in zip(range(args.warmup + args.frames), src)]
        if len(frames) < args.warmup + 10:
            raise SystemExit(f"{args.source}: only {len(frames)} frames")
        return frames
    spec = synthetic.random_spec(n_frames=args.warmup + args.frames, width=args.width, height=args.height,
                                 n_objects=args.objects, seed=args.seed)
    return [frame for _, frame, _ in synthetic.render(spec)]


def build_detector(args):
    if args.detector != "yolov3":
        return make_detector(args.detector)
    conf = args.conf if args.conf is not None else (0.0 if args.random_weights else 0.5)
    max_det = args.max_det if args.max_det is not None else (20 if args.random_weights else 100)
    return make_detector("yolov3", cfg=args.cfg, weights=args.weights, device=args.device, size=args.size,
                         precision=args.precision, random_weights=args.random_weights,
                         conf_threshold=conf, max_det=max_det, cuda_graph=args.cuda_graph)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--detector", default="motion", choices=["motion", "hog", "yolov3"])
    p.add_argument("--device", default="cpu", help="cpu or cuda[:N] (yolov3 only)")
    p.add_argument("--size", type=int, default=416, help="YOLO input side in pixels (multiple of 32)")
    p.add_argument("--cfg", help="Darknet .cfg (default: the shipped yolov3.cfg)")
    p.add_argument("--weights", help="Darknet .weights file")
    p.add_argument("--random-weights", action="store_true",
                   help="YOLO with random weights: real network timing, meaningless detections")
    p.add_argument("--precision", default="fp32", choices=["fp32", "tf32", "fp16"], help="YOLO on CUDA")
    p.add_argument("--conf", type=float, help="YOLO confidence threshold (default 0.5; 0 with --random-weights)")
    p.add_argument("--max-det", type=int, help="YOLO boxes kept per frame after NMS (default 100; 20 with "
                                                 "--random-weights)")
    p.add_argument("--cuda-graph", action="store_true",
                   help="replay the YOLO network as one CUDA graph (less CPU launch overhead)")
    p.add_argument("--source", help="time on this video instead of a generated one")
    p.add_argument("--width", type=int, default=640)
    p.add_argument("--height", type=int, default=480)
    p.add_argument("--objects", type=int, default=6)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--frames", type=int, default=300, help="timed frames per repeat")
    p.add_argument("--warmup", type=int, default=30)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--no-appearance", action="store_true", help="skip appearance features (Mahalanobis only)")
    p.add_argument("--no-overlap", action="store_true",
                   help="detect, embed and associate one after the other (no detection thread)")
    p.add_argument("--json", help="write the figures here")
    args = p.parse_args(argv)

    frames = load_frames(args)
    detector = build_detector(args)
    label = args.detector
    if args.detector == "yolov3":
        label = (f"yolov3 ({Path(detector.cfg_path).name}, {args.size}x{args.size}, {detector.precision}, "
                 f"{detector.device}{', CUDA graph' if detector.cuda_graph else ''}, conf {detector.conf_threshold:g}, "
                 f"max {detector.max_det} boxes/frame, "
                 + ("RANDOM WEIGHTS: speed only, detections are noise" if args.random_weights
                    else f"weights {detector.weights_path}") + ")")
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    machine = {"cpu_cores_usable": cores, "platform": platform.platform(), "python": platform.python_version()}
    if args.detector == "yolov3":
        import torch

        machine["torch"] = torch.__version__
        if detector.device.type == "cuda":
            machine["gpu"] = torch.cuda.get_device_name(detector.device)
            machine["cuda"] = torch.version.cuda
    h, w = frames[0].shape[:2]
    print(f"tracking speed: {label}; frames {w}x{h}, {args.warmup} warm-up + "
          f"{min(args.frames, len(frames) - args.warmup)}"
          f" timed, {args.repeats} repeats; {cores} CPU cores usable; appearance "
          f"{'off' if args.no_appearance else 'colour histogram + HOG (CPU)'}; next frame's detection "
          f"{'NOT overlapped' if args.no_overlap else 'overlapped'} with tracking", flush=True)

    runs = []
    for rep in range(args.repeats):
        pipeline = TrackingPipeline(detector, use_appearance=not args.no_appearance)
        pipeline.reset()
        timed = frames[args.warmup:args.warmup + args.frames]
        n_dets = 0
        t0 = time.perf_counter()
        # The clock starts at the last warm-up result: from there on, one result per timed frame.
        for result in pipeline.run(frames[:args.warmup + args.frames], overlap=not args.no_overlap):
            if result.index == args.warmup:
                t0 = time.perf_counter()
            elif result.index > args.warmup:
                n_dets += len(result.detections)
        wall_s = time.perf_counter() - t0
        summary = pipeline.stats.summary(skip=args.warmup)
        run = {"fps_wall": len(timed) / wall_s, "wall_s": wall_s, "frames": len(timed), "overlap": not args.no_overlap,
               "detections_per_frame": n_dets / len(timed), **summary}
        runs.append(run)
        print(f"  repeat {rep + 1}: {run['fps_wall']:.1f} FPS end to end  |  per frame mean (p95) ms: detect "
              f"{summary['detect_ms']['mean']:.2f} ({summary['detect_ms']['p95']:.2f})  embed "
              f"{summary['embed_ms']['mean']:.2f} ({summary['embed_ms']['p95']:.2f})  associate "
              f"{summary['associate_ms']['mean']:.2f} ({summary['associate_ms']['p95']:.2f})  frame "
              f"{summary['frame_ms']['mean']:.2f} ({summary['frame_ms']['p95']:.2f})  |  "
              f"{run['detections_per_frame']:.1f} detections/frame", flush=True)
    fps = [r["fps_wall"] for r in runs]
    goal = 60.0 if args.detector == "yolov3" else 25.0
    median = statistics.median(fps)
    print(f"{label}: {median:.1f} FPS end to end (median of {len(fps)}; min {min(fps):.1f}, max {max(fps):.1f}) — "
          f"goal >= {goal:.0f} FPS: {'met' if median >= goal else 'NOT met'}")
    if args.json:
        Path(args.json).write_text(json.dumps({"detector": label, "random_weights": bool(args.random_weights),
                                               "machine": machine, "frame_size": [w, h],
                                               "fps_median": median, "fps_min": min(fps), "fps_max": max(fps),
                                               "runs": runs}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
