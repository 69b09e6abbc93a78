"""diffusion.infer: text-to-image generation (SDXL's UNet, Flux's MMDiT, tiny ones): seconds per denoising step,
the text encoders and the VAE decode timed apart, and images per minute at a stated step count, each held against
the matmul rate measured in the run and the datasheet's dense peak.

The models are diffusers' and transformers' own classes built from the public configs (:mod:`..models.diffusion`),
random-initialised in the run's precision on the device; the speed of a step does not depend on the weights'
values. One image = the encoders once + ``steps`` denoising steps (with classifier-free guidance, the denoiser on a
batch of 2 per image) + the VAE decode, so the image time adds up from the parts measured. hwbench's settings are a
careful engineer's: BF16, fused QKV projections, channels-last (the UNet), SDPA attention, and on a GPU
``torch.compile`` in its default mode (no max-autotune, no CUDA graphs: minutes of tuning a user does not wait
for); plain eager on a CPU. What fits is estimated from the shapes before anything is allocated
(:mod:`..models.diffusion.what_fits`); FLOPs per step are counted by PyTorch's FLOP counter on the meta device.
"""

from __future__ import annotations

import gc
import time
from typing import Any, Callable

from hwbench_gui.engine.inventory import datasheets
from hwbench_gui.engine.measure import matmul_rate, square_product
from hwbench_gui.engine.measure.largest_fit import search_max_batch
from hwbench_gui.engine.measure.room import Room, gpu_room, host_room
from hwbench_gui.engine.measure.stats import median
from hwbench_gui.engine.measure.timing import Steps, cpu_count, cuda_device, cuda_label, inner_for, plural
from hwbench_gui.engine.models.common import OutOfMemoryError
from hwbench_gui.engine.models.diffusion import build, counting
from hwbench_gui.engine.models.diffusion import figures as report
from hwbench_gui.engine.models.diffusion.figures import Cost, Parts
from hwbench_gui.engine.models.diffusion import what_fits as fit
from hwbench_gui.engine.models.diffusion.architectures import BUILT_IN, Architecture, Encoder, resolve
from hwbench_gui.engine.spec.benchmark import Benchmark, BenchmarkUnavailable, Outcome, Param, ParamError, Reporter
from hwbench_gui.engine.spec.device import AUTO, CPU, resolve_auto
from hwbench_gui.engine.spec.device import parse as parse_device
from hwbench_gui.engine.spec.precision import BF16, FP8, FP16, FP32, Precision, from_key

PRECISIONS = (BF16, FP16, FP32, FP8)
#: The square product measured beside the model's own shapes (as large as the device needs to reach its peak).
MATMUL_SIZE = {"cuda": 8192, "cpu": 512}
LIMIT_REPEATS = 5
#: The model's own linear shapes measured for the limit (the costliest ones; each takes a second or so).
LIMIT_PRODUCTS = 3
#: Seconds of denoising steps per timed window (at least one step a window).
WINDOW_S = {"cuda": 0.5, "cpu": 0.2}
WARMUP_STEPS = 2
PART_REPEATS = 3  # timed calls of each encoder and of the VAE decode
#: A part's timed calls stop once they add up to this (at least one): a large batch's decode takes seconds.
PART_BUDGET_S = 10.0
#: The largest batch searched (images; with guidance the denoiser sees twice as many).
BATCH_LIMIT = {"cuda": 128, "cpu": 8}
#: CPU threads = one per this many FLOPs of a step (at least one, at most every core): a tiny model's step is
#: shorter than the synchronisation of two threads on a busy machine (tiny at 64² on a shared 2-core box: 0.23 s
#: a step on one thread, 1.8 s on two).
CPU_FLOPS_PER_THREAD = 20e9
#: precision=auto: what a careful engineer runs on each kind of device (a CPU without BF16 matmul units runs
#: BF16 several times slower than FP32).
AUTO_PRECISION = {"cuda": BF16, "cpu": FP32}
#: Share of the run's time limit the timed work may take by its least time at the measured rate.
WORK_SHARE = 0.5


def availability() -> str | None:
    return build.missing_reason()


def element_bytes(precision: Precision) -> int:
    return 4 if precision == FP32 else 2


def trace_parts(torch: Any, arch: Architecture, size: int, dtype: Any) -> tuple[counting.Trace, counting.Trace,
                                                                                dict[str, counting.Trace], str | None]:
    """The denoiser (one image's step), the VAE (one image's decode) and each encoder (one prompt), traced on the
    meta device; activations and FLOPs grow linearly with the batch, so one image's trace serves every batch."""
    eb = torch.finfo(dtype).bits // 8
    model = build.denoiser(arch, "meta", dtype)
    inputs = build.denoiser_inputs(arch, 1, size, "meta", dtype)
    den = counting.trace(model, lambda: build.step(model, inputs), eb)
    vae = build.vae(arch, "meta", dtype)
    z = build.latents(arch, 1, size, "meta", dtype)
    vae_trace = counting.trace(vae, lambda: build.decode(vae, z), eb)
    encoders: dict[str, counting.Trace] = {}
    reason = build.encoders_missing_reason()
    if reason is None:
        for spec in arch.encoders:
            enc = build.encoder(spec, "meta", dtype)
            ids = build.prompt_ids(spec, 1, "meta")
            encoders[spec.name] = counting.trace(enc, lambda e=enc, s=spec, i=ids: build.encode(e, s, i), eb)
    return den, vae_trace, encoders, reason


def cost_at(images: int, one: tuple[counting.Trace, counting.Trace, dict[str, counting.Trace]], eb: int, fp8: bool,
            room: Room) -> Cost:
    """The cost of ``images`` images from one image's traces; the VAE decodes as many images at once as fit
    (diffusers' ``enable_vae_slicing`` decodes one at a time)."""
    den1, vae1, enc1 = one

    def scaled(t: counting.Trace, n: int) -> counting.Trace:
        return counting.Trace(t.flops * n, {k: v * n for k, v in t.flops_by_op.items()}, t.params, t.linear_weights,
                              t.largest_output_bytes * n, t.kept_bytes * n,
                              [(m * n, k, o) for m, k, o in t.products], t.linear_flops * n)

    den = scaled(den1, images)
    den_weights = den.linear_weights + (den.params - den.linear_weights) * eb if fp8 else den.params * eb
    stages = [fit.Stage("denoiser", den_weights, fit.activations(den.kept_bytes, den.largest_output_bytes))]
    stages += [fit.Stage(f"text encoder {name}", t.params * eb,
                         fit.activations(0, t.largest_output_bytes * images)) for name, t in enc1.items()]
    vae_weights, vae_act1 = vae1.params * eb, fit.activations(vae1.kept_bytes, vae1.largest_output_bytes)
    chunk = max(1, min(images, int((room.bytes * fit.FIT_FRACTION - vae_weights) // max(1, vae_act1))))
    stages.append(fit.Stage(f"VAE decode ({chunk} image{'s' if chunk > 1 else ''} at a time)", vae_weights,
                            vae_act1 * chunk))
    return Cost(images, den, vae1, {n: scaled(t, images) for n, t in enc1.items()}, fit.Plan(tuple(stages)), chunk)


def _free(torch: Any, cuda: bool) -> None:
    gc.collect()
    if cuda:
        torch.cuda.empty_cache()


def _sync(torch: Any, cuda: bool) -> Callable[[], None]:
    return torch.cuda.synchronize if cuda else (lambda: None)


def _peak_reset(torch: Any, cuda: bool) -> None:
    if cuda:
        torch.cuda.reset_peak_memory_stats()


def _peak(torch: Any, cuda: bool) -> int | None:
    return int(torch.cuda.max_memory_allocated()) if cuda else None


def largest_batch(torch: Any, arch: Architecture, size: int, device: Any, dtype: Any, one: Any, eb: int, fp8: bool,
                  room: Room, steps: Steps) -> tuple[int, list[tuple[int, bool]]]:
    """The most images whose estimate fits and, on a GPU, whose eager denoising step runs without running out of
    memory (:func:`..measure.largest_fit.search_max_batch`); on a CPU the estimate alone decides, as running out
    of host memory kills the process instead of raising."""
    cuda = device.type == "cuda"
    model = build.denoiser(arch, device, dtype) if cuda else None

    def fits(images: int) -> bool:
        if cost_at(images, one, eb, fp8, room).plan.verdict(room.bytes, room.what)[0]:
            return False
        if model is None:
            return True
        steps.say(f"trying {images} images in one denoising step (eager)")
        try:
            with torch.no_grad():
                build.step(model, build.denoiser_inputs(arch, images, size, device, dtype))
            return True
        except torch.OutOfMemoryError:
            return False
        finally:
            _free(torch, cuda)

    found = search_max_batch(fits, limit=BATCH_LIMIT[device.type])
    model = None  # freed before the run builds its own
    _free(torch, cuda)
    if found.largest == 0:
        raise OutOfMemoryError(f"not even one {size}² image of {arch.name} fits: "
                               f"{cost_at(1, one, eb, fp8, room).plan.arithmetic()}; room {room.what}")
    return found.largest, found.tries


def measure_limit(torch: Any, cost: Cost, dtype: Any, device: Any) -> matmul_rate.MatmulLimit:
    """The fastest of the denoiser's costliest linear products and a square one, in the run's dtype (BF16 for FP8
    runs: the rest of the step), measured now as the step runs them."""
    kind = device.type
    size = MATMUL_SIZE[kind]
    products = [matmul_rate.Product(m, k, n) for m, k, n in cost.denoiser.products[:LIMIT_PRODUCTS]]
    products.append(matmul_rate.Product(size, size, size))
    return matmul_rate.limit_tflops(products, dtype, str(device), LIMIT_REPEATS, burst=kind == "cuda")


def time_denoiser(torch: Any, arch: Architecture, cost: Cost, size: int, device: Any, dtype: Any, fp8: bool,
                  compiled: bool, params: dict[str, Any], reporter: Reporter, steps: Steps) -> Parts:
    """Build the denoiser, check its output with hwbench's settings against the plain call, warm up (compiling on a
    GPU), then time windows of steps, each marked as a timed phase."""
    cuda = device.type == "cuda"
    _peak_reset(torch, cuda)
    steps.say(f"building {arch.name}'s denoiser on {device}")
    model = build.denoiser(arch, device, dtype)
    inputs = build.denoiser_inputs(arch, cost.images, size, device, dtype)
    with torch.no_grad():
        reference = build.step(model, inputs).float()
    settings = build.fast_settings(model, arch)
    if fp8:
        settings.append(f"{build.fp8_linears(model)} linear layers with FP8 weights (torch._scaled_mm)")
    fast_inputs = build.channels_last_inputs(inputs) if arch.kind == "unet" else inputs
    call_model = model
    if compiled:
        # diffusers' guide's one Inductor switch that costs no tuning time: 1×1 convolutions (most of a UNet's
        # resnet shortcuts and attention projections in and out) as matmuls, which fuse with their neighbours
        torch._inductor.config.conv_1x1_as_mm = True
        call_model = torch.compile(model)
        settings.append("torch.compile (default mode; Inductor conv_1x1_as_mm)")
    sync = _sync(torch, cuda)
    steps.advance("warming up" + (" (compiling the denoiser)" if compiled else ""))
    start = time.perf_counter()
    with torch.no_grad():
        out = build.step(call_model, fast_inputs).float()
        sync()
        compile_s = time.perf_counter() - start
        check = {"max_abs_diff": float((out - reference).abs().max()),
                 "reference_mean_abs": float(reference.abs().mean()),
                 "relative_error": float((out - reference).norm() / reference.norm().clamp(min=1e-30)),
                 "what": "one step with hwbench's settings against the plain call, same weights and inputs"}
        del out, reference
        one = _timed(lambda: build.step(call_model, fast_inputs), sync, WARMUP_STEPS)
        per_window = max(1, inner_for(one, WINDOW_S[device.type], cap=50))
        step_s = []
        for i in range(params["repeats"]):
            reporter.phase("timed", "start", repeat=i)
            step_s.append(_timed(lambda: build.step(call_model, fast_inputs), sync, per_window))
            reporter.phase("timed", "end", repeat=i)
            steps.advance(f"denoising window {i + 1}: {step_s[-1]:.4g} s per step")
    peak = _peak(torch, cuda)
    call_model = model = inputs = fast_inputs = None  # freed before the encoders and the VAE are built
    _free(torch, cuda)
    parts = Parts(step_s, settings=settings, compile_s=compile_s, check=check)
    if peak is not None:
        parts.peak_bytes["denoiser"] = peak
    return parts


def _timed(call: Callable[[], Any], sync: Callable[[], None], count: int) -> float:
    """Seconds per call of ``count`` calls back to back (synchronised before and after)."""
    sync()
    start = time.perf_counter()
    for _ in range(count):
        call()
    sync()
    return (time.perf_counter() - start) / count


def time_parts(torch: Any, arch: Architecture, cost: Cost, size: int, device: Any, dtype: Any, parts: Parts,
               steps: Steps) -> None:
    """Each text encoder on the batch's prompts and the VAE decode of the batch's latents, one at a time, each
    built, warmed up, timed (:func:`_part_seconds`) and freed."""
    cuda = device.type == "cuda"
    sync = _sync(torch, cuda)
    parts.encoders_reason = build.encoders_missing_reason()
    specs: tuple[Encoder, ...] = () if parts.encoders_reason else arch.encoders
    for spec in specs:
        steps.say(f"timing the text encoder {spec.name}")
        _peak_reset(torch, cuda)
        model = build.encoder(spec, device, dtype)
        ids = build.prompt_ids(spec, cost.images, device)
        with torch.no_grad():
            parts.encoder_s[spec.name] = _part_seconds(lambda: build.encode(model, spec, ids), sync)
        if cuda:
            parts.peak_bytes[f"text encoder {spec.name}"] = _peak(torch, cuda)
        model = ids = None
        _free(torch, cuda)
        steps.advance(f"text encoder {spec.name}: {median(parts.encoder_s[spec.name]):.4g} s")
    steps.say("timing the VAE decode")
    _peak_reset(torch, cuda)
    # the VAE is all convolutions at up to the image's full size: channels-last (cuDNN's NHWC kernels), as the UNet
    model = build.vae(arch, device, dtype).to(memory_format=torch.channels_last)
    parts.settings.append("VAE in channels-last")
    parts.vae_chunk = cost.vae_chunk
    chunks = [build.latents(arch, n, size, device, dtype).contiguous(memory_format=torch.channels_last)
              for n in _chunk_sizes(cost.images, cost.vae_chunk)]

    def decode_all() -> None:
        for z in chunks:
            build.decode(model, z)

    with torch.no_grad():
        # warmed up on one chunk (cuDNN picks its algorithms per shape: the last chunk may be smaller)
        parts.vae_s = _part_seconds(decode_all, sync, warm=lambda: [build.decode(model, z) for z in chunks[-2:]])
    if cuda:
        parts.peak_bytes["VAE decode"] = _peak(torch, cuda)
    model = chunks = None
    _free(torch, cuda)
    steps.advance(f"VAE decode: {median(parts.vae_s):.4g} s")


def _part_seconds(call: Callable[[], Any], sync: Callable[[], None],
                  warm: Callable[[], Any] | None = None) -> list[float]:
    """Seconds of ``call`` after one warm-up (``warm``, else ``call`` itself), :data:`PART_REPEATS` times or until
    they add up to :data:`PART_BUDGET_S` (at least once)."""
    _timed(warm or call, sync, 1)
    seconds: list[float] = []
    while len(seconds) < PART_REPEATS and (not seconds or sum(seconds) < PART_BUDGET_S):
        seconds.append(_timed(call, sync, 1))
    return seconds


def _chunk_sizes(total: int, chunk: int) -> list[int]:
    return [min(chunk, total - first) for first in range(0, total, chunk)]


def run(params: dict[str, Any], reporter: Reporter) -> Outcome:
    import torch

    why = build.missing_reason()
    if why:
        raise BenchmarkUnavailable(why)
    arch = resolve(params["model"])
    device = _device(torch, params["device"])
    precision = AUTO_PRECISION[device.type] if params["precision"] == "auto" else from_key(params["precision"])
    fp8 = precision == FP8
    dtype = torch.bfloat16 if fp8 else getattr(torch, precision.tensor_dtype)
    size = params["size"] or arch.default_size
    _check_size(arch, size)
    if fp8:
        from hwbench_gui.engine.models.llm.fp8 import unavailable_reason

        why = unavailable_reason(str(device))
        if why:
            raise BenchmarkUnavailable(f"precision=fp8: {why}")
    compiled = params["compile"] == "true" or (params["compile"] == "auto" and device.type == "cuda")
    cuda = device.type == "cuda"
    if cuda:
        torch.cuda.set_device(device)
    torch.manual_seed(0)
    steps = Steps(reporter, params["repeats"] + len(arch.encoders) + 4)
    steps.say(f"counting {arch.name}'s FLOPs and memory at {size}² from its shapes")
    eb = element_bytes(precision)
    den1, vae1, enc1, _ = trace_parts(torch, arch, size, dtype)
    if not cuda:
        torch.set_num_threads(max(1, min(cpu_count(), int(den1.flops // CPU_FLOPS_PER_THREAD))))
    one = (den1, vae1, enc1)
    room = gpu_room(torch, device.index or 0) if cuda else host_room()
    tries: list[tuple[int, bool]] = []
    images = params["batch"]
    if images == 0:
        images, tries = largest_batch(torch, arch, size, device, dtype, one, eb, fp8, room, steps)
    cost = cost_at(images, one, eb, fp8, room)
    refusal, offload_note = cost.plan.verdict(room.bytes, room.what)
    if refusal:
        raise OutOfMemoryError(f"{arch.name} at {size}², {images} image(s): {refusal}")
    steps.say("measuring the matmul rate at the denoiser's shapes")
    limit = measure_limit(torch, cost, dtype, device)
    _refuse_if_too_slow(cost, limit, params, device.type)
    steps.advance(f"matmul rate {limit.median_tflops:.4g} TFLOP/s")
    fp8_tflops = square_product.product_rates_tflops(FP8.label, MATMUL_SIZE[device.type], str(device),
                                                     LIMIT_REPEATS, burst=cuda, fp8_rowwise=True) if fp8 else []
    parts = time_denoiser(torch, arch, cost, size, device, dtype, fp8, compiled, params, reporter, steps)
    parts.fp8_tflops = fp8_tflops
    time_parts(torch, arch, cost, size, device, dtype, parts, steps)
    where = cuda_label(device.index or 0) if cuda else f"cpu ({plural(torch.get_num_threads(), 'thread')})"
    sheet = datasheets.lookup(torch.cuda.get_device_name(device)) if cuda else None
    return report.outcome(arch=arch, params=params, size=size, images=images, precision=precision, cost=cost,
                          parts=parts, limit=limit, sheet=sheet, device_name=where, room=room,
                          offload_note=offload_note, tries=tries, compiled=compiled,
                          gpu_name=torch.cuda.get_device_name(device) if cuda else None)


def _device(torch: Any, text: str) -> Any:
    chosen = parse_device(text)
    if chosen.kind == AUTO:
        chosen = resolve_auto(chosen)
    if chosen.kind == CPU:
        return torch.device("cpu")
    return cuda_device(chosen.index or 0)


def _check_size(arch: Architecture, size: int) -> None:
    step = arch.vae_scale * (2 if arch.kind == "mmdit" else 4)  # Flux packs 2×2 latents; the UNet halves twice
    if size % step:
        raise ParamError(f"size: {size} is not a multiple of {step} ({arch.name}'s latents must divide evenly)")


def _refuse_if_too_slow(cost: Cost, limit: matmul_rate.MatmulLimit, params: dict[str, Any], kind: str) -> None:
    """Refuse before building when the timed steps alone, at the measured rate (their least time), would take
    more than :data:`WORK_SHARE` of the run's time limit."""
    from hwbench_gui.engine import child

    allowed = (child.run_time_limit_s() or BENCHMARK.default_timeout_s) * WORK_SHARE
    count = WARMUP_STEPS + 1 + params["repeats"] + 1
    least = cost.denoiser.flops * count / (limit.median_tflops * 1e12)
    if least > allowed:
        raise BenchmarkUnavailable(
            f"{count} denoising steps of {cost.denoiser.flops / 1e12:.3g} TFLOP each take at least {least:,.0f} s at "
            f"the {limit.median_tflops:.3g} TFLOP/s measured on this {kind}, more than the {allowed:,.0f} s this run "
            "allows: choose model=tiny, a smaller size, or a GPU")


BENCHMARK = Benchmark(
    id="diffusion.infer",
    title="Image generation (SDXL, Flux)",
    category="Image generation",
    description=("Text-to-image generation: seconds per denoising step, the text encoders and the VAE decode, and "
                 "images per minute, against the measured matmul rate and the datasheet peak (MFU)."),
    params=(
        Param("model", "choice", "sdxl", "sdxl: SDXL base UNet (2.6 B) with two CLIP encoders; flux-dev: Flux.1-dev "
              "MMDiT (11.9 B) with T5-XXL and CLIP; tiny / tiny-mmdit: the same layer kinds at a few channels "
              "(tests, CPUs). Random-initialised, no download.", choices=tuple(BUILT_IN)),
        Param("size", "int", 0, "Image side in pixels (0: the model's own, 1024 for sdxl and flux-dev).",
              minimum=0, maximum=4096, unit="px"),
        Param("steps", "int", 30, "Denoising steps per image (the images-per-minute figure's step count).",
              minimum=1, maximum=1000),
        Param("precision", "choice", "auto", "bf16 / fp16 / fp32 weights and activations; fp8 = linear layers "
              "with FP8 e4m3 weights and per-token activations (torch._scaled_mm), the rest BF16; auto = bf16 on a "
              "GPU, fp32 on a CPU.", choices=("auto",) + tuple(p.key for p in PRECISIONS)),
        Param("batch", "int", 1, "Images per batch (with guidance the denoiser sees twice as many); 0 = the "
              "largest that fits.", minimum=0, maximum=1024),
        Param("compile", "choice", "auto", "torch.compile the denoiser (default mode): auto = on a GPU, not on "
              "a CPU.", choices=("auto", "true", "false")),
        Param("device", "device", AUTO, "Where it runs: auto = GPU 0 where there is one, else the CPU.",
              decides_comparability=False),
        Param("repeats", "int", 5, "Timed windows of denoising steps.", minimum=2, maximum=100,
              decides_comparability=False),
    ),
    run=run,
    version="1",
    needs=frozenset({"torch"}),
    availability=availability,
    default_timeout_s=900.0,
    searched_batch_param="batch",
)
