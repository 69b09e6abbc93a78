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


UPRIGHT_ASPECT = (1.9, 3.6)  # height / width of the box of one person standing, seen whole


def one_figure(part: np.ndarray, body: np.ndarray, max_gap: float = 0.1, min_overlap: float = 0.7) -> bool:
    """Whether ``part`` and ``body`` (xyxy), one above the other, are the upper and lower half of one person:
    each squatter than a person seen whole, the two in one column (their columns overlap by ``min_overlap``
    of the wider one's width), at most ``max_gap`` of their union's height apart, and their union shaped like
    one person standing (``UPRIGHT_ASPECT``). A person whose outline dips at the waist is cut there into a
    torso and legs; of two people one behind the other, each is a whole figure, and a head or a hand
    above someone is far narrower than they are."""
    x1, y1, x2, y2 = min(part[0], body[0]), min(part[1], body[1]), max(part[2], body[2]), max(part[3], body[3])
    low, high = UPRIGHT_ASPECT
    overlap = min(part[2], body[2]) - max(part[0], body[0])
    gap = max(part[1], body[1]) - min(part[3], body[3])
    return bool(all(b[3] - b[1] < low * (b[2] - b[0]) for b in (part, body))
                and overlap >= min_overlap * max(part[2] - part[0], body[2] - body[0])
                and gap <= max_gap * (y2 - y1) and low * (x2 - x1) <= y2 - y1 <= high * (x2 - x1))
