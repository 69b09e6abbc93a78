"""What to change in the data path, and the end-to-end rate each change should reach: the configurations the
analyzer measured end to end first, then estimates from the stage rates (each says its basis)."""

from __future__ import annotations

from typing import Any

from hwbench_gui.engine.datapath.findings import (
    EPOCH_REFILL_NOTABLE,
    UNSETTLED_SPREAD,
    Advice,
    Context,
    Verdict,
    cpu_part,
    rate_of,
    rate_text,
)
from hwbench_gui.engine.datapath.tryouts import BETTER_BY, LoaderConfig, Tried
from hwbench_gui.engine.spec.precision import FP32, TF32, from_label


def _min_rate(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return min(present) if present else None


def _advice(action: str, detail: str, expected: float | None, e2e: float | None, basis: str,
            measured: bool = False) -> Advice:
    gain = expected / e2e if expected is not None and e2e else None
    return Advice(action, detail, expected, gain, basis, measured)


def tried_advice(tried: list[Tried], base: LoaderConfig, e2e: float | None) -> list[Advice]:
    """One line per configuration measured end to end, fastest first; failed ones last, with why."""
    lines = []
    for t in sorted((t for t in tried if t.rate is not None), key=lambda t: -t.rate):
        changes = t.config.changes_from(base) or "the default configuration again"
        better = e2e is not None and t.rate > e2e * (1 + BETTER_BY)
        worse = e2e is not None and t.rate < e2e * (1 - BETTER_BY)
        detail = t.config.describe() + "."
        spread = (max(t.samples) - min(t.samples)) / sorted(t.samples)[len(t.samples) // 2] if t.samples else 0.0
        if spread > UNSETTLED_SPREAD:
            detail += f" Its timed windows spread {spread:.0%} (the loader had not settled): an approximate figure."
        if worse:
            detail += " Measured slower: keep the default setting."
        elif not better:
            detail += " Within noise of the default."
        lines.append(_advice(changes, detail, t.rate, e2e,
                             f"measured end to end ({len(t.samples)} timed windows, the default's method)", True))
    for t in tried:
        if t.rate is None:
            lines.append(_advice(t.config.changes_from(base) or t.key, t.config.describe() + ".",
                                 None, e2e, f"not measured: {t.reason}"))
    return lines


def _compute_what_if(action: str, detail: str, what_if: float | None, compute: float | None, feed: float | None,
                     e2e: float | None) -> Advice | None:
    """Advice from a compute rate measured with one setting changed, capped by what the data path
    feeds (None when that rate was not measured)."""
    if what_if is None:
        return None
    expected = _min_rate([what_if, feed])
    basis = f"estimate: compute-only rate measured with this setting ({rate_text(what_if)})"
    if compute and what_if < compute:
        detail += (f" Measured slower here ({rate_text(what_if)} against {rate_text(compute)}): keep the current "
                   "setting.")
    elif feed is not None and compute and feed < what_if:
        basis += f", capped by the data path's {rate_text(feed)}"
    return _advice(action, detail, expected, e2e, basis)


def advise(rates: dict[str, float | None], ctx: Context, verdict: Verdict, stage_bottleneck: str,
           tried: list[Tried] | None = None, base: LoaderConfig | None = None,
           epoch_start: dict[str, Any] | None = None) -> list[Advice]:
    """The changes measured end to end (``tried``), then the ones that cannot be tried cheaply with
    the end-to-end rate each should reach, estimated from the stage rates (``basis`` says how)."""
    e2e = verdict.end_to_end
    links = verdict.chain
    r = {link: rate_of(rates, key) for link, key in links.items()}
    cuda = ctx.device == "cuda"
    interfere = verdict.bottleneck == "interference"
    tried = list(tried or [])
    advice: list[Advice] = tried_advice(tried, base, e2e) if base is not None else []
    tried_gpu_decode = any(t.config.gpu_decode for t in tried if t.rate is not None)

    share = (epoch_start or {}).get("fraction")
    if share is not None and share > EPOCH_REFILL_NOTABLE and e2e:
        advice.append(_advice(
            "Keep the loader busy across epoch boundaries",
            f"Each epoch start empties the prefetch queue ({epoch_start['cost_s']:.2f} s measured, "
            f"{share:.0%} of your epoch of {epoch_start['epoch_batches']:,} batches). Draw several passes per "
            "DataLoader epoch (RandomSampler(dataset, num_samples=k * len(dataset))) so the workers prefetch straight "
            "through the boundary.",
            e2e, e2e * (1 - share), "measured: steady-state end to end (the headline) against the same with one "
            "measured epoch start per epoch", True))

    cold, downstream = rate_of(rates, "disk_cold"), _min_rate([r.get("cpu"), r.get("transfer"), r.get("compute")])
    first_epoch_slow = cold is not None and downstream is not None and cold < 0.9 * downstream
    if stage_bottleneck == "disk" or first_epoch_slow:
        in_memory = _min_rate([r.get("cpu"), r.get("transfer"), r.get("compute")])
        if ctx.fits_in_ram:
            detail = (f"The dataset ({ctx.dataset_bytes / 2**30:.2f} GiB) fits in RAM "
                      f"({(ctx.available_ram_bytes or 0) / 2**30:.1f} GiB available): hold the file bytes in memory "
                      "(e.g. read them once into a list the Dataset decodes from).")
            if stage_bottleneck != "disk":
                detail += " Only the first epoch reads the disk at the uncached rate; later ones hit the page cache."
            advice.append(_advice("Cache the dataset in RAM", detail, in_memory, e2e,
                                  "estimate: the decode + augment rate from bytes in memory measured here, capped by "
                                  "transfer and compute"))
        if stage_bottleneck == "disk":
            slow = ("each read waits for the simulated per-file latency (read_delay_ms)" if ctx.read_delay_ms
                    else f"reads reach {rate_text(r.get('storage'))}")
            advice.append(_advice("Faster storage or more parallel reads",
                                  f"Local NVMe, or more reader threads/workers for high-latency storage; now {slow}.",
                                  in_memory, e2e, "estimate: upper bound, the other stages' rates"))

    # Decode and augmentation share the loader workers: whichever of the two dominates, moving both
    # to the GPU or shrinking the stored images relieves them.
    cpu_limits = stage_bottleneck in ("decode", "augment") or (interfere and verdict.limiting_stage == "cpu_n")
    if cpu_limits:
        gpu_decode = rate_of(rates, "gpu_decode")
        if cuda and not tried_gpu_decode and gpu_decode is not None and r.get("compute"):
            tools = "torchvision.io.decode_jpeg(device='cuda') (nvJPEG), then crop/flip/normalise on the GPU"
            if ctx.dali_installed:
                tools += ", or NVIDIA DALI (installed here)"
            shared = 1 / (1 / gpu_decode + 1 / r["compute"])  # decode and training share the GPU
            action = "Decode JPEGs on the GPU" if cpu_part(rates) == "decode" else "Decode and augment on the GPU"
            advice.append(_advice(action, tools + ".", _min_rate([r.get("storage"), shared]), e2e,
                                  "estimate: nvJPEG decode rate measured here, sharing the GPU's time with the "
                                  "compute rate"))
        stored = (ctx.stored_width_px or 0) * (ctx.stored_height_px or 0)
        target_side = round(ctx.image_size * 256 / 224)
        short = min(ctx.stored_width_px or 0, ctx.stored_height_px or 0)
        if stored and short > 1.3 * target_side and r.get("cpu"):
            factor = (short / target_side) ** 2
            decode, augment = rate_of(rates, "decode_1"), rate_of(rates, "augment_1")
            part = (1 / decode) / (1 / decode + 1 / augment) if decode and augment else 1.0
            cpu_new = r["cpu"] / (part / factor + (1 - part))
            expected = _min_rate([r.get("storage"), cpu_new, r.get("transfer"), r.get("compute")])
            advice.append(_advice(
                f"Store smaller images (short side {target_side} px instead of {short} px)",
                f"Resize the dataset once; a {ctx.image_size} px crop does not need {short} px sources. Decode time "
                f"scales with pixels ({factor:.1f}× fewer).",
                expected, e2e, "estimate: decode share of the worker's time divided by the pixel ratio; "
                "augmentation cost assumed unchanged"))

    if stage_bottleneck == "compute" and not interfere:
        feed = _min_rate([r.get("storage"), r.get("cpu"), r.get("transfer")])
        if verdict.bottleneck == "launch":
            # Each of these gives the GPU more work per kernel the host queues.
            line = _compute_what_if(
                f"Larger batch ({2 * ctx.batch})", f"Twice the images per step: the host queues the same kernels "
                f"for {2 * ctx.batch} images instead of {ctx.batch} (scale the learning rate with it).",
                rate_of(rates, "compute_batch2x"), r.get("compute"), feed, e2e)
            advice.append(line or _advice(
                f"Larger batch ({2 * ctx.batch})", f"Twice the images per step: the host queues the same kernels "
                f"for {2 * ctx.batch} images instead of {ctx.batch}.", None, e2e,
                f"not measured here: compute alone at batch {2 * ctx.batch} was not run"))
            advice.append(_advice(
                "CUDA graphs (torch.compile)", "torch.compile(model, mode='max-autotune') or 'reduce-overhead' "
                "captures the step in CUDA graphs and fuses kernels: one launch replays the whole step.", None, e2e,
                "not measured: compiling the model takes minutes, beyond this analysis's budget"))
        if cuda and from_label(ctx.precision) in (FP32, TF32):
            line = _compute_what_if(
                "Mixed precision (bf16-amp)", "torch.autocast(dtype=torch.bfloat16) runs convolutions and matmuls "
                "on the tensor cores.", rate_of(rates, "compute_bf16"), r.get("compute"), feed, e2e)
            advice += [line] if line else []
        if not ctx.channels_last and not any(t.config.channels_last for t in tried if t.rate is not None):
            line = _compute_what_if(
                "Channels-last memory format", "model and inputs .to(memory_format=torch.channels_last)"
                + (": cuDNN's fastest convolution kernels are NHWC." if cuda else "."),
                rate_of(rates, "compute_channels_last"), r.get("compute"), feed, e2e)
            advice += [line] if line else []
        if not cuda:
            advice.append(_advice("Train on a GPU", "The CPU computes the model; the data path is faster than it.",
                                  None, e2e, "not measurable on this machine"))
        if r.get("compute") and e2e:
            limit = "the host's launch path is" if verdict.bottleneck == "launch" else "the model is"
            advice.append(_advice("Nothing to gain in the data path", f"The input pipeline can deliver "
                                  f"{rate_text(feed)}; {limit} the limit.", None, None, "stage rates measured here"))

    tried_uint8 = any(t.config.normalize_on_device for t in tried if t.rate is not None)
    if stage_bottleneck == "transfer" and not interfere and cuda and not tried_uint8:
        expected = _min_rate([r.get("storage"), r.get("cpu"), r["transfer"] * 4, r.get("compute")])
        advice.append(_advice("Copy uint8 images and normalise on the GPU",
                              "Float32 batches are 4× the bytes of uint8; convert and normalise after the copy.",
                              expected, e2e, "estimate: copy rate measured here × 4 (a quarter of the bytes)"))
    return advice
