"""The analyzer tries its own advice: loader and model settings, each measured end to end.

A :class:`LoaderConfig` is one way to set up the training loop (worker count, prefetch depth,
pinned memory, memory format, where JPEGs are decoded, where batches are turned into normalised
floats). :func:`candidates` lists the cheap single
changes from the default configuration, most promising first; :func:`combined` builds the
configuration that takes every change that measured better; :func:`snippet` writes a
configuration as code a user can paste. Pure functions, no torch import: the measuring is done by
``datapath_analyze``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

from hwbench_gui.engine.spec.precision import from_label

#: A change counts as better when it beats the configuration it changes by more than this share
#: (the spread between timed windows of one configuration on a quiet machine is a few per cent).
BETTER_BY = 0.03


@dataclass(frozen=True)
class LoaderConfig:
    workers: int
    prefetch: int
    pin_memory: bool
    channels_last: bool
    gpu_decode: bool = False
    #: The workers stop at uint8 crops; the float conversion and normalisation run on the device
    #: (NVIDIA DeepLearningExamples' ``fast_collate``): less CPU work per image and a quarter of
    #: the bytes through shared memory, pinning and PCIe. Implied by ``gpu_decode``.
    normalize_on_device: bool = False

    def describe(self) -> str:
        parts = [f"{self.workers} worker{'' if self.workers == 1 else 's'}"
                 + (f", prefetch {self.prefetch}" if self.workers else " (the training process loads)"),
                 "pinned" if self.pin_memory else "pageable", "channels-last" if self.channels_last else "NCHW",
                 "decode + augment on the device" if self.gpu_decode else "decode + augment in the workers"]
        if self.normalize_on_device and not self.gpu_decode:
            parts.append("uint8 batches normalised on the device")
        return ", ".join(parts)

    def changes_from(self, base: "LoaderConfig") -> str:
        """What differs from ``base``, in words ('' when nothing does)."""
        out = []
        if self.workers != base.workers:
            out.append(f"num_workers {base.workers} → {self.workers}")
        if self.prefetch != base.prefetch:
            out.append(f"prefetch_factor {base.prefetch} → {self.prefetch}")
        if self.pin_memory != base.pin_memory:
            out.append("pin_memory " + ("on" if self.pin_memory else "off"))
        if self.channels_last != base.channels_last:
            out.append("channels-last " + ("on" if self.channels_last else "off"))
        if self.gpu_decode != base.gpu_decode:
            out.append("JPEG decode + augment on the GPU (nvJPEG)" if self.gpu_decode
                       else "decode + augment back in the workers")
        if self.normalize_on_device != base.normalize_on_device and not self.gpu_decode:
            out.append("uint8 batches, float conversion + normalise on the device" if self.normalize_on_device
                       else "float conversion + normalise back in the workers")
        return ", ".join(out)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Tried:
    """One configuration measured end to end (``rate`` None with ``reason`` when it failed or the
    budget ran out)."""

    key: str
    config: LoaderConfig
    rate: float | None
    samples: list[float]
    seconds: float
    reason: str | None = None
    data_wait_fraction: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "config": self.config.to_json(), "describe": self.config.describe(),
                "rate_images_per_s": self.rate, "samples": list(self.samples), "seconds": self.seconds,
                "reason": self.reason, "data_wait_fraction": self.data_wait_fraction}


def worker_counts(cpus: int) -> list[int]:
    """All, all-1, all-2 and half of the CPUs (distinct, at least 0), in that order."""
    out: list[int] = []
    for n in (cpus, cpus - 1, cpus - 2, cpus // 2):
        if n >= 0 and n not in out:
            out.append(n)
    return out


def candidates(base: LoaderConfig, cpus: int, cuda: bool) -> list[tuple[str, LoaderConfig]]:
    """Single changes from ``base``, most promising first (keys name the change)."""
    out: list[tuple[str, LoaderConfig]] = []
    workers = [(f"workers_{n}", replace(base, workers=n)) for n in worker_counts(cpus) if n != base.workers]
    if not cuda:  # training shares the cores with the workers: their count matters most
        out += workers
    if not base.channels_last:
        out.append(("channels_last", replace(base, channels_last=True)))
    if cuda and not base.gpu_decode:
        out.append(("gpu_decode", replace(base, gpu_decode=True)))
        if not base.normalize_on_device:
            out.append(("normalize_on_device", replace(base, normalize_on_device=True)))
    if cuda:
        out += workers
    if base.workers > 0:
        out.append((f"prefetch_{base.prefetch * 2}", replace(base, prefetch=base.prefetch * 2)))
    if cuda:
        out.append(("pin_off" if base.pin_memory else "pin_on", replace(base, pin_memory=not base.pin_memory)))
    return out


def _better(a: float | None, b: float | None) -> bool:
    return a is not None and b is not None and a > b * (1 + BETTER_BY)


def changed_fields(config: LoaderConfig, base: LoaderConfig) -> set[str]:
    a, b = asdict(config), asdict(base)
    return {k for k in a if a[k] != b[k]}


def combined(base: LoaderConfig, base_rate: float, tried: list[Tried], gpu_decode: bool) -> LoaderConfig | None:
    """``base`` with every single change that measured better, for one decode placement: the best
    worker count and prefetch depth among those tried, pinning and channels-last when they helped.
    With ``gpu_decode`` the measured GPU-decode configuration is the start (None when it was not
    measured), and the worker count is kept: its workers only read files."""
    singles = [t for t in tried if t.rate is not None and len(changed_fields(t.config, base)) == 1]
    config = base
    if gpu_decode:
        gpu = next((t for t in singles if changed_fields(t.config, base) == {"gpu_decode"}), None)
        if gpu is None:
            return None
        config = gpu.config
    for name in ("workers", "prefetch", "pin_memory", "channels_last", "normalize_on_device"):
        if gpu_decode and name in ("workers", "normalize_on_device"):
            continue
        options = [t for t in singles if changed_fields(t.config, base) == {name}]
        top = max(options, key=lambda t: t.rate, default=None)
        if top is not None and _better(top.rate, base_rate):
            config = replace(config, **{name: getattr(top.config, name)})
    return config


def best(base_rate: float, base: LoaderConfig, tried: list[Tried], gpu_decode: bool | None = None) -> Tried | None:
    """The fastest measured configuration (``gpu_decode`` True/False restricts the decode
    placement); the default configuration counts as measured at ``base_rate``."""
    pool = [Tried("default", base, base_rate, [], 0.0)] + [t for t in tried if t.rate is not None]
    if gpu_decode is not None:
        pool = [t for t in pool if t.config.gpu_decode == gpu_decode]
    return max(pool, key=lambda t: t.rate, default=None)


def snippet(config: LoaderConfig, *, model: str, precision: str, batch: int, image_size: int, cuda: bool) -> str:
    """The configuration as PyTorch code (DataLoader, transforms, model settings) to paste."""
    declared = from_label(precision)
    amp = f"torch.{declared.autocast_dtype}" if declared and declared.autocast_dtype else None
    device = "cuda" if cuda else "cpu"
    lines = ["import torch, torchvision", "from torchvision.transforms import v2", "",
             "root = 'path/to/train'  # an ImageFolder tree: root/<class>/<image>.jpg", ""]
    loader_args = [f"batch_size={batch}", "drop_last=True", f"num_workers={config.workers}"]
    if config.workers > 0:
        loader_args += ["persistent_workers=True", f"prefetch_factor={config.prefetch}"]
    if cuda:
        loader_args.append(f"pin_memory={config.pin_memory}")
    sampler = "sampler=torch.utils.data.RandomSampler(dataset, num_samples=8 * len(dataset))"
    if config.gpu_decode:
        lines += [
            "# Workers read the files' bytes; the GPU decodes (nvJPEG) and augments.",
            "class JpegBytes(torch.utils.data.Dataset):",
            "    def __init__(self, root):",
            "        self.items = torchvision.datasets.ImageFolder(root).samples",
            "    def __len__(self):",
            "        return len(self.items)",
            "    def __getitem__(self, i):",
            "        path, label = self.items[i]",
            "        return torchvision.io.read_file(path), label",
            "",
            "def collate(items):",
            "    return [d for d, _ in items], torch.tensor([y for _, y in items])",
            "",
            "dataset = JpegBytes(root)",
            "loader = torch.utils.data.DataLoader(dataset, " + ", ".join(loader_args + ["collate_fn=collate"]) + ",",
            f"                                     {sampler})",
            f"augment = v2.Compose([v2.RandomResizedCrop({image_size}, antialias=True), v2.RandomHorizontalFlip()])",
            "mean = torch.tensor([0.485, 0.456, 0.406], device='cuda').view(1, 3, 1, 1) * 255",
            "std = torch.tensor([0.229, 0.224, 0.225], device='cuda').view(1, 3, 1, 1) * 255",
            "",
            "def to_device(batch):",
            "    jpegs, labels = batch",
            "    images = torchvision.io.decode_jpeg(jpegs, device='cuda')",
            "    images = torch.stack([augment(im) for im in images]).float()",
            "    # hwbench measured one torchvision.ops.roi_align call for the whole batch's crops instead",
            "    return (images - mean) / std, labels.cuda(non_blocking=True)",
        ]
    elif config.normalize_on_device:
        lines += [
            "# Workers stop at uint8 crops; the float conversion and normalisation run on the GPU.",
            f"transform = v2.Compose([v2.RandomResizedCrop({image_size}, antialias=True), v2.RandomHorizontalFlip(),",
            "                       v2.PILToTensor()])",
            "dataset = torchvision.datasets.ImageFolder(root, transform=transform)",
            "loader = torch.utils.data.DataLoader(dataset, " + ", ".join(loader_args) + ",",
            f"                                     {sampler})",
            f"mean = torch.tensor([0.485, 0.456, 0.406], device='{device}').view(1, 3, 1, 1) * 255",
            f"std = torch.tensor([0.229, 0.224, 0.225], device='{device}').view(1, 3, 1, 1) * 255",
            "",
            "def to_device(batch):",
            "    images, labels = batch",
            f"    images = images.to('{device}', non_blocking=True).float()",
            *(["    images = images.contiguous(memory_format=torch.channels_last)"] if config.channels_last else []),
            f"    return (images - mean) / std, labels.to('{device}', non_blocking=True)",
        ]
    else:
        lines += [
            f"transform = v2.Compose([v2.RandomResizedCrop({image_size}, antialias=True), v2.RandomHorizontalFlip(),",
            "                       v2.ToImage(), v2.ToDtype(torch.float32, scale=True),",
            "                       v2.Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))])",
            "dataset = torchvision.datasets.ImageFolder(root, transform=transform)",
            "# several passes per DataLoader epoch: the workers prefetch through the pass boundary",
            "loader = torch.utils.data.DataLoader(dataset, " + ", ".join(loader_args) + ",",
            f"                                     {sampler})",
            "",
            "def to_device(batch):",
            "    images, labels = batch",
            f"    images = images.to('{device}', non_blocking=True)",
            *(["    images = images.contiguous(memory_format=torch.channels_last)"] if config.channels_last else []),
            f"    return images, labels.to('{device}', non_blocking=True)",
        ]
    lines += ["", f"model = torchvision.models.{model}().to('{device}')"]
    if config.channels_last:
        lines.append("model = model.to(memory_format=torch.channels_last)")
    if config.gpu_decode and config.channels_last:
        lines.append("# and images.contiguous(memory_format=torch.channels_last) in to_device")
    lines.append("optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)")
    if cuda:
        lines.append("torch.backends.cudnn.benchmark = True")
    step = "loss = torch.nn.functional.cross_entropy(model(images), labels)"
    if amp:
        lines += ["for images, labels in map(to_device, loader):",
                  f"    with torch.autocast('{device}', dtype={amp}):",
                  f"        {step}"]
    else:
        lines += ["for images, labels in map(to_device, loader):", f"    {step}"]
    lines += ["    optimizer.zero_grad(set_to_none=True); loss.backward(); optimizer.step()"]
    return "\n".join(lines)
