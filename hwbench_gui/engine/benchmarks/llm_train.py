"""llm.train: language-model training and LoRA fine-tuning, tokens/s and model FLOPs utilisation (MFU)
against this GPU's datasheet dense peak and against the matmul rate measured in the same run.

The arithmetic (FLOPs per token, the memory a step holds) is in
:mod:`hwbench_gui.engine.models.llm.training_arithmetic`; the step itself in
:mod:`hwbench_gui.engine.models.llm.training`. Several GPUs go through the model benchmarks' launcher
(:func:`hwbench_gui.engine.models.multigpu.launch`): DDP when the training state fits one GPU, FSDP2
when it does not. torch is imported inside the run only.
"""

from __future__ import annotations

import importlib.util
import os
from typing import Any

from hwbench_gui.engine import child
from hwbench_gui.engine.inventory import datasheets
from hwbench_gui.engine.measure.room import gpu_room, host_room
from hwbench_gui.engine.measure.stats import median
from hwbench_gui.engine.measure.timing import duration_text, figure
from hwbench_gui.engine.models import multigpu
from hwbench_gui.engine.models.common import GIB, OutOfMemoryError, TimedRun, window_rates
from hwbench_gui.engine.models.llm import methods, what_fits
from hwbench_gui.engine.models.llm import training_arithmetic as ta
from hwbench_gui.engine.models.llm.train_limits import (
    at_peaks,
    best_of,
    low_label,
    measure_fp8,
    measure_limit,
    within_limit,
)
from hwbench_gui.engine.models.llm.train_plan import (
    compiles_on_gpu,
    estimate,
    flops_per_token,
    fp8_flops_per_token,
    is_fp8,
    memory_refusal,
    time_refusal,
)
from hwbench_gui.engine.models.llm.what_fits import FIT_FRACTION
from hwbench_gui.engine.spec.benchmark import Benchmark, BenchmarkUnavailable, Outcome, Param, ParamError, Reporter
from hwbench_gui.engine.spec.device import AUTO, CPU, CUDA, parse, resolve_auto, split_device
from hwbench_gui.engine.spec.precision import BF16, BF16_AMP, FP8, FP16, FP16_AMP, from_key

BENCH_ID = "llm.train"
PRECISION_KEYS = (BF16_AMP.key, FP16_AMP.key, FP8.key)
FP8_ON_CPU = ("precision=fp8 on the CPU: PyTorch emulates FP8 products there, so this run checks the numerics, not "
              "a speed anyone would train at")
#: One-GPU documents read for the scaling efficiency are at most this large.
BASELINE_MAX_BYTES = 8 << 20


def _params() -> tuple[Param, ...]:
    return (
        Param("model", "str", "gpt2-124m", "gpt2-124m, llama-3.2-1b, llama-3.1-8b, qwen2.5-7b, tiny, or a folder "
              "holding a Hugging Face config.json (its architecture; weights random-initialised: the rate does not "
              "depend on them)."),
        Param("method", "choice", "full", "full = every parameter trains (mixed-precision AdamW, FP32 master "
              "weights); lora = the base frozen in 16 bits, low-rank adapters on q/k/v, out, up, down train.",
              choices=("full", "lora")),
        Param("precision", "choice", BF16_AMP.key, "Autocast: bf16-amp, or fp16-amp (with loss scaling); fp8 = "
              "each block's q/k/v, out, up and down matmuls in FP8 (tensorwise dynamic scaling as torchao's "
              "default recipe: e4m3 forward, e5m2 gradients, torch._scaled_mm), the rest BF16-AMP, FP32 master "
              "weights: full training only, on a GPU of compute capability 8.9+ (Ada, Hopper, Blackwell); on the "
              "CPU only with device=cpu, as a numerics check (PyTorch emulates FP8 there: no speed figure).",
              choices=PRECISION_KEYS),
        Param("seq", "int", 1024, "Sequence length in tokens (1024, 2048, 4096 are the usual).", minimum=16,
              maximum=1 << 17, unit="tokens"),
        Param("micro_batch", "int", 0, "Sequences per forward pass per GPU; 0 = the largest that fits (one GPU: "
              "found by trying steps, doubling then bisecting, as 'hwbench maxbatch' does, up to "
              f"{ta.MAX_MICRO_TOKENS // 1024}k tokens; several GPUs: from the memory estimate; the CPU: 1). The "
              "result stores the value used.", minimum=0, maximum=4096),
        Param("grad_accum", "int", 1, "Micro-batches per optimizer step (gradient accumulation). Tokens per step = "
              "micro_batch × grad_accum × seq × GPUs.", minimum=1, maximum=4096),
        Param("checkpointing", "bool", False, "Activation checkpointing per block (recompute in the backward pass: "
              "less memory, about a third more work that MFU does not count)."),
        Param("lora_rank", "int", 16, "LoRA rank r (method=lora).", minimum=1, maximum=4096),
        Param("lora_alpha", "float", 32.0, "LoRA alpha (scale alpha / r).", minimum=0.01, maximum=1e6),
        Param("compile", "choice", "auto", "torch.compile of each block and of the loss's chunk (default mode). "
              "auto = on a GPU, off on the CPU (compiling takes minutes there). The result stores the value used.",
              choices=("auto", "true", "false")),
        Param("steps", "int", 5, "Steps of the untimed window that sizes the timed ones on a GPU (timed steps per "
              "window on the CPU).", minimum=1, maximum=100000, decides_comparability=False),
        Param("repeats", "int", 5, "Timed windows; each gives one tokens/s sample (median and spread).", minimum=1,
              maximum=1000, decides_comparability=False),
        Param("min_time_s", "float", 10.0, "Least total timed time on a GPU, split over the windows (clocks reach "
              "their power-limited level); the CPU runs the steps only.", minimum=0.5, maximum=3600.0, unit="s",
              decides_comparability=False),
        Param("warmup", "int", 3, "Untimed steps first (compilation happens in the first).", minimum=1, maximum=1000,
              decides_comparability=False),
        Param("device", "device", AUTO, "'auto' (the first GPU PyTorch sees, else the CPU), 'cuda:N' or 'cpu'.",
              choices=(AUTO, CPU, CUDA), decides_comparability=False),
        Param("gpus", "int", 1, "GPUs on this machine: N > 1 launches N ranks as torchrun does (NCCL; gloo on the "
              "CPU).", minimum=1, maximum=64),
        Param("sharding", "choice", "auto", "Several GPUs: ddp (each GPU holds the whole training state), fsdp "
              "(FSDP2 fully_shard per block: states divided over the GPUs), auto = ddp when the estimate fits one "
              "GPU, else fsdp.", choices=("auto", "ddp", "fsdp")),
        Param("single_gpu_result", "path", "", "A one-GPU llm.train document at the same settings: the scaling "
              "efficiency of a multi-GPU run is computed against it.", decides_comparability=False),
    )


def _arch(params: dict[str, Any]) -> Any:
    from hwbench_gui.engine.models.llm import architectures

    arch = architectures.resolve(params["model"])
    if params["seq"] > arch.max_positions:
        raise ParamError(f"seq: {params['seq']} is longer than {arch.name}'s {arch.max_positions} positions")
    return arch


def check_fp8(arch: Any, params: dict[str, Any]) -> None:
    """ParamError with the reason when ``precision=fp8`` cannot train ``arch`` as ``params`` ask."""
    if params["method"] != "full":
        raise ParamError("precision=fp8 is built for full training (method=full) only: FP8 LoRA is another design, "
                         "the frozen base stored in FP8 (half the memory of the BF16 base) with BF16 adapters and an "
                         "FP8 backward for the input gradients only, not built here; use precision=bf16-amp for "
                         "LoRA")
    from hwbench_gui.engine.models.llm.fp8_training import ALIGN, misaligned

    shapes = dict(zip(ta.LORA_TARGETS, ta.lora_shapes(arch)))
    bad = misaligned(shapes, params["seq"])
    if bad:
        raise ParamError(f"precision=fp8: torch._scaled_mm multiplies dimensions that are multiples of {ALIGN} only, "
                         f"and {arch.name} has {', '.join(b.replace('tokens per micro-batch', 'seq') for b in bad)} "
                         f"(give a seq that is a multiple of {ALIGN}; a model whose matrices are not cannot train in "
                         "FP8 here)")


def run(params: dict[str, Any], reporter: Reporter) -> Outcome:
    if importlib.util.find_spec("torch") is None:
        raise BenchmarkUnavailable("PyTorch is not installed")
    arch = _arch(params)
    if is_fp8(params):
        check_fp8(arch, params)
    asked = parse(params["device"], allow=(AUTO, CPU, CUDA))
    params = {**params, "device": str(resolve_auto(asked))}
    kind, _ = split_device(params["device"])
    if is_fp8(params) and kind == CPU and asked.kind == AUTO:
        raise BenchmarkUnavailable("precision=fp8 needs a GPU with FP8 tensor cores (compute capability 8.9+) and "
                                   "no GPU was found: the CPU only emulates FP8 (a numerics check, not a speed "
                                   "figure); give device=cpu to run it there anyway")
    params["compile"] = kind == CUDA if params["compile"] == "auto" else params["compile"] == "true"
    if multigpu.is_rank_process():
        return _rank_main(arch, params, reporter)
    if params["gpus"] > 1:
        return _run_multi(arch, params, reporter, asked.kind == AUTO)
    return _run_single(arch, params, reporter, asked.kind == AUTO)


def _device(torch: Any, params: dict[str, Any], local_rank: int = 0) -> Any:
    kind, index = split_device(params["device"])
    if kind != CUDA:
        return torch.device("cpu")
    if not torch.cuda.is_available():
        raise BenchmarkUnavailable(f"PyTorch {torch.__version__} cannot use CUDA here (built for CUDA "
                                   f"{torch.version.cuda}); use device=cpu")
    index += local_rank
    if index >= torch.cuda.device_count():
        raise BenchmarkUnavailable(f"GPU {index} does not exist: PyTorch sees {torch.cuda.device_count()}")
    device = torch.device("cuda", index)
    torch.cuda.set_device(device)
    torch.cuda.reset_peak_memory_stats(device)
    return device


def _fit_check(arch: Any, params: dict[str, Any], memory_bytes: float, sharding: str, world: int) -> int:
    """The largest micro-batch the estimate fits (0: none); raises OutOfMemoryError with the arithmetic when
    the asked micro-batch (or one sequence) does not fit."""
    budget = memory_bytes * FIT_FRACTION
    largest = ta.largest_micro_batch(budget, lambda mb: estimate(arch, params, mb, sharding, world))
    asked = params["micro_batch"] or 1
    if asked > largest:
        memory = estimate(arch, params, asked, sharding, world)
        raise OutOfMemoryError(
            f"{arch.name} {params['method']} at micro-batch {asked} × {params['seq']} tokens needs about "
            f"{memory.total / GIB:.1f} GiB ({'; '.join(memory.lines()[:-1])}), more than {FIT_FRACTION:.0%} of this "
            f"GPU's {memory_bytes / GIB:.1f} GiB" + (f"; micro-batch {largest} fits" if largest else
                                                      "; not even one sequence fits: try checkpointing=true, "
                                                      "method=lora or more GPUs (sharding=fsdp)"))
    return largest


#: The share of the run's time limit that its least possible steps may take (building the model, measuring the
#: matmul rate and compiling take the rest).
WORK_SHARE = 2 / 3


def time_allowed() -> tuple[float, str]:
    """Seconds the run's steps may take at most, and why, in words with units."""
    limit = child.run_time_limit_s() or BENCHMARK.default_timeout_s
    return limit * WORK_SHARE, f"{duration_text(limit * WORK_SHARE)} (two thirds of this run's time limit of " \
                               f"{duration_text(limit)})"


def refuse_unless_feasible(torch: Any, arch: Any, params: dict[str, Any], device: Any, reporter: Reporter,
                           world: int = 1, sharding: str = "none") -> dict[str, Any]:
    """Before anything is allocated: the memory estimate against what the process may allocate (the RAM
    available and RLIMIT_AS on the CPU; free memory on a GPU), then the matmul rate measured at the model's
    shapes and the least time at it against the run's time limit. Raises OutOfMemoryError or
    BenchmarkUnavailable with the arithmetic, in one line; returns the rate's figure (the MFU denominator).

    Several GPUs: this process must not hold a CUDA context on a rank's GPU while the ranks run, so neither
    CUDA's free memory nor a measured rate is read here: their memory is :func:`_fit_check`'s (the estimate
    against each GPU's total), their time is held against the datasheet's dense peak where hwbench knows it
    (the fastest any product can run), and the rate is measured after the ranks end."""
    on_gpu = device.type == CUDA
    micro_batch = params["micro_batch"] or 1
    ranks_on_gpus = on_gpu and world > 1
    if not ranks_on_gpus:
        room = gpu_room(torch, device.index or 0) if on_gpu else host_room()
        rank_bytes = _process_bytes() if world > 1 and not on_gpu else 0
        why = memory_refusal(arch, params, micro_batch, world, device.type, room, rank_bytes, sharding)
        if why:
            raise OutOfMemoryError(why)
    if ranks_on_gpus:
        sheet = datasheets.lookup(torch.cuda.get_device_name(device))
        peak = sheet.peak_tflops(low_label(params["precision"])) if sheet else None
        matmul: dict[str, Any] = {}
        rate, what = peak, f"the {sheet.model}'s dense {low_label(params['precision'])} datasheet peak" if sheet \
            else ""
    else:
        reporter.progress(0.0, f"measuring the matmul rate at {arch.name}'s shapes (the time estimate and MFU)")
        matmul = measure_limit(torch, device, params, arch, micro_batch)
        rate, what = matmul.get("value"), matmul.get("short", "")
    if rate:
        allowed_s, allowed = time_allowed()
        why = time_refusal(arch, params, micro_batch, world, on_gpu, rate, what, allowed_s, allowed)
        if why:
            raise BenchmarkUnavailable(why)
    return matmul


def _process_bytes() -> int:
    """Resident bytes of this process (PyTorch loaded): what each CPU rank's own process takes beside its model."""
    import psutil

    return int(psutil.Process().memory_info().rss)


def _run_single(arch: Any, params: dict[str, Any], reporter: Reporter, asked_auto: bool) -> Outcome:
    import torch

    from hwbench_gui.engine.models.llm import training

    device = _device(torch, params)
    cuda = device.type == "cuda"
    warnings: list[str] = []
    search: dict[str, Any] = {}
    if asked_auto and not cuda:
        warnings.append("no GPU found (device=auto): ran on the CPU")
    if cuda:
        total = torch.cuda.get_device_properties(device).total_memory
        largest = _fit_check(arch, params, total, "none", 1)
    # before the micro-batch search allocates anything (an auto micro-batch counted as 1: the least it can be)
    before = refuse_unless_feasible(torch, arch, params, device, reporter)
    if cuda:
        if not params["micro_batch"]:
            limit = max(1, ta.MAX_MICRO_TOKENS // params["seq"])
            reporter.log(f"finding the largest micro-batch (estimate: {largest}, at most {limit})")
            found, tries = training.search_micro_batch(arch, params, device, from_key(params["precision"]),
                                                       reporter, start=max(1, min(largest, limit)), limit=limit)
            if found == 0:
                raise OutOfMemoryError(f"CUDA out of memory at micro-batch 1 × {params['seq']} tokens: "
                                       "try checkpointing=true or method=lora")
            params = {**params, "micro_batch": found, "micro_batch_searched": True}
            search = {"tries": [list(t) for t in tries], "estimate_largest": largest, "limit": limit}
    elif not params["micro_batch"]:
        params = {**params, "micro_batch": 1}
    run, details = training.measure(arch, params, reporter, device, on_block=_building(reporter, arch, params))
    if search:
        details["micro_batch_search"] = search
        params = {**params, "micro_batch": run.batch // (params["grad_accum"] * params["seq"])}
    where = f"cuda:{device.index} ({torch.cuda.get_device_name(device)})" if cuda else \
        f"cpu ({torch.get_num_threads()} threads)"
    if is_fp8(params) and not cuda:
        warnings.append(FP8_ON_CPU)
    matmul = best_of(before, measure_limit(torch, device, params, arch, params["micro_batch"]))
    fp8_matmul = measure_fp8(torch, device) if is_fp8(params) else None
    return _outcome(arch, params, [run], where, details, warnings, matmul, device_name=_gpu_name(torch, device),
                    fp8_matmul=fp8_matmul)


def _building(reporter: Reporter, arch: Any, params: dict[str, Any]) -> Any:
    """A progress event per block drawn while the model is built (an 8B model's take minutes on a CPU)."""
    what = "the frozen base in " + low_label(params["precision"]) if params["method"] == "lora" else "FP32 masters"

    def on_block(done: int, total: int) -> None:
        reporter.progress(0.0, f"building {arch.name} ({what}): {done} of {total} blocks")

    return on_block


def _gpu_name(torch: Any, device: Any) -> str | None:
    return torch.cuda.get_device_name(device) if device.type == "cuda" else None


def _outcome(arch: Any, params: dict[str, Any], ranks: list[TimedRun], where: str, details: dict[str, Any],
             warnings: list[str], matmul: dict[str, Any], *, device_name: str | None,
             single_rate: float | None = None, sharding: str = "none",
             fp8_matmul: dict[str, Any] | None = None) -> Outcome:
    world = len(ranks)
    run = ranks[0]
    samples = window_rates(ranks)
    rate = median(samples)
    fpt = flops_per_token(arch, params)
    fp8_fpt = fp8_flops_per_token(arch, params)
    precision = from_key(params["precision"])
    low = BF16 if fp8_fpt else next(p for p in (BF16, FP16) if p.tensor_dtype == precision.autocast_dtype)
    figures: dict[str, dict[str, Any]] = {}
    sheet = datasheets.lookup(device_name)
    peak = sheet.peak_tflops(low.label) if sheet else None
    fp8_peak = sheet.peak_tflops(FP8.label) if sheet and fp8_fpt else None
    # FP8 runs: MFU = tokens/s per GPU × (FP8 FLOPs per token / FP8 peak + the other FLOPs / BF16 peak), the
    # fraction of the time the step would take if every FLOP ran at the peak of the precision it ran in.
    against = (f"the block matmuls' {fp8_fpt:,} FLOPs per token against the {FP8.label} figure, the other "
               f"{fpt - fp8_fpt:,} against the {low.label} one") if fp8_fpt else ""
    model_tflops = [r * fpt / 1e12 for r in samples]
    figures["model_tflops"] = figure(model_tflops, "TFLOP/s",
                                     what=f"model FLOP/s: tokens/s × {fpt:,} FLOPs per token, all GPUs")
    per_gpu = [r / world for r in samples]
    sheet_s = at_peaks(fpt, fp8_fpt, peak, fp8_peak)
    if sheet_s:
        peaks = f"dense {low.label} peak {peak:g}" + (f" and {FP8.label} peak {fp8_peak:g}" if fp8_fpt else "")
        figures["mfu_datasheet"] = within_limit(figure(
            [r * sheet_s for r in per_gpu], "fraction", show=True, peak_tflops=peak, source=sheet.source,
            gpu_model=sheet.model, what=f"MFU against the {sheet.model}'s {peaks} TFLOP/s (datasheet)"
                                        + (f": {against}" if fp8_fpt else ""),
            **({"fp8_peak_tflops": fp8_peak} if fp8_fpt else {})),
            "the model's FLOP/s are above 100 % of the datasheet peak: the peak or the FLOP count is wrong, so no "
            "share of it is given")
    else:
        reason = ("the CPU has no datasheet tensor peak in hwbench" if device_name is None
                  else datasheets.unknown_reason(device_name) if sheet is None
                  else f"the {sheet.model} datasheet gives no dense {FP8.label if peak else low.label} peak")
        figures["mfu_datasheet"] = {"value": None, "unit": "fraction", "show": True,
                                    "what": "MFU against the datasheet's dense peak", "reason": reason}
    measured = matmul.get("value")
    fp8_measured = (fp8_matmul or {}).get("value")
    figures["matmul_tflops"] = matmul
    if fp8_matmul is not None:
        figures["fp8_matmul_tflops"] = fp8_matmul
    measured_s = at_peaks(fpt, fp8_fpt, measured, fp8_measured)
    if measured_s:
        rates = f"{measured:.4g} TFLOP/s {low.label}" + (
            f" and {fp8_measured:.4g} TFLOP/s {FP8.label}" if fp8_fpt else "")
        figures["mfu_measured_matmul"] = within_limit(figure(
            [r * measured_s for r in per_gpu], "fraction", matmul_tflops=measured, show=True,
            what=f"MFU against the {rates} matmul rate measured in this run" + (f": {against}" if fp8_fpt else ""),
            **({"fp8_matmul_tflops": fp8_measured} if fp8_fpt else {})),
            f"limit not measured reliably here: the model's matmuls reached {median(model_tflops) / world:.4g} "
            f"TFLOP/s per GPU, above the {measured:.4g} TFLOP/s {low.label} measured in this run (at the model's "
            "shapes, before and after the timed steps)")
    else:
        missing = matmul if not measured else (fp8_matmul or {})
        figures["mfu_measured_matmul"] = {"value": None, "unit": "fraction", "show": True,
                                          "what": "MFU against the matmul rate measured in this run",
                                          "reason": missing.get("reason", "matmul not measured")}
    figures["step_time"] = {"unit": "ms", "higher_is_better": False, "samples": [s * 1e3 for s in run.step_s],
                            "what": "one optimizer step (rank 0)"}
    tokens_per_step = run.batch * world
    figures["tokens_per_step"] = {"value": tokens_per_step, "unit": "tokens",
                                  "what": "micro_batch × grad_accum × seq × GPUs"}
    memory = estimate(arch, params, params["micro_batch"], sharding, world)
    figures["memory_estimate_gib"] = {"value": memory.total / GIB, "unit": "GiB", "higher_is_better": False,
                                      "what": f"estimated peak memory ({memory.scheme})", "show": True}
    for key in ("peak_allocated_bytes", "peak_reserved_bytes"):
        value = getattr(run, key)
        entry: dict[str, Any] = {"value": None if value is None else value / GIB, "unit": "GiB",
                                 "higher_is_better": False}
        if key == "peak_allocated_bytes":
            entry.update(show=True, what="measured peak memory (allocated, timed steps)")
        if value is None:
            entry["reason"] = run.peak_reason or "not measured"
        figures[key.replace("_bytes", "_gib")] = entry
    if run.peak_allocated_bytes:
        figures["peak_vs_estimate"] = {"value": run.peak_allocated_bytes / memory.total, "unit": "ratio",
                                       "what": "measured peak allocated / estimated peak"}
    if run.first_step_s is not None:
        figures["first_step_s"] = {"value": run.first_step_s, "unit": "s", "higher_is_better": False,
                                   "what": "first warm-up step (compilation when compile=true)"}
    if world > 1:
        figures["per_gpu_tokens_per_s"] = figure(per_gpu, "tokens/s")
        if single_rate:
            efficiency = rate / (world * single_rate)
            figures["single_gpu_tokens_per_s"] = {"value": single_rate, "unit": "tokens/s"}
            figures["scaling_efficiency"] = {"value": efficiency, "unit": "fraction"}
    for name in ("mfu_datasheet", "mfu_measured_matmul"):
        if figures[name].get("above_limit"):
            warnings.append(f"{figures[name]['what']}: {figures[name]['reason']}")
    text = methods.train_method(arch, params, precision, fpt, fp8_fpt, world, tokens_per_step, len(samples),
                                run.window_steps[0] if run.window_steps else run.steps, memory)
    fits = _what_fits(run.total_memory_bytes, params)
    details = {**details, **fits, "model": arch.name, "architecture_source": arch.source, "method": params["method"],
               "flops_per_token": fpt, **({"fp8_flops_per_token": fp8_fpt} if fp8_fpt else {}),
               "world_size": world, "tokens_per_step": tokens_per_step,
               "memory_estimate": memory.to_json(), "window_s": run.window_s, "window_steps": run.window_steps,
               "total_tokens_per_s": sum(r.images for r in ranks) / max(r.total_s for r in ranks),
               "final_loss": run.final_loss, **run.extra}
    outcome = Outcome(figure_name=f"{arch.name} {methods.train_method_word(params)} throughput", unit="tokens/s",
                      samples=samples, method=text, figures=figures, warnings=warnings, details=details,
                      device=where)
    outcome.resolved_params = {"micro_batch": params["micro_batch"], "compile": "true" if params["compile"] else
                               "false", "sharding": sharding if world > 1 else params["sharding"]}
    return outcome


def _what_fits(memory_bytes: float | None, params: dict[str, Any]) -> dict[str, Any]:
    return what_fits.what_fits(memory_bytes, params["seq"], params["lora_rank"], compiled=compiles_on_gpu(params),
                               fp8=is_fp8(params))


# --- several GPUs ----------------------------------------------------------------------------------------


def _sharding(arch: Any, params: dict[str, Any], memory_bytes: float | None) -> str:
    if params["sharding"] != "auto":
        return params["sharding"]
    if memory_bytes is None:
        return "ddp"
    one = estimate(arch, {**params}, params["micro_batch"] or 1, "ddp", params["gpus"])
    return "ddp" if one.total <= memory_bytes * FIT_FRACTION else "fsdp"


def _run_multi(arch: Any, params: dict[str, Any], reporter: Reporter, asked_auto: bool) -> Outcome:
    """N ranks through the model benchmarks' launcher; the micro-batch (when auto) from the estimate, as every
    rank must agree before the first collective."""
    import torch

    kind, _ = split_device(params["device"])
    memory = None
    if kind == CUDA:
        if torch.cuda.device_count() < params["gpus"]:
            raise BenchmarkUnavailable(f"gpus={params['gpus']} but PyTorch sees {torch.cuda.device_count()} GPU(s)")
        memory = float(torch.cuda.get_device_properties(0).total_memory)
    sharding = _sharding(arch, params, memory)
    if not params["micro_batch"]:
        largest = _fit_check(arch, params, memory, sharding, params["gpus"]) if memory else 1
        params = {**params, "micro_batch": max(1, min(largest, ta.MAX_MICRO_TOKENS // params["seq"]))}
    elif memory:
        _fit_check(arch, params, memory, sharding, params["gpus"])
    device = torch.device("cuda", 0) if kind == CUDA else torch.device("cpu")
    before = refuse_unless_feasible(torch, arch, params, device, reporter, world=params["gpus"], sharding=sharding)
    records = multigpu.launch(BENCH_ID, {**params, "sharding": sharding, "compile": str(params["compile"]).lower()},
                              params["gpus"], 1, "", reporter)
    lead = next((r for r in records if r["rank"] == 0), records[0])
    ranks = [TimedRun.from_json(r) for r in lead["runs"]]
    warnings = sorted({r["teardown_warning"] for r in records if "teardown_warning" in r})
    if asked_auto and kind == CPU:
        warnings.append("no GPU found (device=auto): ran on the CPU")
    if is_fp8(params) and kind == CPU:
        warnings.append(FP8_ON_CPU)
    single_rate = _single_rate(params, warnings)
    matmul = best_of(before, measure_limit(torch, device, params, arch, params["micro_batch"]))
    fp8_matmul = measure_fp8(torch, device) if is_fp8(params) else None
    details = {**lead["details"], "backend": "NCCL" if kind == CUDA else "gloo"}
    return _outcome(arch, params, ranks, f"{lead['where']} and {len(ranks) - 1} more rank(s)", details, warnings,
                    matmul, device_name=lead.get("gpu_name"), single_rate=single_rate, sharding=sharding,
                    fp8_matmul=fp8_matmul)



def _single_rate(params: dict[str, Any], warnings: list[str]) -> float | None:
    """Tokens/s of the one-GPU document ``single_gpu_result`` when it ran the same settings; None (with a
    warning saying why) otherwise."""
    path = params.get("single_gpu_result") or ""
    if not path:
        return None
    from hwbench_gui.engine.models.llm.architectures import read_json_file

    try:
        doc = read_json_file(path, BASELINE_MAX_BYTES)  # a regular file, its size bounded before reading
    except ParamError as exc:
        warnings.append(f"single_gpu_result was not read: {exc}")
        return None
    if not isinstance(doc, dict):
        warnings.append(f"single_gpu_result {path} is not a result document: no scaling efficiency")
        return None
    bench = (doc.get("benchmark") or {}).get("id")
    other = doc.get("params") or {}
    keys = ("model", "method", "precision", "seq", "micro_batch", "grad_accum", "checkpointing", "lora_rank")
    differ = [k for k in keys if other.get(k) != params.get(k)]
    value = (doc.get("figure") or {}).get("value")
    if bench != BENCH_ID or doc.get("status") != "ok" or differ or not isinstance(value, (int, float)) \
            or (doc.get("details") or {}).get("world_size") not in (1, None):
        reason = f"differs in {', '.join(differ)}" if differ else "is not an ok one-GPU llm.train document"
        warnings.append(f"single_gpu_result {path} {reason}: no scaling efficiency")
        return None
    return float(value)


def _rank_main(arch: Any, params: dict[str, Any], reporter: Reporter) -> Outcome:
    """One rank: join the process group, measure, write ``rank<N>.json`` for the launcher
    (:func:`multigpu.run_rank`, as the model benchmarks' ranks do)."""
    import torch

    from hwbench_gui.engine.models.llm import training

    _, local_rank, world = multigpu.rank_identity()
    device = _device(torch, params, local_rank)
    if device.type == "cpu":  # torchrun's one-thread default would starve a rank; more would oversubscribe
        torch.set_num_threads(max(1, (os.cpu_count() or 1) // int(os.environ.get("LOCAL_WORLD_SIZE", world))))

    def measure(dist: Any) -> tuple[TimedRun, dict[str, Any]]:
        run, details = training.measure(arch, params, reporter, device, dist,
                                        params["sharding"] if dist is not None else "none")
        where = f"cuda:{device.index} ({torch.cuda.get_device_name(device)})" if device.type == "cuda" else \
            f"cpu ({torch.get_num_threads()} threads)"
        return run, {"details": details, "where": where, "gpu_name": _gpu_name(torch, device)}

    record = multigpu.run_rank("nccl" if device.type == "cuda" else "gloo", measure)
    return Outcome(figure_name="rank throughput", unit="tokens/s",
                   samples=TimedRun.from_json(record["runs"][0]).window_rates(),
                   method="One rank of a multi-GPU llm.train run.", details=record["details"], device=record["where"])


def _availability() -> str | None:
    return None if importlib.util.find_spec("torch") else "PyTorch is not installed"


BENCHMARK = Benchmark(
    id=BENCH_ID,
    title="Language-model training",
    category="Language models",
    description="Training and LoRA fine-tuning of decoder-only language models (GPT-2 124M, Llama 3.2 1B, "
                "Llama 3.1 8B, Qwen2.5 7B, or a Hugging Face config): tokens/s and model FLOPs utilisation "
                "against the datasheet peak and the measured matmul rate, peak memory beside the estimate, "
                "one or several GPUs.",
    params=_params(),
    run=run,
    version="1",
    needs=frozenset({"torch"}),
    availability=_availability,
    default_timeout_s=1800.0,
    searched_batch_param="micro_batch",
)
