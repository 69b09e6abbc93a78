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
from dataclasses import dataclass, field, replace
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
    speed_drift: float = 0.0  # relative change of its speed per frame walked (0.002: 20 % faster after 100)
    pause_after: int = 0  # frames walked before it stops for ``pause_frames`` (0: it never stops)
    pause_frames: int = 0
    # Per-frame placement from frame 1, overriding the straight walk above: (n_frames, 5) rows of
    # x, y (top left), width, height and pixels walked so far; NaN where the figure is not in the
    # scene. A walk over a ground plane seen in perspective (:mod:`.scenes`) is drawn this way.
    path: np.ndarray | None = None

    def place(self, frame: int) -> tuple[float, float, int, int, float] | None:
        """(x, y, width, height, pixels walked) of the figure in ``frame``, or None before it starts."""
        if self.path is not None:
            if frame > len(self.path) or np.isnan(self.path[frame - 1, 0]):
                return None
            x, y, w, h, walked = self.path[frame - 1]
            return float(x), float(y), int(round(w)), int(round(h)), float(walked)
        if frame < self.start_frame:
            return None
        x, y = self.top_left(frame)
        x_start, y_start = self.top_left(self.start_frame)
        return x, y, self.width, self.height, float(np.hypot(x - x_start, y - y_start))

    def top_left(self, frame: int) -> tuple[float, float]:
        t = max(0, frame - self.start_frame - self.stand_frames)
        if self.pause_frames and t > self.pause_after:
            t = max(self.pause_after, t - self.pause_frames)
        s = t + self.speed_drift * t * t / 2  # distance in frames at the starting speed
        return self.x0 + self.vx * s, self.y0 + self.vy * s


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
    # A soft shadow sweeping across the floor: centre (x, y) at frame 1, velocity (px/frame), radii
    # (px) and depth (0.35: pixels under its core keep 65 % of their light). None: no shadow.
    shadow: tuple[float, float, float, float, float, float, float] | None = None
    light_drift: float = 0.0  # amplitude of a slow sinusoidal change of the whole scene's brightness
    light_period: float = 200.0  # frames per period of that change
    light_step: tuple[int, float] | None = None  # (frame, gain): the light changes to ``gain`` over 10 frames
    # "blocks": head, torso and legs as rectangles (what the tracking settings were tuned on); "people":
    # silhouettes with a round head, arms and two legs that swing as they walk, for a people detector (HOG).
    figure_shape: str = "blocks"
    # A camera that shakes: the whole image moves by up to this many pixels (whole pixels, a slow
    # sway plus jitter from frame to frame); the ground truth moves with it. 0: a fixed camera.
    shake_px: float = 0.0
    jpeg_quality: int | None = None  # each frame goes through JPEG at this quality (compression artefacts)


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
            y0 = (float(rng.uniform(0.05, 0.3) * (height - h)) if speed > 0
                  else float(rng.uniform(0.7, 0.95) * (height - h)))
            vx, vy = drift, speed
        figures.append(FigureSpec(k + 1, w, h, 1, x0, y0, vx, vy, _figure_colors(rng, k)))
    return SequenceSpec(width, height, n_frames, figures, _pillars(rng, width, height, pillars), seed=seed)


def crowd_spec(n_frames: int = 240, width: int = 640, height: int = 480, n_objects: int = 7, seed: int = 0,
               groups: tuple[int, ...] = (3, 2), standing: int = 1, shadow: bool = True, light_drift: float = 0.12,
               light_step: bool = False, pillars: int = 0) -> SequenceSpec:
    """People coming and going: figures enter at every border during the sequence, cross the middle
    and leave at the far border, walking alone or side by side in ``groups`` (sizes; the rest walk
    alone), so groups cross groups. Each walker's speed drifts by up to ±25 % over its walk; the
    first ``standing`` lone walkers stop for 40 frames in view. ``shadow``: a soft shadow sweeps
    across the floor (figures in it are darkened too); ``light_drift``: the scene's brightness
    swings by that fraction; ``light_step``: the light dims by 20 % mid-sequence; ``pillars``:
    static occluders. Units reach the middle in two waves (about 40 % and 70 % of the sequence),
    so crossings happen several at a time.
    """
    rng = np.random.default_rng(seed)
    sizes = list(groups) + [1] * max(0, n_objects - sum(groups))
    rng.shuffle(sizes)
    figures: list[FigureSpec] = []
    centre = np.array([width / 2, height / 2])
    lone = 0
    first_border = int(rng.integers(0, 4))
    for u, size in enumerate(sizes):
        border = (first_border + u) % 4  # left, top, right, bottom in turn: every border sees entries
        dims = [_figure_size(rng) for _ in range(size)]
        w_max, h_max = max(d[0] for d in dims), max(d[1] for d in dims)
        through = centre + rng.uniform(-0.12, 0.12, 2) * (width, height)
        along = 0.5 + rng.uniform(-0.3, 0.3)
        if border == 0:
            entry = np.array([-w_max - 4.0, along * height])
        elif border == 1:
            entry = np.array([along * width, -h_max - 4.0])
        elif border == 2:
            entry = np.array([width + 4.0, along * height])
        else:
            entry = np.array([along * width, height + 4.0])
        direction = (through - entry) / np.linalg.norm(through - entry)
        speed = float(rng.uniform(2.6, 4.0))
        drift = float(rng.uniform(-0.0025, 0.0025))
        wave = 0.4 if u % 2 == 0 else 0.7
        meet = wave * n_frames + rng.integers(-10, 11)
        # frames of walking (at the drifting speed) from the entry point to ``through``
        dist = float(np.linalg.norm(through - entry)) / speed
        walk = dist if abs(drift) < 1e-9 else (np.sqrt(1 + 2 * drift * dist) - 1) / drift
        start = int(max(1, round(meet - walk)))
        normal = np.array([-direction[1], direction[0]])
        pause_after = pause_frames = 0
        if size == 1 and lone < standing:
            lone += 1
            pause_after, pause_frames = int(0.6 * walk), 40
        # Side by side: across the walking direction, gaps of -4..6 px (touching or nearly), the
        # group centred on the unit's path.
        across = [abs(normal[0]) * w + abs(normal[1]) * h for w, h in dims]
        gaps = rng.uniform(-4, 6, size)
        offsets = np.cumsum([0.0] + [(a + b) / 2 + g for a, b, g in zip(across, across[1:], gaps)])
        offsets -= offsets.mean()
        centres = [entry + normal * offsets[k] + direction * rng.uniform(-6, 6) for k in range(size)]
        # Back along the path until every member starts wholly outside the frame: each one enters.
        back = 0.0
        for c, (w, h) in zip(centres, dims):
            inside = (c[0] + w / 2 + 1, c[1] + h / 2 + 1, width + 1 - (c[0] - w / 2),
                      height + 1 - (c[1] - h / 2))[border]
            back = max(back, inside / max(1e-6, abs(direction[border % 2])))
        centres = [c - direction * back for c in centres]
        start = int(max(1, start - round(back / speed)))
        for k, (w, h) in enumerate(dims):
            centre_k = centres[k]
            vx, vy = direction * speed
            figures.append(FigureSpec(len(figures) + 1, w, h, start, float(centre_k[0] - w / 2),
                                      float(centre_k[1] - h / 2), float(vx), float(vy),
                                      _figure_colors(rng, len(figures)), speed_drift=drift,
                                      pause_after=pause_after, pause_frames=pause_frames))
    shadow_spec = None
    if shadow:
        sy = float(rng.uniform(0.3, 0.7) * height)
        left_to_right = rng.random() < 0.5
        speed = (width + 360) / n_frames
        shadow_spec = (-180.0 if left_to_right else width + 180.0, sy, speed if left_to_right else -speed,
                       float(rng.uniform(-0.2, 0.2)), float(rng.uniform(110, 160)), float(rng.uniform(90, 140)),
                       float(rng.uniform(0.3, 0.4)))
    return SequenceSpec(width, height, n_frames, figures, _pillars(rng, width, height, pillars), seed=seed,
                        shadow=shadow_spec, light_drift=light_drift,
                        light_step=(n_frames // 2, 0.8) if light_step else None)


def small_people_spec(n_frames: int = 40, width: int = 768, height: int = 576, n_objects: int = 10, seed: int = 0,
                      heights: tuple[int, int] = (50, 120), standing: int = 2) -> SequenceSpec:
    """People 50-120 px tall (``heights``) seen from afar, drawn as silhouettes (``figure_shape="people"``):
    each walks left or right at its own height in the frame, slower the smaller it is (farther away),
    the first ``standing`` stand still; all are in view from frame 1, and they may overlap."""
    rng = np.random.default_rng(seed)
    figures = []
    for k in range(n_objects):
        h = int(rng.integers(heights[0], heights[1] + 1))
        w = int(round(h * rng.uniform(0.38, 0.46)))
        x0 = float(rng.uniform(0.02, 0.98) * (width - w))
        y0 = float(rng.uniform(0.02, 0.98) * (height - h))
        speed = 0.0 if k < standing else float(rng.uniform(0.02, 0.035) * h) * (1 if rng.random() < 0.5 else -1)
        figures.append(FigureSpec(k + 1, w, h, 1, x0, y0, speed, 0.0, _figure_colors(rng, k)))
    return SequenceSpec(width, height, n_frames, figures, [], seed=seed, figure_shape="people")


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


#: Generated settings where people come and go (:func:`crowd_spec`): entries and exits at every
#: border, groups of 2-3 side by side crossing each other, a figure that stops and walks on, drifting
#: speeds, sensor noise, and a moving shadow, a light change or a pillar. ``--suite crowd`` runs them.
CROWD_SETTINGS = {
    "borders7-shadow": (crowd_spec, {"n_objects": 7}),
    "borders7": (crowd_spec, {"n_objects": 7, "shadow": False}),
    "groups7-light": (crowd_spec, {"n_objects": 7, "groups": (3, 3), "shadow": False, "light_step": True}),
    "groups6-pillar": (crowd_spec, {"n_objects": 6, "groups": (2, 2), "shadow": False, "pillars": 1}),
}

SUITES = {"occlusion": OCCLUSION_SETTINGS, "crowd": CROWD_SETTINGS}


def occlusion_spec(setting: str, seed: int, n_frames: int = 200) -> SequenceSpec:
    """One sequence of a setting of :data:`OCCLUSION_SETTINGS` or :data:`CROWD_SETTINGS`."""
    settings = {**OCCLUSION_SETTINGS, **CROWD_SETTINGS}
    try:
        make, options = settings[setting]
    except KeyError:
        raise ValueError(f"unknown setting {setting!r}; choose from {', '.join(settings)}") from None
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


def _person_parts(fig: FigureSpec, x: float, y: float, walked_px: float) -> tuple[np.ndarray, int, int]:
    """A walking person's silhouette as a label mask around (x, y): 1 head, 2 torso and arms, 3 legs;
    and the mask's top-left pixel. Legs and arms swing once per 0.7 of its height walked."""
    w, h = fig.width, fig.height
    ox, oy = int(np.floor(x)), int(np.floor(y))
    mask = np.zeros((h + 2, w + 2), np.uint8)
    cx, top = x - ox + w / 2, y - oy
    swing = float(np.sin(np.pi * walked_px / (0.35 * h)))
    shoulder, hip, arm_w, leg_w = 0.5 * w, 0.36 * w, 0.11 * w, 0.16 * w
    y_sh, y_hip, y_hand, y_foot = top + 0.15 * h, top + 0.52 * h, top + 0.5 * h, top + h

    def quad(x_top, half_top, x_bottom, half_bottom, y1, y2):
        return np.array([[x_top - half_top, y1], [x_top + half_top, y1], [x_bottom + half_bottom, y2],
                         [x_bottom - half_bottom, y2]])

    polys = [(2, quad(cx, shoulder / 2, cx, hip / 2, y_sh, y_hip))]
    for side in (-1, 1):
        hip_x = cx + side * hip / 4
        polys.append((3, quad(hip_x, leg_w / 2 + 0.03 * w, hip_x + side * (0.04 + 0.22 * swing) * w, leg_w / 2,
                          y_hip - 2, y_foot)))
        arm_x = cx + side * (shoulder / 2 - 0.06 * w)
        polys.append((2, quad(arm_x, arm_w / 2, arm_x + side * (0.06 - 0.18 * swing) * w, arm_w / 2, y_sh + 1,
                              y_hand)))
    for label, poly in polys:  # fixed point (4 fractional bits): sub-pixel positions, smooth motion
        cv2.fillPoly(mask, [np.round(poly * 16).astype(np.int32)], label, cv2.LINE_8, shift=4)
    r = 0.065 * h
    cv2.ellipse(mask, (int(round(cx * 16)), int(round((top + r + 0.01 * h) * 16))),
                (int(round(0.85 * r * 16)), int(round(r * 16))), 0, 0, 360, 1, -1, cv2.LINE_8, shift=4)
    return mask, ox, oy


def _draw_person(frame: np.ndarray, ids: np.ndarray, fig: FigureSpec, index: int, x: float, y: float,
                 walked_px: float) -> int:
    """A person silhouette (:func:`_person_parts`) in its colours; returns its area before clipping."""
    mask, ox, oy = _person_parts(fig, x, y, walked_px)
    H, W = ids.shape
    x1, y1, x2, y2 = max(0, ox), max(0, oy), min(W, ox + mask.shape[1]), min(H, oy + mask.shape[0])
    if x2 > x1 and y2 > y1:
        part = mask[y1 - oy:y2 - oy, x1 - ox:x2 - ox]
        for label, color in zip((1, 2, 3), fig.colors):
            on = part == label
            frame[y1:y2, x1:x2][on] = color
            ids[y1:y2, x1:x2][on] = index
    return int(np.count_nonzero(mask))


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
    shadow_grid = np.mgrid[0:spec.height, 0:spec.width].astype(np.float32) if spec.shadow else None
    shakes = _shake_offsets(spec)
    for n in range(1, spec.n_frames + 1):
        frame = background.copy()
        ids = np.full((spec.height, spec.width), -1, np.int16)
        placed = {}
        places = {i: spec.figures[i].place(n) for i in order}
        # Nearer figures (lower feet) hide farther ones: figures that walk a ground plane are drawn
        # from the farthest at this frame; the others keep their order.
        drawing = sorted((i for i in order if places[i] is not None),
                         key=lambda i: places[i][1] + places[i][3] if spec.figures[i].path is not None else -1e9)
        for i in drawing:
            x, y, w, h, walked = places[i]
            if x >= spec.width or y >= spec.height or x + w <= 0 or y + h <= 0:
                continue
            fig = spec.figures[i]
            if (w, h) != (fig.width, fig.height):
                fig = replace(fig, width=w, height=h)
            if spec.figure_shape == "people":
                placed[i] = (x, y, w, h, _draw_person(frame, ids, fig, i, x, y, walked))
            else:
                _draw_figure(frame, ids, fig, i, x, y)
                placed[i] = (x, y, w, h, w * h * (0.2 * 0.4 + 0.4 + 0.4 * 0.8))
        for x1, y1, x2, y2 in spec.pillars:
            frame[y1:y2, x1:x2] = (70, 75, 80)
            frame[y1:y2, x1 + 4:x1 + 8] = (110, 115, 120)
            ids[y1:y2, x1:x2] = -1
        dx, dy = shakes[n - 1]
        if dx or dy:
            frame, ids = _shifted(frame, dx, dy), _shifted(ids, dx, dy)
        gt = []
        for i, (x, y, w, h, full_area) in placed.items():
            fig = spec.figures[i]
            x, y = x + dx, y + dy
            x1, y1 = max(0, int(np.floor(x))), max(0, int(np.floor(y)))
            # 2 px beyond the box: a silhouette's feet and hands may reach its last row and column.
            x2 = min(spec.width, int(np.ceil(x + w)) + 2)
            y2 = min(spec.height, int(np.ceil(y + h)) + 2)
            region = ids[y1:y2, x1:x2] == i
            visible = int(region.sum())
            if visible == 0 or visible < spec.min_visible * full_area:
                continue
            ys, xs = np.nonzero(region)
            gt.append(GtBox(fig.object_id, (float(x1 + xs.min()), float(y1 + ys.min()), float(x1 + xs.max() + 1),
                                            float(y1 + ys.max() + 1)), min(1.0, visible / full_area)))
        lit = _light(spec, n, frame, shadow_grid)
        noisy = np.clip(lit + noise_bank[n % len(noise_bank)], 0, 255).astype(np.uint8)
        if spec.jpeg_quality is not None:
            noisy = cv2.imdecode(cv2.imencode(".jpg", noisy, [cv2.IMWRITE_JPEG_QUALITY, spec.jpeg_quality])[1],
                                 cv2.IMREAD_COLOR)
        yield n, noisy, gt


def _shake_offsets(spec: SequenceSpec) -> list[tuple[int, int]]:
    """Whole-pixel image offsets per frame: a sway of about 2 s plus jitter, within ``shake_px``."""
    if spec.shake_px <= 0:
        return [(0, 0)] * spec.n_frames
    rng = np.random.default_rng(spec.seed + 11)
    t = np.arange(spec.n_frames) / spec.fps
    phase = rng.uniform(0, 2 * np.pi, 2)
    sway = np.stack([np.sin(2 * np.pi * t / 2.1 + phase[0]), np.sin(2 * np.pi * t / 1.7 + phase[1])], 1)
    jitter = rng.uniform(-1, 1, (spec.n_frames, 2))
    offsets = np.rint(spec.shake_px * np.clip(0.6 * sway + 0.4 * jitter, -1, 1)).astype(int)
    return [(int(a), int(b)) for a, b in offsets]


def _shifted(image: np.ndarray, dx: int, dy: int) -> np.ndarray:
    """``image`` moved by (dx, dy) pixels; the edge it uncovers repeats the image's border (an id
    buffer's uncovered edge is background: ids there are nobody's)."""
    h, w = image.shape[:2]
    out = np.empty_like(image)
    src = image[max(0, -dy):h - max(0, dy), max(0, -dx):w - max(0, dx)]
    out[max(0, dy):max(0, dy) + src.shape[0], max(0, dx):max(0, dx) + src.shape[1]] = src
    if image.ndim == 2:
        out[:max(0, dy)] = -1
        out[h - max(0, -dy):] = -1
        out[:, :max(0, dx)] = -1
        out[:, w - max(0, -dx):] = -1
        return out
    return cv2.copyMakeBorder(src, max(0, dy), max(0, -dy), max(0, dx), max(0, -dx), cv2.BORDER_REPLICATE)


def _light(spec: SequenceSpec, n: int, frame: np.ndarray, grid: np.ndarray | None) -> np.ndarray:
    """``frame`` (uint8) under this frame's light, as int16: the global gain times the shadow's."""
    gain = 1.0 + spec.light_drift * np.sin(2 * np.pi * (n - 1) / spec.light_period)
    if spec.light_step is not None:
        at, to = spec.light_step
        gain *= 1.0 + (to - 1.0) * float(np.clip((n - at) / 10.0, 0.0, 1.0))
    if spec.shadow is None:
        if gain == 1.0:
            return frame.astype(np.int16)
        return np.clip(frame * gain + 0.5, 0, 255).astype(np.int16)
    x0, y0, vx, vy, rx, ry, depth = spec.shadow
    cx, cy = x0 + vx * (n - 1), y0 + vy * (n - 1)
    yy, xx = grid
    d = np.sqrt(((xx - cx) / rx) ** 2 + ((yy - cy) / ry) ** 2)
    # Full depth inside 0.6 of the radii, fading out to nothing at 1.2: a penumbra ~0.6 radii wide.
    shade = 1.0 - depth * np.clip((1.2 - d) / 0.6, 0.0, 1.0)
    return np.clip(frame * (gain * shade)[..., None] + 0.5, 0, 255).astype(np.int16)


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
