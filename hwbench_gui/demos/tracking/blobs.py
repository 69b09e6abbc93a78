"""Splitting a foreground blob into the upright figures it holds, from its outline alone.

Two people walking side by side, or one just behind the other, touch in a background
subtractor's mask and come out as one blob from the moment they enter: no track exists yet whose
prediction could split it. What still shows is the shape of a person: a head narrower than the
shoulders, legs narrower than the torso. Across a single upright figure the count of foreground
pixels per row rises from the head to the torso and falls off at the legs, and per column it
rises from the edges to the middle: neither profile dips *inside* the figure. Between two figures
it does: where one's legs meet the other's head (rows), or where two torsos touch with no head or
legs beside them (columns). :func:`split_blob` cuts at the deepest such dip, on whichever axis has
one, and again inside each part, while every part still has an upright figure's proportions.
"""

from __future__ import annotations

import numpy as np


def _tight(mask: np.ndarray) -> tuple[int, int, int, int] | None:
    """x1, y1, x2, y2 (exclusive) of the set pixels of ``mask``, None if there are none."""
    rows, cols = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
    if not len(rows):
        return None
    return int(cols[0]), int(rows[0]), int(cols[-1]) + 1, int(rows[-1]) + 1


def _deepest_dip(profile: np.ndarray, min_part: int, at_start: bool) -> tuple[float, int]:
    """(depth, cut index) of the lowest point of ``profile`` relative to the smaller of the
    highest points on its two sides, for cuts leaving at least ``min_part`` entries on each side.
    Depth is that ratio (1.0: no dip). The cut is at the start of the run of entries as low as
    the dip (``at_start``: rows, where the run is the lower figure's head and goes with its body),
    else in its middle (columns: the run is the two torsos' outer edges)."""
    n = len(profile)
    if n < 2 * min_part + 1:
        return 1.0, 0
    left = np.maximum.accumulate(profile)
    right = np.maximum.accumulate(profile[::-1])[::-1]
    idx = np.arange(min_part, n - min_part)
    ratio = profile[idx] / np.maximum(np.minimum(left[idx], right[idx]), 1e-6)
    best = int(np.argmin(ratio))
    low = profile[idx[best]]
    start = end = idx[best]
    while start - 1 >= min_part and profile[start - 1] <= low * 1.05:
        start -= 1
    while end + 1 < n - min_part and profile[end + 1] <= low * 1.05:
        end += 1
    return float(ratio[best]), int(start if at_start else (start + end + 1) // 2)


def split_blob(mask: np.ndarray, max_dip: float = 0.6, min_aspect: float = 1.3, min_side_px: int = 6,
               max_parts: int = 4) -> list[tuple[int, int, int, int]]:
    """Boxes (x1, y1, x2, y2, in ``mask``'s pixels, exclusive ends) of the figures in one blob.

    ``mask``: bool, the blob's pixels (its bounding box). A cut is made where a row or column
    profile dips to ``max_dip`` of the lower of its two sides' peaks or less, if both parts are
    upright (height / width ≥ ``min_aspect``, as people are: about 2) and at least ``min_side_px``
    wide; at most ``max_parts`` parts. A blob with no such dip comes back whole.
    """
    box = _tight(mask)
    if box is None:
        return []
    parts = [box]
    done: list[tuple[int, int, int, int]] = []
    while parts:
        x1, y1, x2, y2 = parts.pop()
        if len(done) + len(parts) + 1 >= max_parts:
            done.append((x1, y1, x2, y2))
            continue
        sub = mask[y1:y2, x1:x2]
        halves = None
        for axis in (0, 1):  # 0: cut between rows, 1: between columns
            profile = sub.sum(axis=1 - axis).astype(np.float64)
            depth, cut = _deepest_dip(profile, min_side_px, at_start=axis == 0)
            if depth > max_dip:
                continue
            a = sub[:cut] if axis == 0 else sub[:, :cut]
            b = sub[cut:] if axis == 0 else sub[:, cut:]
            ta, tb = _tight(a), _tight(b)
            if ta is None or tb is None:
                continue
            if axis == 0:
                ta = (x1 + ta[0], y1 + ta[1], x1 + ta[2], y1 + ta[3])
                tb = (x1 + tb[0], y1 + cut + tb[1], x1 + tb[2], y1 + cut + tb[3])
            else:
                ta = (x1 + ta[0], y1 + ta[1], x1 + ta[2], y1 + ta[3])
                tb = (x1 + cut + tb[0], y1 + tb[1], x1 + cut + tb[2], y1 + tb[3])
            if all(b[2] - b[0] >= min_side_px and (b[3] - b[1]) >= min_aspect * (b[2] - b[0]) for b in (ta, tb)):
                if halves is None or depth < halves[0]:
                    halves = (depth, ta, tb)
        if halves is None:
            done.append((x1, y1, x2, y2))
        else:
            parts += [halves[1], halves[2]]
    return done
