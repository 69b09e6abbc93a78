"""Tracking quality against ground truth: MOTA (CLEAR MOT), IDF1 (identity) and HOTA, and
fragmentation: how many track ids each true identity was given (:func:`ids_per_identity`). Figures of
ids per identity quoted in module docs before it paired boxes as CLEAR MOT does were counted with a
fresh pairing each frame, which gave higher counts (held-out kinds 1.82 where CLEAR's pairs give 1.64).

The figures come from the ``trackers`` package's evaluation module (Roboflow's port of TrackEval,
numpy 2 compatible; py-motmetrics 1.4.0 calls ``np.asfarray``, removed in NumPy 2). A pair counts as
matched at IoU ≥ 0.5, as in MOTChallenge.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable

import numpy as np

from hwbench_gui.demos.tracking.io import MotRow


class MetricsUnavailable(RuntimeError):
    pass


def _frames(rows: Iterable[MotRow], n_frames: int):
    by_frame: dict[int, list[MotRow]] = defaultdict(list)
    for r in rows:
        by_frame[r.frame].append(r)
    ids, boxes = [], []
    for f in range(1, n_frames + 1):
        rs = by_frame.get(f, [])
        ids.append(np.array([r.object_id for r in rs], np.int64))
        boxes.append(np.array([r.box for r in rs], np.float64).reshape(-1, 4))
    return ids, boxes


def evaluate(gt: Iterable[MotRow], hyp: Iterable[MotRow], n_frames: int | None = None,
             iou_threshold: float = 0.5) -> dict:
    """MOTA, IDF1, HOTA and their parts for one sequence. Frames are numbered from 1.

    Returns a dict of plain floats/ints: MOTA, MOTP, IDF1, IDP, IDR, HOTA, IDSW, FP, FN, TP,
    GT_dets, GT_ids, frames, ids_per_identity (see :func:`ids_per_identity`).
    Raises :class:`MetricsUnavailable` if ``trackers`` is not installed.
    """
    try:
        from trackers.eval import box_iou, compute_clear_metrics, compute_hota_metrics, compute_identity_metrics
    except ImportError as exc:
        raise MetricsUnavailable(f"tracking metrics need the 'trackers' package (pip install trackers): {exc}") \
            from None
    gt, hyp = list(gt), list(hyp)
    if n_frames is None:
        n_frames = max([r.frame for r in gt + hyp], default=0)
    gt_ids, gt_boxes = _frames(gt, n_frames)
    hyp_ids, hyp_boxes = _frames(hyp, n_frames)
    sims = [box_iou(g, h, box_format="xyxy") if len(g) and len(h) else np.zeros((len(g), len(h)))
            for g, h in zip(gt_boxes, hyp_boxes)]
    clear = compute_clear_metrics(gt_ids, hyp_ids, sims, threshold=iou_threshold)
    ident = compute_identity_metrics(gt_ids, hyp_ids, sims, threshold=iou_threshold)
    hota = compute_hota_metrics(gt_ids, hyp_ids, sims)
    return {
        "MOTA": float(clear["MOTA"]), "MOTP": float(clear["MOTP"]), "IDF1": float(ident["IDF1"]),
        "IDP": float(ident["IDP"]), "IDR": float(ident["IDR"]), "HOTA": float(hota["HOTA"]),
        "IDSW": int(clear["IDSW"]), "FP": int(clear["CLR_FP"]), "FN": int(clear["CLR_FN"]),
        "TP": int(clear["CLR_TP"]), "GT_dets": sum(len(i) for i in gt_ids),
        "GT_ids": len({r.object_id for r in gt}), "frames": n_frames,
        "ids_per_identity": ids_per_identity(gt_ids, gt_boxes, hyp_ids, hyp_boxes, iou_threshold),
    }


def ids_per_identity(gt_ids, gt_boxes, hyp_ids, hyp_boxes, iou_threshold: float = 0.5) -> float:
    """Fragmentation: the distinct track ids matched to each true identity, averaged over the
    identities matched at least once (1.0: every person kept one id; an identity never matched
    shows in the misses, not here). The pairs are CLEAR MOT's, those MOTA and its ID switches
    count: per frame, pairs at IoU ≥ ``iou_threshold`` only, as many as can be, and a pair
    matched in the previous frame kept while it stays above the threshold (TrackEval's bonus of
    1000), so a neighbour's box that overlaps a person a little more for a frame is not counted
    as one of their ids while their own track still covers them. Arguments are per-frame lists as
    :func:`evaluate` builds them. NaN when nothing was matched."""
    from scipy.optimize import linear_sum_assignment

    from hwbench_gui.demos.tracking.deepsort import iou_matrix

    given: dict[int, set[int]] = defaultdict(set)
    last: dict[int, int] = {}  # true identity -> track id matched in the previous frame
    for g_ids, g_boxes, h_ids, h_boxes in zip(gt_ids, gt_boxes, hyp_ids, hyp_boxes):
        matched: dict[int, int] = {}
        if len(g_ids) and len(h_ids):
            iou = iou_matrix(g_boxes, h_boxes)
            kept = np.array([last.get(int(g), -1) for g in g_ids])[:, None] == np.asarray(h_ids)[None, :]
            score = np.where(iou >= iou_threshold - 1e-9, iou + 1000.0 * kept, 0.0)
            for r, c in zip(*linear_sum_assignment(-score)):
                if score[r, c] > 0:
                    matched[int(g_ids[r])] = int(h_ids[c])
                    given[int(g_ids[r])].add(int(h_ids[c]))
        last = matched
    return float(np.mean([len(v) for v in given.values()])) if given else float("nan")


def matched_truths(gt_boxes, det_boxes, iou_threshold: float = 0.5) -> np.ndarray:
    """(len(gt_boxes),) bool: which true boxes a detection matches, one to one (Hungarian on IoU),
    at IoU ≥ ``iou_threshold`` (MOTChallenge's 0.5). Boxes xyxy. Recall is its mean; precision is
    its sum over the number of detections."""
    from scipy.optimize import linear_sum_assignment

    from hwbench_gui.demos.tracking.deepsort import iou_matrix

    gt = np.asarray(gt_boxes, np.float64).reshape(-1, 4)
    det = np.asarray(det_boxes, np.float64).reshape(-1, 4)
    hit = np.zeros(len(gt), bool)
    if len(gt) and len(det):
        iou = iou_matrix(gt, det)
        rows, cols = linear_sum_assignment(-iou)
        hit[rows[iou[rows, cols] >= iou_threshold]] = True
    return hit
