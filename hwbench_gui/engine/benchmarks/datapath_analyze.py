"""datapath.analyze: which stage of the input pipeline holds training back, and what to change.

Measures every stage of disk → RAM → CPU decode/augment → PCIe → GPU alone in images/s (see
:mod:`hwbench_gui.engine.datapath.stages`), then the real loader-fed training rate with the same
model, precision, batch and workers, and turns the numbers into a verdict with advice
(:mod:`hwbench_gui.engine.datapath.verdict`). The compute-only and end-to-end rates come from the
model benchmark's own training step (``model_torch.measure``).
"""

from __future__ import annotations

import importlib.util
import math
import tempfile
import threading
from typing import Any

from hwbench_gui.engine.measure.timing import cpu_count
from hwbench_gui.engine.models.data import LOADER_PREFETCH_BATCHES
from hwbench_gui.engine.spec.benchmark import Benchmark, Outcome, Param, ParamError, Reporter, Series
from hwbench_gui.engine.spec.precision import BF16_AMP, FP32, MODEL_KEYS, TF32, from_key

BENCH_ID = "datapath.analyze"
MODEL_CHOICES = ("resnet50", "resnet18", "vgg16")  # classifiers: an ImageFolder feeds them
PRECISION_CHOICES = ("auto",) + MODEL_KEYS
DECODE_SET_MAX = 256
GPU_UTIL_INTERVAL_S = 0.1

#: Progress fraction at which each phase starts.
_PHASES = {"dataset": 0.0, "disk": 0.08, "decode": 0.18, "augment": 0.3, "cpu": 0.36, "transfer": 0.48,
           "compute": 0.52, "end_to_end": 0.68, "what_if": 0.9, "verdict": 0.98}


class _PhaseReporter:
    """Maps a sub-task's progress [0, 1] into [start, end] of the whole run; notes when the model
    benchmark's timed loop has begun (its progress messages read 'step i/n')."""

    def __init__(self, reporter: Reporter, start: float, end: float):
        self.reporter, self.start, self.end = reporter, start, end
        self.timed = threading.Event()

    def progress(self, fraction: float, message: str = "") -> None:
        if message.startswith("step "):
            self.timed.set()
        self.reporter.progress(self.start + (self.end - self.start) * max(0.0, min(1.0, fraction)), message)

    def log(self, message: str) -> None:
        self.reporter.log(message)

    def metric(self, name: str, value: float, unit: str, **extra: Any) -> None:
        self.reporter.metric(name, value, unit, **extra)

    def phase(self, phase: str, state: str, repeat: int | None = None) -> None:
        self.reporter.phase(phase, state, repeat)


class _GpuUtilSampler:
    """NVML GPU utilisation sampled in a thread while the timed loop runs."""

    def __init__(self, index: int, timed: threading.Event):
        self.index, self.timed = index, timed
        self.samples: list[float] = []
        self.reason: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> "_GpuUtilSampler":
        from hwbench_gui.engine.measure.timing import nvml_handle_for

        self.handle = nvml_handle_for(self.index)
        if self.handle is None:
            from hwbench_gui.engine import nvml

            self.reason = nvml.unavailable_reason() or "NVML has no handle for this GPU"
        else:
            self._thread.start()
        return self

    def _loop(self) -> None:
        from hwbench_gui.engine import nvml

        while not self._stop.wait(GPU_UTIL_INTERVAL_S):
            if not self.timed.is_set():
                continue
            rates = nvml.query("nvmlDeviceGetUtilizationRates", self.handle)
            if rates is not None:
                self.samples.append(float(rates.gpu))

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(2.0)
        if self.handle is not None and not self.samples:
            self.reason = "NVML returned no utilisation sample during the timed loop"

    def mean(self) -> float | None:
        return sum(self.samples) / len(self.samples) if self.samples else None


def _resolve_device(text: str) -> tuple[Any, str]:
    """(torch.device, 'cuda'|'cpu') for 'auto', 'cpu', 'cuda' or 'cuda:N'."""
    import torch

    from hwbench_gui.engine.spec.device import CUDA, parse, resolve_auto

    device = resolve_auto(parse(text))
    if device.kind == CUDA:
        from hwbench_gui.engine.measure.timing import cuda_device

        return cuda_device(device.index), "cuda"
    return torch.device("cpu"), "cpu"


def model_spec(key: str) -> Any:
    """The model benchmark's ModelSpec of ``key``; ResNet-18 (small and data-hungry: the model whose
    training most often waits for its data) is built by ``model_torch`` but has no benchmark of its own."""
    from hwbench_gui.engine.models.common import MODELS, ModelSpec

    if key == "resnet18":
        return ModelSpec("resnet18", "ResNet-18", "classify", 224, 128, "128",
                         "torchvision.models.resnet18(weights=None)", "none")
    return MODELS[key]


def _model_params(params: dict[str, Any], device: Any, precision: str, data: str) -> dict[str, Any]:
    """Parameters for ``model_torch.measure``: the model benchmark's defaults with this run's choices."""
    from hwbench_gui.engine.models.common import model_params

    values = {p.name: p.default for p in model_params(model_spec(params["model"]))}
    values.update(framework="torch", mode="train", precision=precision, batch=params["batch"],
                  image_size=params["image_size"], steps=params["steps"], warmup=params["warmup"],
                  device=str(device), gpus=1, nnodes=1, channels_last=params["channels_last"], compile=False,
                  data=data, workers=params["workers"], repeats=params["repeats"],
                  # windows of the given steps (whole epochs end to end), not stretched to a time
                  min_time_s=0.0)
    return values


def _open_or_generate(params: dict[str, Any], reporter: Reporter) -> Any:
    from hwbench_gui.engine.datapath.dataset import generate_dataset, open_dataset

    if params["dataset"]:
        return open_dataset(params["dataset"], limit=params["count"])
    reporter.progress(0.0, f"generating {params['count']} JPEGs of {params['width']}×{params['height']} px")
    return generate_dataset(params["dataset_disk"] or tempfile.gettempdir(), params["width"], params["height"],
                            params["count"], params["quality"],
                            progress=lambda f: reporter.progress(_PHASES["disk"] * f, "generating the dataset"))


def run(params: dict[str, Any], reporter: Reporter) -> Outcome:
    import psutil
    import torch

    from hwbench_gui.engine.datapath import stages as st
    from hwbench_gui.engine.datapath.verdict import DATA_WAIT_NOTABLE, Context, analyze, usable_workers
    from hwbench_gui.engine.models import torch_measure as model_torch
    from hwbench_gui.engine.spec.precision import label_of

    if params["batch"] > params["count"]:
        raise ParamError(f"batch ({params['batch']}) is larger than count ({params['count']}): the loader needs at "
                         "least one whole batch")
    device, kind = _resolve_device(params["device"])
    precision = params["precision"] if params["precision"] != "auto" else (BF16_AMP if kind == "cuda" else FP32).key
    label = label_of(precision)
    workers, repeats, stage_s = params["workers"], params["repeats"], params["stage_s"]
    readers = max(1, workers)
    delay_s = params["read_delay_ms"] / 1e3
    cpus = cpu_count()
    warnings: list[str] = []
    if workers > cpus:
        warnings.append(f"{workers} workers on {cpus} CPUs: the workers oversubscribe the cores")

    allocator = st.pin_malloc_behaviour()
    if kind == "cpu":
        # Tiny CPU configurations (few pixels, small batches) drift into denormal floats within a few
        # SGD steps, which makes x86 CPUs 10-50x slower at random points of the run.
        torch.set_flush_denormal(True)
        # The training process gets the cores the loader workers leave; oversubscribed OpenMP
        # threads spin at barriers and make both stages erratic.
        torch.set_num_threads(max(1, cpus - workers))
        allocator += (f"; denormal floats flushed to zero; training with {torch.get_num_threads()} threads "
                      f"(the {cpus} CPUs less one per loader worker)")
    dataset = _open_or_generate(params, reporter)
    reporter.log(f"dataset: {dataset.describe()}")
    available_ram = psutil.virtual_memory().available
    results: dict[str, st.StageResult] = {}

    def phase(name: str, message: str) -> None:
        reporter.progress(_PHASES[name], message)

    phase("disk", "disk read, cache bypassed")
    results["disk_cold"] = st.disk_read(dataset.files, readers, cold=True, repeats=repeats, read_delay_s=delay_s)
    phase("disk", "disk read, page cache")
    results["disk_cached"] = st.disk_read(dataset.files, readers, cold=False, repeats=repeats, read_delay_s=delay_s)
    if results["disk_cold"].extra.get("warning"):
        warnings.append(results["disk_cold"].extra["warning"])

    decode_files = st.subset_by_bytes(dataset.files, dataset.mean_file_bytes, st.DECODE_SET_BYTES)[:DECODE_SET_MAX]
    jpegs = [st.read_file(p) for p in decode_files]
    usable = usable_workers(kind, cpus)
    phase("decode", f"JPEG decode with 1 and {readers} workers" + (f" (and {usable}: what-if)" if usable > readers
                                                                    else ""))
    results.update(st.decode_rates(jpegs, readers, stage_s, repeats, what_if_workers=usable))

    phase("augment", "augmentation, 1 worker")
    decoded = [st.decode_pil(data) for data in jpegs[:st.AUGMENT_SET_IMAGES]]
    stored_w = round(sum(im.size[0] for im in decoded) / len(decoded))
    stored_h = round(sum(im.size[1] for im in decoded) / len(decoded))
    results["augment_1"], augmented = st.augment_rate(decoded, params["image_size"], stage_s, repeats)
    del decoded

    phase("cpu", f"decode + augment in a DataLoader with {workers} workers")
    loader_files = st.subset_by_bytes(dataset.files, dataset.mean_file_bytes, st.LOADER_SET_BYTES)
    loader_jpegs = jpegs + [st.read_file(p) for p in loader_files[len(jpegs):]]
    loader_labels = dataset.labels[:len(loader_jpegs)]
    per_image_s = 1 / results["decode_1"].rate + 1 / results["augment_1"].rate
    estimate = readers / per_image_s
    results["cpu_n"] = st.cpu_pipeline_rate(loader_jpegs, loader_labels, params["image_size"], params["batch"],
                                            workers, stage_s, repeats, estimate)
    del loader_jpegs

    if kind == "cuda":
        phase("transfer", "JPEG decode on the GPU (nvJPEG)")
        try:
            results["gpu_decode"] = st.gpu_decode_rate(jpegs[:min(len(jpegs), params["batch"])], device, stage_s,
                                                       repeats)
        except Exception as exc:  # an nvJPEG gap must not cost the whole analysis; the advice says "not measured"
            results["gpu_decode"] = st.not_measured("gpu_decode", f"{type(exc).__name__}: {exc}")
    else:
        results["gpu_decode"] = st.not_measured("gpu_decode", "the device is the CPU")
    phase("transfer", "collate + pinned copy to the device" if kind == "cuda" else "collate")
    results["transfer"] = st.transfer_rate(augmented, params["batch"], device, stage_s, repeats)
    del augmented, jpegs

    spec = model_spec(params["model"])
    sub = _PhaseReporter(reporter, _PHASES["compute"], _PHASES["end_to_end"])
    sub.progress(0.0, "model compute only (synthetic batch on the device)")
    compute_run, compute_details, where = model_torch.measure(spec, _model_params(params, device, precision,
                                                                                  "synthetic"), sub)
    method_common = model_torch.method_text(_model_params(params, device, precision, "synthetic"), kind == "cuda")
    results["compute"] = st.timed_run_stage(
        "compute", compute_run,
        f"model benchmark's training step ({spec.title}, {label}, batch {params['batch']}, {params['image_size']} px) "
        f"on a random batch made once on the device: no loader, no copy. {params['warmup']} warm-up, "
        f"{params['repeats']} timed windows of {params['steps']} steps; images/s = images / timed wall time "
        f"(samples: each window's). {method_common}")

    sub = _PhaseReporter(reporter, _PHASES["end_to_end"], _PHASES["what_if"])
    sub.progress(0.0, f"end-to-end: loader with {workers} workers feeding the training step")
    file_images = st.FileImages(dataset.files, dataset.labels, dataset.classes,
                                st.train_transform(params["image_size"]), delay_s)
    e2e_params = _model_params(params, device, precision, dataset.root)
    # Slow first steps (cuDNN autotuning, allocator warm-up) let the workers fill the prefetch queue
    # (4 batches per worker); timing before it drains would credit the loader with that head start.
    # Draining takes longer the closer the loader's rate is to the step's, hence the generous cap.
    e2e_params["drain_loader_steps"] = 4 * LOADER_PREFETCH_BATCHES * max(1, workers) + 8
    # Each epoch start refills the loader from empty (workers do not prefetch across epochs), a stall
    # of about one batch per worker. A window of whole epochs counts those stalls at their real
    # frequency; a shorter one counts one or none by chance (2.3 s in a 5 s window on the H200).
    per_epoch = len(dataset.files) // params["batch"]
    if 0 < per_epoch <= 4 * params["steps"]:
        e2e_params["steps"] = math.ceil(params["steps"] / per_epoch) * per_epoch
    sampler = _GpuUtilSampler(device.index or 0, sub.timed) if kind == "cuda" else None
    if sampler is not None:
        with sampler:
            e2e_run, e2e_details, where = model_torch.measure(spec, e2e_params, sub, dataset=file_images)
        gpu_util, gpu_util_reason = sampler.mean(), sampler.reason
    else:
        e2e_run, e2e_details, where = model_torch.measure(spec, e2e_params, sub, dataset=file_images)
        gpu_util, gpu_util_reason = None, "the device is the CPU"
    results["end_to_end"] = st.timed_run_stage(
        "end_to_end", e2e_run,
        f"the same training step fed by torch DataLoader over all {len(dataset.files)} files: {workers} workers "
        f"reading (read_delay_ms={params['read_delay_ms']:g}), PIL decode, the training transform, collate; "
        f"pin_memory={kind == 'cuda'}, prefetch_factor=4, persistent workers, shuffled, non-blocking copies. Files "
        f"start in the page cache when they fit (they were just read). {e2e_params['warmup']} warm-up steps, then "
        f"{e2e_run.extra.get('drain_steps')} more until the prefetch queue filled during the slow first steps was "
        + ("drained (the step waited for data at least 8 % of the time over 4 steps)" if e2e_run.extra.get("drained")
           else f"drained or the cap of {e2e_params['drain_loader_steps']} steps or 60 s came first (the loader kept up "
           "with the step, so its head start does not matter)")
        + f"; {params['repeats']} timed windows of {e2e_params['steps']} steps"
        + (f" (whole epochs of {per_epoch} batches, so each epoch start's loader refill counts as often as in "
           "training)" if per_epoch and e2e_params["steps"] % per_epoch == 0
           else f" (an epoch holds {per_epoch} batches, more than 4 windows: its start's refill is left to chance)")
        + "; data wait = time the step spent in next(loader); samples: each window's images/s.")
    results["end_to_end"].extra.update(drain_steps=e2e_run.extra.get("drain_steps"),
                                       drained=e2e_run.extra.get("drained"))
    data_wait = e2e_run.data_wait_s / e2e_run.total_s if e2e_run.total_s else None
    refill_fraction = _epoch_refill(e2e_run, results["end_to_end"].extra)
    # The step's own time with the loader running against alone: how much the workers slow training itself.
    # On CUDA the steps run asynchronously, so while the step waits for data the GPU is still busy
    # with the previous one: the time outside the wait then understates the step (0.55× on the H200
    # at 2 workers). Only with little waiting does it measure the step itself; the CPU has no overlap.
    step_slowdown = None
    overlap_hides = kind == "cuda" and (data_wait or 0) > DATA_WAIT_NOTABLE
    if e2e_run.steps and compute_run.steps and compute_run.total_s > 0 and not overlap_hides:
        step_slowdown = ((e2e_run.total_s - e2e_run.data_wait_s) / e2e_run.steps) / (compute_run.total_s /
                                                                                      compute_run.steps)

    phase("verdict", "verdict")
    ctx = Context(device=kind, workers=workers, cpus=cpus, batch=params["batch"], images=len(dataset.files),
                  dataset_bytes=dataset.total_bytes, available_ram_bytes=available_ram, precision=label,
                  channels_last=params["channels_last"], model=params["model"], image_size=params["image_size"],
                  stored_width_px=stored_w, stored_height_px=stored_h, read_delay_ms=params["read_delay_ms"],
                  dali_installed=importlib.util.find_spec("nvidia.dali") is not None if kind == "cuda" else False)
    rates = {key: result.rate for key, result in results.items()}

    def judge() -> Any:
        return analyze(rates, ctx, data_wait_fraction=data_wait, gpu_util_percent=gpu_util,
                       gpu_util_reason=gpu_util_reason, step_slowdown=step_slowdown,
                       epoch_refill_fraction=refill_fraction)

    verdict = judge()
    if verdict.limiting_stage == "compute":  # price the compute advice with measurements, then judge again
        what_ifs = _compute_what_ifs(params, device, kind, precision, spec, reporter)
        results.update(what_ifs)
        rates.update({key: result.rate for key, result in what_ifs.items()})
        verdict = judge() if what_ifs else verdict
    if verdict.consistency.get("consistent") is False:
        warnings.append(f"end-to-end ({verdict.end_to_end:.0f} images/s) exceeds the slowest stage "
                        f"({verdict.limiting_stage}, {verdict.limiting_rate:.0f} images/s) by more than "
                        f"{verdict.consistency['noise_allowed']:.0%}: that stage's standalone method underestimates it")
    reporter.log(verdict.text)
    e2e_details["allocator"] = allocator
    return _outcome(params, results, verdict, ctx, dataset, label, where, warnings, e2e_details, torch)


def _epoch_refill(run: Any, extra: dict[str, Any]) -> float | None:
    """Share of the timed time spent refilling the loader at epoch starts, beyond a step's usual
    wait; records the waits in ``extra``. None when no epoch started in the timed loop."""
    waits = list(run.extra.get("epoch_start_waits_s") or [])
    extra["epoch_start_waits_s"] = waits
    if not waits or not run.total_s:
        return None
    others = max(1, run.steps - len(waits))
    usual = max(0.0, run.data_wait_s - sum(waits)) / others
    excess = sum(max(0.0, w - usual) for w in waits)
    extra["epoch_refill_excess_s"] = excess
    return excess / run.total_s


def _compute_what_ifs(params: dict[str, Any], device: Any, kind: str, precision: str, spec: Any,
                      reporter: Reporter) -> dict[str, Any]:
    """When compute is the slowest link: the compute-only step again with channels-last (if off) and
    with BF16 autocast (on CUDA, if the run used FP32/TF32), to price that advice with measurements."""
    from hwbench_gui.engine.datapath import stages as st
    from hwbench_gui.engine.models import torch_measure as model_torch

    variants = []
    if not params["channels_last"]:
        variants.append(("compute_channels_last", dict(params, channels_last=True), precision, "channels-last"))
    if kind == "cuda" and from_key(precision) in (FP32, TF32):
        variants.append(("compute_bf16", params, BF16_AMP.key, BF16_AMP.label))
    out = {}
    for key, variant, variant_precision, what in variants:
        sub = _PhaseReporter(reporter, _PHASES["what_if"], _PHASES["verdict"])
        sub.progress(0.0, f"what-if: model compute with {what}")
        try:
            timed, _, _ = model_torch.measure(spec, _model_params(variant, device, variant_precision, "synthetic"),
                                              sub)
        except Exception as exc:  # a what-if that fails (e.g. no BF16 on this GPU) must not cost the analysis
            out[key] = st.not_measured(key, f"{type(exc).__name__}: {exc}")
            continue
        out[key] = st.timed_run_stage(key, timed, f"the compute-only stage again with {what}, everything else equal "
                                      "(measured because compute is the slowest link, to price the advice).")
    return out


def _outcome(params: dict[str, Any], results: dict[str, Any], verdict: Any, ctx: Any, dataset: Any, label: str,
             where: str, warnings: list[str], e2e_details: dict[str, Any], torch: Any) -> Outcome:
    figures: dict[str, dict[str, Any]] = {}
    series = []
    for number, (key, result) in enumerate(results.items(), start=1):
        entry: dict[str, Any] = {"value": result.rate, "unit": "images/s", "higher_is_better": True,
                                 "samples": result.samples, "what": result.title}
        if result.rate is None:
            entry["reason"] = result.reason
        else:
            series.append(Series(f"{number}. {result.title}", [float(number)], [result.rate],
                                 "stage (chain order; legend names each)", "images/s"))
        figures[key] = entry
    figures["data_wait_fraction"] = {"value": verdict.data_wait_fraction, "unit": "fraction",
                                     "higher_is_better": False, "what": "share of the timed training time spent "
                                     "waiting for the loader's next batch"}
    figures["gpu_util_percent"] = {"value": verdict.gpu_util_percent, "unit": "%", "higher_is_better": True,
                                   "what": "mean NVML GPU utilisation during the end-to-end timed loop"}
    if verdict.gpu_util_percent is None:
        figures["gpu_util_percent"]["reason"] = verdict.gpu_util_reason
    figures["epoch_refill_fraction"] = {"value": verdict.epoch_refill_fraction, "unit": "fraction",
                                        "higher_is_better": False, "what": "share of the timed training time "
                                        "spent waiting at epoch starts beyond a step's usual wait (the loader "
                                        "refilling from empty)"}
    if verdict.epoch_refill_fraction is None:
        figures["epoch_refill_fraction"]["reason"] = "no epoch started during the timed loop"
    e2e = results["end_to_end"]
    method = (f"Each stage of the input pipeline measured alone in images/s, then the model benchmark's training "
              f"step fed by the real loader (the headline: images / timed wall time). Dataset: {dataset.describe()}. "
              "Stage methods are in details.stages; the verdict compares end-to-end with the slowest link of "
              "storage → decode/augment → copy → compute (interference when end-to-end is below "
              f"70 % of it). Allocator: {e2e_details.get('allocator')}.")
    details = {
        "stages": [r.to_json() for r in results.values()],
        "bottleneck": verdict.bottleneck,
        "bottleneck_name": verdict.to_json()["bottleneck_name"],
        "limiting_stage": verdict.limiting_stage,
        "verdict": verdict.text,
        "causes": verdict.causes,
        "data_wait_fraction": verdict.data_wait_fraction,
        "epoch_refill_fraction": verdict.epoch_refill_fraction,
        "gpu_util_percent": verdict.gpu_util_percent,
        "gpu_util_reason": verdict.gpu_util_reason,
        "advice": [a.to_json() for a in verdict.advice],
        "chain": verdict.chain,
        "consistency": verdict.consistency,
        "dataset": {"root": dataset.root, "images": len(dataset.files), "classes": len(dataset.classes),
                    "bytes": dataset.total_bytes, "generated": dataset.generated, "reused": dataset.reused,
                    "mean_width_px": ctx.stored_width_px, "mean_height_px": ctx.stored_height_px},
        "context": {"device": ctx.device, "workers": ctx.workers, "cpus": ctx.cpus, "batch": ctx.batch,
                    "fits_in_ram": ctx.fits_in_ram, "available_ram_bytes": ctx.available_ram_bytes,
                    "model": ctx.model, "image_size": ctx.image_size, "read_delay_ms": ctx.read_delay_ms},
        "torch": torch.__version__, "torchvision": e2e_details.get("torchvision"),
        "cuda_runtime": e2e_details.get("cuda_runtime"), "cudnn": e2e_details.get("cudnn"),
        "end_to_end_epochs_started": e2e_details.get("epochs_started"),
        "allocator": e2e_details.get("allocator"),
    }
    return Outcome(figure_name="End-to-end training (loader-fed)", unit="images/s", samples=list(e2e.samples),
                   precision=label, method=method, figures=figures, series=series, warnings=warnings,
                   details=details, device=where)


def _availability() -> str | None:
    for module, what in (("torch", "PyTorch"), ("torchvision", "torchvision"), ("PIL", "Pillow"),
                         ("cv2", "OpenCV (opencv-python)"), ("psutil", "psutil")):
        if importlib.util.find_spec(module) is None:
            return f"{what} is not installed"
    return None


BENCHMARK = Benchmark(
    id=BENCH_ID,
    title="Data-path bottleneck analyzer",
    category="Data path",
    description=("Measures each stage an image passes on its way to the GPU (disk, decode, augmentation, copy, "
                 "compute) alone, then real loader-fed training, and says which stage holds training back and "
                 "what to change, with the expected gain."),
    params=(
        Param("dataset", "path", "", "ImageFolder tree of your own (root/<class>/<image>.jpg); empty = generate one."),
        Param("width", "int", 500, "Width of generated images (500×375 is a typical photo-dataset size).",
              minimum=16, maximum=8192, unit="px"),
        Param("height", "int", 375, "Height of generated images.", minimum=16, maximum=8192, unit="px"),
        Param("count", "int", 4096, "Images to generate, or to take from your folder. Keep it several times "
              "batch × workers, or epoch restarts dominate.", minimum=1, maximum=10_000_000),
        Param("quality", "int", 90, "JPEG quality of generated images.", minimum=1, maximum=100),
        Param("dataset_disk", "path", tempfile.gettempdir(), "Folder on the disk to test; the generated dataset is "
              "written there (and reused by later runs of the same size and count)."),
        Param("model", "choice", "resnet50", "Model to train (the model benchmarks' models; ResNet-18 is the small, "
              "data-hungry one).", choices=MODEL_CHOICES),
        Param("image_size", "int", 224, "Model input side: RandomResizedCrop's output.", minimum=16, maximum=1024,
              unit="px"),
        Param("precision", "choice", "auto", "auto = bf16-amp on a GPU, fp32 on the CPU; otherwise as in the model "
              "benchmarks (fp32 means TF32 off).", choices=PRECISION_CHOICES),
        Param("batch", "int", 128, "Images per step.", minimum=1, maximum=1 << 16),
        Param("workers", "int", cpu_count(), "DataLoader worker processes (default: every CPU).", minimum=0,
              maximum=1024),
        Param("device", "device", "auto", "'auto' (first CUDA GPU, else the CPU), 'cpu', 'cuda' or 'cuda:N'.",
              decides_comparability=False),
        Param("steps", "int", 10, "Timed training steps per repeat (compute-only; end to end rounded up to whole "
              "epochs).", minimum=1, maximum=100_000,
              decides_comparability=False),
        Param("warmup", "int", 5, "Untimed training steps first.", minimum=0, maximum=10_000, decides_comparability=False),
        Param("channels_last", "bool", False, "NHWC memory format for the model and its inputs."),
        Param("read_delay_ms", "float", 0.0, "What-if knob: sleep this long before every file read (stages and "
              "loader alike), to model storage with per-file latency such as a network filesystem. 0 = off.",
              minimum=0, maximum=10_000, unit="ms"),
        Param("stage_s", "float", 1.0, "Approximate duration of one timed repeat of each standalone stage.",
              minimum=0.01, maximum=60, unit="s"),
        Param("repeats", "int", 3, "Timed repeats per stage (also the timed windows of compute-only and end-to-end training).", minimum=1, maximum=100, decides_comparability=False),
    ),
    run=run,
    version="1",
    availability=_availability,
    default_timeout_s=1800.0,
)
