"""The image folder the data-path analyzer reads: the user's own, or one it generates.

A generated dataset is an ImageFolder tree (``root/class_NN/img_NNNNNN.jpg``) of photo-like JPEGs
(:mod:`hwbench_gui.engine.measure.imagegen`) of a chosen width, height and count, written to a
chosen disk and fsynced, so that the page cache can later be dropped file by file. A folder that
already holds the same request (same size, count, quality and seed, recorded in a marker file) is
reused rather than written again.
"""

from __future__ import annotations

import json
import multiprocessing
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hwbench_gui.engine.lifeline import die_with_parent
from hwbench_gui.engine.models.data import image_folder_items
from hwbench_gui.engine.spec.benchmark import ParamError

MARKER = "hwbench-dataset.json"
CLASSES = 10
GENERATOR_VERSION = 1


@dataclass
class Dataset:
    """Files of an ImageFolder tree and what is known about them."""

    root: str
    files: list[str]
    labels: list[int]
    classes: list[str]
    total_bytes: int
    generated: bool
    reused: bool = False  # a generated folder found complete from an earlier run

    @property
    def mean_file_bytes(self) -> float:
        return self.total_bytes / max(1, len(self.files))

    def describe(self) -> str:
        how = ("generated" + (" earlier, reused" if self.reused else " for this run")) if self.generated else "given"
        return (f"{len(self.files)} images in {len(self.classes)} classes at {self.root} ({how}; "
                f"{self.total_bytes / 2**20:.1f} MiB, mean {self.mean_file_bytes / 1024:.0f} KiB per file)")


def open_dataset(root: str | Path, limit: int | None = None, generated: bool = False) -> Dataset:
    """An existing ImageFolder tree; ``limit`` keeps the first images (by class, then name).
    ``ParamError`` when ``root`` is not an ImageFolder tree of images."""
    items, classes = image_folder_items(root)
    if limit is not None:
        items = items[:limit]
    files = [path for path, _ in items]
    labels = [label for _, label in items]
    total = sum(os.path.getsize(p) for p in files)
    return Dataset(str(root), files, labels, classes, total, generated)


def generated_folder(parent: str | Path, width_px: int, height_px: int, count: int, quality: int) -> Path:
    """Where :func:`generate_dataset` puts a dataset of this shape under ``parent``."""
    return Path(parent) / f"hwbench-datapath-{width_px}x{height_px}-q{quality}-{count}"


def generate_dataset(parent: str | Path, width_px: int, height_px: int, count: int, quality: int = 90,
                     seed: int = 0, processes: int | None = None, progress: Any = None) -> Dataset:
    """Write (or reuse) ``count`` JPEGs of ``width_px`` × ``height_px`` under ``parent``.

    Images are spread over :data:`CLASSES` class folders; they are encoded in ``processes``
    worker processes (default: every CPU) and each file is fsynced. ``progress(fraction)`` is
    called as files are written.
    """
    parent = Path(parent)
    if not parent.is_dir():
        raise ParamError(f"dataset_disk: {parent} is not a folder")
    root = generated_folder(parent, width_px, height_px, count, quality)
    request = {"width_px": width_px, "height_px": height_px, "count": count, "quality": quality, "seed": seed,
               "classes": CLASSES, "generator_version": GENERATOR_VERSION}
    marker = root / MARKER
    if marker.is_file():
        try:
            if json.loads(marker.read_text()) == request:
                dataset = open_dataset(root, generated=True)
                if len(dataset.files) == count:
                    dataset.reused = True
                    return dataset
        except (ValueError, OSError, ParamError):
            pass  # an unreadable or partial folder is written again
    for k in range(CLASSES):
        (root / f"class_{k:02d}").mkdir(parents=True, exist_ok=True)
    jobs = [(str(root / f"class_{i % CLASSES:02d}" / f"img_{i:06d}.jpg"), width_px, height_px, quality, seed + i)
            for i in range(count)]
    processes = max(1, min(processes or os.cpu_count() or 1, count, 32))
    chunk = max(1, count // (processes * 8))
    if processes == 1:
        for n, job in enumerate(jobs):
            _write_one(job)
            if progress is not None:
                progress((n + 1) / count)
    else:
        with multiprocessing.get_context("spawn").Pool(processes, die_with_parent, (os.getpid(),)) as pool:
            for n, _ in enumerate(pool.imap_unordered(_write_one, jobs, chunksize=chunk)):
                if progress is not None and (n + 1) % max(1, count // 20) == 0:
                    progress((n + 1) / count)
    marker.write_text(json.dumps(request))
    return open_dataset(root, generated=True)


def _write_one(job: tuple[str, int, int, int, int]) -> None:
    """Encode one image and write it durably (fsync: a dirty page cannot be dropped from the cache)."""
    import cv2
    import numpy as np

    from hwbench_gui.engine.measure.imagegen import make_image

    path, width_px, height_px, quality, seed = job
    pixels = make_image(max(width_px, height_px), np.random.default_rng(seed))[:height_px, :width_px]
    ok, encoded = cv2.imencode(".jpg", np.ascontiguousarray(pixels), [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    if not ok:
        raise RuntimeError(f"OpenCV could not encode a {width_px}×{height_px} JPEG")
    with open(path, "wb") as f:
        f.write(encoded.tobytes())
        f.flush()
        os.fsync(f.fileno())
