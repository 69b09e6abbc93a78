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

from hwbench_gui.demos.tracking.boxes import UPRIGHT_ASPECT


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


class PersonHeights:
    """How tall a person whose feet are on image row ``y`` looks, learnt from the blobs a fixed camera
    sees. On a ground plane a person's height in the image is linear in their foot row (both are
    ``F · size / depth``), near or far, level camera or elevated: ``h = slope · y + offset``, fitted
    by least squares to the last ``capacity`` blobs shaped like one upright person (height / width in
    ``aspect``), those more than ``max_residual`` off the first fit dropped and the line fitted again.
    Blobs of two people side by side are too wide and of two stacked (one behind the other, seen
    from above) too tall to be samples. No estimate until ``min_samples`` have been seen, nor where
    the row does not tell the height: when the median relative distance of the samples from the
    line exceeds ``max_spread`` (people of heights far apart on the same rows; adults differ by
    about ±10 %)."""

    def __init__(self, capacity: int = 400, min_samples: int = 40, aspect: tuple[float, float] = UPRIGHT_ASPECT,
                 max_residual: float = 0.2, refit_every: int = 20, max_spread: float = 0.1) -> None:
        self.capacity, self.min_samples, self.aspect = capacity, min_samples, aspect
        self.max_residual, self.refit_every, self.max_spread = max_residual, refit_every, max_spread
        self.reset()

    def reset(self) -> None:
        self._samples: list[tuple[float, float]] = []
        self._fit: tuple[float, float] | None = None
        self._added = 0

    def add(self, x1: float, y1: float, x2: float, y2: float) -> None:
        """One blob's box; kept when it is shaped like one upright person."""
        w, h = x2 - x1, y2 - y1
        if w <= 0 or not self.aspect[0] <= h / w <= self.aspect[1]:
            return
        self._samples.append((float(y2), float(h)))
        if len(self._samples) > self.capacity:
            del self._samples[0]
        self._added += 1
        if len(self._samples) >= self.min_samples and self._added % self.refit_every == 0:
            self._refit()

    def _refit(self) -> None:
        y, h = np.asarray(self._samples).T
        slope, offset = self._line(y, h)
        good = np.abs(h - (slope * y + offset)) <= self.max_residual * h
        if good.sum() >= self.min_samples // 2:
            slope, offset = self._line(y[good], h[good])
        fitted = slope * y + offset
        spread = float(np.median(np.abs(h - fitted) / np.maximum(fitted, 1e-6)))
        self._fit = (slope, offset) if spread <= self.max_spread else None

    @staticmethod
    def _line(y: np.ndarray, h: np.ndarray) -> tuple[float, float]:
        if np.ptp(y) < 1e-6:  # all on one row: a height, no slope
            return 0.0, float(np.median(h))
        slope, offset = np.polyfit(y, h, 1)
        return float(slope), float(offset)

    def expected(self, foot_y: float) -> float | None:
        """Expected height (px) of a person with feet on row ``foot_y``; None before enough samples."""
        if self._fit is None:
            return None
        slope, offset = self._fit
        h = slope * foot_y + offset
        return float(h) if h > 0 else None

    def head_to_height(self, head_y: float) -> float | None:
        """Expected height of a person whose head is on row ``head_y``: h = slope · (head_y + h) + offset."""
        if self._fit is None or self._fit[0] >= 1.0:
            return None
        slope, offset = self._fit
        h = (slope * head_y + offset) / (1.0 - slope)
        return float(h) if h > 0 else None


def split_stacked(mask: np.ndarray, x: int, y: int, heights: PersonHeights, stack_ratio: float = 1.5,
                  min_side_px: int = 3) -> list[tuple[int, int, int, int]] | None:
    """Two boxes (in ``mask``'s pixels, exclusive ends) for a blob taller than ``stack_ratio`` times
    the expected height of a person standing at its bottom row: one person in front (the blob's
    bottom, the expected height tall) and one behind (its top, as tall as a person whose head is
    there), each as wide as the blob's pixels in its rows; None when the blob is not that tall (or
    no heights are known yet). ``mask``: the blob's pixels in its bounding box, whose top-left is
    (``x``, ``y``) in the frame ``heights`` was learnt in."""
    box = _tight(mask)
    if box is None:
        return None
    x1, y1, x2, y2 = box
    front = heights.expected(y + y2)
    behind = heights.head_to_height(y + y1)
    if front is None or behind is None or y2 - y1 < stack_ratio * front:
        return None
    parts = []
    for top, bottom in ((y1, min(y2, y1 + int(round(behind)))), (max(y1, y2 - int(round(front))), y2)):
        # Columns from the rows of this person alone where they exist (above the front person's head,
        # below the back person's feet), else from all its rows.
        own = (top, min(bottom, y2 - int(round(front)))) if top == y1 else (max(top, y1 + int(round(behind))), bottom)
        rows = mask[own[0]:own[1]] if own[1] - own[0] >= min_side_px else mask[top:bottom]
        cols = np.flatnonzero(rows.any(axis=0))
        if bottom - top < min_side_px or not len(cols):
            return None
        parts.append((int(cols[0]), top, int(cols[-1]) + 1, bottom))
    if any((b - t) < heights.aspect[0] * (r - left) for left, t, r, b in parts):
        return None  # a part wider than one person: a crowd, which the tracker's merged blobs handle
    return parts


# Width / height of the narrowest upright person: :class:`PersonHeights` takes people to be 1.9-3.6
# times as tall as wide (``UPRIGHT_ASPECT``).
NARROWEST_PERSON = 1 / UPRIGHT_ASPECT[1]


def colour_bins(frame_hsv: np.ndarray, hue_bins: int = 16, sat_bins: int = 4, min_value: int = 40) -> np.ndarray:
    """Hue-saturation bin (0 .. hue_bins · sat_bins - 1) of every pixel of an HSV image, -1 where it
    is too dark (value ≤ ``min_value``) to have a reliable hue: the appearance module's histogram bins."""
    bins = (frame_hsv[..., 0].astype(np.int32) * hue_bins // 180) * sat_bins + \
        frame_hsv[..., 1].astype(np.int32) * sat_bins // 256
    bins[frame_hsv[..., 2] <= min_value] = -1
    return bins


def split_by_colour(mask: np.ndarray, bins: np.ndarray, n_bins: int = 64, min_width: float = NARROWEST_PERSON,
                    min_distance: float = 0.3,
                    min_aspect: float = 1.3, max_parts: int = 3) -> list[tuple[int, int, int, int]]:
    """Boxes (x1, y1, x2, y2 in ``mask``'s pixels, exclusive ends) of the people side by side in one
    blob, told apart by what they wear where the outline shows no dip between them (two or three
    walking abreast at a level camera are one blob with one flat top for as long as they walk).

    ``mask``: bool, the blob's pixels; ``bins``: their hue-saturation bins (:func:`colour_bins`),
    same shape. The blob's height is a person's height ``h`` (people abreast stand on the same row),
    so the narrowest person is ``min_width`` · ``h`` wide. A blob at least two such people wide is cut at
    the column where the colour histograms of its two sides differ most (Hellinger distance of the
    hue-saturation histograms of their pixels), among the cuts leaving each side at least one
    narrowest person wide, when that distance is at least ``min_distance`` and both sides are upright
    (height / width ≥ ``min_aspect``); then again inside each side, up to ``max_parts`` parts. One
    person's left and right halves wear the same colours, so one person is never cut; nor are
    people dressed alike (the blob comes back whole)."""
    box = _tight(mask)
    if box is None:
        return []
    parts, done = [box], []
    while parts:
        x1, y1, x2, y2 = parts.pop()
        halves = None
        if len(done) + len(parts) + 1 < max_parts:
            halves = _colour_cut(mask[y1:y2, x1:x2], bins[y1:y2, x1:x2], n_bins, min_width, min_distance, min_aspect)
        if halves is None:
            done.append((x1, y1, x2, y2))
        else:
            parts += [(x1 + a, y1 + b, x1 + c, y1 + d) for a, b, c, d in halves]
    return sorted(done)


def _colour_cut(mask: np.ndarray, bins: np.ndarray, n_bins: int, min_width: float, min_distance: float,
                min_aspect: float):
    """The two tight boxes of the best colour cut of ``mask`` (:func:`split_by_colour`), or None."""
    h, w = mask.shape
    min_w = max(2, int(np.ceil(min_width * h)))
    if w < 2 * min_w:
        return None
    use = mask & (bins >= 0)
    cols = np.nonzero(use)[1]
    per_col = np.bincount(cols * n_bins + bins[use], minlength=w * n_bins).reshape(w, n_bins).astype(np.float64)
    left = np.cumsum(per_col, axis=0)[min_w - 1:w - min_w]  # histogram left of the cut after column c
    right = per_col.sum(0) - left
    n_left, n_right = left.sum(1, keepdims=True), right.sum(1, keepdims=True)
    ok = (n_left[:, 0] >= min_w * min_w) & (n_right[:, 0] >= min_w * min_w)  # a figure's worth of coloured pixels
    if not ok.any():
        return None
    overlap = np.sqrt(left / np.maximum(n_left, 1) * right / np.maximum(n_right, 1)).sum(1)
    distance = np.where(ok, 1.0 - overlap, -1.0)
    best = int(np.argmax(distance))
    if distance[best] < min_distance:
        return None
    cut = min_w + best
    a, b = _tight(mask[:, :cut]), _tight(mask[:, cut:])
    if a is None or b is None:
        return None
    b = (cut + b[0], b[1], cut + b[2], b[3])
    if any((y2 - y1) < min_aspect * (x2 - x1) for x1, y1, x2, y2 in (a, b)):
        return None
    return a, b


def split_by_depth(mask: np.ndarray, x: int, y: int, heights: PersonHeights, taller: float = 1.2,
                   tolerance: float = 0.25, min_fill: float = 0.3, max_behind: int = 2
                   ) -> list[tuple[int, int, int, int]] | None:
    """Boxes (in ``mask``'s pixels, exclusive ends) of one person in front and those partly hidden
    behind them, beside and above: people at different depths who overlap. Seen by a camera above
    the ground, the nearer person's feet are lower in the image, so the blob's bottom row is the
    front person's; they are as tall as a person standing there (``heights``) and as wide as the
    columns their feet reach. What lies outside that box, in pieces (connected), is someone behind
    when the piece is shaped like a person standing on the piece's own bottom row: its height within
    ``tolerance`` of the expected height there, its pixels at least ``min_fill`` of a person's
    (width 1/2.5 of the height) at that size; up to ``max_behind`` of them. An arm, a bag or a stride's
    gap is not: it is too short for a person whose feet would be on its bottom row.

    Only for a blob ``taller`` times a person at its bottom row (someone's head stands out above the
    front person) or wider than the widest person there; None when it is not, when no heights are
    known yet (``mask``'s top-left is (``x``, ``y``) in the frame they were learnt in), or when nothing
    outside the front person is shaped like a person. ``split_stacked`` cuts a person straight behind
    another (their feet hidden); this, people at different depths side by side."""
    import cv2

    box = _tight(mask)
    if box is None:
        return None
    x1, y1, x2, y2 = box
    front = heights.expected(y + y2)
    if front is None or front < 4:
        return None
    if y2 - y1 < taller * front and (x2 - x1) * heights.aspect[0] <= front:
        return None
    feet_rows = max(1, int(round(0.08 * front)))  # the feet: the last rows above the bottom
    feet = np.flatnonzero(mask[max(y1, y2 - feet_rows):y2].any(axis=0))
    top = max(y1, y2 - int(round(front)))
    fx1, fx2 = int(feet[0]), int(feet[-1]) + 1
    rest = mask.copy()
    rest[top:y2, fx1:fx2] = False
    n, labels, stats, _ = cv2.connectedComponentsWithStats(rest.astype(np.uint8), connectivity=8)
    behind = []
    for i in range(1, n):
        bx, by, bw, bh, area = (int(v) for v in stats[i])
        expected = heights.expected(y + by + bh)
        if expected is None or abs(bh - expected) > tolerance * expected:
            continue
        if area < min_fill * expected * expected / 2.5:
            continue
        if fx1 <= bx + bw / 2 < fx2:  # above the front person's feet: their own head and arms
            continue
        behind.append((area, (bx, by, bx + bw, by + bh)))
    if not behind:
        return None
    behind = [b for _, b in sorted(behind, reverse=True)[:max_behind]]
    # The front person's width: the columns of their rows that no one behind has.
    own = mask[top:y2].copy()
    for bx1, by1, bx2, by2 in behind:
        own[max(0, by1 - top):max(0, by2 - top), bx1:bx2] = False
    cols = np.flatnonzero(own.any(axis=0))
    fx1, fx2 = (min(fx1, int(cols[0])), max(fx2, int(cols[-1]) + 1)) if len(cols) else (fx1, fx2)
    return [(fx1, top, fx2, y2)] + behind
