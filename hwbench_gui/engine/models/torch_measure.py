"""The PyTorch side of the model benchmarks: build the model, feed it, time it.

One process measures one device. A DDP rank (see ``multigpu``) calls :func:`measure` with its
``DistContext``; everything else is the same as a one-GPU run. torch is imported inside.
"""

from __future__ import annotations

import gc
import time
from dataclasses import dataclass
from typing import Any, Callable

from hwbench_gui.engine.models import data as model_data
from hwbench_gui.engine.models.common import (
    LATENCY_STEPS_MAX,
    SYNTHETIC_CLASSES,
    ModelSpec,
    OutOfMemoryError,
    StepProgress,
    TimedRun,
    default_batch,
    oom_message,
    resolve_channels_last,
    time_windows,
)
from hwbench_gui.engine.spec.benchmark import BenchmarkUnavailable, Reporter
from hwbench_gui.engine.spec.device import split_device
from hwbench_gui.engine.spec.precision import BF16_AMP, Precision, apply_torch, from_key

SGD_LR = 1e-3  # small: random data and random init must not drive the detector's boxes to NaN
SGD_MOMENTUM = 0.9
LATENCY_WARMUP = 3
#: Loader drain (``params["drain_loader_steps"]``): the prefetch queue counts as drained once the
#: step waited for data this share of the time over the last ``DRAIN_WINDOW_STEPS`` steps. A
#: queue left fuller than that can inflate the timed rate by at most about this share.
DRAIN_WAIT_FRACTION = 0.08
DRAIN_WINDOW_STEPS = 4
DRAIN_MAX_S = 60.0
#: Settling (``LoaderOptions.settle_windows``): untimed windows until two in a row agree within
#: this share, at least SETTLE_MIN_WINDOWS and for at most SETTLE_MAX_S.
SETTLE_TOLERANCE = 0.04
SETTLE_MIN_WINDOWS = 2
SETTLE_MAX_S = 30.0


@dataclass
class DistContext:
    """Where this process sits in a DDP run (from torchrun's environment variables)."""

    rank: int
    local_rank: int
    world_size: int


def detection_max_size(image_size: int) -> int:
    """torchvision's 800/1333 ratio: the longer side limit for a shorter side of ``image_size``."""
    return max(image_size, round(image_size * 1333 / 800))


def build_model(spec: ModelSpec, num_classes: int, image_size: int) -> Any:
    """The random-init torch model of ``spec`` (no download)."""
    import torchvision

    if spec.key == "resnet50":
        return torchvision.models.resnet50(weights=None, num_classes=num_classes)
    if spec.key == "resnet18":  # the data-path analyzer's small, data-hungry model
        return torchvision.models.resnet18(weights=None, num_classes=num_classes)
    if spec.key == "vgg16":
        return torchvision.models.vgg16(weights=None, num_classes=num_classes)
    if spec.key == "fasterrcnn":
        from torchvision.models.detection import fasterrcnn_resnet50_fpn

        return fasterrcnn_resnet50_fpn(weights=None, weights_backbone=None, num_classes=num_classes,
                                       min_size=image_size, max_size=detection_max_size(image_size))
    if spec.key == "unet":
        from hwbench_gui.engine.models.unet import torch_unet

        if image_size % 16:
            raise BenchmarkUnavailable(f"U-Net needs an image size that is a multiple of 16, not {image_size}")
        return torch_unet(num_classes)
    raise ValueError(f"unknown model {spec.key!r}")


def synthetic_batch(torch: Any, spec: ModelSpec, batch: int, size: int, num_classes: int, device: Any,
                    channels_last: bool, generator: Any) -> Any:
    """Random inputs and targets made on ``device`` (uniform/normal, never zeros)."""
    if spec.task == "detect":
        images = [torch.rand(3, size, size, device=device, generator=generator) for _ in range(batch)]
        targets = []
        for _ in range(batch):
            n = 4
            xy = torch.rand(n, 2, device=device, generator=generator) * size * 0.6
            wh = (torch.rand(n, 2, device=device, generator=generator) * 0.3 + 0.1) * size
            targets.append({"boxes": torch.cat([xy, xy + wh], dim=1),
                            "labels": torch.randint(1, num_classes, (n,), device=device, generator=generator)})
        return images, targets
    images = torch.randn(batch, 3, size, size, device=device, generator=generator)
    if channels_last:
        images = images.contiguous(memory_format=torch.channels_last)
    if spec.task == "segment":
        return images, torch.randint(0, num_classes, (batch, size, size), device=device, generator=generator)
    return images, torch.randint(0, num_classes, (batch,), device=device, generator=generator)


def _to_device(torch: Any, spec: ModelSpec, device: Any, channels_last: bool) -> Callable[[Any], Any]:
    def move(batch):
        images, targets = batch
        if spec.task == "detect":
            return ([im.to(device, non_blocking=True) for im in images],
                    [{k: v.to(device, non_blocking=True) for k, v in t.items()} for t in targets])
        images = images.to(device, non_blocking=True)
        if channels_last:
            images = images.contiguous(memory_format=torch.channels_last)
        return images, targets.to(device, non_blocking=True)

    return move


def _sgd(torch: Any, model: Any, cuda: bool) -> Any:
    """SGD with momentum; on CUDA the fused kernel (one launch for all parameters) where PyTorch has it."""
    if cuda:
        try:
            return torch.optim.SGD(model.parameters(), lr=SGD_LR, momentum=SGD_MOMENTUM, fused=True)
        except (TypeError, RuntimeError, ValueError):
            pass
    return torch.optim.SGD(model.parameters(), lr=SGD_LR, momentum=SGD_MOMENTUM)


def measure(spec: ModelSpec, params: dict[str, Any], reporter: Reporter,
            dist: DistContext | None = None, *, dataset: Any = None,
            loader: model_data.LoaderOptions | None = None) -> tuple[TimedRun, dict[str, Any], str]:
    """Run the warm-up and timed steps; returns the run, details for the document and the device label.

    ``dataset`` (folder data only) replaces the one :func:`model_data.torch_dataset` would build over
    ``params["data"]``: a map-style dataset of (image tensor, target) with a ``classes`` list (the
    data-path analyzer feeds its own reader through the same loader and training step); ``loader``
    sets that loader up (:class:`model_data.LoaderOptions`; default: the model benchmarks' own).

    Raises :class:`OutOfMemoryError` (message from :func:`oom_message`) when CUDA runs out of memory,
    after freeing what it can.
    """
    import torch

    kind, index = split_device(params["device"])
    if kind == "cuda":
        if not torch.cuda.is_available():
            raise BenchmarkUnavailable(f"PyTorch {torch.__version__} cannot use CUDA here (built for CUDA "
                                       f"{torch.version.cuda}; no driver or no visible GPU); use device=cpu")
        if dist is not None:
            index += dist.local_rank
        if index >= torch.cuda.device_count():
            raise BenchmarkUnavailable(f"GPU {index} does not exist: PyTorch sees {torch.cuda.device_count()}")
        device = torch.device("cuda", index)
        torch.cuda.set_device(device)
        torch.cuda.reset_peak_memory_stats(device)
    else:
        device = torch.device("cpu")
    precision = from_key(params["precision"])
    try:
        return _measure(torch, spec, params, reporter, dist, device, precision, dataset, loader)
    except RuntimeError as exc:  # torch.cuda.OutOfMemoryError is one; cuDNN's allocation failures are plain ones
        if kind != "cuda" or not (isinstance(exc, torch.cuda.OutOfMemoryError) or "out of memory" in str(exc).lower()):
            raise
    # Out of the except block, the exception and its frames (holding the model and the
    # activations) are gone, so the memory can be given back before the error is raised.
    peak = torch.cuda.max_memory_reserved(device)
    total = torch.cuda.get_device_properties(device).total_memory
    gc.collect()
    torch.cuda.empty_cache()
    raise OutOfMemoryError(oom_message(params["batch"], peak, total))


def _measure(torch: Any, spec: ModelSpec, params: dict[str, Any], reporter: Reporter, dist: DistContext | None,
             device: Any, precision: Precision, dataset: Any = None,
             options: model_data.LoaderOptions | None = None) -> tuple[TimedRun, dict[str, Any], str]:
    cuda = device.type == "cuda"
    options = options or model_data.LoaderOptions()
    batch = params["batch"] or default_batch(spec, device.type)
    size, train = params["image_size"], params["mode"] == "train"
    channels_last = resolve_channels_last(params["channels_last"], "torch", device.type, params["precision"],
                                          spec.task)
    applied = apply_torch(precision, device.type)
    if cuda:
        torch.backends.cudnn.benchmark = True  # fixed shapes: let cuDNN pick the fastest kernels
    if precision is BF16_AMP and cuda and not torch.cuda.is_bf16_supported():
        raise BenchmarkUnavailable(f"{torch.cuda.get_device_name(device)} has no BF16 support")

    stream, dataset, num_classes = _data_stream(torch, spec, params, dist, device, channels_last, batch, dataset,
                                                options)

    model, net = _network(torch, spec, params, num_classes, device, channels_last, dist)

    generator = torch.Generator(device=device).manual_seed(1234 + (dist.rank if dist else 0))
    fixed = None
    if stream is None or options.start_after_warmup:
        fixed = synthetic_batch(torch, spec, batch, size, num_classes, device, channels_last, generator)
    next_batch = (lambda: fixed) if stream is None else stream.next  # noqa: E731

    optimizer = scaler = None
    if train:
        optimizer = _sgd(torch, model, cuda)
        if precision.loss_scaling:
            scaler = torch.amp.GradScaler(device.type)
    criterion = torch.nn.CrossEntropyLoss()

    def train_step(b):
        images, targets = b
        with applied.autocast():
            if spec.task == "detect":
                loss = sum(net(images, targets).values())
            else:
                loss = criterion(net(images), targets)
        optimizer.zero_grad(set_to_none=True)
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        else:
            loss.backward()
            optimizer.step()
        return loss

    def infer_step(b):
        with torch.inference_mode(), applied.autocast():
            return net(b[0])

    step = train_step if train else infer_step
    sync = (lambda: torch.cuda.synchronize(device)) if cuda else (lambda: None)

    steps = params["steps"]
    progress = StepProgress(reporter, params, on_gpu=cuda)
    first_step_s, warmup_s, drain_steps, drained = _warm_up(params, options, stream, step, next_batch, fixed, sync,
                                                            reporter, progress)
    if dist is not None:
        torch.distributed.barrier()

    refills_before = len(stream.epoch_start_waits_s) if stream is not None else 0
    last_out: list[Any] = [None]

    def run_steps(n: int) -> tuple[float, list[float], float]:
        wait_before = stream.wait_s if stream is not None else 0.0
        seconds, step_s, last_out[0] = time_steps(lambda: step(next_batch()), n, cuda=cuda, sync=sync,
                                                  progress=progress)
        return seconds, step_s, (stream.wait_s - wait_before) if stream is not None else 0.0

    def agree(n: int) -> int:
        return max_over_ranks(n, device)

    settle_rates: list[float] = []
    if options.settle_windows:
        reporter.phase("warmup", "start")
        settle_rates = _settle(run_steps, steps, batch, options.settle_windows)
        reporter.phase("warmup", "end")
    windows = time_windows(run_steps, params, reporter, on_gpu=cuda, agree=agree if dist is not None else None,
                           progress=progress)
    step_s, total_s, data_wait_s = windows.step_s, sum(windows.window_s), windows.data_wait_s
    steps = sum(windows.window_steps)
    epoch_start_cost_s = _epoch_start_costs(options.epoch_starts, stream, step, sync, params["workers"],
                                            total_s / steps if steps else 0.0)
    out = last_out[0]
    final_loss = float(out.detach().float()) if train and out is not None else None

    latency = [] if train else _latency_b1(spec, next_batch, infer_step, sync, steps, reporter)

    run = TimedRun(batch=batch, steps=steps, total_s=total_s, step_s=step_s, data_wait_s=data_wait_s,
                   warmup_s=warmup_s, first_step_s=first_step_s, latency_b1_s=latency, final_loss=final_loss,
                   window_s=windows.window_s, window_steps=windows.window_steps)
    if windows.calibration:
        run.extra["calibration"] = windows.calibration
    record_peak_memory(run, torch, device)
    if cuda:
        where = f"cuda:{device.index} ({torch.cuda.get_device_name(device)})"
    else:
        where = f"cpu ({torch.get_num_threads()} threads)"
    if stream is not None:
        run.extra["epochs_started"] = stream.epoch + 1
        run.extra["epoch_start_waits_s"] = stream.epoch_start_waits_s[refills_before:]  # in the timed loop
        if epoch_start_cost_s:
            run.extra["epoch_start_cost_s"] = epoch_start_cost_s
        if settle_rates:
            run.extra["settle_rates"] = settle_rates
        if params.get("drain_loader_steps"):
            run.extra["drain_steps"], run.extra["drained"] = drain_steps, drained
    details = _details(torch, spec, params, run, applied, precision, scaler, optimizer, channels_last, num_classes,
                       dataset, cuda)
    return run, details, where


def _network(torch: Any, spec: ModelSpec, params: dict[str, Any], num_classes: int, device: Any,
             channels_last: bool, dist: DistContext | None) -> tuple[Any, Any]:
    """(the model on the device in the run's mode and memory format, what the step calls: the model itself, or
    wrapped for data-parallel ranks and compiled where asked)."""
    model = build_model(spec, max(2, num_classes), params["image_size"]).to(device)
    if channels_last:
        model = model.to(memory_format=torch.channels_last)
    model.train(params["mode"] == "train")
    net = model
    if dist is not None:
        from torch.nn.parallel import DistributedDataParallel

        net = DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None)
    if params["compile"]:
        net = torch.compile(net)  # default mode; max-autotune would spend minutes autotuning
    return model, net


def _warm_up(params: dict[str, Any], options: model_data.LoaderOptions, stream: Any, step: Callable[[Any], Any],
             next_batch: Callable[[], Any], fixed: Any, sync: Callable[[], None], reporter: Reporter,
             progress: StepProgress) -> tuple[float | None, float | None, int, Any]:
    """The untimed steps before the timed ones: (the first step's seconds, the warm-up's seconds, the loader
    steps drained and what they drained)."""
    warmup = params["warmup"]
    reporter.progress(0.0, f"warm-up ({warmup} steps{', compiling' if params['compile'] else ''})")
    first_step_s = None
    reporter.phase("warmup", "start")
    t0 = time.perf_counter()
    for i in range(warmup):
        step(fixed if options.start_after_warmup else next_batch())
        if i == 0:
            sync()
            first_step_s = time.perf_counter() - t0
        progress.step()
    if options.start_after_warmup and stream is not None:
        for _ in range(max(1, params["workers"]) + 2):
            step(next_batch())
    drain_steps, drained = _drain_loader(params.get("drain_loader_steps", 0), stream, step, next_batch, reporter)
    sync()
    warmup_s = time.perf_counter() - t0 if warmup or drain_steps else None
    reporter.phase("warmup", "end")
    return first_step_s, warmup_s, drain_steps, drained


def _data_stream(torch: Any, spec: ModelSpec, params: dict[str, Any], dist: DistContext | None, device: Any,
                 channels_last: bool, batch: int, dataset: Any,
                 options: model_data.LoaderOptions) -> tuple[Any, Any, int]:
    """(the loader's batch stream on the device, its dataset, the number of classes); no stream for
    synthetic data (one batch made on the device)."""
    size, cuda = params["image_size"], device.type == "cuda"
    if params["data"] == "synthetic":
        return None, dataset, SYNTHETIC_CLASSES[spec.task]
    if dataset is None:
        dataset = model_data.torch_dataset(spec.task, params["data"], size)
    num_classes = {"classify": len(getattr(dataset, "classes", []) or [0]),
                   "detect": len(model_data.VOC_CLASSES) + 1,
                   "segment": SYNTHETIC_CLASSES["segment"]}[spec.task]
    sampler = options.sampler
    if dist is not None:
        sampler = torch.utils.data.DistributedSampler(dataset, num_replicas=dist.world_size, rank=dist.rank,
                                                      drop_last=True)
    pin = cuda if options.pin_memory is None else (options.pin_memory and cuda)
    loader = model_data.torch_loader(spec.task, params["data"], size, batch, params["workers"], pin,
                                     sampler=sampler, dataset=dataset, prefetch_factor=options.prefetch_factor,
                                     collate_fn=options.collate_fn)
    if options.on_device is not None:
        loader = options.on_device(loader, device, channels_last)
    stream = model_data.BatchStream(
        loader, _to_device(torch, spec, device, channels_last),
        on_epoch=(lambda epoch: sampler.set_epoch(epoch)) if dist is not None else None)
    return stream, dataset, num_classes


def _latency_b1(spec: ModelSpec, next_batch: Callable[[], Any], infer_step: Callable[[Any], Any],
                sync: Callable[[], None], steps: int, reporter: Reporter) -> list[float]:
    """Seconds of each inference call on one image, after :data:`LATENCY_WARMUP` untimed calls."""
    one = ([next_batch()[0][0]],) if spec.task == "detect" else (next_batch()[0][:1],)
    n_latency = min(steps, LATENCY_STEPS_MAX)
    reporter.progress(0.99, f"latency at batch 1 ({n_latency} calls)")
    latency = []
    for i in range(LATENCY_WARMUP + n_latency):
        t = time.perf_counter()
        infer_step(one)
        sync()
        if i >= LATENCY_WARMUP:
            latency.append(time.perf_counter() - t)
    return latency


def _details(torch: Any, spec: ModelSpec, params: dict[str, Any], run: TimedRun, applied: Any,
             precision: Precision, scaler: Any, optimizer: Any, channels_last: bool, num_classes: int, dataset: Any,
             cuda: bool) -> dict[str, Any]:
    """What the result document's details say about how the step ran (versions, precision settings, model)."""
    import torchvision

    train, size = params["mode"] == "train", params["image_size"]
    details = {"torch": torch.__version__, "torchvision": torchvision.__version__,
               "cuda_runtime": torch.version.cuda, "cudnn": torch.backends.cudnn.version() if cuda else None,
               "precision_settings": applied.settings, "autocast_dtype": precision.autocast_dtype,
               "grad_scaler": scaler is not None, "channels_last": channels_last,
               "compile": "torch.compile(mode='default')" if params["compile"] else None,
               "cudnn_benchmark": cuda, "num_classes": num_classes, "source": spec.torch_source,
               "optimizer": (f"SGD lr {SGD_LR} momentum {SGD_MOMENTUM}"
                             f"{' (fused)' if optimizer.defaults.get('fused') else ''}") if train else None,
               "total_memory_gib": run.total_memory_bytes / (1 << 30) if run.total_memory_bytes else None}
    if spec.task == "detect":
        details["min_size"], details["max_size"] = size, detection_max_size(size)
    skipped = getattr(dataset, "skipped", None) if params["data"] != "synthetic" else None
    if skipped:  # files of the folder that are not regular files, or too large to be one image
        details["data_skipped"] = {"count": len(skipped),
                                   "files": [{"path": p, "reason": r} for p, r in skipped[:50]]}
    return details


def _settle(run_steps: Callable[[int], tuple[float, list[float], float]], steps: int, batch: int,
            max_windows: int) -> list[float]:
    """Images/s of untimed windows of ``steps`` steps, run until the last two agree within
    :data:`SETTLE_TOLERANCE` (at least :data:`SETTLE_MIN_WINDOWS`, at most ``max_windows`` or
    :data:`SETTLE_MAX_S`). A loader faster than the step fills its queue for seconds after its
    start with every worker busy, slowing the step; once the queue is full they idle part of the time."""
    rates: list[float] = []
    start = time.perf_counter()
    for _ in range(max_windows):
        seconds, _, _ = run_steps(steps)
        rates.append(steps * batch / seconds if seconds > 0 else 0.0)
        if len(rates) >= SETTLE_MIN_WINDOWS and abs(rates[-1] - rates[-2]) <= SETTLE_TOLERANCE * max(rates[-2:]):
            break
        if time.perf_counter() - start > SETTLE_MAX_S:
            break
    return rates


def _epoch_start_costs(count: int, stream: Any, step: Callable[[Any], Any], sync: Callable[[], None],
                       workers: int, steady_step_s: float) -> list[float]:
    """Seconds each of ``count`` forced epoch starts adds to training: the first ``workers`` + 2
    steps after the restart, less as many steps at the timed loop's steady pace. After the restart
    every worker starts its first batch at once, so the step waits about one batch's worker time
    and the next batches then arrive together: these steps hold the whole refill."""
    costs: list[float] = []
    if not count or stream is None:
        return costs
    after = max(1, workers) + 2
    for _ in range(count):
        sync()
        start = time.perf_counter()
        stream.restart()
        for _ in range(after):
            step(stream.next())
        sync()
        costs.append(max(0.0, time.perf_counter() - start - after * steady_step_s))
    return costs


def _drain_loader(max_steps: int, stream: Any, step: Callable[[Any], Any], next_batch: Callable[[], Any],
                  reporter: Reporter) -> tuple[int, bool | None]:
    """Extra warm-up steps until the loader's prefetch queue is empty: (steps taken, drained?).

    Slow first steps (cuDNN autotuning, allocator warm-up) let the workers fill the queue, and a
    timed loop that starts with a full queue credits the loader with that head start: the
    end-to-end rate then beats the loader's own. While the queue holds batches, ``next()`` returns
    at once; once it is empty a loader-bound step waits. ``drained`` is False when the cap came
    first (the loader keeps up with the step: then the head start does not matter), None when no
    drain was asked for.
    """
    if not max_steps or stream is None:
        return 0, None
    reporter.progress(0.0, "warm-up: draining the loader's prefetch queue")
    window: list[tuple[float, float]] = []
    start = time.perf_counter()
    for taken in range(1, max_steps + 1):
        wait_before, t = stream.wait_s, time.perf_counter()
        step(next_batch())
        window = [*window[-(DRAIN_WINDOW_STEPS - 1):], (stream.wait_s - wait_before, time.perf_counter() - t)]
        if len(window) == DRAIN_WINDOW_STEPS and \
                sum(w for w, _ in window) >= DRAIN_WAIT_FRACTION * sum(d for _, d in window):
            return taken, True
        if time.perf_counter() - start > DRAIN_MAX_S:
            break
    return taken, False


def method_text(params: dict[str, Any], cuda: bool) -> str:
    """How the PyTorch figures were taken (appended to the common method paragraph)."""
    timing = ("Per-step times from CUDA events recorded at every step boundary (no synchronize inside the "
              "timed loop)" if cuda else "Per-step times from perf_counter at every step boundary")
    text = (f"{timing}. Training = forward, loss, backward, SGD step (GradScaler with FP16-AMP); inference = "
            "forward under torch.inference_mode. FP32 sets cuda.matmul.allow_tf32 = cudnn.allow_tf32 = False; "
            "TF32 sets both True; AMP = torch.autocast. cudnn.benchmark on (CUDA).")
    if params["mode"] == "infer":
        text += (" Latency at batch 1: each call timed with a synchronize after it, after "
                 f"{LATENCY_WARMUP} warm-up calls.")
    if params["data"] != "synthetic":
        text += (" Data: torch DataLoader with worker processes, pinned memory, prefetch 4 batches per worker; "
                 "the time spent waiting for the next batch is reported as data_wait_s.")
    return text


def time_steps(one_step: Callable[[], Any], n: int, *, cuda: bool, sync: Callable[[], None],
               progress: Any) -> tuple[float, list[float], Any]:
    """``one_step`` run ``n`` times between two synchronisations: the wall seconds, each step's seconds
    (CUDA events on a GPU, so the host's queueing ahead is not counted as a step; the host clock on a
    CPU) and the last step's output. Shared by the model benchmarks and llm.train."""
    import torch

    events = [torch.cuda.Event(enable_timing=True) for _ in range(n + 1)] if cuda else []
    step_s: list[float] = []
    out = None
    sync()
    start = prev = time.perf_counter()
    for i in range(n):
        if cuda:
            events[i].record()
        out = one_step()
        if not cuda:
            now = time.perf_counter()
            step_s.append(now - prev)
            prev = now
        progress.step()
    if cuda:
        events[n].record()
    sync()
    seconds = time.perf_counter() - start
    if cuda:
        step_s = [events[i].elapsed_time(events[i + 1]) / 1e3 for i in range(n)]
    return seconds, step_s, out


def record_peak_memory(run: TimedRun, torch: Any, device: Any) -> None:
    """The run's peak allocated and reserved bytes and the device's total on a CUDA device; elsewhere why not."""
    if device.type == "cuda":
        run.peak_allocated_bytes = float(torch.cuda.max_memory_allocated(device))
        run.peak_reserved_bytes = float(torch.cuda.max_memory_reserved(device))
        run.total_memory_bytes = float(torch.cuda.get_device_properties(device).total_memory)
    else:
        run.peak_reason = "peak memory is measured on CUDA devices only"


def max_over_ranks(n: int, device: Any) -> int:
    """The largest ``n`` any rank of the process group proposes (ranks time windows of one length)."""
    import torch

    count = torch.tensor([n], device=device)
    torch.distributed.all_reduce(count, op=torch.distributed.ReduceOp.MAX)
    return int(count.item())
