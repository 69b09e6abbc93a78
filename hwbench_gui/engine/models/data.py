"""Real-data input pipelines for the model benchmarks (``data=<folder>``).

Layouts (what the seed trained on):

- classify: an ImageFolder tree, ``root/<class name>/<image>.jpg`` (flower102, ImageNet).
- detect: Pascal VOC, ``root/JPEGImages/*.jpg`` + ``root/Annotations/*.xml`` (``root`` may also be a
  VOCdevkit folder holding one VOC20xx folder); ``ImageSets/Main/trainval.txt`` picks the images
  when present.
- segment: ``root/images/<name>.(jpg|png)`` + ``root/masks/<name>.png``; mask pixels are class
  indices, except that a 0/255 mask is read as 0/1.

PyTorch reads through ``torch.utils.data.DataLoader`` (worker processes, pinned memory, prefetch);
TensorFlow through ``tf.data`` (parallel map, prefetch). :class:`BatchStream` cycles a loader
forever and measures the time the training loop waits on it. torch/TF are imported inside.
"""

from __future__ import annotations

import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from hwbench_gui.engine.foreign import MAX_IMAGE_FILE_BYTES, ForeignFileError, check_regular, read_regular
from hwbench_gui.engine.shown_text import shown_path
from hwbench_gui.engine.spec.benchmark import ParamError

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".webp")

VOC_CLASSES = ("aeroplane", "bicycle", "bird", "boat", "bottle", "bus", "car", "cat", "chair", "cow",
               "diningtable", "dog", "horse", "motorbike", "person", "pottedplant", "sheep", "sofa", "train",
               "tvmonitor")

#: Normalisation of the torchvision ImageNet recipes (the random-init models do not care, a real
#: pipeline does this work).
MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)

#: Batches each DataLoader worker may have in flight: with in-order delivery a worker that is
#: this many batches ahead idles until the slowest one catches up, so deeper keeps more busy.
LOADER_PREFETCH_BATCHES = 4


@dataclass(frozen=True)
class LoaderOptions:
    """How a caller (the data-path analyzer) sets up the training loop's DataLoader; the defaults
    are the model benchmarks' own loader.

    ``sampler`` replaces the shuffled epochs (e.g. several passes per DataLoader epoch, so the
    workers prefetch straight through a pass boundary); ``on_device(loader, device, channels_last)``
    wraps the loader into an iterable of batches already on the device (e.g. decoded and augmented
    there); the step's copy then has nothing to move;
    ``epoch_starts``: this many epoch starts are forced after the timed windows and their cost
    measured (``TimedRun.extra['epoch_start_cost_s']``). ``start_after_warmup``: the warm-up steps
    run on a synthetic batch and the loader starts after them, its first ``workers`` + 2 steps
    (the start from empty) untimed: the timed windows then see neither a queue the workers filled
    during the slow first steps nor the start itself. ``settle_windows``: up to this many untimed
    windows follow until two in a row agree (a queue still filling keeps the workers busier than
    they are in a long run; a CPU's first few dozen steps are slower); it applies to synthetic data too.
    """

    prefetch_factor: int = LOADER_PREFETCH_BATCHES
    pin_memory: bool | None = None  # None: when the data goes to a GPU
    sampler: Any = None
    collate_fn: Callable[[list], Any] | None = None
    on_device: Callable[[Iterable, Any, bool], Iterable] | None = None
    epoch_starts: int = 0
    start_after_warmup: bool = False
    settle_windows: int = 0


# -- file layouts (no framework) -----------------------------------------------------------------

def image_folder_items(root: str | Path) -> tuple[list[tuple[str, int]], list[str]]:
    """``([(path, class index)], class names)`` of an ImageFolder tree; ParamError when it is not one."""
    root = Path(root)
    if not root.is_dir():
        raise ParamError(f"data: {root} is not a folder")
    classes = sorted(p.name for p in root.iterdir() if p.is_dir())
    items = [(str(f), i) for i, name in enumerate(classes) for f in sorted((root / name).iterdir())
             if f.suffix.lower() in IMAGE_SUFFIXES]
    if not items:
        raise ParamError(f"data: {root} holds no images in class folders (expected root/<class>/<image>.jpg)")
    return items, classes


def voc_root(root: str | Path) -> Path:
    """The folder holding JPEGImages/ and Annotations/ (``root`` itself or a VOC20xx inside it)."""
    root = Path(root)
    candidates = [root, *sorted(root.glob("VOC*")), *sorted(root.glob("VOCdevkit/VOC*"))]
    for candidate in candidates:
        if (candidate / "JPEGImages").is_dir() and (candidate / "Annotations").is_dir():
            return candidate
    raise ParamError(f"data: {root} is not a Pascal VOC folder (no JPEGImages/ and Annotations/)")


#: A VOC annotation is under 2 KB; a listing of every VOC 2012 image under 200 KB.
MAX_ANNOTATION_BYTES = 1 << 20
MAX_LISTING_BYTES = 64 << 20


def parse_voc_xml(path: str | Path) -> tuple[list[list[float]], list[int]]:
    """Boxes ``[x1, y1, x2, y2]`` (pixels) and labels (1..20; 0 is background) of one VOC annotation.
    Objects of classes outside VOC's 20 are left out. :class:`ForeignFileError` naming the file when it is
    not a regular file of at most :data:`MAX_ANNOTATION_BYTES`, not XML, or has a coordinate that is not a number."""
    data = read_regular(path, MAX_ANNOTATION_BYTES, "a VOC annotation")
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise ForeignFileError(path, f"not a VOC annotation (XML: {exc})") from None
    boxes, labels = [], []
    for obj in root.iter("object"):
        name = (obj.findtext("name") or "").strip()
        box = obj.find("bndbox")
        if name not in VOC_CLASSES or box is None:
            continue
        try:
            x1, y1, x2, y2 = (float(box.findtext(k) or 0) for k in ("xmin", "ymin", "xmax", "ymax"))
        except ValueError as exc:
            raise ForeignFileError(path, f"not a VOC annotation (a box coordinate: {exc})") from None
        if x2 > x1 and y2 > y1:
            boxes.append([x1, y1, x2, y2])
            labels.append(VOC_CLASSES.index(name) + 1)
    return boxes, labels


def _usable(paths: Iterable[str | Path], skipped: list[tuple[str, str]] | None) -> bool:
    """Whether every one of ``paths`` is a regular image-sized file (checked on open, unread); the first that
    is not goes into ``skipped`` with its reason."""
    for path in paths:
        try:
            check_regular(path, MAX_IMAGE_FILE_BYTES, "an image")
        except ForeignFileError as exc:
            if skipped is not None:
                skipped.append((str(path), exc.reason))
            return False
    return True


def voc_items(root: str | Path, skipped: list[tuple[str, str]] | None = None) -> list[tuple[str, str]]:
    """``[(image path, annotation path)]`` of a VOC folder with at least one object each; a pair whose image
    is not a regular file or whose annotation cannot be used is left out (into ``skipped`` with the reason)."""
    base = voc_root(root)
    listing = base / "ImageSets" / "Main" / "trainval.txt"
    if listing.is_file():
        try:
            text = read_regular(listing, MAX_LISTING_BYTES, "a VOC image listing").decode("utf-8", "replace")
        except ForeignFileError as exc:
            raise ParamError(str(exc)) from None
        stems = [line.split()[0] for line in text.splitlines() if line.strip()]
    else:
        stems = sorted(p.stem for p in (base / "Annotations").glob("*.xml"))
    items = []
    for stem in stems:
        image, xml = base / "JPEGImages" / f"{stem}.jpg", base / "Annotations" / f"{stem}.xml"
        if not image.exists() or not xml.exists() or not _usable([image], skipped):
            continue
        try:
            if parse_voc_xml(xml)[0]:
                items.append((str(image), str(xml)))
        except ForeignFileError as exc:
            if skipped is not None:
                skipped.append((str(xml), exc.reason))
    if not items:
        raise ParamError(f"data: {shown_path(base)} has no image with an annotated VOC object")
    return items


def mask_items(root: str | Path, skipped: list[tuple[str, str]] | None = None) -> list[tuple[str, str]]:
    """``[(image path, mask path)]`` from ``root/images`` and ``root/masks`` (matched by file stem); a pair
    either of whose files is not a regular image-sized file is left out (into ``skipped`` with the reason)."""
    root = Path(root)
    images, masks = root / "images", root / "masks"
    if not images.is_dir() or not masks.is_dir():
        raise ParamError(f"data: {shown_path(root)} needs images/ and masks/ folders")
    by_stem = {p.stem: p for p in masks.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES}
    items = [(str(p), str(by_stem[p.stem])) for p in sorted(images.iterdir())
             if p.suffix.lower() in IMAGE_SUFFIXES and p.stem in by_stem and _usable([p, by_stem[p.stem]], skipped)]
    if not items:
        raise ParamError(f"data: no image in {shown_path(images)} has a mask of the same name in {shown_path(masks)}")
    return items


def _check_enough(count: int, batch: int, root: str) -> None:
    if count < batch:
        raise ParamError(f"data: {root} has {count} usable images, fewer than one batch of {batch}")


# -- PyTorch ---------------------------------------------------------------------------------------

def torch_dataset(task: str, root: str, image_size: int) -> Any:
    """The torch Dataset of ``task`` over ``root`` (decodes with PIL in the loader's workers)."""
    import numpy as np
    import torch
    from PIL import Image
    from torchvision import transforms as T

    if task == "classify":
        from torchvision.datasets import ImageFolder

        image_folder_items(root)  # a clear error before torchvision's
        skipped: list[tuple[str, str]] = []

        def usable(path: str) -> bool:
            # A pipe, a device or a link to one would block or never end in a loader worker; a huge
            # file would be read whole. Checked on open, without reading (decode errors stay the
            # loader's: screening every image of ImageNet would cost minutes).
            if not path.lower().endswith(IMAGE_SUFFIXES):
                return False
            try:
                check_regular(path, MAX_IMAGE_FILE_BYTES, "an image")
            except ForeignFileError as exc:
                skipped.append((path, exc.reason))
                return False
            return True

        dataset = ImageFolder(root, transform=T.Compose([
            T.RandomResizedCrop(image_size), T.RandomHorizontalFlip(), T.ToTensor(), T.Normalize(MEAN, STD)]),
            is_valid_file=usable)
        dataset.skipped = skipped
        return dataset

    to_tensor = T.Compose([T.ToTensor(), T.Normalize(MEAN, STD)])

    class VOCBoxes(torch.utils.data.Dataset):
        """Images at their own size; Faster R-CNN's transform resizes them (min_size = image_size)."""

        def __init__(self):
            self.skipped: list[tuple[str, str]] = []
            self.items = voc_items(root, self.skipped)

        def __len__(self):
            return len(self.items)

        def __getitem__(self, i):
            image_path, xml_path = self.items[i]
            boxes, labels = parse_voc_xml(xml_path)
            image = to_tensor(Image.open(image_path).convert("RGB"))
            return image, {"boxes": torch.tensor(boxes, dtype=torch.float32),
                           "labels": torch.tensor(labels, dtype=torch.int64)}

    class ImageMasks(torch.utils.data.Dataset):
        def __init__(self):
            self.skipped: list[tuple[str, str]] = []
            self.items = mask_items(root, self.skipped)

        def __len__(self):
            return len(self.items)

        def __getitem__(self, i):
            image_path, mask_path = self.items[i]
            image = Image.open(image_path).convert("RGB").resize((image_size, image_size), Image.BILINEAR)
            mask = np.array(Image.open(mask_path).convert("L").resize((image_size, image_size), Image.NEAREST))
            mask = normalise_mask(mask)
            return to_tensor(image), torch.from_numpy(mask.astype(np.int64))

    if task == "detect":
        return VOCBoxes()
    if task == "segment":
        return ImageMasks()
    raise ValueError(f"unknown task {task!r}")


def normalise_mask(mask: Any) -> Any:
    """A 0/255 mask becomes 0/1; any other mask is taken as class indices already."""
    import numpy as np

    values = np.unique(mask)
    if values.size <= 2 and set(values.tolist()) <= {0, 255}:
        return (mask > 127).astype(mask.dtype)
    return mask


def _detection_collate(batch):
    images, targets = zip(*batch)
    return list(images), list(targets)


def torch_loader(task: str, root: str, image_size: int, batch: int, workers: int, pin_memory: bool,
                 sampler: Any = None, dataset: Any = None, prefetch_factor: int = LOADER_PREFETCH_BATCHES,
                 collate_fn: Callable[[list], Any] | None = None) -> Any:
    """A DataLoader over ``root`` (or over ``dataset``, made by :func:`torch_dataset`): shuffled (or
    ``sampler``, e.g. DistributedSampler), whole batches only, ``workers`` processes kept alive
    between passes, ``prefetch_factor`` batches prefetched per worker, pinned host memory when the
    data goes to a GPU."""
    import torch

    if dataset is None:
        dataset = torch_dataset(task, root, image_size)
    _check_enough(len(dataset), batch, root)
    kwargs: dict[str, Any] = {}
    if workers > 0:
        kwargs.update(persistent_workers=True, prefetch_factor=prefetch_factor)
    if collate_fn is None and task == "detect":
        collate_fn = _detection_collate
    loader = torch.utils.data.DataLoader(
        dataset, batch_size=batch, shuffle=sampler is None, sampler=sampler, num_workers=workers,
        pin_memory=pin_memory, drop_last=True, collate_fn=collate_fn, **kwargs)
    if len(loader) == 0:  # a DistributedSampler's share can be smaller than one batch
        raise ParamError(f"data: each rank's share of {root} ({len(sampler)} images) is less than one batch of {batch}")
    return loader


class BatchStream:
    """Endless batches from a finite loader; ``wait_s`` sums the time spent waiting in ``next()``.

    ``to_device`` moves a batch (non-blocking copies from pinned memory); its time counts as compute.
    """

    def __init__(self, loader: Iterable, to_device: Callable[[Any], Any] = lambda b: b,
                 on_epoch: Callable[[int], None] | None = None):
        self.loader, self.to_device, self.on_epoch = loader, to_device, on_epoch
        self.epoch = 0
        self.wait_s = 0.0
        #: Wait for the first batch of each epoch after the first. A loader does not prefetch across
        #: epochs, so this is the refill its workers need from empty.
        self.epoch_start_waits_s: list[float] = []
        self._it = None

    def next(self) -> Any:
        start = time.perf_counter()
        if self._it is None:
            self._start_epoch()
        try:
            batch = next(self._it)
        except StopIteration:
            self.epoch += 1
            self._start_epoch()
            batch = next(self._it)
            self.epoch_start_waits_s.append(time.perf_counter() - start)
        self.wait_s += time.perf_counter() - start
        return self.to_device(batch)

    def restart(self) -> None:
        """Start a new epoch now, dropping what the workers prefetched (what an epoch boundary does)."""
        self.epoch += 1
        self._start_epoch()

    def _start_epoch(self) -> None:
        if self.on_epoch is not None:
            self.on_epoch(self.epoch)
        self._it = iter(self.loader)


# -- TensorFlow ------------------------------------------------------------------------------------

def tf_dataset(task: str, root: str, image_size: int, batch: int, workers: int) -> Any:
    """A repeating, shuffled, batched, prefetched ``tf.data.Dataset`` of (images, labels or masks),
    NHWC float32 in [0, 1] normalised like torchvision; decoding runs in ``workers`` parallel calls."""
    import tensorflow as tf

    parallel = workers if workers > 0 else tf.data.AUTOTUNE
    mean, std = tf.constant(MEAN), tf.constant(STD)

    def load_image(path):
        image = tf.io.decode_image(tf.io.read_file(path), channels=3, expand_animations=False)
        image = tf.image.resize(tf.cast(image, tf.float32) / 255.0, (image_size, image_size))
        return (image - mean) / std

    if task == "classify":
        items, _ = image_folder_items(root)
        _check_enough(len(items), batch, root)
        paths, labels = zip(*items)
        ds = tf.data.Dataset.from_tensor_slices((list(paths), list(labels)))
        ds = ds.shuffle(len(paths)).repeat().map(
            lambda p, y: (tf.image.random_flip_left_right(load_image(p)), y), num_parallel_calls=parallel)
    elif task == "segment":
        items = mask_items(root)
        _check_enough(len(items), batch, root)
        images, masks = zip(*items)

        def load_pair(image_path, mask_path):
            mask = tf.io.decode_image(tf.io.read_file(mask_path), channels=1, expand_animations=False)
            mask = tf.image.resize(mask, (image_size, image_size), method="nearest")[..., 0]
            binary = tf.reduce_all((mask == 0) | (mask == 255))
            mask = tf.where(binary, tf.cast(mask > 127, mask.dtype), mask)
            return load_image(image_path), tf.cast(mask, tf.int32)

        ds = tf.data.Dataset.from_tensor_slices((list(images), list(masks)))
        ds = ds.shuffle(len(images)).repeat().map(load_pair, num_parallel_calls=parallel)
    else:
        raise ValueError(f"tf_dataset has no task {task!r}")
    return ds.batch(batch, drop_remainder=True).prefetch(tf.data.AUTOTUNE)
