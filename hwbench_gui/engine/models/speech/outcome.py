"""speech.transcribe's result: the headline (real-time factor at the smallest batch), a figure per batch and part, the
series the report and the page draw, the method in words and the summary lines the CLI prints. Pure: no torch."""

from __future__ import annotations

from typing import Any

from hwbench_gui.engine.inventory import datasheets
from hwbench_gui.engine.measure.stats import median, spread
from hwbench_gui.engine.measure.timing import figure
from hwbench_gui.engine.models.speech import arithmetic as ar
from hwbench_gui.engine.models.speech.architectures import WINDOW_S, WhisperArch
from hwbench_gui.engine.spec.benchmark import Outcome, Series
from hwbench_gui.engine.spec.precision import FP32

#: The headline's unit: seconds of audio transcribed per second of wall time.
RTF_UNIT = "x real time"


def summary_lines(rows: list[dict[str, Any]], limits: dict[str, Any], label: str) -> list[str]:
    out = []
    for row in rows:
        b = row["batch"]
        enc_s = median(row["encoder_seconds_per_window"])
        encoder = (f"= {row['encoder_fraction_of_matmul']:.0%} of the measured matmul rate"
                   if row["encoder_fraction_of_matmul"] is not None else f"({row.get('encoder_bound_reason')})")
        decoding = (f"= {row['decoder_fraction_of_bound']:.0%} of its {row['decoder_bound_tokens_per_s']:,.0f} "
                    "tokens/s bandwidth bound" if row["decoder_fraction_of_bound"] is not None
                    else f"({row.get('decoder_bound_reason')})")
        out.append(
            f"batch {b}: real-time factor {median(row['real_time_factor']):,.1f} (encoder "
            f"{row['encoder_share_of_time']:.0%} of the time); encoder {enc_s * 1e3:,.1f} ms per window, "
            f"{median(row['encoder_tflops']):,.3g} TFLOP/s {encoder}"
            + (f", MFU {row['encoder_mfu']:.0%}" if row["encoder_mfu"] is not None else "")
            + f"; decoding {median(row['decoder_tokens_per_s']):,.0f} tokens/s {decoding}")
    read = f", read {median(limits['read_gbps']):.1f} GB/s" if limits.get("read_gbps") else ""
    out.append(f"limits measured in this run: bandwidth {limits['bandwidth_gbps_median']:.1f} GB/s (copy "
               f"{median(limits['copy_gbps']):.1f} GB/s{read}), {label} matmul {limits['matmul_tflops_median']:.4g} "
               f"TFLOP/s ({limits['matmul_products']['fastest']})")
    return out


def _method(params: dict[str, Any], arch: WhisperArch, label: str, limits: dict[str, Any], kind: str, device: str,
            own: bool, element_bytes: int) -> str:
    tokens = params["tokens"]
    return (
        f"{arch.name} ({ar.total_params(arch):,} parameters: {arch.encoder_layers} encoder and {arch.decoder_layers} "
        f"decoder layers, width {arch.d_model}, {arch.decoder_heads} heads, {arch.mels} mel bins, vocabulary "
        f"{arch.vocab:,}) with " + ("weights loaded from its folder" if own else "random weights made")
        + f" in {label} on {device}; every tensor, both caches and the attention in {label}. Input: 30-second windows "
        "of synthesised speech-like audio (a gliding voiced source with formants, syllable-rate gating, noise) at "
        f"16 kHz turned into {arch.mels}-bin log-mel spectrograms of {arch.frames} frames with torch (Whisper's "
        "front end: 400-point STFT, hop 160, Slaney mel filters, log10); the front end is not timed. "
        f"A window: the encoder's pass, then the decoder: the cross-attention's keys and values computed once, the "
        f"{ar.PROMPT_TOKENS}-token forced prompt in one pass (its last logits give the first token), then "
        f"{tokens - 1} one-token steps, {tokens} tokens in all (greedy, each fed back, never stopping early: a stated "
        f"number of tokens per window, {tokens}; typical speech gives about 100-150 per 30 s). The "
        "self-attention's cache is a static buffer of every position a window writes (in blocks of "
        f"{ar.CACHE_BLOCK}), read with later positions masked (the bound counts only the positions attended). "
        + {"graph": "The encoder, the decoder's start and its step are each captured once in a CUDA graph "
                               "and replayed. ",
                      "compile": "Each block is compiled by torch.compile (default settings) and the encoder, start "
                                 "and step captured in CUDA graphs. ",
                      "fused": "Each block is compiled by torch.compile (the decoder's with coordinate-descent "
                               "tuning) and the encoder, start and step captured in CUDA graphs. ",
                      "eager": "Every part runs eagerly. "}[params["step"]]
        + f"{WARMUP_TEXT[kind]}, then {params['repeats']} timed windows of each part at each batch, "
        "each a telemetry phase, timed with " + ("CUDA events" if kind == "cuda" else "perf_counter")
        + "; real-time factor = batch × 30 s / (encoder window + decoder window), pairing the i-th of each; "
        "tokens/s = batch × tokens / decoder window; figures are medians with p5-p95 over windows. "
        f"Encoder FLOPs per window = {ar.encoder_flops(arch):,} (2 per multiply-add of both convolutions and every "
        "projection and MLP, 4 × positions² × width per layer's attention; checked against "
        "torch.utils.flop_counter), held against the fastest of the encoder's own products measured in this run "
        f"(F.linear at its shapes and a square one, in {label}; {limits['matmul_tflops_median']:.4g} TFLOP/s: "
        f"{limits['matmul_products']['fastest']}"
        + ("; measured again after the figures, one having come out above its limit, the higher of each kept"
           if limits.get("measured_times", 1) > 1 else "")
        + ") and the datasheet's dense peak (MFU). Decoder bound = its least "
        "time: the start's FLOPs (cross keys/values and prompt) at the matmul rate plus, per step, "
        f"{ar.weights_read_per_step(arch, element_bytes) / 1e9:.3f} GB of weights (every decoder layer but the "
        "cross keys/values' projection, the final norm, the output projection) + per window "
        f"{2 * arch.decoder_layers * arch.d_model * element_bytes:,} bytes per cached position attended or written "
        f"and the cross-attention's {arch.source_positions} positions, at the measured bandwidth "
        f"({limits['bandwidth_gbps_median']:.0f} GB/s: a copy of {limits['copy_bytes'] >> 20} MiB, bytes read + "
        "written" + (", or where faster a read of the step's weights by a one-row F.linear" if limits.get("read_gbps")
                     else "") + "). A figure above its bound is given no share, never a share above 100 %.")


WARMUP_TEXT = {"cuda": "2 warm-up windows", "cpu": "1 warm-up window"}


def outcome(params: dict[str, Any], arch: WhisperArch, label: str, limits: dict[str, Any], rows: list[dict[str, Any]],
            warnings: list[str], plan: ar.MemoryPlan, free_before: int, peak: int | None, kind: str, device: str,
            gpu_name: str | None, own: bool) -> Outcome:
    element_bytes = 4 if label == FP32.label else 2
    figures: dict[str, dict[str, Any]] = {}
    for row in rows:
        b = row["batch"]
        figures[f"real-time factor, batch {b}"] = figure(row["real_time_factor"], RTF_UNIT, batch=b)
        figures[f"encoder, batch {b}: seconds per window"] = figure(row["encoder_seconds_per_window"], "s",
                                                                    higher_is_better=False, batch=b)
        figures[f"encoder, batch {b}: TFLOP/s"] = figure(row["encoder_tflops"], "TFLOP/s", batch=b,
                                                         fraction_of_matmul=row["encoder_fraction_of_matmul"],
                                                         mfu=row["encoder_mfu"])
        figures[f"decoding, batch {b}: tokens/s"] = figure(row["decoder_tokens_per_s"], "tokens/s", batch=b,
                                                           bound=row["decoder_bound_tokens_per_s"],
                                                           fraction_of_bound=row["decoder_fraction_of_bound"])
    batches = [float(r["batch"]) for r in rows]
    series = [
        Series("real-time factor", batches, [median(r["real_time_factor"]) for r in rows], "windows at once",
               "real-time factor (s of audio per s)", y_spread=[spread(r["real_time_factor"]) for r in rows]),
        Series("decoding tokens/s", batches, [median(r["decoder_tokens_per_s"]) for r in rows], "windows at once",
               "tokens/s (all windows)", y_spread=[spread(r["decoder_tokens_per_s"]) for r in rows]),
        Series("decoding bandwidth bound", batches, [r["decoder_bound_tokens_per_s"] for r in rows],
               "windows at once", "tokens/s (all windows)"),
    ]
    sheet = datasheets.lookup(gpu_name) if gpu_name else None
    datasheet: dict[str, Any]
    if sheet:
        datasheet = {"model": sheet.model, "memory_gb_per_s": sheet.memory_gb_per_s,
                     "peak_tflops": sheet.peak_tflops(label), "source": sheet.source}
    else:
        datasheet = {"value": None, "reason": datasheets.unknown_reason(gpu_name) if kind == "cuda"
                     else "the CPU has no datasheet entry: no MFU"}
    details = {
        "model": {"name": arch.name, "source": arch.source or "config.json", "parameters": ar.total_params(arch),
                  "encoder_parameters": ar.encoder_params(arch), "decoder_parameters": ar.decoder_params(arch),
                  "encoder_layers": arch.encoder_layers, "decoder_layers": arch.decoder_layers,
                  "d_model": arch.d_model, "heads": arch.decoder_heads, "mels": arch.mels, "vocab": arch.vocab,
                  "encoder_flops_per_window": ar.encoder_flops(arch),
                  "weights_read_per_step_bytes": ar.weights_read_per_step(arch, element_bytes)},
        "window_s": WINDOW_S, "tokens_per_window": params["tokens"], "prompt_tokens": ar.PROMPT_TOKENS,
        "input": "synthesised speech-like audio -> log-mel with torch",
        "rows": rows, "limits": limits, "datasheet": datasheet,
        "memory": {"plan": plan.to_json(), "free_before_bytes": free_before,
                   **({"peak_allocated_bytes": peak} if peak is not None else {})},
        "summary": summary_lines(rows, limits, label) + [
            f"memory: planned before the run {plan.text()}"
            + (f"; peak allocated {peak / (1 << 30):.2f} GiB" if peak is not None else "")],
    }
    head = rows[0]
    return Outcome(
        figure_name=f"real-time factor, batch {head['batch']}",
        unit=RTF_UNIT,
        samples=head["real_time_factor"],
        precision=label,
        method=_method(params, arch, label, limits, kind, device, own, element_bytes),
        figures=figures,
        series=series,
        warnings=warnings,
        details=details,
        device=device,
        resolved_params={k: params[k] for k in ("batches", "step", "threads", "precision") if k in params},
    )
