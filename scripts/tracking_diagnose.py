"""Why tracks are lost and re-born in the occlusion settings: per-sequence diagnostics of the motion
detector + occlusion-aware Deep SORT (the demo's default path).

For each track id that was ever reported: the ground-truth object it mostly covered (IoU >= 0.5),
when it was born and last reported, whether it was held in a merged blob when it ended, and — for
an id that took over an object another id had covered before — how long the object went without
an id, whether the earlier id was still alive (a duplicate or a swap) and the appearance distance
between the new id's first detections and the earlier id's gallery (could re-identification have
joined them?). Counts per sequence:

- ``ids``: reported ids; ``false``: ids covering no object for most of their reports;
- ``reborn``: ids that took an object over from an earlier id that had died (a re-birth);
  ``reborn_in_blob``: of those, born while a merged blob held tracks (births during merges);
  ``lost_held``: earlier ids that were held in a blob when they ended (tracks deleted while occluded);
  ``gap``: median frames between the earlier id's last and the new id's first report;
  ``app_d``: median appearance distance new-vs-earlier (the cascade accepts <= 0.3);
- ``swap``: ids that took an object over while the earlier id was still alive.

    .venv/bin/python scripts/tracking_diagnose.py [--seeds 5] [--settings converge5,lanes6]

``--errors`` counts instead what the false positives and misses of each frame are (boxes matched
at IoU >= 0.5, greedily): ``fp_group`` a reported box covering half or more of two or more true
boxes (a group seen as one), ``fp_none`` a box touching no true box (a shadow, a ghost, noise),
``fp_misfit`` a box on one object that fits it badly; ``fn_grouped`` a missed object inside a
group box, ``fn_misfit`` one with a badly fitting box on it, ``fn_none`` one with no box near it
(``fn_border`` of those: within 30 px of the frame's edge; ``fn_still``: the object has not moved
for 10 frames). With ``--suite crowd`` the settings are those of ``synthetic.CROWD_SETTINGS``:

    .venv/bin/python scripts/tracking_diagnose.py --errors --suite crowd --seeds 5 --frames 240
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hwbench_gui.demos.tracking import synthetic  # noqa: E402
from hwbench_gui.demos.tracking.deepsort import Tracker, iou_matrix  # noqa: E402
from hwbench_gui.demos.tracking.detectors import make_detector  # noqa: E402
from hwbench_gui.demos.tracking.pipeline import TrackingPipeline  # noqa: E402


def diagnose(spec) -> dict:
    tracker = Tracker(occlusion_aware=True)
    pipeline = TrackingPipeline(make_detector("motion", background="mog2"), tracker=tracker)
    first_feats: dict[int, list] = defaultdict(list)  # id → its first detections' features
    galleries: dict[int, np.ndarray] = {}  # id → last gallery while it lived
    reports: dict[int, list] = defaultdict(list)  # id → [(frame, gt object or 0, held)]
    blob_frames = set()  # frames in which some track was held
    for n, frame, gt in synthetic.render(spec):
        result = pipeline.step(frame)
        if any(t.held for t in result.tracks):
            blob_frames.add(n)
        gt_boxes = np.array([g.box for g in gt]).reshape(-1, 4)
        for t in result.tracks:
            obj = 0
            if len(gt_boxes):
                iou = iou_matrix(t.box[None], gt_boxes)[0]
                if iou.max() >= 0.5:
                    obj = gt[int(iou.argmax())].object_id
            reports[t.track_id].append((n, obj, t.held))
        for tr in tracker.tracks:
            if tr.track_id in tracker.metric.samples:
                galleries[tr.track_id] = tracker.metric.samples[tr.track_id]
            if len(first_feats[tr.track_id]) < 3 and tr.features and tr.time_since_update == 0:
                first_feats[tr.track_id].append(tr.features[-1])
    owner = {}
    for tid, rows in reports.items():
        objs = Counter(o for _, o, _ in rows)
        obj, count = objs.most_common(1)[0]
        owner[tid] = obj if obj and count >= len(rows) / 2 else 0
    first = {tid: rows[0][0] for tid, rows in reports.items()}
    last = {tid: rows[-1][0] for tid, rows in reports.items()}
    out = Counter(ids=len(reports), false=sum(1 for o in owner.values() if o == 0))
    gaps, dists = [], []
    by_obj = defaultdict(list)
    for tid in sorted(reports, key=first.get):
        if owner[tid]:
            by_obj[owner[tid]].append(tid)
    for obj, tids in by_obj.items():
        for prev, new in zip(tids, tids[1:]):
            if last[prev] >= first[new]:
                out["swap"] += 1
                continue
            out["reborn"] += 1
            out["reborn_in_blob"] += first[new] - 3 in blob_frames or first[new] - 1 in blob_frames
            out["lost_held"] += bool(reports[prev][-1][2])
            gaps.append(first[new] - last[prev])
            if prev in galleries and first_feats[new]:
                sims = galleries[prev] @ np.asarray(first_feats[new], np.float32).T
                dists.append(float(1 - sims.max(axis=0).mean()))
    out["gap"] = float(np.median(gaps)) if gaps else float("nan")
    out["app_d"] = float(np.median(dists)) if dists else float("nan")
    return out


def errors(spec) -> Counter:
    """Kinds of false positives and misses of the demo's default path on ``spec`` (see the doc)."""
    pipeline = TrackingPipeline(make_detector("motion"))
    out = Counter()
    history: dict[int, list] = defaultdict(list)
    for n, frame, gt in synthetic.render(spec):
        hyp = np.array([t.box for t in pipeline.step(frame).tracks]).reshape(-1, 4)
        gt_boxes = np.array([g.box for g in gt]).reshape(-1, 4)
        for g in gt:
            history[g.object_id].append((n, np.asarray(g.box)))
        iou = iou_matrix(hyp, gt_boxes) if len(hyp) and len(gt_boxes) else np.zeros((len(hyp), len(gt_boxes)))
        matched_h, matched_g = set(), set()
        for flat in np.argsort(-iou, axis=None):
            h, g = divmod(int(flat), max(1, len(gt_boxes)))
            if iou[h, g] < 0.5:
                break
            if h not in matched_h and g not in matched_g:
                matched_h.add(h)
                matched_g.add(g)
        if len(hyp) and len(gt_boxes):
            tl = np.maximum(hyp[:, None, :2], gt_boxes[None, :, :2])
            br = np.minimum(hyp[:, None, 2:], gt_boxes[None, :, 2:])
            cover = np.prod(np.clip(br - tl, 0, None), axis=2) / np.prod(gt_boxes[:, 2:] - gt_boxes[:, :2], axis=1)
        else:
            cover = np.zeros((len(hyp), len(gt_boxes)))
        group = (cover >= 0.5).sum(axis=1) >= 2
        for h in range(len(hyp)):
            if h in matched_h:
                continue
            out["fp_group" if group[h] else "fp_none" if not (iou[h] > 0).any() else "fp_misfit"] += 1
        for g in range(len(gt_boxes)):
            if g in matched_g:
                continue
            if any(group[h] and cover[h, g] >= 0.5 for h in range(len(hyp))):
                out["fn_grouped"] += 1
            elif (iou[:, g] > 0.1).any():
                out["fn_misfit"] += 1
            else:
                out["fn_none"] += 1
                x1, y1, x2, y2 = gt_boxes[g]
                out["fn_border"] += min(x1, y1, spec.width - x2, spec.height - y2) < 30
                past = [b for f, b in history[gt[g].object_id] if f == n - 10]
                out["fn_still"] += bool(past) and float(np.abs(past[0] - gt_boxes[g]).max()) < 2
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--frames", type=int, default=200)
    p.add_argument("--settings", help="comma-separated subset of the suite's settings")
    p.add_argument("--suite", default="occlusion", choices=list(synthetic.SUITES))
    p.add_argument("--errors", action="store_true", help="count the kinds of false positives and misses instead")
    args = p.parse_args(argv)
    settings = args.settings.split(",") if args.settings else list(synthetic.SUITES[args.suite])
    if args.errors:
        kinds = ("fp_group", "fp_none", "fp_misfit", "fn_grouped", "fn_misfit", "fn_none", "fn_border", "fn_still")
        print(f"{'sequence':<28}" + "".join(f"{k:>11}" for k in kinds))
        total = Counter()
        for setting in settings:
            for seed in range(args.seeds):
                e = errors(synthetic.occlusion_spec(setting, seed, n_frames=args.frames))
                total += e
                print(f"{setting + ' seed ' + str(seed):<28}" + "".join(f"{e[k]:>11d}" for k in kinds), flush=True)
        print(f"{'all':<28}" + "".join(f"{total[k]:>11d}" for k in kinds))
        return 0
    keys = ("ids", "false", "reborn", "reborn_in_blob", "lost_held", "swap", "gap", "app_d")
    print(f"{'sequence':<28}" + "".join(f"{k:>15}" for k in keys))
    for setting in settings:
        for seed in range(args.seeds):
            d = diagnose(synthetic.occlusion_spec(setting, seed, n_frames=args.frames))
            print(f"{setting + ' seed ' + str(seed):<28}" +
                  "".join(f"{d[k]:>15.1f}" if isinstance(d[k], float) else f"{d[k]:>15d}" for k in keys), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
