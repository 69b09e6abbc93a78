"""A diffusion.infer run's figures from what it measured: images per minute (the image time added up from the
encoders, ``steps`` denoising steps and the VAE decode), seconds per step, each held against the matmul rate
measured in the run and the datasheet's dense peak (MFU), and the memory estimate beside the measured peak.
A share of a limit is never above 100 %: a figure above its limit has no share, and says why (the limit is wrong).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hwbench_gui.engine.inventory import datasheets
from hwbench_gui.engine.measure.matmul_rate import MatmulLimit
from hwbench_gui.engine.measure.room import Room
from hwbench_gui.engine.measure.stats import median
from hwbench_gui.engine.measure.timing import figure
from hwbench_gui.engine.models.common import GIB
from hwbench_gui.engine.models.diffusion import counting
from hwbench_gui.engine.models.diffusion import what_fits as fit
from hwbench_gui.engine.models.diffusion.architectures import Architecture
from hwbench_gui.engine.spec.benchmark import Outcome
from hwbench_gui.engine.spec.precision import BF16, FP8, FP16, Precision

@dataclass
class Parts:
    """Seconds measured per part of one batch of images, and each stage's measured peak memory."""

    step_s: list[float]
    encoder_s: dict[str, list[float]] = field(default_factory=dict)
    encoders_reason: str | None = None
    vae_s: list[float] = field(default_factory=list)
    vae_chunk: int = 1
    peak_bytes: dict[str, int] = field(default_factory=dict)
    settings: list[str] = field(default_factory=list)
    compile_s: float = 0.0
    check: dict[str, Any] = field(default_factory=dict)
    #: precision=fp8: the FP8 matmul rate measured in the run (TFLOP/s samples), the linear layers' limit.
    fp8_tflops: list[float] = field(default_factory=list)

    @property
    def encoders_total_s(self) -> float:
        return sum(median(s) for s in self.encoder_s.values())


@dataclass
class Cost:
    """The shapes' arithmetic at one batch: FLOPs per step, the memory plan, and what the limit is measured at."""

    images: int
    denoiser: counting.Trace
    vae_per_image: counting.Trace
    encoders: dict[str, counting.Trace]
    plan: fit.Plan
    vae_chunk: int


def within_limit(entry: dict[str, Any], reason: str) -> dict[str, Any]:
    """``entry`` (a share of a limit) as it is, or above 1 with no value (nor samples), ``above_limit`` and why."""
    value = entry.get("value")
    if value is None or value <= 1.0:
        return entry
    return {**{k: v for k, v in entry.items() if k != "samples"}, "value": None, "above_limit": True,
            "reason": reason}


def seconds_at_peaks(cost: Cost, peak: float | None, fp8_peak: float | None, fp8: bool) -> float | None:
    """The least seconds of one step's FLOPs at the given rates (TFLOP/s): with FP8 weights the linear layers'
    FLOPs at ``fp8_peak`` and the rest (convolutions, attention) at ``peak``; None where a rate is unknown."""
    if not peak or (fp8 and not fp8_peak):
        return None
    den = cost.denoiser
    if fp8:
        return den.linear_flops / (fp8_peak * 1e12) + (den.flops - den.linear_flops) / (peak * 1e12)
    return den.flops / (peak * 1e12)


def _mfu_entries(cost: Cost, parts: Parts, limit: MatmulLimit, sheet: Any, low: Precision, fp8: bool,
                 gpu_name: str | None) -> dict[str, dict[str, Any]]:
    figures: dict[str, dict[str, Any]] = {}
    peak = sheet.peak_tflops(low.label) if sheet else None
    fp8_peak = sheet.peak_tflops(FP8.label) if sheet and fp8 else None
    at_sheet = seconds_at_peaks(cost, peak, fp8_peak, fp8)
    if at_sheet:
        peaks = f"dense {low.label} {peak:g}" + (f" and {FP8.label} {fp8_peak:g}" if fp8 else "")
        figures["mfu_datasheet"] = within_limit(figure(
            [at_sheet / s for s in parts.step_s], "fraction", show=True, peak_tflops=peak, source=sheet.source,
            least_step_s=at_sheet,
            gpu_model=sheet.model, what=f"MFU against the {sheet.model}'s {peaks} TFLOP/s (datasheet)"),
            "the step's FLOP/s are above the datasheet peak: the peak or the FLOP count is wrong, so no share")
    else:
        reason = ("the CPU has no datasheet tensor peak in hwbench" if gpu_name is None
                  else datasheets.unknown_reason(gpu_name) if sheet is None
                  else f"the {sheet.model} datasheet gives no dense {FP8.label if peak else low.label} peak")
        figures["mfu_datasheet"] = {"value": None, "unit": "fraction", "show": True,
                                    "what": "MFU against the datasheet's dense peak", "reason": reason}
    rate = limit.median_tflops
    fp8_rate = median(parts.fp8_tflops) if parts.fp8_tflops else None
    at_rate = seconds_at_peaks(cost, rate, fp8_rate, fp8)
    if at_rate:
        rates = f"{rate:.4g} TFLOP/s {low.label} ({limit.product.label})" + (
            f" and {fp8_rate:.4g} TFLOP/s {FP8.label} (a square product, row-wise scales)" if fp8 else "")
        figures["mfu_measured_matmul"] = within_limit(figure(
            [at_rate / s for s in parts.step_s], "fraction", show=True, matmul_tflops=rate, least_step_s=at_rate,
            what=f"MFU against the {rates} matmul rate measured in this run",
            **({"fp8_matmul_tflops": fp8_rate} if fp8 else {})),
            "limit not measured reliably here: the step ran faster than its FLOPs allow at the rate measured in "
            "this run")
    else:
        figures["mfu_measured_matmul"] = {"value": None, "unit": "fraction", "show": True,
                                          "what": "MFU against the matmul rate measured in this run",
                                          "reason": f"the {FP8.label} matmul rate was not measured"}
    return figures


def image_seconds(parts: Parts, steps: int, step_s: float) -> float:
    return parts.encoders_total_s + steps * step_s + median(parts.vae_s)


def outcome(*, arch: Architecture, params: dict[str, Any], size: int, images: int, precision: Precision, cost: Cost,
            parts: Parts, limit: MatmulLimit, sheet: Any, device_name: str, room: Room, offload_note: str | None,
            tries: list[tuple[int, bool]], compiled: bool, gpu_name: str | None) -> Outcome:
    steps = params["steps"]
    fp8 = precision == FP8
    low = FP16 if precision == FP16 else BF16 if precision in (BF16, FP8) else precision
    per_minute = [60.0 * images / image_seconds(parts, steps, s) for s in parts.step_s]
    flops = cost.denoiser.flops
    figures: dict[str, dict[str, Any]] = {
        "step_time": figure(parts.step_s, "s", higher_is_better=False, show=True,
                            what=f"one denoising step of {images} image(s)"
                                 + (f" (the denoiser on {images * arch.passes_per_image}: guidance)" if arch.cfg
                                    else "")),
        "image_time": figure([image_seconds(parts, steps, s) for s in parts.step_s], "s", higher_is_better=False,
                             what=f"encoders {parts.encoders_total_s:.4g} s + {steps} steps + VAE decode "
                                  f"{median(parts.vae_s):.4g} s, for the batch of {images}"),
        "vae_decode": figure(parts.vae_s, "s", higher_is_better=False,
                             what=f"the VAE decode of {images} image(s), {parts.vae_chunk} at a time"),
        "flops_per_step": {"value": flops / 1e12, "unit": "TFLOP", "higher_is_better": False,
                           "what": "FLOPs of one step counted by PyTorch's FLOP counter",
                           "by_op_tflop": {k: v / 1e12 for k, v in cost.denoiser.flops_by_op.items()}},
        "model_tflops": figure([flops / s / 1e12 for s in parts.step_s], "TFLOP/s", what="the step's FLOPs ÷ its time"),
        "matmul_tflops": {**figure(limit.tflops, "TFLOP/s", what=f"matmul rate measured in this run at the "
                                                                   f"denoiser's shapes ({limit.product.label})"),
                          "by_product_median_tflops": limit.by_product},
    }
    for name, seconds in parts.encoder_s.items():
        figures[f"text_encoder {name}"] = figure(seconds, "s", higher_is_better=False,
                                                 what=f"{name} on {images} prompt(s)")
    figures.update(_mfu_entries(cost, parts, limit, sheet, low, fp8, gpu_name))
    bound_step = seconds_at_peaks(cost, limit.median_tflops,
                                  median(parts.fp8_tflops) if parts.fp8_tflops else None, fp8)
    if bound_step:
        bound = 60.0 * images / image_seconds(parts, steps, bound_step)
        figures["images_per_minute_bound"] = {
            "value": bound, "unit": "images/min", "higher_is_better": True, "show": True,
            "what": "images per minute with every step at the matmul rate measured in this run (encoders and VAE "
                    "as measured)"}
        figures["images_per_minute_share"] = within_limit(figure(
            [p / bound for p in per_minute], "fraction", show=True, what="images per minute ÷ its bound"),
            "above the bound: the measured matmul rate is not this machine's limit")
    if parts.fp8_tflops:
        figures["fp8_matmul_tflops"] = figure(parts.fp8_tflops, "TFLOP/s", what=f"{FP8.label} square product "
                                              "(torch._scaled_mm, row-wise scales) measured in this run")
    figures["memory_estimate_gib"] = {"value": cost.plan.one_at_a_time / GIB, "unit": "GiB", "higher_is_better": False,
                                      "show": True, "what": "estimated peak, one component at a time (before the run)"}
    figures["memory_all_resident_gib"] = {"value": cost.plan.all_resident / GIB, "unit": "GiB",
                                          "higher_is_better": False,
                                          "what": "estimated peak of a pipeline holding every component"}
    if parts.peak_bytes:
        figures["memory_peak_gib"] = {"value": max(parts.peak_bytes.values()) / GIB, "unit": "GiB",
                                      "higher_is_better": False, "show": True,
                                      "what": "measured peak (CUDA's allocator), the largest stage"}
    warnings = []
    if parts.encoders_reason:
        warnings.append(f"{parts.encoders_reason}: images per minute leave them out")
    if offload_note:
        warnings.append(offload_note)
    return Outcome(
        figure_name="images_per_minute", unit="images/min", samples=per_minute, higher_is_better=True,
        precision=precision.label, method=_method(arch, size, images, steps, parts, compiled, fp8),
        figures=figures, warnings=warnings, device=device_name,
        details=_details(arch, cost, parts, room, tries, size, precision),
        resolved_params={"size": size, "batch": images, "compile": "true" if compiled else "false",
                         "precision": precision.key})


def _method(arch: Architecture, size: int, images: int, steps: int, parts: Parts, compiled: bool, fp8: bool) -> str:
    guidance = "classifier-free guidance (the denoiser on 2 per image)" if arch.cfg else "no guidance batch " \
        "(guidance-distilled)"
    return (f"{arch.name} random-initialised (diffusers' and transformers' classes from the public configs), "
            f"{size}×{size} images, batch {images}, {guidance}; settings: {', '.join(parts.settings)}"
            f"{'' if compiled else ', eager'}. Image time = text encoders + {steps} × the median step + VAE decode, "
            f"each timed apart on the device; steps timed in windows (median and spread over windows). FLOPs per "
            "step counted by torch.utils.flop_counter on the meta device; MFU = FLOPs per step ÷ step time ÷ rate, "
            "against the matmul rate measured in this run at the denoiser's shapes and the datasheet's dense peak"
            + (f"; {FP8.label}: linear layers' FLOPs at the {FP8.label} peak or rate, the rest at {BF16.label}'s" if fp8
               else "") + ".")


def _details(arch: Architecture, cost: Cost, parts: Parts, room: Room, tries: list[tuple[int, bool]], size: int,
             precision: Precision) -> dict[str, Any]:
    return {
        "model": {"name": arch.name, "kind": arch.kind, "source": arch.source, "notes": list(arch.notes),
                  "denoiser_params": cost.denoiser.params, "vae_params": cost.vae_per_image.params,
                  "encoder_params": {n: t.params for n, t in cost.encoders.items()},
                  "latents": [arch.latent_channels, size // arch.vae_scale, size // arch.vae_scale],
                  "denoiser_batch": cost.images * arch.passes_per_image},
        "memory": {"room": room.what, "room_gib": room.bytes / GIB, "usable_fraction": fit.FIT_FRACTION,
                   "estimate": cost.plan.arithmetic(),
                   "stages_gib": {s.name: {"weights": s.weight_bytes / GIB, "activations": s.activation_bytes / GIB}
                                  for s in cost.plan.stages},
                   "measured_peak_gib": {k: v / GIB for k, v in parts.peak_bytes.items()},
                   "working_tensors": fit.WORKING_TENSORS},
        "settings": parts.settings, "warmup_s": parts.compile_s, "check": parts.check,
        "batch_search": [{"images": b, "fits": ok} for b, ok in tries],
        "precision": precision.label,
    }
