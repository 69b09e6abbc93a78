"""Tracking quality on generated sequences: MOTA, IDF1 and HOTA of detector + Deep SORT.

Renders ``--sequences`` generated sequences (figures entering, crossing, passing behind pillars;
see hwbench_gui/demos/tracking/synthetic.py) and evaluates the tracks against their exact ground
truth with the ``trackers`` package's CLEAR / identity / HOTA code. Goals with the motion
detector: MOTA >= 0.8 and IDF1 >= 0.8 (over all sequences pooled).

    .venv/bin/python scripts/tracking_quality.py [--detector motion] [--sequences 5] [--frames 300] [--json F]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hwbench_gui.demos.tracking import synthetic  # noqa: E402
from hwbench_gui.demos.tracking.detectors import make_detector  # noqa: E402
from hwbench_gui.demos.tracking.io import MotRow  # noqa: E402
from hwbench_gui.demos.tracking.metrics import evaluate  # noqa: E402
from hwbench_gui.demos.tracking.pipeline import TrackingPipeline  # noqa: E402


def crowding(gt_rows) -> dict:
    """How hard the sequence is: GT boxes touching another GT box, and GT boxes per frame."""
    from collections import defaultdict

    import numpy as np

    from hwbench_gui.demos.tracking.deepsort import iou_matrix

    by_frame = defaultdict(list)
    for r in gt_rows:
        by_frame[r.frame].append(r.box)
    touching = 0
    for boxes in by_frame.values():
        iou = iou_matrix(np.array(boxes), np.array(boxes)) - np.eye(len(boxes))
        touching += int((iou > 0).any(axis=1).sum())
    return {"gt_boxes_overlapping_another": touching, "max_gt_per_frame": max(map(len, by_frame.values()), default=0)}


def run_sequence(spec, detector_name: str, use_appearance: bool = True):
    pipeline = TrackingPipeline(make_detector(detector_name), use_appearance=use_appearance)
    gt_rows, hyp_rows = [], []
    for n, frame, gt in synthetic.render(spec):
        result = pipeline.step(frame)
        gt_rows += [MotRow(n, g.object_id, g.box, 1.0) for g in gt]
        hyp_rows += [MotRow(n, t.track_id, tuple(t.box), t.score) for t in result.tracks]
    return gt_rows, hyp_rows, pipeline.stats


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--detector", default="motion", choices=["motion", "hog"])
    p.add_argument("--sequences", type=int, default=5)
    p.add_argument("--frames", type=int, default=300)
    p.add_argument("--objects", type=int, default=6, help="figures per sequence")
    p.add_argument("--seed", type=int, default=0, help="first sequence's seed (then seed+1, …)")
    p.add_argument("--no-appearance", action="store_true", help="turn the appearance feature off (ablation)")
    p.add_argument("--json", help="write the figures here")
    args = p.parse_args(argv)

    per_seq, all_gt, all_hyp, offset = [], [], [], 0
    t0 = time.perf_counter()
    for k in range(args.sequences):
        spec = synthetic.random_spec(n_frames=args.frames, n_objects=args.objects, seed=args.seed + k)
        gt, hyp, _ = run_sequence(spec, args.detector, not args.no_appearance)
        m = evaluate(gt, hyp, n_frames=args.frames)
        crowd = crowding(gt)
        per_seq.append({"seed": args.seed + k, **m, **crowd})
        print(f"seed {args.seed + k}: MOTA {m['MOTA']:.3f}  IDF1 {m['IDF1']:.3f}  HOTA {m['HOTA']:.3f}  "
              f"IDSW {m['IDSW']}  FP {m['FP']}  FN {m['FN']}  GT boxes {m['GT_dets']} ({m['GT_ids']} ids, "
              f"{crowd['gt_boxes_overlapping_another']} overlapping another, up to {crowd['max_gt_per_frame']} "
              "in a frame)", flush=True)
        # Pool sequences into one by shifting frames and ids, so the totals weigh every box equally.
        shift_id = 1000 * (k + 1)
        all_gt += [MotRow(r.frame + offset, r.object_id + shift_id, r.box, r.score) for r in gt]
        all_hyp += [MotRow(r.frame + offset, r.object_id + shift_id, r.box, r.score) for r in hyp]
        offset += args.frames
    pooled = evaluate(all_gt, all_hyp, n_frames=offset)
    overlapping = sum(s["gt_boxes_overlapping_another"] for s in per_seq)
    ok = pooled["MOTA"] >= 0.8 and pooled["IDF1"] >= 0.8
    print(f"all {args.sequences} sequences ({offset} frames, 640x480, detector {args.detector}, appearance "
          f"{'off' if args.no_appearance else 'colour histogram + HOG'}): MOTA {pooled['MOTA']:.3f}  "
          f"IDF1 {pooled['IDF1']:.3f}  HOTA {pooled['HOTA']:.3f}  IDSW {pooled['IDSW']}  FP {pooled['FP']}  "
          f"FN {pooled['FN']}  ({100 * overlapping / max(1, pooled['GT_dets']):.1f} % of {pooled['GT_dets']} GT boxes "
          f"overlap another)  — goal MOTA >= 0.8 and IDF1 >= 0.8: {'met' if ok else 'NOT met'}  "
          f"({time.perf_counter() - t0:.0f} s)")
    if args.json:
        Path(args.json).write_text(json.dumps({"detector": args.detector, "appearance": not args.no_appearance,
                                               "frames_per_sequence": args.frames, "objects": args.objects,
                                               "sequences": per_seq, "pooled": pooled}, indent=2))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
