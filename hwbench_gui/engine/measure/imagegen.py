"""Synthetic photo-like JPEGs for decode benchmarks.

A decoder's speed depends on content: an all-black image compresses to almost nothing and decodes
far faster than a photo. These images mix smooth gradients (like sky), hard-edged shapes (like
objects) and sensor-like noise, so their compressed size per pixel is in the range of real photos.
"""

from __future__ import annotations

import functools
from typing import Any


def make_image(side_px: int, rng: Any) -> Any:
    """One ``side_px`` × ``side_px`` BGR uint8 image (numpy array) drawn from ``rng``."""
    import numpy as np

    x, y = _unit_grid(side_px)
    # float64 throughout, computed in place: the same pixels as ever (references were measured on
    # them), with fewer temporaries: a fifth less time over a generated dataset's thousands of images
    ramp, wave = np.empty((side_px, side_px)), np.empty((side_px, side_px))
    channels = []
    for _ in range(3):
        a, b, c = rng.uniform(-1, 1, 3)
        np.multiply(x, a, out=ramp)
        ramp += y * b
        np.multiply(ramp, rng.uniform(1, 6), out=wave)
        wave += c * np.pi
        np.sin(wave, out=wave)
        wave *= 50
        channel = np.multiply(ramp, 60)
        channel += 128
        channel += wave  # (128 + 60 ramp) + 50 wave: the order the sums were always made in
        channels.append(channel)
    image = np.stack(channels, axis=-1)
    np.clip(image, 0, 255, out=image)
    canvas = image.astype(np.uint8)
    draw_shapes(canvas, rng)

    noise = rng.normal(0, 6, canvas.shape)
    noise += canvas
    return np.clip(noise, 0, 255, out=noise).astype(np.uint8)


def draw_shapes(canvas: Any, rng: Any) -> None:
    """Draw 8-23 filled circles, rectangles and lines of random colours onto the square ``canvas`` (in place)."""
    import cv2

    side_px = canvas.shape[0]
    for _ in range(int(rng.integers(8, 24))):
        color = tuple(int(v) for v in rng.integers(0, 256, 3))
        p1 = tuple(int(v) for v in rng.integers(0, side_px, 2))
        p2 = tuple(int(v) for v in rng.integers(0, side_px, 2))
        kind = rng.integers(0, 3)
        if kind == 0:
            radius = int(rng.integers(max(2, side_px // 40), max(3, side_px // 5)))
            cv2.circle(canvas, p1, radius, color, thickness=-1, lineType=cv2.LINE_AA)
        elif kind == 1:
            cv2.rectangle(canvas, p1, p2, color, thickness=-1)
        else:
            cv2.line(canvas, p1, p2, color, thickness=max(1, side_px // 100), lineType=cv2.LINE_AA)


@functools.lru_cache(maxsize=4)
def _unit_grid(side_px: int) -> tuple[Any, Any]:
    """x and y of every pixel, 0..1 (float32: the precision the images were first drawn with)."""
    import numpy as np

    y, x = np.mgrid[0:side_px, 0:side_px].astype(np.float32) / max(1, side_px - 1)
    x.flags.writeable = y.flags.writeable = False
    return x, y


def make_jpegs(count: int, side_px: int, quality: int = 90, seed: int = 0) -> list[bytes]:
    """``count`` different JPEG files (bytes) of ``side_px`` square at ``quality`` (1..100)."""
    import cv2
    import numpy as np

    rng = np.random.default_rng(seed)
    jpegs = []
    for _ in range(count):
        ok, encoded = cv2.imencode(".jpg", make_image(side_px, rng), [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
        if not ok:
            raise RuntimeError(f"OpenCV could not encode a {side_px}px JPEG")
        jpegs.append(encoded.tobytes())
    return jpegs
