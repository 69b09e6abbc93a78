"""speech.transcribe: Whisper's real-time factor (seconds of audio transcribed per second) on 30-second windows, split
into the encoder's pass and the decoding, each held against the limit measured in the same run.

The model (:mod:`..models.speech`) is random-initialised in the run's precision on the device (the speed does not
depend on the weights' values) or a user's Hugging Face Whisper folder read through safetensors; its input is the
log-mel of synthesised speech-like audio. The encoder is matmul-bound: its FLOPs over the fastest of its own products
measured at the start of the run (:mod:`..measure.matmul_rate`), and over the datasheet's dense peak (MFU). Decoding
is bandwidth-bound as a language model's generation is: every step reads the decoder's weights once and each
window's caches, so its bound is the measured copy bandwidth (:mod:`..measure.bandwidth`) over those bytes. A figure
above its bound is given no share (the limit was not measured reliably), never a share above 100 %.
"""

from __future__ import annotations

from typing import Any, Callable

from hwbench_gui.engine import child
from hwbench_gui.engine.inventory import datasheets
from hwbench_gui.engine.measure import matmul_rate
from hwbench_gui.engine.measure.bandwidth import copy_rates_gbps, read_rates_gbps
from hwbench_gui.engine.measure.room import host_room
from hwbench_gui.engine.measure.stats import median
from hwbench_gui.engine.measure.timing import GB, Steps, cpu_count, cuda_device, cuda_label, duration_text, \
    torch_missing_reason
from hwbench_gui.engine.models.llm.generate import Clock
from hwbench_gui.engine.models.llm.infer_limits import COPY_BYTES, LIMIT_REPEATS, MATMUL_SIZE
from hwbench_gui.engine.models.speech import arithmetic as ar
from hwbench_gui.engine.models.speech.architectures import BUILT_IN, WINDOW_S, WhisperArch, resolve
from hwbench_gui.engine.spec.benchmark import Benchmark, BenchmarkUnavailable, Outcome, Param, ParamError, \
    Reporter
from hwbench_gui.engine.spec.device import AUTO, CPU, resolve_auto
from hwbench_gui.engine.spec.device import parse as parse_device
from hwbench_gui.engine.spec.precision import BF16, FP16, FP32, from_key

PRECISIONS = (BF16, FP16, FP32)
GPU_BATCHES, CPU_BATCHES = [1, 16], [1, 2]
STEP_MODES = ("auto", "graph", "compile", "fused", "eager")
WARMUP = {"cuda": 2, "cpu": 1}
#: The share of the run's time limit its least possible timed work may take (building, measuring the limits and
#: capturing take the rest), and that share of the default 30-minute limit where the parent set none.
WORK_SHARE = 2 / 3
DEFAULT_LIMIT_S = 1800.0
TYPICAL_TOKENS = "about 100-150 tokens per 30 s of conversational English (2.5-3 words/s, ~1.3 tokens per word)"


def _auto(params: dict[str, Any], kind: str) -> tuple[dict[str, Any], list[str]]:
    resolved, notes = {}, []
    if not params["batches"]:
        resolved["batches"] = GPU_BATCHES if kind == "cuda" else CPU_BATCHES
        if kind == "cpu":
            notes.append("on a CPU, batches 1 and 2 instead of 1 and 16: 16 windows take minutes there; ask for "
                         "more with -p batches=...")
    if params["step"] == "auto":
        resolved["step"] = "graph" if kind == "cuda" else "eager"
    if kind == "cpu" and params["threads"] == 0:
        resolved["threads"] = cpu_count()
    if params["precision"] == "auto":
        # a CPU without AVX-512 BF16 runs BF16 products some 10 times slower than FP32 (converted element by element)
        resolved["precision"] = BF16.key if kind == "cuda" else FP32.key
    return resolved, notes


def time_allowed() -> tuple[float, str]:
    """Seconds the run's timed work may take at most, and why, in words with units."""
    limit = child.run_time_limit_s() or DEFAULT_LIMIT_S
    return limit * WORK_SHARE, (f"{duration_text(limit * WORK_SHARE)} (two thirds of the run's time limit of "
                                f"{duration_text(limit)})")


def what_fits(free_bytes: int, batch: int, tokens: int) -> list[dict[str, Any]]:
    """Every built-in Whisper in each precision at ``batch`` windows: its memory plan and whether it fits."""
    rows = []
    for name, arch in BUILT_IN.items():
        for precision in PRECISIONS:
            plan = ar.memory_plan(arch, 4 if precision is FP32 else 2, batch, tokens)
            rows.append({"model": name, "precision": precision.label, "batch": batch,
                         "total_bytes": plan.total_bytes, "fits": plan.total_bytes <= free_bytes})
    return rows


def measure_limits(torch: Any, kind: str, device: str, dtype: Any, arch: WhisperArch, batch: int,
                   read_bytes: int, reporter: Reporter) -> dict[str, Any]:
    """The copy bandwidth (and on a CPU the read of the decoder's step weights, one row at a time, as a step reads
    them), and the fastest of the encoder's products at ``batch`` windows and of a square one, as the model runs."""
    reporter.progress(0.02, "measuring this device's copy bandwidth")
    n = COPY_BYTES[kind]
    src = torch.randint(0, 256, (n,), dtype=torch.uint8, device=device)
    dst = torch.empty_like(src)
    copy = copy_rates_gbps(src, dst, n, LIMIT_REPEATS, cuda=kind == "cuda")
    del src, dst
    read = None
    if kind == "cpu":
        read_bytes = min(COPY_BYTES[kind], read_bytes)
        read = read_rates_gbps(read_bytes, dtype, device, LIMIT_REPEATS, rows=1)
    reporter.progress(0.05, "measuring the matmul rate at the encoder's shapes")
    rows, d, size = batch * arch.source_positions, arch.d_model, MATMUL_SIZE[kind]
    products = [matmul_rate.Product(rows, k, n) for k, n in ((d, 3 * d), (d, d), (d, arch.encoder_ffn),
                                                             (arch.encoder_ffn, d))]
    matmul = matmul_rate.limit_tflops(products + [matmul_rate.Product(size, size, size)], dtype, device,
                                      LIMIT_REPEATS, burst=kind == "cuda")
    if kind == "cuda":
        torch.cuda.empty_cache()
    bandwidth = max(median(copy), median(read) if read else 0.0)
    return {"copy_gbps": copy, "copy_bytes": n, "read_gbps": read, "read_bytes": read_bytes if read else 0,
            "bandwidth_gbps_median": bandwidth, "matmul_tflops": matmul.tflops,
            "matmul_tflops_median": matmul.median_tflops, "matmul_products": matmul.to_json(), "measured_times": 1}


def best_of(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    """Each limit from whichever of two measurements gave the higher median (a busy machine or a cold device
    measures it low once; a figure above its limit says it was)."""
    bandwidth = first if first["bandwidth_gbps_median"] >= second["bandwidth_gbps_median"] else second
    matmul = first if first["matmul_tflops_median"] >= second["matmul_tflops_median"] else second
    return {**{k: bandwidth[k] for k in ("copy_gbps", "copy_bytes", "read_gbps", "read_bytes",
                                         "bandwidth_gbps_median")},
            **{k: matmul[k] for k in ("matmul_tflops", "matmul_tflops_median", "matmul_products")},
            "measured_times": first["measured_times"] + second["measured_times"]}


def _windows(fn: Callable[[], None], clock: Clock, repeats: int, warmup: int, reporter: Reporter,
             sync: Callable[[], None], prepare: Callable[[], None] | None = None) -> list[float]:
    """Seconds of ``fn`` per timed window after ``warmup`` windows; each timed window is a telemetry phase.
    ``prepare`` runs before each window, untimed."""
    reporter.phase("warmup", "start")
    for _ in range(warmup):
        if prepare is not None:
            prepare()
        fn()
    sync()
    reporter.phase("warmup", "end")
    seconds = []
    for repeat in range(repeats):
        if prepare is not None:
            prepare()
            sync()
        reporter.phase("timed", "start", repeat=repeat)
        start = clock.mark()
        fn()
        end = clock.mark()
        seconds.append(clock.seconds(start, end))
        reporter.phase("timed", "end", repeat=repeat)
    return seconds


def held_against(value: float, bound: float, what: str) -> tuple[float | None, str | None]:
    """``value``'s share of ``bound`` or (None, why) when it is above it: no share above 100 % is ever shown."""
    if bound > 0 and value <= bound:
        return value / bound, None
    return None, f"limit not measured reliably here: {value:,.3g} is above the {bound:,.3g} that the {what} allows"


def batch_row(arch: WhisperArch, batch: int, tokens: int, element_bytes: int, encoder_s: list[float],
              decoder_s: list[float], limits: dict[str, Any], peak_tflops: float | None) -> dict[str, Any]:
    """One batch's figures from its timed windows (the i-th encoder window paired with the i-th decoder one), each
    held against its bound: the encoder's FLOPs at the measured matmul rate and at the datasheet peak, the decoder's
    least time (its start's FLOPs at the matmul rate plus its steps' bytes at the bandwidth)."""
    flops = ar.encoder_flops(arch, batch)
    rate = limits["matmul_tflops_median"] * 1e12
    bandwidth = limits["bandwidth_gbps_median"] * GB
    steps_bytes = ar.steps_bytes(arch, element_bytes, batch, tokens)
    decoder_bound_s = ar.prompt_flops(arch, batch) / rate + steps_bytes / bandwidth
    encoder_tflops = [flops / s / 1e12 for s in encoder_s]
    enc_share, enc_why = held_against(median(encoder_tflops), limits["matmul_tflops_median"], "measured matmul rate")
    mfu = median(encoder_tflops) / peak_tflops if peak_tflops else None
    tokens_per_s = [batch * tokens / s for s in decoder_s]
    bound_tokens_per_s = batch * tokens / decoder_bound_s
    dec_share, dec_why = held_against(median(tokens_per_s), bound_tokens_per_s, "measured bandwidth")
    rtf = [batch * WINDOW_S / (e + d) for e, d in zip(encoder_s, decoder_s)]
    return {"batch": batch, "tokens_per_window": tokens, "encoder_window_seconds": encoder_s,
            "decoder_window_seconds": decoder_s, "encoder_seconds_per_window": [s / batch for s in encoder_s],
            "encoder_tflops": encoder_tflops, "encoder_flops": flops, "encoder_fraction_of_matmul": enc_share,
            "encoder_mfu": mfu if mfu is None or mfu <= 1 else None, "decoder_tokens_per_s": tokens_per_s,
            "decoder_bound_tokens_per_s": bound_tokens_per_s, "decoder_fraction_of_bound": dec_share,
            "decoder_steps_bytes": steps_bytes, "decoder_start_flops": ar.prompt_flops(arch, batch),
            "real_time_factor": rtf, "encoder_share_of_time": median(encoder_s) / (median(encoder_s)
                                                                                    + median(decoder_s)),
            **({"encoder_bound_reason": enc_why} if enc_why else {}),
            **({"encoder_mfu_reason": f"{median(encoder_tflops):,.4g} TFLOP/s is above the datasheet's "
                                      f"{peak_tflops:,.4g}: the published peak does not fit this GPU (no share "
                                      "above 100 %)"}
               if mfu is not None and mfu > 1 else {}),
            **({"decoder_bound_reason": dec_why} if dec_why else {})}


def _free_bytes(torch: Any, kind: str, index: int) -> int:
    return int(torch.cuda.mem_get_info(index)[0]) if kind == "cuda" else host_room().bytes


def _check_params(params: dict[str, Any], arch: WhisperArch, kind: str) -> None:
    most = arch.target_positions - ar.PROMPT_TOKENS + 1
    if params["tokens"] > most:
        raise ParamError(f"tokens: {params['tokens']} per window, more than the {most} {arch.name}'s "
                         f"{arch.target_positions} decoder positions leave after the {ar.PROMPT_TOKENS}-token prompt")
    if params["step"] == "graph" and kind != "cuda":
        raise ParamError("step=graph needs a CUDA GPU (CUDA graphs); use step=eager or auto on the CPU")


def _floor_seconds(arch: WhisperArch, params: dict[str, Any], element_bytes: int, limits: dict[str, Any],
                   warmup: int) -> float:
    """The least time the run's windows can take at the measured limits."""
    rate, bandwidth = limits["matmul_tflops_median"] * 1e12, limits["bandwidth_gbps_median"] * GB
    windows = params["repeats"] + warmup
    return windows * sum(ar.encoder_flops(arch, b) / rate + ar.prompt_flops(arch, b) / rate
                         + ar.steps_bytes(arch, element_bytes, b, params["tokens"]) / bandwidth
                         for b in params["batches"])


def run(params: dict[str, Any], reporter: Reporter) -> Outcome:
    import torch

    asked = parse_device(params["device"])
    where = resolve_auto(asked)
    kind, index, device = ("cuda" if where.kind != CPU else "cpu"), where.index, "cpu"
    if kind == "cuda":
        device = str(cuda_device(index))
        torch.cuda.set_device(index)
    arch = resolve(params["model"])
    own = params["model"].strip().lower() not in BUILT_IN
    if own:  # its files are checked before any limit is measured
        from hwbench_gui.engine.models.speech import weights

        weights.check_folder(params["model"], arch)
    resolved, warnings = _auto(params, kind)
    params = {**params, **resolved}
    precision = from_key(params["precision"])
    element_bytes = 4 if precision is FP32 else 2
    dtype = getattr(torch, precision.tensor_dtype)
    _check_params(params, arch, kind)
    if kind == "cpu":
        torch.set_num_threads(params["threads"])
    if asked.kind == AUTO and kind == "cpu":
        warnings.append("no CUDA GPU visible to PyTorch: device=auto measured the CPU")
    batches, tokens, warmup = sorted(set(params["batches"])), params["tokens"], WARMUP[kind]
    plan = ar.memory_plan(arch, element_bytes, max(batches), tokens)
    free_before = _free_bytes(torch, kind, index)
    if plan.total_bytes > free_before:
        raise BenchmarkUnavailable(f"{arch.name} in {precision.label} at batch {max(batches)} does not fit: "
                                   f"{plan.text()} needed, " + (host_room().what if kind == "cpu"
                                                               else f"{free_before / (1 << 30):.2f} GiB free"))
    limits = measure_limits(torch, kind, device, dtype, arch, max(batches),
                            ar.weights_read_per_step(arch, element_bytes), reporter)
    floor_s = _floor_seconds(arch, params, element_bytes, limits, warmup)
    allowed_s, allowed = time_allowed()
    if floor_s > allowed_s:
        raise BenchmarkUnavailable(
            f"{arch.name} in {precision.label} here would take at least {floor_s / 60:,.1f} minutes even at this "
            f"device's measured limits ({limits['bandwidth_gbps_median']:.0f} GB/s, "
            f"{limits['matmul_tflops_median']:.3g} TFLOP/s), more than the {allowed} a run may spend: choose "
            "model=tiny, fewer batches or tokens")
    reporter.progress(0.08, f"building {arch.name} in {precision.label} on {device}")
    if kind == "cuda":
        torch.cuda.reset_peak_memory_stats(index)
    from hwbench_gui.engine.models.speech import audio
    from hwbench_gui.engine.models.speech.model import build
    from hwbench_gui.engine.models.speech.transcribe import Transcriber

    with torch.no_grad():
        if own:
            from hwbench_gui.engine.models.speech import weights

            model = weights.load(params["model"], dtype, device)
        else:
            model = build(arch, dtype, device, seed=0)
        mel = audio.log_mel(audio.speech_like(max(batches), device=device), arch.mels).to(dtype)
    clock = Clock(torch, kind == "cuda")

    def sync() -> None:
        if kind == "cuda":
            torch.cuda.synchronize(index)

    rows, steps = [], Steps(reporter, 2 * len(batches))
    with torch.no_grad():
        for batch in batches:
            steps.say(f"batch {batch}: preparing the windows (step={params['step']})")
            engine = Transcriber(torch, model, batch, tokens, params["step"])
            engine.mel.copy_(mel[:batch])
            encoder_s = _windows(engine.encode, clock, params["repeats"], warmup, reporter, sync)
            steps.advance(f"batch {batch}: encoder {median(encoder_s) / batch:.3f} s per window")
            decoder_s = _windows(engine.decode, clock, params["repeats"], warmup, reporter, sync)
            row = batch_row(arch, batch, tokens, element_bytes, encoder_s, decoder_s, limits, _peak(torch, kind,
                                                                                                     index, precision))
            rows.append(row)
            reporter.metric("real-time factor", median(row["real_time_factor"]), "x real time", x=batch,
                            x_label="windows at once", series="real-time factor")
            steps.advance(f"batch {batch}: {median(row['decoder_tokens_per_s']):.0f} tokens/s, real-time factor "
                          f"{median(row['real_time_factor']):.1f}")
            del engine
            if kind == "cuda":
                torch.cuda.empty_cache()
        if any(r.get("encoder_bound_reason") or r.get("decoder_bound_reason") for r in rows):
            # a figure above its limit: the limit came out low (a busy machine, a cold device); measured again now
            # that the model's own work has run, the higher of each kept
            steps.say("a figure is above its limit: measuring the limits again")
            limits = best_of(limits, measure_limits(torch, kind, device, dtype, arch, max(batches),
                                                    ar.weights_read_per_step(arch, element_bytes), reporter))
            rows = [batch_row(arch, r["batch"], tokens, element_bytes, r["encoder_window_seconds"],
                              r["decoder_window_seconds"], limits, _peak(torch, kind, index, precision)) for r in rows]
        peak = int(torch.cuda.max_memory_allocated(index)) if kind == "cuda" else None
    from hwbench_gui.engine.models.speech.outcome import outcome

    result = outcome(params, arch, precision.label, limits, rows, warnings, plan, free_before, peak, kind,
                     cuda_label(index) if kind == "cuda" else f"cpu ({torch.get_num_threads()} threads)",
                     torch.cuda.get_device_name(index) if kind == "cuda" else None, own)
    result.details["what_fits"] = {"free_bytes": free_before, "batch": max(batches),
                                   "models": what_fits(free_before, max(batches), tokens)}
    result.details["torch"] = torch.__version__
    return result


def _peak(torch: Any, kind: str, index: int, precision: Any) -> float | None:
    """The datasheet's dense peak of the run's GPU in its precision, or None (a CPU, an unknown GPU)."""
    if kind != "cuda":
        return None
    sheet = datasheets.lookup(torch.cuda.get_device_name(index))
    return sheet.peak_tflops(precision.label) if sheet else None


def _availability() -> str | None:
    return torch_missing_reason()


BENCHMARK = Benchmark(
    id="speech.transcribe",
    title="Speech recognition (Whisper)",
    category="Speech",
    description=("Whisper's real-time factor on 30-second windows (seconds of audio transcribed per second), split "
                 "into the encoder's pass (held against the measured matmul rate and the datasheet peak: MFU) and "
                 "the decoding's tokens/s (held against the measured memory bandwidth), at batch 1 and batched."),
    params=(
        Param("device", "device", "auto", "Where to run: 'auto' (GPU 0 when PyTorch sees one, else the CPU), "
              "'cuda:N' or 'cpu'.", decides_comparability=False),
        Param("model", "str", "large-v3", f"A built-in Whisper with random weights ({', '.join(BUILT_IN)}: "
              "large-v3 1.55 B parameters, 32 encoder and 32 decoder layers; turbo 4 decoder layers; tiny for "
              "tests and CPUs) or a Hugging Face Whisper folder (config.json + *.safetensors)."),
        Param("precision", "choice", "auto", "Weights, caches and activations: bf16, fp16 or fp32; auto = bf16 on "
              "a GPU, fp32 on the CPU.", choices=("auto",) + tuple(p.key for p in PRECISIONS)),
        Param("batches", "int_list", [], "Windows transcribed at once, one figure each; empty = 1,16 on a GPU, "
              "1,2 on the CPU.", minimum=1, maximum=1024, allow_empty=True),
        Param("tokens", "int", 128, f"Tokens transcribed per 30-second window (greedy, never stopping early): "
              f"{TYPICAL_TOKENS}; Whisper allows at most 445 after its 4-token prompt.", minimum=1, maximum=4096),
        Param("step", "choice", "auto", "How each part runs: graph = the encoder, the decoder's start and its "
              "one-token step each captured in a CUDA graph; compile = each block compiled by torch.compile, then "
              "captured likewise; fused = as compile, the decoder's block with coordinate-descent-tuned one-row "
              "matmuls; eager; auto = graph on a GPU, eager on the CPU.", choices=STEP_MODES),
        Param("threads", "int", 0, "CPU threads (the CPU only); 0 = every core.", minimum=0, maximum=4096,
              decides_comparability=False),
        Param("repeats", "int", 4, "Timed windows per figure (4 against 4 lets a comparison reach significance).",
              minimum=2, maximum=1000, decides_comparability=False),
    ),
    run=run,
    version="1",
    needs=frozenset({"torch"}),
    availability=_availability,
    default_timeout_s=DEFAULT_LIMIT_S,
)
