"""JPEG decode and the training augmentation in the training process, on the device.

The loader workers only read the files' bytes; the training process decodes the whole batch with
``torchvision.io.decode_jpeg(list, device=...)`` (nvJPEG on a GPU), then crops and resizes every
image in one ``torchvision.ops.roi_align`` call (bilinear, 2×2 samples per output pixel), flips
half of them and normalises: the pipeline NVIDIA DALI builds, from torchvision alone. On the CPU
the same code decodes with libjpeg in the training process (the tests use that path).

The training process does that work in a thread of its own, on its own CUDA stream, one or two
batches ahead of the step (:class:`DevicePrefetch`), as DALI's pipeline does: the step's kernels and
the next batch's decode then overlap, and the step waits only when the decode is the slower.

:class:`DeviceNormalize` is the lighter variant: the workers still decode and crop, but stop at
uint8 tensors, and the float conversion and normalisation run on the device (NVIDIA
DeepLearningExamples' ``fast_collate``): less work per image in the workers and a quarter of the bytes
through shared memory, pinning and PCIe.

The crop boxes follow ``RandomResizedCrop``'s rule (area 8-100 % of the image, aspect ratio 3/4 to
4/3, ten tries, then the centre crop of the clamped ratio). torch and torchvision are imported
inside.
"""

from __future__ import annotations

import math
import queue
import random
import threading
from typing import Any, Callable, Iterable, Sequence

from hwbench_gui.engine.datapath.stages import read_file
from hwbench_gui.engine.models.data import MEAN, STD

SCALE = (0.08, 1.0)
RATIO = (3 / 4, 4 / 3)


class JpegFiles:
    """Map-style dataset of (the file's bytes as a uint8 tensor, label); ``classes`` as ImageFolder has it."""

    def __init__(self, files: Sequence[str], labels: Sequence[int], classes: Sequence[str], read_delay_s: float = 0.0):
        self.files, self.labels, self.classes = list(files), list(labels), list(classes)
        self.read_delay_s = read_delay_s

    def __len__(self) -> int:
        return len(self.files)

    def __getitem__(self, i: int) -> tuple[Any, int]:
        import torch

        return torch.frombuffer(bytearray(read_file(self.files[i], self.read_delay_s)), dtype=torch.uint8), \
            self.labels[i]


def collate_jpegs(items: list[tuple[Any, int]]) -> tuple[Any, Any, Any]:
    """(the batch's encoded JPEGs end to end in one uint8 tensor, their lengths, labels): one
    tensor per batch crosses from the worker (a shared-memory segment each) and is pinned, not one
    per image."""
    import torch

    datas = [data for data, _ in items]
    return (torch.cat(datas), torch.tensor([len(d) for d in datas], dtype=torch.int64),
            torch.tensor([label for _, label in items], dtype=torch.int64))


def crop_box(width: int, height: int, rng: random.Random) -> tuple[float, float, float, float]:
    """(x1, y1, x2, y2) of one RandomResizedCrop draw on a ``width`` × ``height`` image."""
    area = width * height
    log_ratio = (math.log(RATIO[0]), math.log(RATIO[1]))
    for _ in range(10):
        target = area * rng.uniform(*SCALE)
        ratio = math.exp(rng.uniform(*log_ratio))
        w = round(math.sqrt(target * ratio))
        h = round(math.sqrt(target / ratio))
        if 0 < w <= width and 0 < h <= height:
            x, y = rng.randint(0, width - w), rng.randint(0, height - h)
            return float(x), float(y), float(x + w), float(y + h)
    in_ratio = width / height
    if in_ratio < RATIO[0]:
        w, h = width, round(width / RATIO[0])
    elif in_ratio > RATIO[1]:
        w, h = round(height * RATIO[1]), height
    else:
        w, h = width, height
    x, y = (width - w) // 2, (height - h) // 2
    return float(x), float(y), float(x + w), float(y + h)


def normalise_uint8(device: Any) -> tuple[Any, Any]:
    """(scale, shift) on ``device`` that turn uint8 pixels x into ``(x / 255 - mean) / std`` as one
    multiply-add, ImageNet's mean and std per channel, shaped (1, 3, 1, 1)."""
    import torch

    std = torch.tensor(STD, device=device).view(1, 3, 1, 1)
    return 1 / (255 * std), -torch.tensor(MEAN, device=device).view(1, 3, 1, 1) / std


class DeviceDecodeAugment:
    """Turns a loader batch of encoded JPEGs into the step's normalised float batch on ``device``."""

    def __init__(self, device: Any, channels_last: bool, image_size: int, seed: int = 0):
        self.device, self.channels_last, self.size = device, channels_last, image_size
        self.rng = random.Random(seed)
        self.scale, self.shift = normalise_uint8(device)

    def __call__(self, batch: tuple[Any, Any, Any]) -> tuple[Any, Any]:
        import torch
        from torchvision.io import decode_jpeg
        from torchvision.ops import roi_align

        data, lengths, labels = batch
        images = decode_jpeg(list(torch.split(data, lengths.tolist())), device=self.device)
        if not isinstance(images, list):
            images = [images]
        heights = [im.shape[-2] for im in images]
        widths = [im.shape[-1] for im in images]
        if len(set(heights)) == 1 and len(set(widths)) == 1:
            stacked = torch.stack(images)
        else:  # pad to the largest: each box stays inside its own image
            stacked = torch.zeros((len(images), 3, max(heights), max(widths)), dtype=torch.uint8, device=self.device)
            for i, im in enumerate(images):
                stacked[i, :, :im.shape[-2], :im.shape[-1]] = im
        boxes = [(i, *crop_box(w, h, self.rng)) for i, (w, h) in enumerate(zip(widths, heights))]
        rois = torch.tensor(boxes, dtype=torch.float32).to(self.device, non_blocking=True)
        out = roi_align(stacked.float(), rois, output_size=self.size, spatial_scale=1.0, sampling_ratio=2,
                        aligned=True)
        flip = torch.tensor([self.rng.random() < 0.5 for _ in images]).to(self.device, non_blocking=True)
        out = torch.where(flip.view(-1, 1, 1, 1), out.flip(-1), out)
        out = out * self.scale + self.shift
        if self.channels_last:
            out = out.contiguous(memory_format=torch.channels_last)
        return out, labels.to(self.device, non_blocking=True)


class DeviceNormalize:
    """Turns a loader batch of uint8 images (N, 3, H, W) into the step's normalised float batch on
    ``device``: the copy moves bytes, the device does ``(x / 255 - mean) / std`` as one multiply-add."""

    def __init__(self, device: Any, channels_last: bool):
        self.device, self.channels_last = device, channels_last
        self.scale, self.shift = normalise_uint8(device)

    def __call__(self, batch: tuple[Any, Any]) -> tuple[Any, Any]:
        import torch

        images, labels = batch
        images = images.to(self.device, non_blocking=True)
        if self.channels_last:  # the layout first, on uint8: the float batch is then written once, in NHWC
            images = images.contiguous(memory_format=torch.channels_last)
        out = images.float()  # keeps the layout; so do the in-place operations
        out.mul_(self.scale).add_(self.shift)
        return out, labels.to(self.device, non_blocking=True)


#: Device batches the prefetch thread may hold ready.
PREFETCH_DEPTH = 2


class DevicePrefetch:
    """Iterates ``loader`` with each batch turned into a device batch by ``fn`` in a thread, on its
    own CUDA stream, up to :data:`PREFETCH_DEPTH` batches ahead. A new ``iter()`` stops the thread
    of the last one first (a loader with persistent workers resets its one iterator)."""

    def __init__(self, loader: Iterable, fn: Callable[[Any], Any], device: Any):
        self.loader, self.fn, self.device = loader, fn, device
        self._current: _PrefetchIterator | None = None

    def __len__(self) -> int:
        return len(self.loader)  # type: ignore[arg-type]

    def __iter__(self) -> "_PrefetchIterator":
        if self._current is not None:
            self._current.close()
        self._current = _PrefetchIterator(iter(self.loader), self.fn, self.device)
        return self._current


class _PrefetchIterator:
    def __init__(self, source: Any, fn: Callable[[Any], Any], device: Any):
        import torch

        self._queue: queue.Queue = queue.Queue(PREFETCH_DEPTH)
        self._stop = threading.Event()
        self._stream = torch.cuda.Stream(device) if device.type == "cuda" else None
        self._device = device
        self._thread = threading.Thread(target=self._run, args=(source, fn), daemon=True,
                                        name="hwbench-device-prefetch")
        self._thread.start()

    def _put(self, item: tuple[Any, Any, BaseException | None]) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _run(self, source: Any, fn: Callable[[Any], Any]) -> None:
        import torch

        try:
            for batch in source:
                if self._stop.is_set():
                    return
                if self._stream is None:
                    out, event = fn(batch), None
                else:
                    with torch.cuda.stream(self._stream):
                        out = fn(batch)
                        event = torch.cuda.Event()
                        event.record(self._stream)
                if not self._put((out, event, None)):
                    return
            self._put((None, None, StopIteration()))
        except Exception as exc:  # handed to the consumer, which raises it where the step asked for data
            self._put((None, None, exc))

    def __iter__(self) -> "_PrefetchIterator":
        return self

    def __next__(self) -> Any:
        import torch

        out, event, exc = self._queue.get()
        if isinstance(exc, StopIteration):
            raise StopIteration
        if exc is not None:
            raise exc
        if event is not None:
            current = torch.cuda.current_stream(self._device)
            current.wait_event(event)
            for tensor in out:  # made on the prefetch stream, used and freed on this one
                tensor.record_stream(current)
        return out

    def close(self) -> None:
        self._stop.set()
        self._thread.join()


def device_decode(image_size: int) -> Callable[[Iterable, Any, bool], DevicePrefetch]:
    """A ``LoaderOptions.on_device`` factory: the loader's JPEG batches decoded and augmented on the
    device by :class:`DeviceDecodeAugment`, prefetched by :class:`DevicePrefetch`."""
    return lambda loader, device, channels_last: DevicePrefetch(
        loader, DeviceDecodeAugment(device, channels_last, image_size), device)


def device_normalize(loader: Iterable, device: Any, channels_last: bool) -> DevicePrefetch:
    """A ``LoaderOptions.on_device``: the loader's uint8 batches copied, converted and normalised on
    the device by :class:`DeviceNormalize`, prefetched by :class:`DevicePrefetch`."""
    return DevicePrefetch(loader, DeviceNormalize(device, channels_last), device)
