"""Scene kinds: generated clips of what cameras see, each a named spec, some for tuning, some held out.

People walk on a ground plane seen by a pinhole camera, so they grow as they approach and shrink
as they leave: a person's foot row is ``horizon + F * camera_height / Z`` and their height
``F * person_height / Z`` at depth ``Z``. A camera at eye level (the horizon in the frame) sees
people from about 30 px far away to 250 px near; an elevated camera (the horizon above the frame)
sees them 50-120 px tall and foreshortened. Walkers cross the view, come towards the camera or go
away from it; some stop for a few seconds and walk on; small groups walk slowly to one spot, stand
and talk, and leave in different directions; a post hides whoever passes behind it. Speeds are in
metres per second, so a 10 fps clip moves 2.5 times as far per frame as a 25 fps one. Sensor noise,
JPEG artefacts and a shaking camera are options of :class:`~.synthetic.SequenceSpec`.

:data:`SCENE_KINDS` names every kind; :data:`TUNING_KINDS` are the ones the tracker's settings may
be tuned on, :data:`HELD_OUT_KINDS` the ones its figures are judged on (``scripts/tracking_quality.py
--kinds``). Each held-out kind differs from every tuning kind in at least its frame rate, its
camera or its nuisances.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hwbench_gui.demos.tracking.synthetic import FigureSpec, SequenceSpec, _figure_colors

FOCAL_PX = 800.0  # only ratios matter: depths scale with it
PERSON_HEIGHT_M = (1.55, 1.9)


@dataclass(frozen=True)
class Camera:
    width: int = 768
    height: int = 576
    horizon_y: float = 90.0  # image row of the horizon; negative: above the frame (an elevated camera)
    near_height_px: float = 250.0  # a 1.75 m person's height with their feet on the bottom row
    foreshorten: float = 1.0  # seen from above, people look shorter than a level camera shows them

    @property
    def height_m(self) -> float:
        """The camera's height above the ground that gives ``near_height_px`` at the bottom row."""
        return (self.height - self.horizon_y) * 1.75 / self.near_height_px

    def depth_of_row(self, row: float) -> float:
        return FOCAL_PX * self.height_m / max(1e-6, row - self.horizon_y)

    def project(self, x_m: float, z_m: float, person_m: float) -> tuple[float, float, float, float]:
        """(x, y, width, height) of the box of a person standing at ground point (x_m, z_m)."""
        foot = self.horizon_y + FOCAL_PX * self.height_m / z_m
        h = FOCAL_PX * person_m / z_m * self.foreshorten
        w = 0.42 * h / self.foreshorten ** 0.5
        cx = self.width / 2 + FOCAL_PX * x_m / z_m
        return cx - w / 2, foot - h, w, h

    def half_width_m(self, z_m: float) -> float:
        return self.width / 2 * z_m / FOCAL_PX


def _walk(waypoints: list[tuple[float, float, float]], start_frame: int, n_frames: int, fps: float) -> np.ndarray:
    """(n_frames, 2) ground positions (NaN before ``start_frame``) along ``waypoints``: (x_m, z_m,
    speed m/s to get there; a speed of 0 means stand there that many seconds: (x, z, -seconds))."""
    out = np.full((n_frames, 2), np.nan)
    pos = np.array(waypoints[0][:2], float)
    f = start_frame - 1
    for x, z, speed in waypoints[1:]:
        if f >= n_frames:
            break
        if speed < 0:  # stand for -speed seconds
            stay = int(round(-speed * fps))
            out[f:f + stay] = pos
            f += stay
            continue
        target = np.array([x, z], float)
        steps = max(1, int(np.ceil(np.linalg.norm(target - pos) / (speed / fps))))
        for k in range(1, steps + 1):
            if f >= n_frames:
                break
            out[f] = pos + (target - pos) * k / steps
            f += 1
        pos = target
    return out


def _path(camera: Camera, ground: np.ndarray, person_m: float) -> np.ndarray:
    """Per-frame rows for :attr:`FigureSpec.path` from ground positions."""
    rows = np.full((len(ground), 5), np.nan)
    walked, last = 0.0, None
    for k, (x, z) in enumerate(ground):
        if np.isnan(x):
            continue
        bx, by, bw, bh = camera.project(x, z, person_m)
        if last is not None:
            walked += float(np.hypot(bx + bw / 2 - last[0], by + bh - last[1]))
        last = (bx + bw / 2, by + bh)
        rows[k] = (bx, by, max(4.0, bw), max(10.0, bh), walked)
    return rows


def walker(object_id: int, camera: Camera, waypoints: list[tuple[float, float, float]], start_frame: int,
           n_frames: int, fps: float, person_m: float = 1.75, seed: int = 0) -> FigureSpec:
    """One person walking ``waypoints`` (as :func:`_walk` takes them) from ``start_frame``, seen by ``camera``."""
    path = _path(camera, _walk(waypoints, start_frame, n_frames, fps), person_m)
    seen = ~np.isnan(path[:, 0])
    first = int(np.argmax(seen)) if seen.any() else 0
    w, h = (int(round(path[first, 2])), int(round(path[first, 3]))) if seen.any() else (10, 20)
    return FigureSpec(object_id, w, h, first + 1, 0.0, 0.0, 0.0, 0.0,
                      _figure_colors(np.random.default_rng(seed), object_id - 1), path=path)


def camera_scene_spec(n_frames: int | None = None, seed: int = 0, camera: Camera = Camera(), fps: float = 25.0,
                      seconds: float = 16.0, crossing: int = 3, approaching: int = 2, stop_and_go: int = 1,
                      groups: tuple[int, ...] = (), talk_s: tuple[float, float] = (3.0, 5.0),
                      speed_mps: tuple[float, float] = (1.0, 1.5), posts: int = 0, noise_sigma: float = 3.0,
                      jpeg_quality: int | None = None, shake_px: float = 0.0) -> SequenceSpec:
    """One clip of ``seconds`` at ``fps`` (``n_frames`` overrides the length) seen by ``camera``:
    ``crossing`` walkers cross from one side to the other at their own depth, ``approaching`` come
    from far away towards the camera (or go away from it, every second one), ``stop_and_go`` cross
    and stop 2-3 s on the way; each group of ``groups`` (sizes) walks slowly (0.5-0.9 m/s) to one
    spot, stands there ``talk_s`` seconds, and its members leave in different directions. ``posts``
    narrow posts stand in front of the walkers' paths."""
    rng = np.random.default_rng(seed)
    n_frames = n_frames or int(round(seconds * fps))
    duration = n_frames / fps
    z_near = camera.depth_of_row(camera.height) * 1.15
    z_far = min(camera.depth_of_row(max(camera.horizon_y + 20, 0.0)) * 0.85, FOCAL_PX * 1.75 / 32)
    walkers: list[tuple[list, int, float]] = []  # waypoints, start frame, person height (m)

    def start_frame(k: int, count: int) -> int:
        return 1 + int((k + rng.uniform(0, 0.8)) * 0.55 * duration * fps / max(1, count))

    total = crossing + stop_and_go + approaching + len(groups)
    k = 0
    for s in range(crossing + stop_and_go):
        z = float(rng.uniform(z_near * 1.2, z_far * 0.8))
        edge = camera.half_width_m(z) * 1.15
        side = 1 if rng.random() < 0.5 else -1
        speed = float(rng.uniform(*speed_mps))
        dz = float(rng.uniform(-0.15, 0.15)) * z
        start = np.array([-side * edge, z])
        end = np.array([side * edge, float(np.clip(z + dz, z_near * 1.1, z_far))])
        if s >= crossing:  # stop-and-go: stops 2-3 s somewhere in the middle third
            mid = start + (end - start) * rng.uniform(0.35, 0.65)
            points = [(*start, 0.0), (*mid, speed), (*mid, -float(rng.uniform(2.0, 3.0))), (*end, speed)]
        else:
            points = [(*start, 0.0), (*end, speed)]
        walkers.append((points, start_frame(k, total), float(rng.uniform(*PERSON_HEIGHT_M))))
        k += 1
    for a in range(approaching):
        speed = float(rng.uniform(*speed_mps))
        x_far = float(rng.uniform(-0.6, 0.6)) * camera.half_width_m(z_far)
        x_near = float(rng.uniform(-0.5, 0.5)) * camera.half_width_m(z_near)
        near, far = (x_near, z_near * 0.8), (x_far, z_far)
        points = [(*far, 0.0), (*near, speed)] if a % 2 == 0 else [(*near, 0.0), (*far, speed)]
        walkers.append((points, start_frame(k, total), float(rng.uniform(*PERSON_HEIGHT_M))))
        k += 1
    for size in groups:
        spot = np.array([float(rng.uniform(-0.4, 0.4)) * camera.half_width_m(z_near * 2), 0.0])
        spot[1] = float(rng.uniform(z_near * 1.2, z_near + 0.6 * (z_far - z_near)))
        talk = float(rng.uniform(*talk_s))
        arrive = start_frame(k, total) + int(rng.uniform(3.0, 5.0) * fps)
        k += 1
        for m in range(size):
            angle = 2 * np.pi * m / size + rng.uniform(-0.3, 0.3)
            stand = spot + 0.45 * np.array([np.cos(angle), 0.8 * np.sin(angle)]) * (1 + spot[1] / 10)
            edge = camera.half_width_m(stand[1]) * 1.15
            sides = [-1, 1] if m % 2 == 0 else [1, -1]
            come = np.array([sides[0] * edge, stand[1] * rng.uniform(0.9, 1.1)])
            leave = np.array([sides[1] * edge if m < 2 else stand[0], stand[1] if m < 2 else z_far])
            speed = float(rng.uniform(0.5, 0.9))
            walk_frames = int(np.linalg.norm(stand - come) / speed * fps)
            points = [(*come, 0.0), (*stand, speed), (*stand, -(talk + rng.uniform(0, 1.0))), (*leave, speed)]
            walkers.append((points, max(1, arrive - walk_frames), float(rng.uniform(*PERSON_HEIGHT_M))))
    figures = []
    for i, (points, start, person_m) in enumerate(walkers):
        figure = walker(i + 1, camera, points, start, n_frames, fps, person_m)
        figure.colors = _figure_colors(rng, i)
        figures.append(figure)
    pillars = []
    for p in range(posts):
        cx = int(camera.width * (p + 1) / (posts + 1) + rng.integers(-camera.width // 10, camera.width // 10))
        half = int(rng.integers(12, 18))
        pillars.append((cx - half, int(camera.height * rng.uniform(0.05, 0.2)), cx + half, camera.height))
    return SequenceSpec(camera.width, camera.height, n_frames, figures, pillars, noise_sigma=noise_sigma, seed=seed,
                        fps=fps, figure_shape="people", shake_px=shake_px, jpeg_quality=jpeg_quality)


LEVEL = Camera()  # eye level: people 30-250 px in one scene
ELEVATED = Camera(horizon_y=-400.0, near_height_px=120.0, foreshorten=0.85)  # people 50-120 px, seen from above


@dataclass(frozen=True)
class SceneKind:
    what: str
    options: dict
    held_out: bool  # judged on, never tuned on
    # Added to the seed a caller asks for: a kind declared later, with options near a held-out kind's,
    # draws its walkers, colours and noise from seeds no other kind uses.
    seed_base: int = 0


SCENE_KINDS = {
    "street-level-25fps": SceneKind(
        "eye-level camera, 25 fps: walkers crossing, approaching and leaving (30-250 px), one stops",
        {"camera": LEVEL, "fps": 25.0}, held_out=False),
    "plaza-elevated-25fps-post": SceneKind(
        "elevated camera, 25 fps: walkers 50-120 px, a post, a group of three who stop and talk",
        {"camera": ELEVATED, "fps": 25.0, "posts": 1, "groups": (3,)}, held_out=False),
    "street-level-30fps-post-groups": SceneKind(
        "eye-level camera, 30 fps: a post, two groups who stop and talk, noise and JPEG artefacts",
        {"camera": LEVEL, "fps": 30.0, "posts": 1, "groups": (2, 3), "crossing": 2, "approaching": 1,
         "noise_sigma": 5.0, "jpeg_quality": 40}, held_out=True),
    "plaza-elevated-10fps-groups": SceneKind(
        "elevated camera, 10 fps: a group of two and one of three stop and talk, a stop-and-go walker",
        {"camera": ELEVATED, "fps": 10.0, "groups": (2, 3), "crossing": 2, "approaching": 2,
         "seconds": 24.0}, held_out=True),
    "street-level-10fps-shake-jpeg": SceneKind(
        "eye-level camera, 10 fps, shaking by 2 px, noise and JPEG artefacts, a post",
        {"camera": LEVEL, "fps": 10.0, "posts": 1, "shake_px": 2.0, "noise_sigma": 5.0, "jpeg_quality": 35,
         "seconds": 20.0, "groups": (2,)}, held_out=True),
    # Declared so that rules for sensor noise, JPEG artefacts and groups seen by a level camera can be
    # tuned without looking at the held-out kinds that have them: 25 fps (theirs are 10 and 30), one
    # group of three and no post, no shake (each held-out kind differs in at least two of these), noise
    # sigma 4 and JPEG quality 50 (theirs 5 and 35-40), seeds of their own.
    "street-level-25fps-group-noise-jpeg": SceneKind(
        "eye-level camera, 25 fps: a group of three who stop and talk, a stop-and-go walker, noise and JPEG",
        {"camera": LEVEL, "fps": 25.0, "groups": (3,), "crossing": 3, "approaching": 1, "noise_sigma": 4.0,
         "jpeg_quality": 50}, held_out=False, seed_base=1000),
    # Two groups who stop and talk and a post at a level camera, the hardest held-out kind's situation,
    # declared for tuning: at 20 fps (the held-out kinds run at 10 and 30), milder noise and JPEG (sigma 3,
    # quality 60), seeds of its own.
    "street-level-20fps-two-groups-post": SceneKind(
        "eye-level camera, 20 fps: a post, a group of two and one of three who stop and talk, light noise and JPEG",
        {"camera": LEVEL, "fps": 20.0, "posts": 1, "groups": (2, 3), "crossing": 2, "approaching": 1,
         "noise_sigma": 3.0, "jpeg_quality": 60}, held_out=False, seed_base=2000),
}

TUNING_KINDS = tuple(k for k, v in SCENE_KINDS.items() if not v.held_out)
HELD_OUT_KINDS = tuple(k for k, v in SCENE_KINDS.items() if v.held_out)


def scene_spec(kind: str, seed: int, seconds: float | None = None, fps: float | None = None) -> SequenceSpec:
    """One clip of scene kind ``kind`` (:data:`SCENE_KINDS`); ``seconds`` shortens or lengthens it,
    ``fps`` renders the same scene (speeds are in m/s, pauses in seconds) at another frame rate."""
    try:
        options = dict(SCENE_KINDS[kind].options)
    except KeyError:
        raise ValueError(f"unknown scene kind {kind!r}; choose from {', '.join(SCENE_KINDS)}") from None
    if seconds is not None:
        options["seconds"] = seconds
    if fps is not None:
        options["fps"] = fps
    return camera_scene_spec(seed=seed + SCENE_KINDS[kind].seed_base, **options)
