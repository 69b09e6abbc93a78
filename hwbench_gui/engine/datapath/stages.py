"""Each stage of an image-training input pipeline measured alone, in images per second.

The stages, in the order an image meets them (keys of :data:`STAGES`):

- ``disk_cold`` / ``disk_cached``: the dataset's files read by as many threads as the loader has
  workers, with the page cache dropped per file before the pass (``posix_fadvise(DONTNEED)`` after
  an fsync) and with the files already cached.
- ``decode_1`` / ``decode_n``: PIL decode of the files' bytes (what torchvision's default loader
  does) in one worker process and in N, through ``cpu_decode``'s spawned pool.
- ``augment_1``: RandomResizedCrop + horizontal flip + to float + normalise
  (``torchvision.transforms.v2``) on decoded images, one thread, as one loader worker runs it.
- ``cpu_n``: decode + augment + collate in a real DataLoader with N workers over the files' bytes
  held in memory: the CPU side of the pipeline without the disk.
- ``decode_all`` (what-if, when the loader has fewer workers than usable cores): PIL decode in
  as many processes as there are usable cores, to price "more workers" with the scaling the
  machine really has rather than a linear guess.
- ``gpu_decode`` (CUDA only, what-if): batched nvJPEG decode with ``torchvision.io.decode_jpeg``.
- ``transfer``: collate, then the pinned-memory copy and the host→device copy of whole batches.
- ``compute``: the model benchmark's compute-only training rate (synthetic batch made on the device).
- ``compute_channels_last`` / ``compute_bf16`` (what-if, measured only when compute is the
  slowest link): the same step in channels-last memory format, or under BF16 autocast.
- ``end_to_end``: the same training step fed by the real loader over the files (the measured truth).

torch and torchvision are imported inside the functions.
"""

from __future__ import annotations

import math
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from hwbench_gui.engine.foreign import MAX_IMAGE_FILE_BYTES, read_regular
from hwbench_gui.engine.measure.decode import decode_pil
from hwbench_gui.engine.measure.decode import decode_rates as pool_decode_rates
from hwbench_gui.engine.measure.filesystem import LAYERED_FILESYSTEMS, RAM_FILESYSTEMS, drop_page_cache, filesystem_of
from hwbench_gui.engine.measure.stats import median
from hwbench_gui.engine.models.data import LOADER_PREFETCH_BATCHES, MEAN, STD


@dataclass(frozen=True)
class Stage:
    """How one stage key is named: in results (``title``), on a line of the pipeline view (``label``)
    and, for the stages that can limit the chain, in the verdict's sentence (``phrase``)."""

    title: str
    label: str
    phrase: str = ""


#: Every stage key, declared once, in the order an image meets the stages.
STAGES = {
    "disk_cold": Stage("Disk read (cache bypassed)", "cache bypassed", "uncached file reads"),
    "disk_cached": Stage("Disk read (page cache)", "cached read", "file reads from the page cache"),
    "decode_1": Stage("JPEG decode, 1 worker", "decode, 1 worker"),
    "decode_n": Stage("JPEG decode, N workers", "decode, N workers"),
    "augment_1": Stage("Augment, 1 worker", "augment, 1 worker"),
    "cpu_n": Stage("Decode + augment, N workers", "decode + augment, N workers",
                   "decode + augment in the loader workers"),
    "decode_all": Stage("JPEG decode, every usable core (what-if)", "decode, every core (what-if)"),
    "gpu_decode": Stage("JPEG decode on the GPU (what-if)", "decode on the GPU (what-if)"),
    "transfer": Stage("Collate + pinned copy to device", "pin + copy", "pin + host-to-device copy"),
    "compute": Stage("Model compute only", "model alone", "model compute alone"),
    "compute_channels_last": Stage("Model compute, channels-last (what-if)", "channels-last (what-if)"),
    "compute_bf16": Stage("Model compute, BF16 mixed precision (what-if)", "BF16 (what-if)"),
    "compute_batch2x": Stage("Model compute, twice the batch (what-if)", "2× batch (what-if)"),
    "end_to_end": Stage("End-to-end training", "end to end"),
}

#: The stages whose names above speak of a GPU, as they are when the CPU trains: the batch is only
#: collated (no pinning, no copy) and nothing is decoded on a GPU.
CPU_STAGES = {
    "transfer": Stage("Collate (the CPU trains the model)", "collate", "collate into batches"),
}


def stage_named(key: str, device: str) -> Stage:
    """How stage ``key`` is named on a run whose model trains on ``device`` ('cuda' or 'cpu')."""
    return CPU_STAGES.get(key, STAGES[key]) if device == "cpu" else STAGES[key]


#: Bytes of JPEGs each decode worker holds (a copy per process): enough images for steady rates,
#: bounded so 16 workers on 8-megapixel photos stay far from the memory limit.
DECODE_SET_BYTES = 32 << 20
#: Bytes of JPEGs the in-memory loader stage holds (shared by forked workers).
LOADER_SET_BYTES = 256 << 20
#: Decoded images kept for the augmentation stage.
AUGMENT_SET_IMAGES = 32


@dataclass
class StageResult:
    """One stage's standalone rate. ``rate`` is None (with ``reason``) when it was not measured."""

    key: str
    rate: float | None
    samples: list[float]
    method: str
    reason: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    device: str = "cuda"  # where the model trains: names the stage (stage_named)

    @property
    def title(self) -> str:
        return stage_named(self.key, self.device).title

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "name": self.title, "rate_images_per_s": self.rate, "samples": list(self.samples),
                "method": self.method, "reason": self.reason, **({"extra": self.extra} if self.extra else {})}


def not_measured(key: str, reason: str) -> StageResult:
    return StageResult(key, None, [], "", reason=reason)


# -- allocator -------------------------------------------------------------------------------------

#: glibc starts a process with a 128 KiB mmap threshold and raises it (up to 32 MiB, with the trim
#: threshold at twice that) after the first large free. Whether a process runs before or after
#: that decides whether each decoded image and activation buffer is fresh zeroed pages from the
#: kernel or reused heap: PIL decode of large images differs by up to 2x, CPU training by more.
#: Pinning the raised values (what a long training run settles at) gives every stage and the
#: end-to-end loader the same conditions.
MMAP_THRESHOLD_BYTES = 32 << 20
TRIM_THRESHOLD_BYTES = 64 << 20


def pin_malloc_behaviour() -> str:
    """Pin glibc's mmap and trim thresholds here (forked workers inherit them) and in the
    environment (spawned workers read it at start). Returns what was done, for the method text."""
    os.environ["MALLOC_MMAP_THRESHOLD_"] = str(MMAP_THRESHOLD_BYTES)
    os.environ["MALLOC_TRIM_THRESHOLD_"] = str(TRIM_THRESHOLD_BYTES)
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        m_trim_threshold, m_mmap_threshold = -1, -3
        if libc.mallopt(m_mmap_threshold, MMAP_THRESHOLD_BYTES) == 1 and \
                libc.mallopt(m_trim_threshold, TRIM_THRESHOLD_BYTES) == 1:
            return (f"glibc mmap/trim thresholds pinned at {MMAP_THRESHOLD_BYTES >> 20}/"
                    f"{TRIM_THRESHOLD_BYTES >> 20} MiB "
                    "in every process (the values glibc settles at in a long run; a fresh process starts lower, "
                    "which changes decode speed)")
    except (OSError, AttributeError):
        pass
    return "allocator left as is (not glibc)"


# -- reading and decoding, shared by the stages and the end-to-end loader ---------------------------

def read_file(path: str, delay_s: float = 0.0) -> bytes:
    """The file's bytes, read as every foreign file is (a regular file, a bounded read: a file swapped
    for a pipe or a device after the dataset was screened is refused, naming it); ``delay_s`` is
    slept first (the ``read_delay_ms`` what-if knob)."""
    if delay_s > 0:
        time.sleep(delay_s)
    return read_regular(path, MAX_IMAGE_FILE_BYTES, "an image")


def train_transform(image_size: int) -> Any:
    """The ImageNet training recipe in ``torchvision.transforms.v2``: RandomResizedCrop to
    ``image_size``, random horizontal flip, to float32 in [0, 1], normalise."""
    import torch
    from torchvision.transforms import v2

    return v2.Compose([v2.RandomResizedCrop(image_size, antialias=True), v2.RandomHorizontalFlip(), v2.ToImage(),
                       v2.ToDtype(torch.float32, scale=True), v2.Normalize(MEAN, STD)])


def uint8_transform(image_size: int) -> Any:
    """:func:`train_transform` up to the crop and flip, ending in a uint8 tensor: the float
    conversion and normalisation are left to the device (``gpu_augment.DeviceNormalize``)."""
    from torchvision.transforms import v2

    return v2.Compose([v2.RandomResizedCrop(image_size, antialias=True), v2.RandomHorizontalFlip(),
                       v2.PILToTensor()])


class FileImages:
    """Map-style dataset over files: read (after ``read_delay_s``), PIL decode, ``transform``.

    A plain class (no torch import here) that DataLoader accepts; ``classes`` as ImageFolder has it.
    """

    def __init__(self, files: Sequence[str], labels: Sequence[int], classes: Sequence[str], transform: Any,
                 read_delay_s: float = 0.0):
        self.files, self.labels, self.classes = list(files), list(labels), list(classes)
        self.transform, self.read_delay_s = transform, read_delay_s

    def __len__(self) -> int:
        return len(self.files)

    def __getitem__(self, i: int) -> tuple[Any, int]:
        return self.transform(decode_pil(read_file(self.files[i], self.read_delay_s))), self.labels[i]


class MemoryImages:
    """Map-style dataset over JPEG bytes already in memory: PIL decode, ``transform``."""

    def __init__(self, jpegs: Sequence[bytes], labels: Sequence[int], transform: Any):
        self.jpegs, self.labels, self.transform = list(jpegs), list(labels), transform

    def __len__(self) -> int:
        return len(self.jpegs)

    def __getitem__(self, i: int) -> tuple[Any, int]:
        return self.transform(decode_pil(self.jpegs[i])), self.labels[i]


def subset_by_bytes(files: Sequence[str], mean_bytes: float, budget_bytes: int, minimum: int = 8) -> list[str]:
    """The first files whose expected total size fits ``budget_bytes`` (at least ``minimum``)."""
    n = max(minimum, int(budget_bytes / max(1.0, mean_bytes)))
    return list(files[:n])


# -- disk ------------------------------------------------------------------------------------------

def cache_bypass(root: str) -> tuple[str, str | None]:
    """(how the cache is bypassed, a warning or None) for files under ``root``."""
    _, fstype, _ = filesystem_of(root)
    if fstype in RAM_FILESYSTEMS:
        return "none", f"{root} is on {fstype} (memory-backed): 'cache bypassed' reads are RAM reads"
    if not hasattr(os, "posix_fadvise"):
        return "none", "this OS has no posix_fadvise: the cold read may be served from the page cache"
    if fstype in LAYERED_FILESYSTEMS:
        return "fadvise(DONTNEED)", (f"{root} is on {fstype}: dropping the cache may not reach the lower layer, so "
                                     "the cold read may be partly RAM speed")
    return "fadvise(DONTNEED)", None


def disk_read(files: Sequence[str], threads: int, *, cold: bool, repeats: int, read_delay_s: float = 0.0,
              max_files: int = 4096) -> StageResult:
    """Files/s of ``threads`` threads each reading whole files (one sample per pass over the files).

    ``cold``: the files' cached pages are dropped before each pass; otherwise one untimed pass
    fills the cache first. Threads stand for loader workers: each reads one file at a time.
    """
    files = list(files[:max_files])
    total_bytes = sum(os.path.getsize(p) for p in files)
    bypass, warning = cache_bypass(os.path.dirname(files[0])) if cold else ("n/a", None)
    samples = []
    with ThreadPoolExecutor(max_workers=threads) as pool:
        if not cold:
            list(pool.map(read_file, files))
        for _ in range(repeats):
            if cold:
                drop_page_cache(files)
            start = time.perf_counter()
            got = sum(map(len, pool.map(lambda p: read_file(p, read_delay_s), files)))
            samples.append(len(files) / (time.perf_counter() - start))
            if got != total_bytes:
                raise OSError(f"read {got} bytes, expected {total_bytes}: files changed during the read")
    delay = f", {read_delay_s * 1e3:g} ms slept before each read (read_delay_ms what-if)" if read_delay_s else ""
    if cold:
        how = (f"page cache dropped per file before each pass ({bypass})" if bypass != "none"
               else "page cache NOT bypassed (the rate may be RAM speed)")
    else:
        how = "after one untimed pass that put the files in the page cache"
    method = (f"{len(files)} files ({total_bytes / 2**20:.1f} MiB) read whole by {threads} threads (one per loader "
              f"worker), {how}{delay}; {repeats} passes, images/s = files / wall time of the pass.")
    extra = {"files": len(files), "bytes": total_bytes, "threads": threads,
             "mb_per_s": median(samples) * total_bytes / len(files) / 1e6}
    if cold:
        extra["cache_bypass"] = bypass
        if warning:
            extra["warning"] = warning
    return StageResult("disk_cold" if cold else "disk_cached", median(samples), samples, method, extra=extra)


# -- CPU -------------------------------------------------------------------------------------------

def decode_rates(jpegs: list[bytes], workers: int, stage_s: float, repeats: int,
                 what_if_workers: int | None = None) -> dict[str, StageResult]:
    """PIL decode in 1 and in ``workers`` spawned processes (``cpu_decode``'s pool; bytes in memory):
    ``decode_1`` and ``decode_n``, and ``decode_all`` in ``what_if_workers`` processes when that
    count is larger than ``workers``."""
    start = time.perf_counter()
    for data in jpegs:
        decode_pil(data)
    one_pass_s = time.perf_counter() - start
    passes = max(1, math.ceil(stage_s / max(one_pass_s, 1e-9)))
    what = (f"PIL Image.open(...).convert('RGB') of {len(jpegs)} of the dataset's JPEGs held in each worker's "
            f"memory (no disk), {passes} passes per repeat in a pool of spawned processes after a warm-up pass; "
            f"{repeats} repeats, images/s = images decoded by all workers / wall time.")
    one = pool_decode_rates("pil", jpegs, 1, passes, repeats)
    out = {"decode_1": StageResult("decode_1", median(one), one, "1 worker: " + what)}

    def at(key: str, n: int, label: str) -> StageResult:
        many = pool_decode_rates("pil", jpegs, n, passes, repeats)
        return StageResult(key, median(many), many, f"{n} workers{label}: " + what,
                           extra={"workers": n, "scaling_efficiency": median(many) / (n * median(one))})

    out["decode_n"] = StageResult("decode_n", median(one), one, "1 worker (workers = 1): " + what,
                                  extra={"workers": 1, "scaling_efficiency": 1.0}) if workers <= 1 \
        else at("decode_n", workers, "")
    if what_if_workers is not None and what_if_workers > max(1, workers):
        out["decode_all"] = at("decode_all", what_if_workers, " (every usable core; what-if for more loader "
                               "workers)")
    return out


def augment_rate(images: list[Any], image_size: int, stage_s: float, repeats: int) -> tuple[StageResult, list[Any]]:
    """Images/s of the training transform on decoded images in one thread; also returns the outputs
    of the last pass (tensors for the transfer stage)."""
    import torch

    transform = train_transform(image_size)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a DataLoader worker runs with one intra-op thread
    try:
        outputs = [transform(image) for image in images]  # warm-up
        start = time.perf_counter()
        outputs = [transform(image) for image in images]
        one_pass_s = time.perf_counter() - start
        passes = max(1, math.ceil(stage_s / max(one_pass_s, 1e-9)))
        samples = []
        for _ in range(repeats):
            start = time.perf_counter()
            for _ in range(passes):
                outputs = [transform(image) for image in images]
            samples.append(passes * len(images) / (time.perf_counter() - start))
    finally:
        torch.set_num_threads(threads)
    size = images[0].size
    method = (f"torchvision.transforms.v2 RandomResizedCrop({image_size}, antialias) + RandomHorizontalFlip + "
              f"ToImage + ToDtype(float32, scale) + Normalize(ImageNet mean/std) on {len(images)} decoded "
              f"{size[0]}×{size[1]} PIL images, one thread (torch.set_num_threads(1), as in a loader worker); "
              f"{passes} passes per repeat after a warm-up pass, {repeats} repeats.")
    return StageResult("augment_1", median(samples), samples, method), outputs


def cpu_pipeline_rate(jpegs: list[bytes], labels: list[int], image_size: int, batch: int, workers: int,
                      stage_s: float, repeats: int, estimate_images_per_s: float) -> StageResult:
    """Images/s of a DataLoader with ``workers`` processes decoding, augmenting and collating
    in-memory JPEGs: the CPU side of the pipeline without the disk or the consumer."""
    import torch

    dataset = MemoryImages(jpegs, labels, train_transform(image_size))
    # Windows of several batches per worker: a worker's half-done batch at a window's edge then
    # shifts the rate by little.
    per_repeat = max(4 * max(1, workers), math.ceil(stage_s * estimate_images_per_s / batch))
    # The end-to-end loader's prefetch depth: with in-order delivery a shallower queue idles workers
    # behind a slow batch, and the stage would then understate the loader.
    warmup = LOADER_PREFETCH_BATCHES * max(1, workers) + 1  # drains the prefetched batches
    total = warmup + repeats * per_repeat
    sampler = torch.utils.data.RandomSampler(dataset, replacement=True, num_samples=total * batch)
    kwargs = {"prefetch_factor": LOADER_PREFETCH_BATCHES} if workers > 0 else {}
    loader = torch.utils.data.DataLoader(dataset, batch_size=batch, sampler=sampler, num_workers=workers,
                                         drop_last=True, **kwargs)
    samples = []
    iterator = iter(loader)
    try:
        for _ in range(warmup):
            next(iterator)
        for _ in range(repeats):
            start = time.perf_counter()
            for _ in range(per_repeat):
                next(iterator)
            samples.append(per_repeat * batch / (time.perf_counter() - start))
    finally:
        del iterator  # stops the worker processes
    method = (f"torch DataLoader, {workers} worker processes, batch {batch}, prefetch {LOADER_PREFETCH_BATCHES} "
              f"batches per worker (as the end-to-end loader), over {len(jpegs)} of the dataset's "
              f"JPEGs held in memory (no disk, no pinning, no consumer): PIL decode + the training transform + "
              f"default collate. {warmup} untimed batches drain the prefetch queue, then {repeats} repeats of "
              f"{per_repeat} batches; images/s = images / wall time.")
    return StageResult("cpu_n", median(samples), samples, method, extra={"workers": workers, "batch": batch})


# -- GPU side --------------------------------------------------------------------------------------

def gpu_decode_rate(jpegs: list[bytes], device: Any, stage_s: float, repeats: int) -> StageResult:
    """Images/s of batched nvJPEG decode (``torchvision.io.decode_jpeg(..., device=cuda)``)."""
    import torch
    from torchvision.io import decode_jpeg

    data = [torch.frombuffer(bytearray(j), dtype=torch.uint8) for j in jpegs]

    def once() -> None:
        decode_jpeg(data, device=device)

    once()
    torch.cuda.synchronize(device)
    start = time.perf_counter()
    once()
    torch.cuda.synchronize(device)
    calls = max(1, math.ceil(stage_s / max(time.perf_counter() - start, 1e-9)))
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            once()
        torch.cuda.synchronize(device)
        samples.append(calls * len(data) / (time.perf_counter() - start))
    method = (f"torchvision.io.decode_jpeg on {device} (nvJPEG), a list of {len(data)} JPEGs per call from host "
              f"memory, {calls} calls per repeat after a warm-up call, synchronized; {repeats} repeats. Decode only "
              "(crop and normalise would also run on the GPU); measured to price the GPU-decode advice.")
    return StageResult("gpu_decode", median(samples), samples, method)


def transfer_rate(samples_in: list[Any], batch: int, device: Any, stage_s: float, repeats: int) -> StageResult:
    """Images/s of collating ``batch`` augmented samples and, on CUDA, pinning and copying the batch.

    Only pin + copy run in the training process in a real loader (collate runs in the workers), so
    the rate of that part is the stage's rate; the collate rate alone is in ``extra``.
    """
    import torch
    from torch.utils.data import default_collate

    cuda = device.type == "cuda"
    items = [(samples_in[i % len(samples_in)], i % 2) for i in range(batch)]
    collated = default_collate(items)

    def collate() -> None:
        default_collate(items)

    def pin_copy() -> None:
        images, labels = collated
        images.pin_memory().to(device, non_blocking=True)
        labels.pin_memory().to(device, non_blocking=True)
        torch.cuda.synchronize(device)

    def timed(fn: Callable[[], None]) -> list[float]:
        fn()
        start = time.perf_counter()
        fn()
        inner = max(1, math.ceil(stage_s / 2 / max(time.perf_counter() - start, 1e-9)))
        rates = []
        for _ in range(repeats):
            start = time.perf_counter()
            for _ in range(inner):
                fn()
            rates.append(inner * batch / (time.perf_counter() - start))
        return rates

    collate_rates = timed(collate)
    shape = "×".join(map(str, collated[0].shape))
    extra = {"collate_images_per_s": median(collate_rates), "collate_samples": collate_rates,
             "batch_bytes": collated[0].numel() * collated[0].element_size()}
    if not cuda:
        method = (f"default_collate of {batch} augmented float32 samples into one {shape} batch, one thread; no "
                  "pinning or copy: the device is the CPU, the batch is used where it is.")
        return StageResult("transfer", median(collate_rates), collate_rates, method, extra=extra, device="cpu")
    copy_rates = timed(pin_copy)
    method = (f"Pinned copy (Tensor.pin_memory(), as the DataLoader's pin-memory thread does) of a collated {shape} "
              f"float32 batch ({extra['batch_bytes'] / 2**20:.0f} MiB) and its labels, then .to({device}, "
              "non_blocking=True) and a synchronize, one thread. This part runs in the training process; collate "
              f"runs in the loader workers (alone: {median(collate_rates):.0f} images/s in one thread).")
    return StageResult("transfer", median(copy_rates), copy_rates, method, extra=extra)


def timed_run_stage(key: str, run: Any, method: str) -> StageResult:
    """A stage from a model benchmark :class:`~hwbench_gui.engine.models.common.TimedRun`:
    rate = the median of the timed windows' images/s (the document's headline figure of the run);
    samples = each window's images/s; the all-windows rate is kept as ``total_images_per_s``."""
    samples = run.window_rates()
    extra = {"batch": run.batch, "steps": run.steps, "total_s": run.total_s, "data_wait_s": run.data_wait_s,
             "window_steps": list(run.window_steps), "total_images_per_s": run.images_per_s()}
    return StageResult(key, window_median(run), samples, method, extra=extra)


def window_median(run: Any) -> float:
    """The median of a TimedRun's window rates: how every loader-fed and compute-only rate is compared
    (one window slowed by a start-up transient moves the total, not the median of three)."""
    return median(run.window_rates())
