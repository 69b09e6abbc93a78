"""Generated video sequences with exact ground truth, for tests and the tracking-quality script.

A static textured background (so background subtraction has something to learn), figures shaped
roughly like people (head, torso, legs in their own colours) that walk in from the edges at
constant speed, cross each other's paths and pass behind static pillars, plus per-frame sensor
noise. Ground truth is the box around each figure's *visible* pixels, taken from an id buffer
drawn with the frame; a figure less than ``min_visible`` visible (behind a pillar, behind another
figure, leaving the frame) is not in the ground truth for that frame.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import cv2
import numpy as np


@dataclass
class FigureSpec:
    object_id: int
    width: int
    height: int
    start_frame: int  # 1-based frame where the figure's path starts
    x0: float  # top-left at start_frame
    y0: float
    vx: float  # pixels per frame
    vy: float
    colors: tuple[tuple[int, int, int], tuple[int, int, int], tuple[int, int, int]]  # head, torso, legs (BGR)
    stand_frames: int = 0  # frames it stands at (x0, y0) from start_frame on before it walks

    def top_left(self, frame: int) -> tuple[float, float]:
        t = max(0, frame - self.start_frame - self.stand_frames)
        return self.x0 + self.vx * t, self.y0 + self.vy * t


@dataclass
class SequenceSpec:
    width: int = 640
    height: int = 480
    n_frames: int = 300
    figures: list[FigureSpec] = field(default_factory=list)
    pillars: list[tuple[int, int, int, int]] = field(default_factory=list)  # xyxy, drawn over figures
    noise_sigma: float = 3.0
    seed: int = 0
    fps: float = 25.0
    min_visible: float = 0.25


@dataclass
class GtBox:
    object_id: int
    box: tuple[float, float, float, float]  # xyxy of the visible pixels
    visibility: float


_PALETTE = [(40, 40, 220), (220, 60, 40), (40, 200, 60), (0, 200, 230), (200, 40, 200), (230, 200, 40),
            (30, 120, 250), (150, 90, 30), (250, 250, 250), (90, 30, 150), (20, 90, 20), (120, 200, 250)]


def _figure_colors(rng: np.random.Generator, k: int):
    torso = _PALETTE[k % len(_PALETTE)]
    legs = _PALETTE[(k * 5 + 3) % len(_PALETTE)]
    head = tuple(int(v) for v in rng.integers(120, 220, 3))
    return head, torso, legs


def random_spec(n_frames: int = 300, width: int = 640, height: int = 480, n_objects: int = 8, seed: int = 0,
                pillars: int = 1) -> SequenceSpec:
    """Figures walking in from the edges at staggered times, like people crossing a camera's view.

    Three in four walk left/right, each in its own horizontal lane (neighbouring lanes overlap, and
    directions alternate, so figures pass each other); the rest walk up/down and cross the lanes.
    """
    rng = np.random.default_rng(seed)
    n_vertical = n_objects // 4
    n_horizontal = n_objects - n_vertical
    lanes_y = np.linspace(0.12 * height, 0.88 * height, max(2, n_horizontal))
    lanes_x = np.linspace(0.2 * width, 0.8 * width, max(2, n_vertical))
    kinds = ["h"] * n_horizontal + ["v"] * n_vertical
    rng.shuffle(kinds)
    lane_order = rng.permutation(max(2, n_horizontal))
    figures, h_count, v_count = [], 0, 0
    for k, kind in enumerate(kinds):
        w = int(rng.integers(26, 42))
        h = int(w * rng.uniform(1.9, 2.4))
        speed = float(rng.uniform(2.5, 4.5))
        start = int(1 + k * max(1, (n_frames * 0.6) // max(1, n_objects)) + rng.integers(0, 10))
        drift = float(rng.uniform(-0.2, 0.2))
        if kind == "h":
            lane = int(lane_order[h_count % len(lane_order)])
            y0 = float(np.clip(lanes_y[lane] - h / 2, 0, height - h))
            x0, vx = (-w + 1.0, speed) if lane % 2 == 0 else (width - 1.0, -speed)
            vy, h_count = drift, h_count + 1
        else:
            x0 = float(lanes_x[v_count % len(lanes_x)] - w / 2)
            y0, vy = (-h + 1.0, speed) if v_count % 2 == 0 else (height - 1.0, -speed)
            vx, v_count = drift, v_count + 1
        figures.append(FigureSpec(k + 1, w, h, start, x0, y0, vx, vy, _figure_colors(rng, k)))
    pillar_list = []
    for p in range(pillars):
        cx = int(width * (p + 1) / (pillars + 1)) + int(rng.integers(-width // 10, width // 10))
        pillar_list.append((cx - 24, int(height * 0.2), cx + 24, int(height * 0.8)))
    return SequenceSpec(width, height, n_frames, figures, pillar_list, seed=seed)


def crossing_spec(n_frames: int = 60, width: int = 320, height: int = 240, seed: int = 0) -> SequenceSpec:
    """Two figures walking towards each other on nearly the same line: they overlap mid-way."""
    rng = np.random.default_rng(seed)
    w, h = 24, 52
    y = height / 2 - h / 2
    speed = (width + w) / (n_frames - 10)
    a = FigureSpec(1, w, h, 1, -w + 1.0, y - 6, speed, 0.0, _figure_colors(rng, 0))
    b = FigureSpec(2, w, h, 1, width - 1.0, y + 6, -speed, 0.0, _figure_colors(rng, 1))
    return SequenceSpec(width, height, n_frames, [a, b], [], seed=seed)


def _figure_size(rng: np.random.Generator) -> tuple[int, int]:
    w = int(rng.integers(26, 42))
    return w, int(w * rng.uniform(1.9, 2.4))


def converging_spec(n_frames: int = 200, width: int = 640, height: int = 480, n_objects: int = 5, seed: int = 0,
                    standing: int = 0, pillars: int = 0) -> SequenceSpec:
    """Figures in view from frame 1 that walk towards one meeting area and out the other side.

    Each figure reaches a point near the meeting point (within a third of its width) at its own
    time around 45 % of the sequence (± 8 frames), so three to all of them overlap at once and a
    background subtractor sees one merged blob for a while. The first ``standing`` figures stand
    still for 25-60 frames at the start (what MOG2 learns into its background), then walk.
    """
    rng = np.random.default_rng(seed)
    meet = np.array([width / 2, height / 2]) + rng.uniform(-0.1, 0.1, 2) * (width, height)
    angles = rng.permutation(np.linspace(0, 2 * np.pi, n_objects, endpoint=False)) + rng.uniform(-0.3, 0.3, n_objects)
    figures = []
    for k in range(n_objects):
        w, h = _figure_size(rng)
        stand = int(rng.integers(25, 61)) if k < standing else 0
        meet_frame = int(0.45 * n_frames + rng.integers(-8, 9))
        target = meet + rng.uniform(-w / 3, w / 3, 2)
        # Start on a ray from the meeting point, as far out as the frame allows (at most 220 px).
        direction = np.array([np.cos(angles[k]), np.sin(angles[k])])
        room = min(((width - w / 2 - 2 - target[0]) / direction[0]) if direction[0] > 0 else
                   ((target[0] - w / 2 - 2) / -direction[0]) if direction[0] < 0 else np.inf,
                   ((height - h / 2 - 2 - target[1]) / direction[1]) if direction[1] > 0 else
                   ((target[1] - h / 2 - 2) / -direction[1]) if direction[1] < 0 else np.inf)
        start = target + direction * min(220.0, room) * rng.uniform(0.75, 1.0)
        walk = max(1, meet_frame - 1 - stand)
        vx, vy = (target - start) / walk
        figures.append(FigureSpec(k + 1, w, h, 1, float(start[0] - w / 2), float(start[1] - h / 2), float(vx),
                                  float(vy), _figure_colors(rng, k), stand))
    return SequenceSpec(width, height, n_frames, figures, _pillars(rng, width, height, pillars), seed=seed)


def lanes_spec(n_frames: int = 200, width: int = 640, height: int = 480, n_objects: int = 6, seed: int = 0,
               pillars: int = 1) -> SequenceSpec:
    """Every figure in view from frame 1, walking left or right in lanes that overlap their
    neighbours (so figures pass in front of each other), two of them up or down across the lanes."""
    rng = np.random.default_rng(seed)
    n_vertical = min(2, n_objects // 3)
    n_horizontal = n_objects - n_vertical
    lanes_y = np.linspace(0.3 * height, 0.7 * height, max(2, n_horizontal))
    figures = []
    for k in range(n_objects):
        w, h = _figure_size(rng)
        speed = float(rng.uniform(1.5, 3.5)) * (1 if rng.random() < 0.5 else -1)
        drift = float(rng.uniform(-0.2, 0.2))
        if k < n_horizontal:
            x0 = float(rng.uniform(0.05, 0.95) * (width - w))
            y0 = float(np.clip(lanes_y[k] - h / 2 + rng.uniform(-8, 8), 0, height - h))
            vx, vy = speed, drift
        else:
            x0 = float(rng.uniform(0.3, 0.7) * (width - w))
            y0 = float(rng.uniform(0.05, 0.3) * (height - h)) if speed > 0 else float(rng.uniform(0.7, 0.95) * (height - h))
            vx, vy = drift, speed
        figures.append(FigureSpec(k + 1, w, h, 1, x0, y0, vx, vy, _figure_colors(rng, k)))
    return SequenceSpec(width, height, n_frames, figures, _pillars(rng, width, height, pillars), seed=seed)


def _pillars(rng: np.random.Generator, width: int, height: int, count: int) -> list[tuple[int, int, int, int]]:
    out = []
    for p in range(count):
        cx = int(width * (p + 1) / (count + 1)) + int(rng.integers(-width // 10, width // 10))
        out.append((cx - 24, int(height * 0.2), cx + 24, int(height * 0.8)))
    return out


#: Generated settings where figures are in view from frame 1 and cross and occlude each other:
#: name → (generator, keyword arguments). ``scripts/tracking_quality.py --suite occlusion`` runs them.
OCCLUSION_SETTINGS = {
    "converge5": (converging_spec, {"n_objects": 5}),
    "converge5-standing": (converging_spec, {"n_objects": 5, "standing": 2}),
    "converge7-pillar": (converging_spec, {"n_objects": 7, "pillars": 1}),
    "lanes6": (lanes_spec, {"n_objects": 6}),
}


def occlusion_spec(setting: str, seed: int, n_frames: int = 200) -> SequenceSpec:
    """One sequence of an :data:`OCCLUSION_SETTINGS` setting."""
    try:
        make, options = OCCLUSION_SETTINGS[setting]
    except KeyError:
        raise ValueError(f"unknown setting {setting!r}; choose from {', '.join(OCCLUSION_SETTINGS)}") from None
    return make(n_frames=n_frames, seed=seed, **options)


def _background(spec: SequenceSpec) -> np.ndarray:
    rng = np.random.default_rng(spec.seed + 1000)
    yy, xx = np.mgrid[0:spec.height, 0:spec.width].astype(np.float32)
    base = 90 + 40 * np.sin(xx / 97.0) * np.cos(yy / 71.0)
    img = np.stack([base + 10, base, base - 10], -1)
    blotches = cv2.GaussianBlur(rng.normal(0, 25, (spec.height, spec.width, 3)).astype(np.float32), (0, 0), 6)
    img = img + blotches * 3
    for _ in range(12):  # a few static shapes, like furniture
        x, y = int(rng.integers(0, spec.width)), int(rng.integers(0, spec.height))
        cv2.rectangle(img, (x, y), (x + int(rng.integers(20, 80)), y + int(rng.integers(10, 40))),
                      tuple(float(v) for v in rng.integers(40, 200, 3)), -1)
    return np.clip(img, 0, 255).astype(np.uint8)


def _draw_figure(frame: np.ndarray, ids: np.ndarray, fig: FigureSpec, index: int, x: float, y: float) -> None:
    """Head, torso and legs; ``ids`` gets ``index`` where the figure is drawn."""
    w, h = fig.width, fig.height
    parts = [((x + w * 0.3, y), (x + w * 0.7, y + h * 0.2), fig.colors[0]),
             ((x, y + h * 0.2), (x + w, y + h * 0.6), fig.colors[1]),
             ((x + w * 0.1, y + h * 0.6), (x + w * 0.9, y + h), fig.colors[2])]
    H, W = ids.shape
    for (px1, py1), (px2, py2), color in parts:
        x1, y1 = int(round(max(0, px1))), int(round(max(0, py1)))
        x2, y2 = int(round(min(W, px2))), int(round(min(H, py2)))
        if x2 <= x1 or y2 <= y1:
            continue
        frame[y1:y2, x1:x2] = color
        ids[y1:y2, x1:x2] = index
    # A darker stripe across the torso: texture for the HOG part of the appearance feature.
    sy1, sy2 = int(round(y + h * 0.35)), int(round(y + h * 0.42))
    sx1, sx2 = int(round(max(0, x))), int(round(min(W, x + w)))
    if sx2 > sx1 and 0 <= sy1 < sy2 <= H:
        frame[sy1:sy2, sx1:sx2] = (np.asarray(fig.colors[1]) * 0.5).astype(np.uint8)


def render(spec: SequenceSpec) -> Iterator[tuple[int, np.ndarray, list[GtBox]]]:
    """Yield (frame number from 1, BGR uint8 frame, ground truth) for every frame."""
    background = _background(spec)
    rng = np.random.default_rng(spec.seed + 7)
    noise_bank = [rng.normal(0, spec.noise_sigma, background.shape).astype(np.int16) for _ in range(8)]
    # Farther figures (smaller index in this order) are drawn first.
    order = sorted(range(len(spec.figures)), key=lambda i: (spec.figures[i].height, i))
    for n in range(1, spec.n_frames + 1):
        frame = background.copy()
        ids = np.full((spec.height, spec.width), -1, np.int16)
        placed = {}
        for i in order:
            fig = spec.figures[i]
            if n < fig.start_frame:
                continue
            x, y = fig.top_left(n)
            if x >= spec.width or y >= spec.height or x + fig.width <= 0 or y + fig.height <= 0:
                continue
            _draw_figure(frame, ids, fig, i, x, y)
            placed[i] = (x, y)
        for x1, y1, x2, y2 in spec.pillars:
            frame[y1:y2, x1:x2] = (70, 75, 80)
            frame[y1:y2, x1 + 4:x1 + 8] = (110, 115, 120)
            ids[y1:y2, x1:x2] = -1
        gt = []
        for i, (x, y) in placed.items():
            fig = spec.figures[i]
            full_area = fig.width * fig.height * (0.2 * 0.4 + 0.4 + 0.4 * 0.8)
            x1, y1 = max(0, int(np.floor(x))), max(0, int(np.floor(y)))
            x2, y2 = min(spec.width, int(np.ceil(x + fig.width))), min(spec.height, int(np.ceil(y + fig.height)))
            region = ids[y1:y2, x1:x2] == i
            visible = int(region.sum())
            if visible == 0 or visible < spec.min_visible * full_area:
                continue
            ys, xs = np.nonzero(region)
            gt.append(GtBox(fig.object_id, (float(x1 + xs.min()), float(y1 + ys.min()), float(x1 + xs.max() + 1),
                                            float(y1 + ys.max() + 1)), min(1.0, visible / full_area)))
        noisy = np.clip(frame.astype(np.int16) + noise_bank[n % len(noise_bank)], 0, 255).astype(np.uint8)
        yield n, noisy, gt


def write_sequence(spec: SequenceSpec, video_path: str | os.PathLike,
                   gt_path: str | os.PathLike | None = None) -> Path:
    """Render ``spec`` to an MP4 (mp4v) and, if asked, its ground truth in MOTChallenge gt format."""
    from hwbench_gui.demos.tracking.io import write_gt
    from hwbench_gui.demos.video import Mp4Writer

    video_path = Path(video_path)
    rows = []
    with Mp4Writer(video_path, spec.fps, (spec.width, spec.height)) as writer:
        for n, frame, gt in render(spec):
            writer.write(frame)
            rows += [(n, g) for g in gt]
    if gt_path is not None:
        write_gt(gt_path, rows)
    return video_path
