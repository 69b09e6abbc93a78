"""The image folder the data-path analyzer reads: the user's own, or one it generates.

A generated dataset is an ImageFolder tree (``root/class_NN/img_NNNNNN.jpg``) of photo-like JPEGs
(:mod:`hwbench_gui.engine.measure.imagegen`) of a chosen width, height and count, written to a
chosen disk and fsynced, so that the page cache can later be dropped file by file. A folder that
already holds the same request (same size, count, quality and seed, recorded in a marker file) is
reused rather than written again.

Every file of a dataset is foreign input, the generated ones included (a reused folder may have been
edited): :func:`open_dataset` screens each before any stage reads it (:func:`screen_image`: a
regular file of bounded size, an image header within the pixel limit, a decode that reaches the end
of the data). A file that fails is skipped and counted with its reason in ``Dataset.skipped``; the
analysis goes on with the others and its result names them.
"""

from __future__ import annotations

import io
import json
import multiprocessing
import os
import struct
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hwbench_gui.engine.foreign import MAX_IMAGE_FILE_BYTES, ForeignFileError, image_size, read_regular
from hwbench_gui.engine.lifeline import die_with_parent
from hwbench_gui.engine.models.data import image_folder_items
from hwbench_gui.engine.spec.benchmark import ParamError

MARKER = "hwbench-dataset.json"
CLASSES = 10
GENERATOR_VERSION = 1
#: Skipped files a result lists by name (all are counted).
SKIPPED_LISTED = 50


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
    #: (file, reason) of each image file left out by :func:`screen_image`, in listing order.
    skipped: list[tuple[str, str]] = field(default_factory=list)

    @property
    def mean_file_bytes(self) -> float:
        return self.total_bytes / max(1, len(self.files))

    def describe(self) -> str:
        how = ("generated" + (" earlier, reused" if self.reused else " for this run")) if self.generated else "given"
        skipped = f"; {len(self.skipped)} unusable file(s) skipped" if self.skipped else ""
        return (f"{len(self.files)} images in {len(self.classes)} classes at {self.root} ({how}; "
                f"{self.total_bytes / 2**20:.1f} MiB, mean {self.mean_file_bytes / 1024:.0f} KiB per file{skipped})")

    def skipped_json(self) -> dict[str, Any]:
        """What a result says about the skipped files: how many, and the first ones with their reasons."""
        return {"count": len(self.skipped),
                "files": [{"path": path, "reason": reason} for path, reason in self.skipped[:SKIPPED_LISTED]]}

    def skipped_warning(self) -> str | None:
        """One line for the result's warnings, or None when nothing was skipped."""
        if not self.skipped:
            return None
        first = "; ".join(f"{Path(path).name}: {reason}" for path, reason in self.skipped[:3])
        more = (f"; and {len(self.skipped) - 3} more (listed in details.dataset.skipped)" if len(self.skipped) > 3
                else "")
        return f"{len(self.skipped)} file(s) of the dataset skipped as unusable: {first}{more}"


def screen_image(path: str | os.PathLike) -> bytes:
    """The bytes of an image file any stage may read; :class:`ForeignFileError` naming the
    file and the reason when it is not a regular file of at most :data:`MAX_IMAGE_FILE_BYTES`, not an
    image, above the pixel limit (read from its header, before any decode) or cannot be decoded to
    its end (truncated or corrupt). JPEGs are decoded at 1/8 scale (libjpeg's DCT scaling still
    reads every byte of the data), so the check costs a fraction of a real decode."""
    from PIL import Image

    data = read_regular(path, MAX_IMAGE_FILE_BYTES, "an image")
    width, height = image_size(data, path)
    try:
        with Image.open(io.BytesIO(data)) as image:
            image.draft("RGB", (max(1, width // 8), max(1, height // 8)))
            image.load()
    except (OSError, ValueError, SyntaxError, EOFError, struct.error) as exc:  # PIL's decoders raise these
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ForeignFileError(path, f"cannot be decoded ({detail})") from None
    return data


def _screened(path: str) -> tuple[int, str | None]:
    """(size, None) for a usable image, (0, reason) for one :func:`screen_image` refuses."""
    try:
        return len(screen_image(path)), None
    except ForeignFileError as exc:
        return 0, exc.reason


def open_dataset(root: str | Path, limit: int | None = None, generated: bool = False) -> Dataset:
    """An existing ImageFolder tree; ``limit`` keeps the first usable images (by class, then name).
    Each file is screened (:func:`screen_image`); the unusable ones are in ``skipped``.
    ``ParamError`` when ``root`` is not an ImageFolder tree of images or none is usable."""
    items, classes = image_folder_items(root)
    kept: list[tuple[str, int]] = []
    skipped: list[tuple[str, str]] = []
    total = 0
    # Decoders release the GIL: one thread per CPU screens a large folder in a fraction of the time.
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        start = 0
        while start < len(items) and (limit is None or len(kept) < limit):
            chunk = items[start:start + (len(items) if limit is None else limit - len(kept))]
            start += len(chunk)
            for (path, label), (size, reason) in zip(chunk, pool.map(_screened, [p for p, _ in chunk])):
                if reason is not None:
                    skipped.append((path, reason))
                else:
                    kept.append((path, label))
                    total += size
    if not kept:
        path, reason = skipped[0]
        raise ParamError(f"dataset: {root} has no usable image ({len(skipped)} skipped; the first, {path}: {reason})")
    return Dataset(str(root), [p for p, _ in kept], [label for _, label in kept], classes, total, generated,
                   skipped=skipped)


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
            if json.loads(read_regular(marker, 64 << 10, "a dataset marker")) == request:
                dataset = open_dataset(root, generated=True)
                if len(dataset.files) == count:
                    dataset.reused = True
                    return dataset
        except (ValueError, OSError, ParamError, ForeignFileError):
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
