"""Box arithmetic the tracker uses: xyxy ↔ (centre x, centre y, aspect, height), IoU, coverage."""

from __future__ import annotations

import numpy as np


def xyxy_to_xyah(boxes: np.ndarray) -> np.ndarray:
    """x1 y1 x2 y2 → centre x, centre y, aspect (w / h), height."""
    b = np.asarray(boxes, np.float64).reshape(-1, 4)
    w, h = b[:, 2] - b[:, 0], np.maximum(b[:, 3] - b[:, 1], 1e-6)
    return np.stack([b[:, 0] + w / 2, b[:, 1] + h / 2, w / h, h], 1)


def xyah_to_xyxy(xyah: np.ndarray) -> np.ndarray:
    m = np.asarray(xyah, np.float64).reshape(-1, 4)
    w = m[:, 2] * m[:, 3]
    return np.stack([m[:, 0] - w / 2, m[:, 1] - m[:, 3] / 2, m[:, 0] + w / 2, m[:, 1] + m[:, 3] / 2], 1)


def iou_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pairwise IoU of xyxy boxes, shape (len(a), len(b))."""
    a, b = np.asarray(a, np.float64).reshape(-1, 4), np.asarray(b, np.float64).reshape(-1, 4)
    tl = np.maximum(a[:, None, :2], b[None, :, :2])
    br = np.minimum(a[:, None, 2:], b[None, :, 2:])
    inter = np.prod(np.clip(br - tl, 0, None), axis=2)
    area_a = np.prod(a[:, 2:] - a[:, :2], axis=1)
    area_b = np.prod(b[:, 2:] - b[:, :2], axis=1)
    return inter / np.maximum(area_a[:, None] + area_b[None, :] - inter, 1e-12)



def moved_inside(box: np.ndarray, outer: np.ndarray) -> np.ndarray:
    """``box`` (xyxy) moved the least distance that puts it inside ``outer`` on each axis where it
    fits, then clipped to ``outer``: a held track's prediction coasts past the edge of a group that
    stopped, and clipped where it stood the box was a sliver of the person (docs/demos-tuning.md)."""
    moved = np.asarray(box, np.float64).copy()
    for axis in (0, 1):
        lo, hi = outer[axis], outer[axis + 2]
        if moved[axis + 2] - moved[axis] <= hi - lo:
            moved[[axis, axis + 2]] += max(lo - moved[axis], 0.0) + min(hi - moved[axis + 2], 0.0)
    return np.concatenate([np.maximum(moved[:2], outer[:2]), np.minimum(moved[2:], outer[2:])])


def coverage(boxes: np.ndarray, others: np.ndarray) -> np.ndarray:
    """(len(boxes), len(others)): the share of each of ``boxes`` (xyxy) that lies inside each of ``others``."""
    tl = np.maximum(boxes[:, None, :2], others[None, :, :2])
    br = np.minimum(boxes[:, None, 2:], others[None, :, 2:])
    inside = np.prod(np.clip(br - tl, 0, None), axis=2)
    return inside / np.maximum(np.prod(boxes[:, 2:] - boxes[:, :2], axis=1), 1e-6)[:, None]


def area(box: np.ndarray) -> float:
    return float(max(0.0, box[2] - box[0]) * max(0.0, box[3] - box[1]))



def stacked(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether boxes ``a`` and ``b`` (xyxy) lie one above the other: their columns overlap by at least half
    the narrower one's width."""
    return min(a[2], b[2]) - max(a[0], b[0]) >= 0.5 * min(a[2] - a[0], b[2] - b[0])
