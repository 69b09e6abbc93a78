"""Generated driving video with known motion: for tests, the FPS benchmark and screenshots.

A drawn, textured face patch on a plain background moves by exactly known amounts (translation,
scale, roll about the patch centre) and can open its mouth. A video may cut between scenes (another
background and another face: ``scenes`` in :func:`write_video`), and a pose may carry the face out of
the frame. Nothing here pretends to be a camera: the file is labelled as generated wherever it is used.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import cv2
import numpy as np

from hwbench_gui.demos.video import Mp4Writer

#: How far the jaw of a 200 px face patch drops with the mouth wide open (pixels, below the mouth's
#: middle; the drop thins out towards the cheeks).
JAW_DROP_PX_AT_200 = 24.0


@dataclass(frozen=True)
class Pose:
    tx_px: float = 0.0
    ty_px: float = 0.0
    scale: float = 1.0
    rotation_deg: float = 0.0
    mouth_open: float = 0.0  # 0 closed … 1 wide open

    def matrix(self, center) -> np.ndarray:
        """2×3 similarity of this pose about ``center`` (OpenCV's angle sign: positive turns counter-clockwise
        on screen; we negate so positive rotation_deg matches the similarity estimated in image axes)."""
        m = cv2.getRotationMatrix2D((float(center[0]), float(center[1])), -self.rotation_deg, self.scale)
        m[:, 2] += (self.tx_px, self.ty_px)
        return m


def phased_motion(hold: int = 10, ramp: int = 30, shift_px=(50.0, 25.0), scale: float = 1.25,
                  rotation_deg: float = 15.0) -> list[Pose]:
    """Still, then translate, hold, scale, hold, rotate, hold: each ramp linear, each hold ``hold`` frames."""
    poses = [Pose()] * hold
    start = Pose()
    for end in (Pose(*shift_px), Pose(*shift_px, scale), Pose(*shift_px, scale, rotation_deg)):
        for i in range(1, ramp + 1):
            f = i / ramp
            poses.append(Pose(*(a + (b - a) * f for a, b in zip(
                (start.tx_px, start.ty_px, start.scale, start.rotation_deg),
                (end.tx_px, end.ty_px, end.scale, end.rotation_deg)))))
        poses += [end] * hold
        start = end
    return poses


def talking_motion(n_frames: int, fps: float = 30.0) -> list[Pose]:
    """A head that sways, nods, turns a little and talks: for demos and the benchmark."""
    t = np.arange(n_frames) / fps
    return [Pose(40 * np.sin(0.9 * s), 15 * np.sin(1.7 * s), 1 + 0.08 * np.sin(0.6 * s), 10 * np.sin(1.1 * s),
                 max(0.0, np.sin(5.0 * s))) for s in t]


def cut_clip(n_frames: int = 60, cut_at: int = 30) -> tuple[list[Pose], list[int]]:
    """A talking head (:func:`talking_motion`) that cuts at frame ``cut_at`` to scene 1: another face,
    90 px left, 30 px lower and 15 % smaller, still talking. Poses and the scene of each frame."""
    talk = talking_motion(n_frames)
    after = [Pose(p.tx_px - 90, p.ty_px + 30, p.scale * 0.85, p.rotation_deg, p.mouth_open) for p in talk[cut_at:]]
    return talk[:cut_at] + after, [0] * cut_at + [1] * (n_frames - cut_at)


def leaving_clip(n_frames: int = 70, step_px: float = 12.0) -> list[Pose]:
    """A face that walks right, ``step_px`` a frame, out of a 640-wide frame, and back to the middle."""
    return [Pose(tx_px=step_px * min(i, n_frames - i)) for i in range(n_frames)]


def mouth_clip(n_frames: int = 60, fps: float = 30.0) -> list[Pose]:
    """A still head that opens its mouth and closes it again about once a second, each time as far as
    the next of 1, 0.45 and 0.8 (wide, a little, most of the way), closed between."""
    t = np.arange(n_frames) / fps
    widths = (1.0, 0.45, 0.8)
    return [Pose(mouth_open=float(widths[int(s) % 3] * np.sin(np.pi * (s % 1.0) / 0.7)) if s % 1.0 < 0.7
                 else 0.0) for s in t]


def jaw_drop_px(pose: Pose, patch_px: int = 200) -> float:
    """How far the jaw drops under the mouth's middle in frame pixels, in ``pose``: the truth the driver's
    jaw drop is measured against."""
    return JAW_DROP_PX_AT_200 * patch_px / 200 * pose.mouth_open * pose.scale


def face_patch(size_px: int = 200, mouth_open: float = 0.0, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A textured cartoon face (BGR) and its mask; the texture gives Lucas–Kanade corners to hold on to."""
    rng = np.random.default_rng(seed)
    noise = cv2.GaussianBlur(rng.integers(0, 255, (size_px, size_px), dtype=np.uint8), (0, 0), 2.0)
    img = np.dstack([noise // 2 + 90, noise // 2 + 110, noise // 2 + 140]).astype(np.uint8)
    c, r = size_px // 2, size_px // 2 - 4
    mask = np.zeros((size_px, size_px), np.uint8)
    cv2.ellipse(mask, (c, c), (int(r * 0.82), r), 0, 0, 360, 255, -1)
    s = size_px / 200
    for ex in (c - int(38 * s), c + int(38 * s)):
        cv2.circle(img, (ex, c - int(25 * s)), int(14 * s), (255, 255, 255), -1)
        cv2.circle(img, (ex, c - int(25 * s)), int(7 * s), (40, 30, 20), -1)
        cv2.line(img, (ex - int(16 * s), c - int(50 * s)), (ex + int(16 * s), c - int(50 * s)), (30, 30, 60), 3)
    cv2.line(img, (c, c - int(10 * s)), (c - int(8 * s), c + int(18 * s)), (50, 60, 120), 3)
    mouth_y = c + int(50 * s)
    cv2.line(img, (c - int(34 * s), mouth_y), (c + int(34 * s), mouth_y), (40, 20, 120), max(2, int(4 * s)))
    if mouth_open > 0:
        # The jaw drops: skin below the mouth line slides down (texture and all, as on a real face), and
        # the gap shows the mouth's inside.
        drop = JAW_DROP_PX_AT_200 * s * mouth_open
        ys, xs = np.mgrid[0:size_px, 0:size_px].astype(np.float32)
        shift = drop * np.clip((ys - mouth_y) / (6 * s), 0, 1) * np.clip(1 - np.abs(xs - c) / (70 * s), 0, 1) ** 0.5
        src_y = (ys - shift).astype(np.float32)
        img = cv2.remap(img, xs, src_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
        mask = cv2.remap(mask, xs, src_y, cv2.INTER_LINEAR)
        cv2.ellipse(img, (c, int(mouth_y + drop / 2)), (int(30 * s), max(1, int(drop / 2))), 0, 0, 360,
                    (40, 20, 120), -1)
    return img, mask


def _background(frame_size, scene: int) -> np.ndarray:
    """Scene 0: a quiet horizontal grey ramp. Others: a room of their own (a vertical ramp in a colour
    and a few flat shapes), as a film cuts to another shot."""
    w, h = frame_size
    background = np.empty((h, w, 3), np.uint8)
    if scene == 0:
        background[:] = np.linspace(70, 110, w, dtype=np.uint8)[None, :, None]
        return background
    rng = np.random.default_rng(1000 + scene)
    low, high = rng.integers(20, 90, 3), rng.integers(140, 230, 3)
    ramp = np.linspace(0.0, 1.0, h)[:, None, None]
    background[:] = (low + (high - low) * ramp).astype(np.uint8)
    for _ in range(4):
        x, y = int(rng.integers(0, w - 60)), int(rng.integers(0, h - 60))
        cv2.rectangle(background, (x, y), (x + int(rng.integers(30, 160)), y + int(rng.integers(30, 120))),
                      tuple(int(v) for v in rng.integers(0, 255, 3)), -1)
    return background


def render(pose: Pose, frame_size=(640, 480), patch_px: int = 200, seed: int = 0, scene: int = 0) -> np.ndarray:
    """One 8-bit BGR frame: the patch centred in the frame, moved by ``pose``, over the background of
    ``scene`` (each scene has its own face texture too)."""
    w, h = frame_size
    patch, mask = face_patch(patch_px, pose.mouth_open, seed + scene)
    layer = np.zeros((h, w, 3), np.uint8)
    alpha = np.zeros((h, w), np.uint8)
    x0, y0 = (w - patch_px) // 2, (h - patch_px) // 2
    layer[y0:y0 + patch_px, x0:x0 + patch_px] = patch
    alpha[y0:y0 + patch_px, x0:x0 + patch_px] = mask
    m = pose.matrix((w / 2, h / 2))
    layer = cv2.warpAffine(layer, m, (w, h), flags=cv2.INTER_LINEAR)
    alpha = cv2.warpAffine(alpha, m, (w, h), flags=cv2.INTER_LINEAR).astype(np.float32)[..., None] / 255
    return (layer * alpha + _background(frame_size, scene) * (1 - alpha)).astype(np.uint8)


def patch_roi(frame_size=(640, 480), patch_px: int = 200) -> tuple[int, int, int, int]:
    """The ROI (x, y, w, h) that covers the face patch at the neutral pose."""
    w, h = frame_size
    inset = patch_px // 8
    return (w - patch_px) // 2 + inset, (h - patch_px) // 2 + inset, patch_px - 2 * inset, patch_px - 2 * inset


def write_video(path: str | os.PathLike, poses: list[Pose], frame_size=(640, 480), fps: float = 30.0,
                patch_px: int = 200, scenes: list[int] | None = None) -> str:
    """Render ``poses`` into an MP4 at ``path`` (frame i in scene ``scenes[i]``, all 0 if None); returns the path."""
    with Mp4Writer(path, fps, frame_size) as writer:
        for i, pose in enumerate(poses):
            writer.write(render(pose, frame_size, patch_px, scene=scenes[i] if scenes else 0))
    return str(path)
