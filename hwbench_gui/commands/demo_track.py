"""``hwbench demo track``: multi-object tracking (detector + Deep SORT) on a video file or camera.

Writes tracks in MOTChallenge text format and, if asked, an annotated MP4; prints frames per
second with the per-frame split into detect / embed / associate; leaves a result document
(``demo.track``: end-to-end FPS, stage times, and MOTA / IDF1 / ID switches with ``--gt``) in the
results folder, as ``hwbench run`` does. OpenCV and torch are imported only when the command runs.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from hwbench_gui.commands.argtypes import at_least, int_between, number_between, output_file, user_path


def add_parser(demos: argparse._SubParsersAction) -> None:
    p = demos.add_parser(
        "track", help="multi-object tracking (motion / HOG / YOLOv3 + Deep SORT) on a video or camera",
        description="Track objects in a video file or camera with a detector and Deep SORT. YOLOv3 needs a "
                    "Darknet .weights file (yolov3.weights or yolov3-tiny.weights from the Darknet project, "
                    "pjreddie.com/darknet/yolo); motion and hog need none. Detectors: "
                    + "; ".join(f"{name}: {text}" for name, text in _summaries().items()) + ".")
    p.add_argument("--source", required=True, help="video file, or camera index (0, 1, …)")
    p.add_argument("--detector", default="motion", choices=["motion", "hog", "yolov3"])
    p.add_argument("--cfg", help="Darknet .cfg for yolov3 (default: the shipped yolov3.cfg; yolov3-tiny.cfg ships too)")
    p.add_argument("--weights", help="Darknet .weights file for yolov3")
    p.add_argument("--random-weights", action="store_true",
                   help="yolov3 with random weights (speed tests only: detections are noise)")
    p.add_argument("--device", default="cpu", help="cpu or cuda[:N] (yolov3)")
    p.add_argument("--size", type=int_between(32, 2048, multiple_of=32), default=416,
                   help="yolov3 input side, multiple of 32 (default 416)")
    p.add_argument("--precision", default="fp32", choices=["fp32", "tf32", "fp16"], help="yolov3 on CUDA")
    p.add_argument("--classes", help="yolov3: keep only these classes, names or ids, comma-separated (e.g. person)")
    p.add_argument("--conf", type=number_between(0, 1), help="confidence threshold (detector's default if omitted)")
    p.add_argument("--max-det", type=at_least(1), default=100,
                   help="yolov3: boxes kept per frame after NMS (default 100)")
    p.add_argument("--cuda-graph", action="store_true", help="yolov3 on CUDA: replay the network as a CUDA graph")
    p.add_argument("--nms", type=number_between(0, 1), help="NMS IoU threshold (detector's default if omitted)")
    p.add_argument("--no-appearance", action="store_true", help="track without appearance features")
    p.add_argument("--out", required=True, type=output_file, help="tracks in MOTChallenge text format")
    p.add_argument("--video", type=output_file, help="annotated MP4 to write")
    p.add_argument("--max-frames", type=at_least(1), help="stop after this many frames (needed for a camera)")
    p.add_argument("--no-overlap", action="store_true",
                   help="detect, embed and associate one after the other (default: the next frame's detection "
                        "runs in a thread while this frame is tracked)")
    p.add_argument("--gt", metavar="FILE", help="ground truth in MOTChallenge format: MOTA, IDF1 and ID switches "
                                                "go into the summary and the result document")
    add_result_arguments(p)
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(handler=run)


def _summaries() -> dict[str, str]:
    from hwbench_gui.demos.tracking.detector_notes import DETECTOR_SUMMARIES

    return DETECTOR_SUMMARIES


def add_result_arguments(p: argparse.ArgumentParser) -> None:
    """``--results-dir`` / ``--no-result``: where the demo's result document goes (as ``hwbench run --out``)."""
    p.add_argument("--results-dir", metavar="DIR", type=user_path,
                   help="folder for the result document (default: $HWBENCH_RESULTS_DIR, else the user data folder)")
    p.add_argument("--no-result", action="store_true", help="leave no result document")


def result_folder_problem(args: argparse.Namespace) -> str | None:
    """Why the result document could not be written where it would go (checked before the work), or None."""
    if args.no_result:
        return None
    from hwbench_gui.engine.paths import NoUserFolders
    from hwbench_gui.engine.results.store import check_writable

    try:
        return check_writable(args.results_dir)
    except NoUserFolders as exc:
        return f"result document: {exc}"


def _classes(text: str | None, names: list[str]) -> list[int] | None:
    if not text:
        return None
    out = []
    for item in (t.strip() for t in text.split(",") if t.strip()):
        if item.isdigit():
            if int(item) >= len(names):
                raise ValueError(f"class id {item} is not a COCO class (ids 0–{len(names) - 1})")
            out.append(int(item))
        elif item in names:
            out.append(names.index(item))
        else:
            raise ValueError(f"unknown class {item!r} (COCO names, e.g. person, car, or ids 0–{len(names) - 1})")
    return out


def build_detector(args: argparse.Namespace):
    """The detector the arguments ask for; raises ValueError/FileNotFoundError/RuntimeError with a reason."""
    from hwbench_gui.demos.tracking import darknet
    from hwbench_gui.demos.tracking.detectors import make_detector

    options: dict = {}
    if args.conf is not None:
        options["conf_threshold"] = args.conf
    if args.nms is not None:
        options["nms_threshold"] = args.nms
    if args.detector == "yolov3":
        options.update(cfg=args.cfg, weights=args.weights, device=args.device, size=args.size,
                       precision=args.precision, random_weights=args.random_weights, max_det=args.max_det,
                       cuda_graph=args.cuda_graph, classes=_classes(args.classes, darknet.coco_names()))
    return make_detector(args.detector, **options)


def run(args: argparse.Namespace) -> int:
    from hwbench_gui.demos.tracking.appearance import DESCRIPTION
    from hwbench_gui.demos.tracking.darknet import CfgError, WeightsError
    from hwbench_gui.demos.tracking.pipeline import TrackingPipeline, track_video
    from hwbench_gui.demos.video import SourceError, parse_source

    if problem := result_folder_problem(args):
        print(f"error: {problem}", file=sys.stderr)
        return 2
    if isinstance(parse_source(args.source), int) and args.max_frames is None:
        print("note: reading a camera until interrupted (Ctrl+C); --max-frames N stops after N frames",
              file=sys.stderr)
    try:
        detector = build_detector(args)
    except (ValueError, FileNotFoundError, RuntimeError, CfgError, WeightsError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not args.json:
        print(f"detector: {args.detector}, {_summaries()[args.detector]}")
    if getattr(detector, "random_weights", False):
        print("warning: YOLOv3 with RANDOM weights: timing is real, detections and tracks are noise",
              file=sys.stderr)
    pipeline = TrackingPipeline(detector, use_appearance=not args.no_appearance)
    ids: set[int] = set()
    stamps: list[float] = []
    frame_size: list[int] = []

    def on_frame(result) -> None:
        stamps.append(time.perf_counter())
        ids.update(t.track_id for t in result.tracks)
        if not frame_size and result.frame is not None:
            frame_size.extend((int(result.frame.shape[1]), int(result.frame.shape[0])))

    from hwbench_gui.demos.machine_watch import MachineWatch

    watch = MachineWatch()  # how busy the machine is beside the run, for its document
    started_at = datetime.now(timezone.utc)
    start = time.perf_counter()
    try:
        stats = track_video(pipeline, args.source, args.out, args.video, args.max_frames,
                            getattr(detector, "class_names", None), on_frame=on_frame, overlap=not args.no_overlap)
    except (SourceError, OSError) as exc:  # unreadable input, or an MP4 that cannot be written
        watch.finish()
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        stats = pipeline.stats
    wall_s = time.perf_counter() - start
    metrics = None
    if args.gt:
        from hwbench_gui.demos.tracking.io import read_mot
        from hwbench_gui.demos.tracking.metrics import MetricsUnavailable, evaluate

        try:
            metrics = evaluate(read_mot(args.gt), read_mot(args.out), n_frames=len(stamps) or None)
        except (OSError, ValueError, MetricsUnavailable) as exc:
            print(f"error: --gt {args.gt}: {exc}", file=sys.stderr)
            return 2
    summary = {"source": str(args.source), "detector": args.detector,
               "detector_summary": _summaries()[args.detector],
               # The HOG detector does not see people shorter than this (None: no such limit declared).
               "smallest_person_px": getattr(detector, "min_height_px", None),
               "device": str(getattr(detector, "device", "cpu")),
               "precision": getattr(detector, "precision", None),
               "random_weights": bool(getattr(detector, "random_weights", False)),
               "appearance": None if args.no_appearance else DESCRIPTION,
               "overlap": not args.no_overlap, "tracks_file": str(Path(args.out)), "video_file": args.video,
               "track_ids": len(ids),
               "timing": stats.summary(), "wall_s": wall_s, "metrics": metrics}
    t = summary["timing"]
    if t["frames"]:
        # Detection overlaps embed + associate (unless --no-overlap): the slower side sets the pace.
        work_ms = t["embed_ms"]["mean"] + t["associate_ms"]["mean"]
        t["capacity_fps"] = 1e3 / (work_ms + t["detect_ms"]["mean"] if args.no_overlap
                                   else max(work_ms, t["detect_ms"]["mean"]))
        t["wall_fps"] = t["frames"] / summary["wall_s"]
        # The mean above carries the first frames' warm-up (cuDNN autotuning, CUDA graph capture); the
        # median of 30-frame windows is the steady rate (the result document's figure).
        from hwbench_gui.demos.results import frame_times_from_stamps, window_fps

        windows = window_fps(frame_times_from_stamps(stamps, start))
        t["steady_fps"] = float(sorted(windows)[len(windows) // 2]) if windows else None
        t["fps_windows"] = len(windows)
    telemetry = watch.finish()
    if not args.no_result:
        try:
            summary["result_file"] = str(_save_result(args, detector, summary, stamps, start, started_at, frame_size,
                                                      telemetry))
        except OSError as exc:
            print(f"error: cannot write the result document: {exc}", file=sys.stderr)
            return 2
    if args.json:
        json.dump(summary, sys.stdout, indent=2)
        print()
        return 0
    print(f"{t['frames']} frames, {len(ids)} track ids → {args.out}" + (f", {args.video}" if args.video else ""))
    if t["frames"]:
        how = "one after the other" if args.no_overlap else "detection overlapped with tracking"
        print(f"{t['wall_fps']:.1f} FPS end to end (video decode, tracking, drawing and writing); tracking capacity "
              f"{t['capacity_fps']:.1f} FPS ({how}); per frame mean ms: detect {t['detect_ms']['mean']:.2f}  "
              f"embed {t['embed_ms']['mean']:.2f}  "
              f"associate {t['associate_ms']['mean']:.2f}")
        if t.get("steady_fps"):
            print(f"steady: {t['steady_fps']:.1f} FPS end to end (median of {t['fps_windows']} windows of 30 frames; "
                  "the mean above includes the warm-up)")
    if metrics:
        print(f"against {args.gt}: MOTA {metrics['MOTA']:.3f}  IDF1 {metrics['IDF1']:.3f}  "
              f"ID switches {metrics['IDSW']}  "
              f"({len(ids)} track ids for {metrics['GT_ids']} objects)")
    if "result_file" in summary:
        print(f"result → {summary['result_file']}")
    return 0


def _save_result(args, detector, summary: dict, stamps: list[float], start: float, started_at, frame_size,
                 telemetry: dict | None = None):
    from hwbench_gui.demos.results import demo_document, device_text, frame_times_from_stamps, save_demo_document

    t = summary["timing"]
    yolo = args.detector == "yolov3"
    params = {"detector": args.detector, "device": summary["device"], "precision": summary["precision"] or "n/a",
              "size": args.size if yolo else None, "frame_wh": frame_size or None,
              "appearance": not args.no_appearance, "overlap": not args.no_overlap,
              "random_weights": summary["random_weights"], **(detector.run_params() if yolo else {})}
    warnings = ["YOLOv3 ran with RANDOM weights: timing is real, detections are noise"] if summary["random_weights"] \
        else []
    doc = demo_document(
        "track", params, frame_times_from_stamps(stamps, start), started_at=started_at, duration_s=summary["wall_s"],
        device=device_text(getattr(detector, "device", "cpu")), precision=summary["precision"] or "n/a",
        stage_ms={k: t[k] for k in ("detect_ms", "embed_ms", "associate_ms", "frame_ms") if k in t},
        metrics=summary["metrics"], warnings=warnings,
        details={"source": summary["source"], "track_ids": summary["track_ids"],
                 "capacity_fps": t.get("capacity_fps"), "appearance": summary["appearance"],
                 "detector_summary": summary["detector_summary"],
                 "smallest_person_px": summary["smallest_person_px"]}, telemetry=telemetry)
    return save_demo_document(doc, args.results_dir)
