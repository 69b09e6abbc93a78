"""datapath.analyze: which stage of the input pipeline holds training back, and what to change.

Measures every stage of disk → RAM → CPU decode/augment → PCIe → GPU alone in images/s (see
:mod:`hwbench_gui.engine.datapath.stages`), then the real loader-fed training rate in steady state
with the same model, precision, batch and workers (the headline), then every cheap change it
could advise, end to end and within a time budget (:mod:`hwbench_gui.engine.datapath.end_to_end`),
and turns the numbers into a verdict whose causes are proven by those what-ifs, with the best
configuration found as code (:mod:`hwbench_gui.engine.datapath.verdict`,
:mod:`hwbench_gui.engine.datapath.tryouts`). 'auto' parameters are sized for the machine
(:mod:`hwbench_gui.engine.datapath.defaults`). The compute-only and end-to-end rates come from the
model benchmark's own training step (``model_torch.measure``).
"""

from __future__ import annotations

import importlib.util
import tempfile
from typing import Any

from hwbench_gui.engine.datapath.best_found import best_found as find_best
from hwbench_gui.engine.datapath.end_to_end import SETTLE_WINDOWS, PhaseReporter
from hwbench_gui.engine.measure.gpu_busy import GpuBusySampler
from hwbench_gui.engine.measure.timing import cpu_count
from hwbench_gui.engine.models.data import LOADER_PREFETCH_BATCHES, LoaderOptions
from hwbench_gui.engine.spec.benchmark import Benchmark, Outcome, Param, ParamError, Reporter, Series
from hwbench_gui.engine.spec.precision import BF16_AMP, FP32, MODEL_KEYS, TF32, from_key

BENCH_ID = "datapath.analyze"
MODEL_CHOICES = ("resnet50", "resnet18", "vgg16")  # classifiers: an ImageFolder feeds them
PRECISION_CHOICES = ("auto",) + MODEL_KEYS
DECODE_SET_MAX = 256
#: Skipped dataset files named in the run's log one by one (all are counted in the result).
SKIPPED_LOGGED = 20

#: Progress fraction at which each phase starts.
_PHASES = {"dataset": 0.0, "disk": 0.06, "decode": 0.12, "augment": 0.2, "cpu": 0.24, "transfer": 0.3,
           "compute": 0.33, "end_to_end": 0.42, "what_if": 0.5, "tryouts": 0.55, "verdict": 0.99}


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
                  # windows of the given steps, not stretched to a time
                  min_time_s=0.0)
    return values


def _compute_params(params: dict[str, Any], device: Any, precision: str, kind: str) -> dict[str, Any]:
    """Compute-only parameters: with steps on auto, windows of about 1.5 s on a GPU (sized by the
    model benchmark's calibration window) and of 3 steps on the CPU."""
    values = _model_params(params, device, precision, "synthetic")
    if not params["steps"]:
        values["steps"] = 10 if kind == "cuda" else 3
        if kind == "cuda":
            values["min_time_s"] = 1.5 * params["repeats"]
    return values


def _open_or_generate(params: dict[str, Any], reporter: Reporter) -> Any:
    from hwbench_gui.engine.datapath.dataset import generate_dataset, open_dataset

    if params["dataset"]:
        return open_dataset(params["dataset"], limit=params["count"] or None)
    reporter.progress(0.0, f"generating {params['count']} JPEGs of {params['width']}×{params['height']} px")
    return generate_dataset(params["dataset_disk"] or tempfile.gettempdir(), params["width"], params["height"],
                            params["count"], params["quality"],
                            progress=lambda f: reporter.progress(_PHASES["disk"] * f, "generating the dataset"))


def _phase(reporter: Reporter, name: str, message: str) -> None:
    reporter.progress(_PHASES[name], message)


def _prepare(params: dict[str, Any], reporter: Reporter) -> tuple[Any, str, int, dict[str, Any], list[str],
                                                                   list[str], str]:
    """Checks and sizes the run for this machine: (device, kind, cpus, params resolved, the auto choices,
    warnings, the allocator's and threads' description)."""
    import torch

    from hwbench_gui.engine.datapath import defaults
    from hwbench_gui.engine.datapath import stages as st

    device, kind = _resolve_device(params["device"])
    cpus = cpu_count()
    params, chosen = defaults.resolve(params, kind, cpus)
    if chosen:
        reporter.log("auto parameters for this machine: " + ", ".join(chosen))
    if params["image_size"] < 16:
        raise ParamError(f"image_size: {params['image_size']} px is below 16")
    if params["count"] and params["batch"] > params["count"]:
        raise ParamError(f"batch ({params['batch']}) is larger than count ({params['count']}): the loader needs at "
                         "least one whole batch")
    workers = params["workers"]
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
    return device, kind, cpus, params, chosen, warnings, allocator


def _stage_rates(params: dict[str, Any], dataset: Any, device: Any, kind: str, cpus: int, reporter: Reporter,
                 warnings: list[str]) -> tuple[dict[str, Any], int, int]:
    """Every stage of the chain alone, storage to the copy to the device: (stage key -> its result, the
    stored images' mean width and height in pixels)."""
    from hwbench_gui.engine.datapath import stages as st
    from hwbench_gui.engine.datapath.findings import usable_workers

    workers, repeats, stage_s = params["workers"], params["repeats"], params["stage_s"]
    readers = max(1, workers)
    delay_s = params["read_delay_ms"] / 1e3
    results: dict[str, st.StageResult] = {}
    _phase(reporter, "disk", "disk read, cache bypassed")
    results["disk_cold"] = st.disk_read(dataset.files, readers, cold=True, repeats=repeats, read_delay_s=delay_s)
    _phase(reporter, "disk", "disk read, page cache")
    results["disk_cached"] = st.disk_read(dataset.files, readers, cold=False, repeats=repeats, read_delay_s=delay_s)
    if results["disk_cold"].extra.get("warning"):
        warnings.append(results["disk_cold"].extra["warning"])

    decode_files = st.subset_by_bytes(dataset.files, dataset.mean_file_bytes, st.DECODE_SET_BYTES)[:DECODE_SET_MAX]
    jpegs = [st.read_file(p) for p in decode_files]
    usable = usable_workers(kind, cpus)
    _phase(reporter, "decode", f"JPEG decode with 1 and {readers} workers"
           + (f" (and {usable}: what-if)" if usable > readers else ""))
    results.update(st.decode_rates(jpegs, readers, stage_s, repeats, what_if_workers=usable))

    _phase(reporter, "augment", "augmentation, 1 worker")
    decoded = [st.decode_pil(data) for data in jpegs[:st.AUGMENT_SET_IMAGES]]
    stored_w = round(sum(im.size[0] for im in decoded) / len(decoded))
    stored_h = round(sum(im.size[1] for im in decoded) / len(decoded))
    results["augment_1"], augmented = st.augment_rate(decoded, params["image_size"], stage_s, repeats)
    del decoded

    _phase(reporter, "cpu", f"decode + augment in a DataLoader with {workers} workers")
    loader_files = st.subset_by_bytes(dataset.files, dataset.mean_file_bytes, st.LOADER_SET_BYTES)
    loader_jpegs = jpegs + [st.read_file(p) for p in loader_files[len(jpegs):]]
    loader_labels = dataset.labels[:len(loader_jpegs)]
    per_image_s = 1 / results["decode_1"].rate + 1 / results["augment_1"].rate
    estimate = readers / per_image_s
    results["cpu_n"] = st.cpu_pipeline_rate(loader_jpegs, loader_labels, params["image_size"], params["batch"],
                                            workers, stage_s, repeats, estimate)
    del loader_jpegs

    if kind == "cuda":
        _phase(reporter, "transfer", "JPEG decode on the GPU (nvJPEG)")
        try:
            results["gpu_decode"] = st.gpu_decode_rate(jpegs[:min(len(jpegs), params["batch"])], device, stage_s,
                                                       repeats)
        except Exception as exc:  # an nvJPEG gap must not cost the whole analysis; the advice says "not measured"
            results["gpu_decode"] = st.not_measured("gpu_decode", f"{type(exc).__name__}: {exc}")
    _phase(reporter, "transfer", "collate + pinned copy to the device" if kind == "cuda" else "collate")
    results["transfer"] = st.transfer_rate(augmented, params["batch"], device, stage_s, repeats)
    return results, stored_w, stored_h


def _compute_stage(params: dict[str, Any], spec: Any, device: Any, kind: str, label: str,
                   reporter: Reporter) -> tuple[Any, Any]:
    """The model's training step alone on a batch made once on the device: (its timed run, its stage result)."""
    from hwbench_gui.engine.datapath import end_to_end as e2e_mod
    from hwbench_gui.engine.datapath import stages as st
    from hwbench_gui.engine.models import torch_measure as model_torch

    sub = PhaseReporter(reporter, _PHASES["compute"], _PHASES["end_to_end"])
    sub.progress(0.0, "model compute only (synthetic batch on the device)")
    compute_params = _compute_params(params, device, params["precision"], kind)
    # Settled like every end-to-end measurement: like with like when the two are compared.
    settled = LoaderOptions(settle_windows=e2e_mod.SETTLE_WINDOWS[kind])
    compute_run, _details, _where = model_torch.measure(spec, compute_params, sub, loader=settled)
    if kind == "cpu" and not params["steps"] and compute_run.total_s < e2e_mod.WINDOW_S["cpu"] * params["repeats"]:
        # Windows of a few fast steps time the CPU's warm-up (its first few dozen steps are slower)
        # and the timer's noise; the first run sizes windows as long as the end-to-end ones.
        compute_params["steps"] = e2e_mod.window_steps(compute_run.images_per_s(), params["batch"], kind)
        compute_run, _details, _where = model_torch.measure(spec, compute_params, sub, loader=settled)
    method_common = model_torch.method_text(compute_params, kind == "cuda")
    return compute_run, st.timed_run_stage(
        "compute", compute_run,
        f"model benchmark's training step ({spec.title}, {label}, batch {params['batch']}, {params['image_size']} px) "
        f"on a random batch made once on the device: no loader, no copy. {params['warmup']} warm-up steps, then "
        "untimed windows until two in a row agree within 4 % (as end to end), then "
        f"{params['repeats']} timed windows of {compute_run.window_steps[0] if compute_run.window_steps else '?'} "
        f"steps; images/s = the median of the windows' images/s (each: images / its wall time). {method_common}")


def _end_to_end_method(params: dict[str, Any], dataset: Any, base: Any, e2e_steps: int) -> str:
    workers = params["workers"]
    return (
        f"the same training step fed by torch DataLoader over all {len(dataset.files)} files: {workers} workers "
        f"reading (read_delay_ms={params['read_delay_ms']:g}), PIL decode, the training transform, collate; "
        f"pin_memory={base.pin_memory}, prefetch_factor={base.prefetch}, persistent workers, non-blocking copies; "
        "the sampler draws several shuffled passes per DataLoader epoch, so no epoch start falls in the timed "
        f"windows (steady state; an epoch start's cost is measured apart, after them). Files start in the page "
        f"cache when they fit (they were just read). {params['warmup']} warm-up steps on a synthetic batch, then the "
        f"loader starts and its first {max(1, workers) + 2} steps (the start from empty) are untimed; "
        f"{params['repeats']} timed windows of {e2e_steps} steps; data wait = time the step spent in next(loader); "
        "images/s = the median of the windows' images/s (one window slowed by a start-up transient moves the mean, "
        "not the median of three). Every what-if configuration is measured the same way.")


def _epoch_start(params: dict[str, Any], dataset: Any, e2e_run: Any) -> dict[str, Any]:
    """The measured cost of an epoch start, priced for the user's epoch (or ImageNet-1k's for a generated set)."""
    from hwbench_gui.engine.datapath import defaults
    from hwbench_gui.engine.datapath.verdict import epoch_start_cost, epoch_start_share

    workers = params["workers"]
    costs = list(e2e_run.extra.get("epoch_start_cost_s") or [])
    epoch_cost = epoch_start_cost(costs)
    user_images = defaults.epoch_images(params, len(dataset.files), dataset.generated)
    user_batches = max(1, user_images // params["batch"])
    step_s = e2e_run.total_s / e2e_run.steps if e2e_run.steps else None
    return {"cost_s": epoch_cost, "costs_s": costs, "epoch_images": user_images, "epoch_batches": user_batches,
            "step_s": step_s, "fraction": epoch_start_share(epoch_cost, step_s, user_batches),
            "epoch_of": defaults.epoch_source(params, dataset.generated),
            "method": f"{len(costs)} epoch starts forced after the timed windows (a new iterator over the "
            f"loader, its prefetched batches dropped); cost = time of the next {max(1, workers) + 2} steps "
            "less as many steps at the timed pace; the median, priced for an epoch of "
            f"{user_images:,} images" + (" (ImageNet-1k: the generated dataset's size is hwbench's choice)"
                                         if dataset.generated and not params.get("epoch_images") else "")}


def _step_slowdown(kind: str, data_wait: float | None, e2e_run: Any, compute_run: Any) -> float | None:
    """The step's own time with the loader running against alone: how much the workers slow training itself.
    On CUDA the steps run asynchronously, so while the step waits for data the GPU is still busy with the
    previous one: the time outside the wait then understates the step (0.55× on the H200 at 2 workers). Only
    with little waiting does it measure the step itself; the CPU has no overlap."""
    from hwbench_gui.engine.datapath.findings import DATA_WAIT_NOTABLE

    overlap_hides = kind == "cuda" and (data_wait or 0) > DATA_WAIT_NOTABLE
    if e2e_run.steps and compute_run.steps and compute_run.total_s > 0 and not overlap_hides:
        return ((e2e_run.total_s - e2e_run.data_wait_s) / e2e_run.steps) / (compute_run.total_s / compute_run.steps)
    return None


def run(params: dict[str, Any], reporter: Reporter) -> Outcome:
    import psutil
    import torch

    from hwbench_gui.engine.datapath import defaults, tryouts
    from hwbench_gui.engine.datapath import end_to_end as e2e_mod
    from hwbench_gui.engine.datapath import stages as st
    from hwbench_gui.engine.datapath.findings import Context
    from hwbench_gui.engine.datapath.verdict import analyze
    from hwbench_gui.engine.models import torch_measure as model_torch
    from hwbench_gui.engine.spec.precision import label_of

    device, kind, cpus, params, chosen, warnings, allocator = _prepare(params, reporter)
    precision = params["precision"]
    label = label_of(precision)
    workers = params["workers"]
    dataset = _open_or_generate(params, reporter)
    if params["batch"] > len(dataset.files):
        raise ParamError(f"batch ({params['batch']}) is larger than the dataset's {len(dataset.files)} images")
    reporter.log(f"dataset: {dataset.describe()}")
    for path, reason in dataset.skipped[:SKIPPED_LOGGED]:
        reporter.log(f"skipped {path}: {reason}")
    if dataset.skipped_warning():
        warnings.append(dataset.skipped_warning())
    available_ram = psutil.virtual_memory().available
    results, stored_w, stored_h = _stage_rates(params, dataset, device, kind, cpus, reporter, warnings)
    spec = model_spec(params["model"])
    compute_run, results["compute"] = _compute_stage(params, spec, device, kind, label, reporter)

    sub = PhaseReporter(reporter, _PHASES["end_to_end"], _PHASES["what_if"])
    sub.progress(0.0, f"end-to-end: loader with {workers} workers feeding the training step")
    setup = e2e_mod.Setup(spec, _model_params(params, device, precision, dataset.root), dataset.files, dataset.labels,
                          dataset.classes, params["read_delay_ms"] / 1e3, kind, cpus, model_torch.measure)
    base = tryouts.LoaderConfig(workers, LOADER_PREFETCH_BATCHES, kind == "cuda", params["channels_last"])
    feed = min(r.rate for k, r in results.items() if k in ("disk_cached", "cpu_n", "transfer", "compute") and r.rate)
    e2e_steps = params["steps"] or e2e_mod.window_steps(feed, params["batch"], kind)
    sampler = GpuBusySampler(device.index or 0, sub.timed) if kind == "cuda" else None
    if sampler is not None:
        with sampler:
            e2e_run, e2e_details, where = e2e_mod.measure_config(base, setup, e2e_steps, params["warmup"], sub,
                                                                 epoch_starts=e2e_mod.EPOCH_STARTS[kind])
        gpu_util, gpu_util_reason = sampler.mean(), sampler.reason
    else:
        e2e_run, e2e_details, where = e2e_mod.measure_config(base, setup, e2e_steps, params["warmup"], sub,
                                                             epoch_starts=e2e_mod.EPOCH_STARTS[kind])
        gpu_util, gpu_util_reason = None, "the device is the CPU"
    results["end_to_end"] = st.timed_run_stage("end_to_end", e2e_run,
                                               _end_to_end_method(params, dataset, base, e2e_steps))
    data_wait = e2e_run.data_wait_s / e2e_run.total_s if e2e_run.total_s else None
    refill_fraction = _epoch_refill(e2e_run, results["end_to_end"].extra)
    epoch_start = _epoch_start(params, dataset, e2e_run)
    results["end_to_end"].extra.update(epoch_start=epoch_start, settle_rates=e2e_run.extra.get("settle_rates"))
    step_slowdown = _step_slowdown(kind, data_wait, e2e_run, compute_run)

    ctx = Context(device=kind, workers=workers, cpus=cpus, batch=params["batch"], images=len(dataset.files),
                  dataset_bytes=dataset.total_bytes, available_ram_bytes=available_ram, precision=label,
                  channels_last=params["channels_last"], model=params["model"], image_size=params["image_size"],
                  stored_width_px=stored_w, stored_height_px=stored_h, read_delay_ms=params["read_delay_ms"],
                  dali_installed=importlib.util.find_spec("nvidia.dali") is not None if kind == "cuda" else False)
    rates = {key: result.rate for key, result in results.items()}
    # Price the compute advice and the best-found gap with measurements; on the CPU channels-last is
    # tried end to end anyway, and a compute-only repeat costs as much as that.
    if kind == "cuda":
        what_ifs = _compute_what_ifs(params, device, kind, precision, spec, reporter, gpu_util)
        results.update(what_ifs)
        rates.update({key: result.rate for key, result in what_ifs.items()})

    e2e_rate = results["end_to_end"].rate  # the headline: the median of its timed windows
    sub = PhaseReporter(reporter, _PHASES["tryouts"], _PHASES["verdict"])
    tried = e2e_mod.try_configs(base, e2e_rate, setup, params["budget_s"], e2e_steps, sub)

    _phase(reporter, "verdict", "verdict")
    verdict = analyze(rates, ctx, data_wait_fraction=data_wait, gpu_util_percent=gpu_util,
                      gpu_util_reason=gpu_util_reason, step_slowdown=step_slowdown,
                      epoch_refill_fraction=refill_fraction, tried=tried, base=base, epoch_start=epoch_start)
    best_found = find_best(base, e2e_rate, tried, rates, params, label, kind)
    verdict.text += " " + best_found["text"]
    if verdict.consistency.get("consistent") is False:
        c = verdict.consistency
        warnings.append(f"end-to-end ({verdict.end_to_end:.0f} images/s) exceeds the slowest stage alone "
                        f"({c['slowest_alone_stage']}, {c['slowest_alone_rate']:.0f} images/s) by more than "
                        f"{verdict.consistency['noise_allowed']:.0%}: that stage's standalone method underestimates it")
    reporter.log(verdict.text)
    e2e_details["allocator"] = allocator
    e2e_details["epochs_started"] = e2e_run.extra.get("epochs_started")  # the forced epoch starts included
    extra = {"tried": [t.to_json() for t in tried], "best_found": best_found, "epoch_start": epoch_start,
             "budget_s": params["budget_s"], "auto_params": chosen, "base_config": base.to_json()}
    outcome = _outcome(params, results, verdict, ctx, dataset, label, where, warnings, e2e_details, torch, extra)
    outcome.resolved_params = {name: params[name] for name in defaults.AUTO_PARAMS}
    return outcome


def _epoch_refill(run: Any, extra: dict[str, Any]) -> float:
    """Share of the timed time spent refilling the loader at epoch starts, beyond a step's usual
    wait (0 when no epoch started in the timed loop); records the waits in ``extra``."""
    waits = list(run.extra.get("epoch_start_waits_s") or [])
    extra["epoch_start_waits_s"] = waits
    if not waits or not run.total_s:
        return 0.0
    others = max(1, run.steps - len(waits))
    usual = max(0.0, run.data_wait_s - sum(waits)) / others
    excess = sum(max(0.0, w - usual) for w in waits)
    extra["epoch_refill_excess_s"] = excess
    return excess / run.total_s


def compute_variants(params: dict[str, Any], kind: str, precision: str,
                     gpu_util: float | None) -> list[tuple[str, dict[str, Any], str, str, str]]:
    """The compute-only what-ifs worth measuring: (stage key, parameters, precision key, what
    changes, why). Channels-last when off; BF16 autocast on CUDA when the run used FP32/TF32; twice
    the batch on CUDA when the GPU was busy less than
    :data:`~hwbench_gui.engine.models.common.GPU_IDLE_NOTE_BELOW_PERCENT` of the end-to-end timed
    loop (the launch path: more work per kernel the host queues)."""
    from hwbench_gui.engine.models.common import GPU_IDLE_NOTE_BELOW_PERCENT

    price = "to price the compute advice and the best configuration's gap to its slowest stage alone"
    variants = []
    if not params["channels_last"]:
        variants.append(("compute_channels_last", dict(params, channels_last=True), precision, "channels-last",
                         price))
    if kind == "cuda" and from_key(precision) in (FP32, TF32):
        variants.append(("compute_bf16", params, BF16_AMP.key, BF16_AMP.label, price))
    if kind == "cuda" and gpu_util is not None and gpu_util < GPU_IDLE_NOTE_BELOW_PERCENT:
        variants.append(("compute_batch2x", dict(params, batch=2 * params["batch"]), precision,
                         f"batch {2 * params['batch']}", f"the GPU was busy {gpu_util:.0f} % of the end-to-end timed "
                         "time: to price a larger batch against the host's launch path"))
    return variants


def _compute_what_ifs(params: dict[str, Any], device: Any, kind: str, precision: str, spec: Any,
                      reporter: Reporter, gpu_util: float | None = None) -> dict[str, Any]:
    """The compute-only step again for each of :func:`compute_variants`."""
    from hwbench_gui.engine.datapath import stages as st
    from hwbench_gui.engine.models import torch_measure as model_torch

    out = {}
    for key, variant, variant_precision, what, why in compute_variants(params, kind, precision, gpu_util):
        sub = PhaseReporter(reporter, _PHASES["what_if"], _PHASES["verdict"])
        sub.progress(0.0, f"what-if: model compute with {what}")
        try:
            timed, _, _ = model_torch.measure(spec, _compute_params(variant, device, variant_precision, kind), sub,
                                              loader=LoaderOptions(settle_windows=SETTLE_WINDOWS[kind]))
        except Exception as exc:  # a what-if that fails (e.g. no BF16 on this GPU, no memory for 2x the batch)
            out[key] = st.not_measured(key, f"{type(exc).__name__}: {exc}")
            continue
        out[key] = st.timed_run_stage(key, timed, f"the compute-only stage again with {what}, everything else equal "
                                      f"(measured {why}).")
    return out


def _outcome(params: dict[str, Any], results: dict[str, Any], verdict: Any, ctx: Any, dataset: Any, label: str,
             where: str, warnings: list[str], e2e_details: dict[str, Any], torch: Any,
             extra: dict[str, Any]) -> Outcome:
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
    epoch_start = extra["epoch_start"]
    figures["epoch_start_cost_s"] = {"value": epoch_start["cost_s"], "unit": "s", "higher_is_better": False,
                                     "what": "time one epoch start (the loader refilling from empty) adds, measured "
                                     "after the timed windows"}
    figures["epoch_start_share"] = {"value": epoch_start["fraction"], "unit": "fraction", "higher_is_better": False,
                                    "what": f"share of an epoch of {epoch_start['epoch_images']:,} images that its "
                                    "start would cost with this loader"}
    best = extra["best_found"]
    figures["best_found"] = {"value": best["rate_images_per_s"], "unit": "images/s", "higher_is_better": True,
                             "samples": best["samples"], "what": "end-to-end training with the best configuration "
                             f"measured ({best['describe']}); the headline is the default configuration's"}
    e2e = results["end_to_end"]
    method = (f"Each stage of the input pipeline measured alone in images/s, then the model benchmark's training "
              f"step fed by the real loader in steady state, with this run's default configuration (the headline: "
              f"the median of its timed windows' images/s); then each cheap change of the loader and model settings "
              f"measured end to end the same way within budget_s, and the best configuration found. Dataset: "
              f"{dataset.describe()}. "
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
        "step_slowdown": verdict.step_slowdown,
        "gpu_util_percent": verdict.gpu_util_percent,
        "gpu_util_reason": verdict.gpu_util_reason,
        "advice": [a.to_json() for a in verdict.advice],
        "chain": verdict.chain,
        "consistency": verdict.consistency,
        "dataset": {"root": dataset.root, "images": len(dataset.files), "classes": len(dataset.classes),
                    "bytes": dataset.total_bytes, "generated": dataset.generated, "reused": dataset.reused,
                    "mean_width_px": ctx.stored_width_px, "mean_height_px": ctx.stored_height_px,
                    "skipped": dataset.skipped_json()},
        "context": {"device": ctx.device, "workers": ctx.workers, "cpus": ctx.cpus, "batch": ctx.batch,
                    "fits_in_ram": ctx.fits_in_ram, "available_ram_bytes": ctx.available_ram_bytes,
                    "model": ctx.model, "image_size": ctx.image_size, "read_delay_ms": ctx.read_delay_ms},
        "torch": torch.__version__, "torchvision": e2e_details.get("torchvision"),
        "cuda_runtime": e2e_details.get("cuda_runtime"), "cudnn": e2e_details.get("cudnn"),
        "end_to_end_epochs_started": e2e_details.get("epochs_started"),
        "allocator": e2e_details.get("allocator"),
        "loss": verdict.loss,
        **extra,
    }
    return Outcome(figure_name="End-to-end training (loader-fed, default configuration)", unit="images/s",
                   samples=list(e2e.samples),
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
                 "compute) alone, then real loader-fed training in steady state, then tries its own advice (worker "
                 "count, prefetch, pinning, channels-last, decode on the GPU) end to end: says which stage holds "
                 "training back, proves each cause it names, and gives the best configuration found as code."),
    params=(
        Param("dataset", "path", "", "ImageFolder tree of your own (root/<class>/<image>.jpg); empty = generate one."),
        Param("width", "int", 500, "Width of generated images (500×375 is a typical photo-dataset size).",
              minimum=16, maximum=8192, unit="px"),
        Param("height", "int", 375, "Height of generated images.", minimum=16, maximum=8192, unit="px"),
        Param("count", "int", 0, "Images to generate, or to take from your folder; 0 = auto: 1024 per CPU "
              "on a GPU box, 512 when the CPU trains (1024-16384) generated, or all of your folder's.", minimum=0,
              maximum=10_000_000),
        Param("quality", "int", 90, "JPEG quality of generated images.", minimum=1, maximum=100),
        Param("dataset_disk", "path", tempfile.gettempdir(), "Folder on the disk to test; the generated dataset is "
              "written there (and reused by later runs of the same size and count)."),
        Param("model", "choice", "auto", "Model to train (the model benchmarks' models; ResNet-18 is the small, "
              "data-hungry one); auto = ResNet-50 on a GPU, ResNet-18 on the CPU.", choices=("auto",) + MODEL_CHOICES),
        Param("image_size", "int", 0, "Model input side: RandomResizedCrop's output; 0 = auto (224 px on a GPU, "
              "64 px on the CPU).", minimum=0, maximum=1024, unit="px"),
        Param("precision", "choice", "auto", "auto = bf16-amp on a GPU, fp32 on the CPU; otherwise as in the model "
              "benchmarks (fp32 means TF32 off).", choices=PRECISION_CHOICES),
        Param("batch", "int", 0, "Images per step; 0 = auto (128 on a GPU, 16 on the CPU).", minimum=0,
              maximum=1 << 16),
        Param("workers", "int", -1, "DataLoader worker processes of the default configuration; -1 = auto: every CPU "
              "less one on a GPU box (a core for the training process and its pin-memory thread), half the CPUs "
              "when the CPU trains.", minimum=-1, maximum=1024),
        Param("epoch_images", "int", 0, "Images in one epoch of your training, to price an epoch start; 0 = your "
              "folder's images, or ImageNet-1k's 1,281,167 when the dataset is generated.", minimum=0,
              maximum=1 << 40, decides_comparability=False),
        Param("budget_s", "float", 0.0, "Time for trying the advice end to end (each change of worker count, "
              "prefetch, pinning, channels-last and decode on the GPU, then their best combination); 0 = auto: "
              "180 s on a GPU, 45 s on the CPU (two what-ifs on two cores).", minimum=0, maximum=7200, unit="s",
              decides_comparability=False),
        Param("device", "device", "auto", "'auto' (first CUDA GPU, else the CPU), 'cpu', 'cuda' or 'cuda:N'.",
              decides_comparability=False),
        Param("steps", "int", 0, "Timed training steps per window; 0 = auto (windows of about 1.5 s on a GPU, "
              "1 s on the CPU).", minimum=0, maximum=100_000, decides_comparability=False),
        Param("warmup", "int", 5, "Untimed training steps first (on a synthetic batch; the loader starts after "
              "them).", minimum=0, maximum=10_000, decides_comparability=False),
        Param("channels_last", "bool", False, "NHWC memory format for the model and its inputs in the default "
              "configuration (always tried as a what-if when off)."),
        Param("read_delay_ms", "float", 0.0, "What-if knob: sleep this long before every file read (stages and "
              "loader alike), to model storage with per-file latency such as a network filesystem. 0 = off.",
              minimum=0, maximum=10_000, unit="ms"),
        Param("stage_s", "float", 0.0, "Approximate duration of one timed repeat of each standalone stage; "
              "0 = auto (1 s on a GPU, 0.5 s on the CPU).", minimum=0, maximum=60, unit="s"),
        Param("repeats", "int", 3, "Timed repeats per stage (also the timed windows of every training measurement).",
              minimum=1, maximum=100, decides_comparability=False),
    ),
    run=run,
    version="2",
    availability=_availability,
    default_timeout_s=1800.0,
)
