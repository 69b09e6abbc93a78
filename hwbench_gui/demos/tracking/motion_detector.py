"""The motion detector: moving blobs from background subtraction, cut into the people they hold."""

from __future__ import annotations

from collections import deque

import cv2
import numpy as np

from hwbench_gui.demos.tracking.blobs import (
    NARROWEST_PERSON,
    PersonHeights,
    colour_bins,
    split_blob,
    split_by_colour,
    split_by_depth,
    split_stacked,
)
from hwbench_gui.demos.tracking.detection import Detections, nms_numpy
from hwbench_gui.demos.tracking.pieces import person_groups

BACKGROUNDS = ("median", "mog2")
MOG2_BACKGROUND_RATIO = 0.9  # OpenCV's default, which the detector keeps


def _in_blob(part: tuple[int, int, int, int], boxes) -> list[tuple[int, int, int, int]]:
    """``boxes`` found inside ``part`` (in the part's pixels) in the blob's pixels, or ``[part]`` when none were."""
    px1, py1 = part[0], part[1]
    return [(px1 + a, py1 + b, px1 + c, py1 + d) for a, b, c, d in boxes] if boxes else [part]


class MotionDetector:
    """Moving blobs from background subtraction (OpenCV MOG2 by default): a detector that needs no weights.

    Made for a fixed camera on a room, a corridor or a street. The background model learns at a rate set in
    seconds at the source's frame rate (:meth:`set_frame_rate`): a colour that stays ``still_learnt_s`` is
    background (``start_learnt_s`` during the first ``start_s``, so what stood in frame 1 and walked off
    fades fast). ``background="median"``: a per-pixel temporal median of ``samples`` frames instead.
    Shadows (``shadows``) and light changes (``light_compensation``) are not figures; ghosts (where
    something stood before it left: an edge in the background and not in the frame) are dropped
    (``drop_ghosts``). A blob is cut into the people it holds: at the dips of its outline
    (``split_figures``), by colour left and right (``split_colour``), into the person in front and the one
    behind (``split_stacked``, ``split_depth``), using :attr:`heights` (a person's height per image row,
    learnt from blobs shaped like one person). ``keep_boxes`` given to :meth:`detect` (tracks that stopped)
    are kept out of the learning (``keep_still``), so a person who stops is not learnt into the background.
    A blob shorter than ``min_person_share`` of a person standing on its bottom row is a speck, not a
    figure, once those heights are known (0 turns this off). ``join_pieces``: blobs and parts that are
    pieces of one person (a head, legs and an arm, the clothes between them as pale as the wall behind)
    are joined into one box (:func:`~.pieces.person_groups`).

    Score is the fraction of the box covered by foreground; ``conf_threshold`` filters on it. The model
    runs on the frame scaled by ``scale``. Frame 1 yields no detections. Why each default, and what it
    changed on the tuning scenes: docs/demos-tuning.md.
    """

    name = "motion"
    device = "cpu"
    class_names = ["moving"]
    merges_objects = True  # objects that touch come out as one blob (the tracker splits them)

    def __init__(self, var_threshold: float = 25.0, min_area_px: int = 150,
                 conf_threshold: float = 0.25, nms_threshold: float = 0.5, scale: float = 0.5,
                 fps: float = 25.0, still_learnt_s: float = 5.0, start_s: float = 3.0, start_learnt_s: float = 0.84,
                 background: str = "mog2", samples: int = 15,
                 bootstrap_every: int = 3, sample_every: int = 8, motion_lag: int = 8, min_diff: float = 15.0,
                 noise_k: float = 4.0, drop_ghosts: bool = True, shadows: bool = True,
                 shadow_threshold: float = 0.5, light_compensation: bool = True, split_figures: bool = True,
                 keep_still: bool = True, keep_diff: float = 25.0, split_max_dip: float = 0.6,
                 split_min_aspect: float = 1.3, split_stacked: bool = True, stack_ratio: float = 1.35,
                 split_colour: bool = True, colour_distance: float = 0.3, split_depth: bool = True,
                 colour_min_width: float = NARROWEST_PERSON, min_person_share: float = 0.25,
                 join_pieces: bool = True) -> None:
        if background not in BACKGROUNDS:
            raise ValueError(f"background must be one of {', '.join(BACKGROUNDS)}, got {background!r}")
        self.background = background
        self.drop_ghosts = drop_ghosts
        self.shadows, self.shadow_threshold = shadows, shadow_threshold
        self.light_compensation, self.split_figures = light_compensation, split_figures
        self.keep_still, self.keep_diff = keep_still, keep_diff
        self.split_max_dip, self.split_min_aspect = split_max_dip, split_min_aspect
        self.split_stacked, self.stack_ratio = split_stacked, stack_ratio
        self.split_colour, self.colour_distance = split_colour, colour_distance
        self.split_depth = split_depth
        self.colour_min_width = colour_min_width
        self.min_person_share = min_person_share
        self.join_pieces = join_pieces
        self.heights = PersonHeights()  # in the model's pixels (the frame scaled by ``scale``)
        self.var_threshold, self.scale = var_threshold, scale
        self.still_learnt_s = still_learnt_s
        self.start_s, self.start_learnt_s = start_s, start_learnt_s
        self._frames = 0
        self.set_frame_rate(fps)
        self.samples, self.bootstrap_every, self.sample_every = samples, bootstrap_every, sample_every
        self.motion_lag, self.min_diff, self.noise_k = motion_lag, min_diff, noise_k
        self.min_area_px = min_area_px
        self.conf_threshold, self.nms_threshold = conf_threshold, nms_threshold
        # Kernels sized in full-frame pixels: open removes ~3 px specks, close joins gaps of ~7 px.
        # Odd sizes: an even kernel's anchor is off centre and shifts every blob.
        k_open, k_close = max(1, round(1.5 * scale)) * 2 + 1, max(1, round(3 * scale)) * 2 + 1
        self._kernel_open = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k_open, k_open))
        self._kernel_close = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k_close, k_close))
        k_keep = max(1, round(8 * scale)) * 2 + 1  # ~8 px around what changed is kept out of learning
        self._kernel_keep = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k_keep, k_keep))
        self.reset()

    def set_frame_rate(self, fps: float) -> None:
        """Frames per second of the source (its own rate, not the rate frames are processed at):
        :attr:`learning_rate` follows it."""
        if not fps > 0:
            raise ValueError(f"fps must be > 0, got {fps}")
        self.fps = float(fps)

    @property
    def learning_rate(self) -> float:
        """MOG2's per-frame rate that learns a new, steady colour in ``still_learnt_s`` seconds
        (``start_learnt_s`` in the first ``start_s``): the old background component's weight decays
        by (1 - rate) a frame and stops being background when it falls below MOG2's background ratio
        (0.9), after ln 0.9 / ln(1 - rate) frames."""
        learnt_s = self.start_learnt_s if self._frames <= self.start_s * self.fps else self.still_learnt_s
        return 1.0 - MOG2_BACKGROUND_RATIO ** (1.0 / max(1.0, learnt_s * self.fps))

    def reset(self) -> None:
        # MOG2's history only sets its rate when none is given: every apply() here gives learning_rate.
        self._mog = cv2.createBackgroundSubtractorMOG2(varThreshold=self.var_threshold, detectShadows=self.shadows) \
            if self.background == "mog2" else None
        if self._mog is not None:
            self._mog.setBackgroundRatio(MOG2_BACKGROUND_RATIO)
        if self._mog is not None and self.shadows:
            self._mog.setShadowThreshold(self.shadow_threshold)
        self._background_image: np.ndarray | None = None
        self.gain, self.offset = 1.0, 0.0  # this frame's brightness against the background model's (light_compensation)
        self._frames = 0
        self._samples: list[np.ndarray] = []
        self._oldest = 0  # index in _samples replaced next, once there are ``samples`` of them
        self._model: np.ndarray | None = None
        self._recent: deque[np.ndarray] = deque(maxlen=self.motion_lag)
        self.heights.reset()

    def detect(self, frame: np.ndarray, keep_boxes: np.ndarray | None = None) -> Detections:
        """Blobs of this frame. ``keep_boxes`` (xyxy, frame pixels): where tracked objects stand
        still (MOG2 only): MOG2 learns the background image there instead of the frame, and those
        pixels are foreground where the frame differs from that image, so a person who stops is
        not learnt into the background (MOG2 does that within ``still_learnt_s``) while a track
        covers them."""
        if self.scale != 1.0:
            frame = cv2.resize(frame, None, fx=self.scale, fy=self.scale, interpolation=cv2.INTER_AREA)
        self._frames += 1
        if self._mog is not None and self.light_compensation and self._background_image is not None:
            frame = self._compensate(frame, self._background_image)
        kept = self._keep_mask(frame, keep_boxes)
        if kept is not None:
            fed = frame.copy()
            fed[kept] = self._background_image[kept]
            mask = self._mog.apply(fed, learningRate=self.learning_rate)
        else:
            mask = self._mog.apply(frame, learningRate=self.learning_rate) if self._mog is not None \
                else self._foreground(frame)
        shadow = None
        if self.shadows and self._mog is not None:  # MOG2 marks shadow pixels 127: they are background
            shadow = mask == 127
            mask = cv2.threshold(mask, 200, 255, cv2.THRESH_BINARY)[1]
        if kept is not None:
            diff = cv2.absdiff(frame, self._background_image).max(axis=2)
            mask[kept] = np.where(diff[kept] > self.keep_diff, np.uint8(255), np.uint8(0))
        if self._frames == 1:  # no model yet: MOG2 marks the whole first frame as foreground
            if self._mog is None:
                self._learn(frame, None)
            return Detections()
        mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, self._kernel_open)
        mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, self._kernel_close)
        n, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
        if self._mog is None:
            self._learn(frame, (n, labels, stats))
        if self._mog is not None and (self.light_compensation or kept is not None or (self.drop_ghosts and n > 1)):
            self._background_image = self._mog.getBackgroundImage()
        ghost = self._ghosts(frame, labels, np.ones(n, bool), n, self._background_image, self._beside(shadow, n)) \
            if self._mog is not None and self.drop_ghosts and n > 1 else np.zeros(n, bool)
        boxes, scores, blobs = [], [], []
        min_area = self.min_area_px * self.scale * self.scale
        for i, ((x, y, w, h, area), is_ghost) in enumerate(zip(stats[1:n], ghost[1:n]), start=1):
            if area < min_area or is_ghost or self._speck(y + h, h):
                continue
            if self.split_figures:
                blob = labels[y:y + h, x:x + w] == i
                parts = split_blob(blob, self.split_max_dip, self.split_min_aspect, max(3, round(12 * self.scale)))
                if len(parts) == 1:
                    self.heights.add(x, y, x + w, y + h)
                if self.split_colour:
                    parts = [q for part in parts for q in self._by_colour(frame, blob, x, y, part)]
                if self.split_stacked:
                    parts = [q for part in parts for q in self._unstack(blob, x, y, part)]
                if self.split_depth:
                    parts = [q for part in parts for q in self._by_depth(blob, x, y, part)]
            else:
                blob, parts = None, [(0, 0, w, h)]
            for px1, py1, px2, py2 in parts:
                part_area = area if len(parts) == 1 else int(blob[py1:py2, px1:px2].sum())
                fill = part_area / float((px2 - px1) * (py2 - py1))
                if fill < self.conf_threshold or (len(parts) > 1 and part_area < min_area):
                    continue
                if len(parts) > 1 and self.drop_ghosts and self._background_image is not None and \
                        self._part_is_ghost(frame, blob, x, y, (px1, py1, px2, py2)):
                    continue
                boxes.append((x + px1, y + py1, x + px2, y + py2))
                scores.append(fill)
                blobs.append(i)
        if self.join_pieces and len(boxes) > 1:
            boxes, scores, blobs = self._joined(boxes, scores, blobs)
        if not boxes:
            return Detections()
        boxes_a, scores_a = np.asarray(boxes, np.float32) / self.scale, np.asarray(scores, np.float32)
        keep = nms_numpy(boxes_a, scores_a, self.nms_threshold)
        return Detections(boxes_a[keep], scores_a[keep], np.zeros(len(keep), np.int64),
                          np.asarray(blobs, np.int64)[keep] if self.split_figures else None)

    def _joined(self, boxes: list, scores: list, blobs: list) -> tuple[list, list, list]:
        """The pieces of one person joined into one box (:func:`~.pieces.person_groups`), with the best
        score and the blob number of the largest piece."""
        groups = person_groups(boxes, self.heights, blobs)
        if len(groups) == len(boxes):
            return boxes, scores, blobs
        joined = [(min(boxes[i][0] for i in g), min(boxes[i][1] for i in g),
                   max(boxes[i][2] for i in g), max(boxes[i][3] for i in g)) for g in groups]
        return joined, [max(scores[i] for i in g) for g in groups], [blobs[g[0]] for g in groups]

    def _by_colour(self, frame: np.ndarray, blob: np.ndarray, x: int, y: int, part) -> list[tuple[int, int, int, int]]:
        """``part`` of a blob, or the people side by side in it told apart by colour
        (:func:`~.blobs.split_by_colour`)."""
        px1, py1, px2, py2 = part
        if (px2 - px1) < 2 * self.colour_min_width * (py2 - py1):  # narrower than two of the narrowest people
            return [part]
        hsv = cv2.cvtColor(frame[y + py1:y + py2, x + px1:x + px2], cv2.COLOR_BGR2HSV)
        cuts = split_by_colour(blob[py1:py2, px1:px2], colour_bins(hsv), min_width=self.colour_min_width,
                               min_distance=self.colour_distance, min_aspect=self.split_min_aspect)
        return _in_blob(part, cuts)

    def _unstack(self, blob: np.ndarray, x: int, y: int, part) -> list[tuple[int, int, int, int]]:
        """``part`` of a blob, or the two people stacked in it (:func:`~.blobs.split_stacked`)."""
        px1, py1, px2, py2 = part
        two = split_stacked(blob[py1:py2, px1:px2], x + px1, y + py1, self.heights, self.stack_ratio)
        return _in_blob(part, two)

    def _by_depth(self, blob: np.ndarray, x: int, y: int, part) -> list[tuple[int, int, int, int]]:
        """``part`` of a blob, or the person in front and those behind them in it (:func:`~.blobs.split_by_depth`)."""
        px1, py1, px2, py2 = part
        people = split_by_depth(blob[py1:py2, px1:px2], x + px1, y + py1, self.heights)
        return _in_blob(part, people)

    def _speck(self, foot_y: int, height: int) -> bool:
        """Whether a blob is far too short to be a person standing on its bottom row (a glint on the
        floor, a flicker in a window), once :attr:`heights` knows how tall people there look."""
        if self.min_person_share <= 0:
            return False
        expected = self.heights.expected(foot_y)
        return expected is not None and height < self.min_person_share * expected

    @property
    def keeps_still_objects(self) -> bool:
        """Whether :meth:`detect` uses its ``keep_boxes`` (the pipeline passes them only then)."""
        return self.keep_still and self._mog is not None

    def _keep_mask(self, frame: np.ndarray, keep_boxes: np.ndarray | None) -> np.ndarray | None:
        """Bool mask (model pixels) of ``keep_boxes``, or None when there is nothing to keep."""
        if keep_boxes is None or len(keep_boxes) == 0 or self._mog is None or self._background_image is None:
            return None
        kept = np.zeros(frame.shape[:2], bool)
        h, w = kept.shape
        for x1, y1, x2, y2 in np.asarray(keep_boxes, np.float64).reshape(-1, 4) * self.scale:
            kept[max(0, int(y1)):min(h, int(np.ceil(y2))), max(0, int(x1)):min(w, int(np.ceil(x2)))] = True
        return kept if kept.any() else None

    def _compensate(self, frame: np.ndarray, background: np.ndarray) -> np.ndarray:
        """``frame`` brought to the background model's brightness: ``gain`` and ``offset`` of the line
        frame = gain · background + offset through a grid of pixels, fitted to those within three median
        deviations of the line through the median ratio (robust to the figures and shadows on less
        than half of them). A
        light turned up scales every pixel; a camera's automatic exposure, when someone dark walks
        in, lifts dark and bright ones alike (a dark window by 30 %, a white wall by 8 %): one ratio
        for both left the window a figure for seconds."""
        f = frame[::4, ::4].astype(np.float32).sum(axis=2)
        b = background[::4, ::4].astype(np.float32).sum(axis=2)
        ok = (b > 60) & (b < 735) & (f < 735)  # not clipped at white, where the line bends
        if ok.sum() < 100:
            return frame
        f, b = f[ok], b[ok]
        ratio = float(np.median(f / b))
        # The pixels near the line through the median ratio, within three median deviations: the
        # figures and shadows are off it; the background's levels, far enough apart, fix the line.
        residual = f - ratio * b
        residual -= np.median(residual)
        near = np.abs(residual) <= 3.0 * float(np.median(np.abs(residual))) + 3.0
        gain, offset = ratio, 0.0
        if near.sum() >= 100 and np.ptp(b[near]) > 60:
            gain, offset = np.polyfit(b[near], f[near], 1)
        self.gain, self.offset = float(gain), float(offset) / 3.0  # offset per channel
        if not 0.5 < self.gain < 2.0:  # no line through the model: one ratio
            self.gain, self.offset = ratio, 0.0
        if abs(self.gain - 1.0) < 0.01 and abs(self.offset) < 1.0:
            return frame
        return cv2.convertScaleAbs(frame, alpha=1.0 / self.gain, beta=-self.offset / self.gain)

    def _difference(self, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, float]:
        """Largest channel difference per pixel, and the threshold above which it is a change."""
        diff = cv2.absdiff(a, b)
        diff = diff.max(axis=2) if diff.ndim == 3 else diff
        return diff, max(self.min_diff, self.noise_k * float(np.median(diff)))

    def _foreground(self, frame: np.ndarray) -> np.ndarray:
        if self._model is None:
            return np.zeros(frame.shape[:2], np.uint8)
        diff, threshold = self._difference(frame, self._model)
        return np.where(diff > threshold, np.uint8(255), np.uint8(0))

    def _learn(self, frame: np.ndarray, components) -> None:
        """Take a background sample when one is due; recompute the median."""
        self._recent.append(frame)
        bootstrapping = len(self._samples) < self.samples
        every = self.bootstrap_every if bootstrapping else self.sample_every
        if (self._frames - 1) % every:
            return
        sample = frame
        if components is not None and components[0] > 1:
            n, labels, stats = components
            moving, changed = self._moving_blobs(frame, labels, stats[:, cv2.CC_STAT_AREA], n)
            # Only where it changes: the uncovered trail behind a slow object, still joined to it, is
            # background and must be learnt, or the blob grows a tail that never fades.
            keep_out = moving[labels] & (cv2.dilate(changed.astype(np.uint8), self._kernel_keep) > 0)
            # The still parts of the foreground, each tested for being a ghost (in the bootstrap too).
            n_still, still_labels = cv2.connectedComponents(((labels > 0) & ~keep_out).astype(np.uint8), connectivity=8)
            ghosts = self._ghosts(frame, still_labels, np.ones(n_still, bool), n_still)
            if ghosts.any():  # what left is background now: into every sample at once
                gone = ghosts[still_labels]
                for s in self._samples:
                    s[gone] = frame[gone]
            if moving.any() and not bootstrapping:
                sample = frame.copy()
                sample[keep_out] = self._model[keep_out]
        if bootstrapping:
            self._samples.append(sample.copy())
        else:
            self._samples[self._oldest] = sample.copy()
            self._oldest = (self._oldest + 1) % self.samples
        stack = np.stack(self._samples)
        self._model = np.partition(stack, len(stack) // 2, axis=0)[len(stack) // 2]

    def _beside(self, shadow: np.ndarray | None, n: int) -> np.ndarray | None:
        """Pixels next to what MOG2 took for shadow (None when there is none): where a blob meets a
        shadow its outline is no border with the background (a grey shirt taken for the wall's shadow
        between a person's head and legs)."""
        if shadow is None or n < 2 or not shadow.any():
            return None
        return cv2.dilate(shadow.astype(np.uint8), None, iterations=2) > 0

    def _ghosts(self, frame: np.ndarray, labels: np.ndarray, static: np.ndarray, n: int,
                model: np.ndarray | None = None, beside: np.ndarray | None = None) -> np.ndarray:
        """(n,) bool: which static blobs are ghosts, the place something stood before it left.

        A ghost's outline is an edge in the background model (the object that was there) and not
        in the frame; a stopped object's outline is an edge in the frame, not in the model. Only
        the outline where a blob meets the background counts, not where it meets ``beside``: the
        edge between a person's legs and their shirt taken for shadow runs along the wall's
        baseboard, an edge of the background that the legs' own edges do not outweigh."""
        static = static.copy()
        static[0] = False
        if not static.any():
            return static
        blobs = static[labels].astype(np.uint8)
        outline = (blobs > 0) & (cv2.erode(blobs, None) == 0)
        if beside is not None:
            outline &= ~beside
        def edges(img):
            gray = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY) if img.ndim == 3 else img
            return cv2.magnitude(cv2.Sobel(gray, cv2.CV_32F, 1, 0), cv2.Sobel(gray, cv2.CV_32F, 0, 1))
        idx = labels[outline]
        in_frame = np.bincount(idx, weights=edges(frame)[outline], minlength=n)[:n]
        in_model = np.bincount(idx, weights=edges(self._model if model is None else model)[outline], minlength=n)[:n]
        return static & (in_model > in_frame)

    def _part_is_ghost(self, frame: np.ndarray, blob: np.ndarray, x: int, y: int, part) -> bool:
        """The ghost test (:meth:`_ghosts`) for one part of a cut blob: a figure walking out of the
        place it stood in frame 1 is one blob with its ghost until they come apart; cut apart, the
        ghost would start a track of its own."""
        px1, py1, px2, py2 = part
        sub = np.ascontiguousarray(blob[py1:py2, px1:px2]).astype(np.uint8)
        outline = (sub > 0) & (cv2.erode(sub, None) == 0)
        if not outline.any():
            return False
        def edges(img):
            gray = cv2.cvtColor(np.ascontiguousarray(img[y + py1:y + py2, x + px1:x + px2]), cv2.COLOR_BGR2GRAY)
            return cv2.magnitude(cv2.Sobel(gray, cv2.CV_32F, 1, 0), cv2.Sobel(gray, cv2.CV_32F, 0, 1))[outline].sum()
        return bool(edges(self._background_image) > edges(frame))

    def _moving_blobs(self, frame: np.ndarray, labels: np.ndarray, areas: np.ndarray, n: int):
        """(n,) bool per connected component (0 = background, never moving): did it change against
        the oldest recent frame on more than a tenth of its pixels? And the changed pixels."""
        diff, threshold = self._difference(frame, self._recent[0])
        changed = diff > threshold
        moving = np.bincount(labels.ravel(), weights=changed.ravel(), minlength=n)[:n] > 0.1 * np.maximum(areas[:n], 1)
        moving[0] = False
        return moving, changed

