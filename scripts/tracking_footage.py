"""Tracking on real footage of one person at a time: reference boxes, then how a tracks file scores on them.

``reference``: for a clip from a fixed camera whose first frame is empty and where at most one person is in
view at a time (Intel's ``one-by-one-person-detection.mp4``, public repository
``intel-iot-devkit/sample-videos``), the person's box in each frame is the largest region that differs from
the first frame (largest channel difference over ``--diff``, after a 5×5 blur; opened 7×7, closed 25×25). A
person is *visible* in a frame when that region covers ``--min-area`` px² or more (a whole standing person
covers about 30,000 px² at 768×432; a foot at the frame's edge on its way out, under 8,000, does not count).
A run of visible frames is one person; gaps under ``--min-gap`` frames do not split it. Written as
MOTChallenge ground truth (``frame,person,left,top,width,height,1,1,1``). The boxes and the people count must
be checked by eye: ``--sheet PREFIX`` writes contact sheets of every ``--every``-th frame with the box drawn.

``score``: a MOTChallenge tracks file (``hwbench demo track --out``) against that reference: track ids
reported, ids per person, the share of visible people boxed per frame (a track box at IoU ≥ 0.3 with the
person's: the reference box is the whole region that changed, which at the frame's edge or with a shadow is
larger than a detector's box), extra boxes per frame (track boxes not on the person), and the longest
run of one id boxed off the person.

    .venv/bin/python scripts/tracking_footage.py reference /tmp/one-by-one.mp4 --out /tmp/one-by-one.gt.txt \
        --sheet /tmp/one-by-one.sheet
    .venv/bin/python -m hwbench_gui.cli demo track --source /tmp/one-by-one.mp4 --detector motion \
        --out /tmp/motion.txt --no-result --json
    .venv/bin/python scripts/tracking_footage.py score --gt /tmp/one-by-one.gt.txt --tracks /tmp/motion.txt \
        --fps 10 --frames 1394

Last measured (docs/demos-tuning.md has the table; shared 2-core VM): the motion detector went from 71 track
ids for 6 people and 0.38 of the visible people boxed to 12 ids and 0.97, extra boxes per frame 1.23 → 0.019.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hwbench_gui.demos.tracking.deepsort import iou_matrix  # noqa: E402


def changed_region(frame: np.ndarray, empty_blurred: np.ndarray, diff: int) -> tuple[int, int, int, int, int]:
    """x, y, w, h, area of the largest region of ``frame`` that differs from the empty frame (zeros if none)."""
    d = np.abs(cv2.GaussianBlur(frame, (5, 5), 0).astype(np.int16) - empty_blurred).max(axis=2)
    mask = ((d > diff) * 255).astype(np.uint8)
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (7, 7)))
    mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (25, 25)))
    n, _, stats, _ = cv2.connectedComponentsWithStats(mask)
    if n < 2:
        return 0, 0, 0, 0, 0
    j = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    return tuple(int(v) for v in stats[j])


def reference(args) -> int:
    cap = cv2.VideoCapture(args.video)
    ok, first = cap.read()
    if not ok:
        raise SystemExit(f"{args.video}: no frames")
    empty = cv2.GaussianBlur(first, (5, 5), 0).astype(np.int16)
    regions, frames = [(0, 0, 0, 0, 0)], [first] if args.sheet else []
    while True:
        ok, frame = cap.read()
        if not ok:
            break
        regions.append(changed_region(frame, empty, args.diff))
        if args.sheet:
            frames.append(frame)
    visible = [r[4] >= args.min_area for r in regions]
    person, last_seen, rows = 0, -10 ** 9, []
    for n, (r, v) in enumerate(zip(regions, visible), start=1):
        if not v:
            continue
        if n - last_seen > args.min_gap:
            person += 1
        last_seen = n
        rows.append(f"{n},{person},{r[0]},{r[1]},{r[2]},{r[3]},1,1,1")
    Path(args.out).write_text("\n".join(rows) + "\n", encoding="ascii")
    print(json.dumps({"frames": len(regions), "people": person, "visible_frames": sum(visible)}))
    if args.sheet:
        _sheets(frames, regions, visible, args.every, args.sheet)
    return 0


def _sheets(frames, regions, visible, every: int, prefix: str) -> None:
    """Contact sheets (6 × 4 tiles at 0.4 scale) of every ``every``-th frame, reference box drawn."""
    tiles = []
    for i in range(0, len(frames), every):
        f = frames[i].copy()
        x, y, w, h, _ = regions[i]
        if visible[i]:
            cv2.rectangle(f, (x, y), (x + w, y + h), (0, 255, 0), 3)
        f = cv2.resize(f, None, fx=0.4, fy=0.4)
        cv2.putText(f, str(i + 1), (5, 20), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (0, 0, 255), 2)
        tiles.append(f)
    while len(tiles) % 6:
        tiles.append(np.zeros_like(tiles[0]))
    rows = [np.hstack(tiles[r * 6:(r + 1) * 6]) for r in range(len(tiles) // 6)]
    for k in range(0, len(rows), 4):
        cv2.imwrite(f"{prefix}_{k // 4}.png", np.vstack(rows[k:k + 4]))


def _read(path: str) -> dict[int, list[tuple[int, np.ndarray]]]:
    """frame → [(id, xyxy box)] of a MOTChallenge text file."""
    out: dict[int, list] = defaultdict(list)
    for line in Path(path).read_text(encoding="ascii").splitlines():
        if line.strip():
            v = line.split(",")
            x, y, w, h = (float(s) for s in v[2:6])
            out[int(v[0])].append((int(float(v[1])), np.array([x, y, x + w, y + h])))
    return out


def score(args) -> int:
    gt, hyp = _read(args.gt), _read(args.tracks)
    n_frames = args.frames or max([*gt, *hyp, 0])
    people = {pid for rows in gt.values() for pid, _ in rows}
    boxed = visible = extra = 0
    off_run: dict[int, int] = defaultdict(int)
    longest_off = 0
    for n in range(1, n_frames + 1):
        truths, tracks = gt.get(n, []), hyp.get(n, [])
        on = set()
        for _, g in truths:
            visible += 1
            if tracks:
                iou = iou_matrix(g[None], np.array([b for _, b in tracks]))[0]
                if iou.max() >= args.iou:
                    boxed += 1
                on |= {tracks[j][0] for j in np.flatnonzero(iou >= args.iou)}
        extra += sum(1 for tid, _ in tracks if tid not in on)
        for tid, b in tracks:
            off_run[tid] = 0 if tid in on or _overlaps(b, truths) else off_run[tid] + 1
            longest_off = max(longest_off, off_run[tid])
    ids = {tid for rows in hyp.values() for tid, _ in rows}
    out = {"people": len(people), "track_ids": len(ids), "ids_per_person": len(ids) / max(1, len(people)),
           "visible_boxed": boxed / max(1, visible), "extra_boxes_per_frame": extra / max(1, n_frames),
           "longest_off_person_s": longest_off / args.fps, "visible_person_frames": visible, "frames": n_frames}
    print(json.dumps(out, indent=1))
    return 0


def _overlaps(box: np.ndarray, truths) -> bool:
    """Whether ``box`` touches any reference box at all (a part of the person, not scenery)."""
    return any(iou_matrix(box[None], g[None])[0, 0] > 0 for _, g in truths)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("reference", help="reference boxes from the difference to the empty first frame")
    r.add_argument("video")
    r.add_argument("--out", required=True, help="MOTChallenge ground truth to write")
    r.add_argument("--diff", type=int, default=40, help="channel difference that counts as changed (0-255)")
    r.add_argument("--min-area", type=int, default=8000, help="px² of changed region that counts as a person")
    r.add_argument("--min-gap", type=int, default=5, help="frames without a person that separate two people")
    r.add_argument("--sheet", help="write contact sheets PREFIX_0.png, PREFIX_1.png, … to check by eye")
    r.add_argument("--every", type=int, default=30, help="--sheet: every n-th frame")
    r.set_defaults(handler=reference)
    s = sub.add_parser("score", help="a tracks file against the reference")
    s.add_argument("--gt", required=True)
    s.add_argument("--tracks", required=True)
    s.add_argument("--iou", type=float, default=0.3, help="IoU at which a track box boxes the person")
    s.add_argument("--fps", type=float, required=True, help="the clip's frames per second (for durations)")
    s.add_argument("--frames", type=int, help="the clip's frames (default: the last frame with a box or a person)")
    s.set_defaults(handler=score)
    args = p.parse_args(argv)
    return args.handler(args)


if __name__ == "__main__":
    raise SystemExit(main())
