"""llm.infer: a decoder-only language model's prompt and generation speed (llama-bench's pp N / tg N at
context depths), each held against the limit measured in the same run, and a serving sweep of concurrent
sequences (time to first token, time per output token, how many users fit a latency target).

The model is random-initialised in the run's precision on the device (the speed does not depend on the
weights' values) or a user's Hugging Face folder loaded through safetensors. Generation reads every weight
and the KV cache once per step, so its bound is measured copy bandwidth ÷ bytes per step; a prompt is
matmul-bound, so its bound is the measured matmul rate ÷ FLOPs. Both limits are measured at the start of the run
the way the model runs (:mod:`..models.llm.infer_limits`); a figure still above its bound has the limits measured
again, and one above them both is given no share of a bound (the limit was not measured reliably), never a share
above 100 %. This module orchestrates the run: generation is :mod:`..models.llm.generate`, the timed windows
:mod:`..models.llm.infer_timing`, the method paragraph :mod:`..models.llm.methods`.
"""
from __future__ import annotations

from typing import Any

from hwbench_gui.engine import child
from hwbench_gui.engine.inventory import datasheets
from hwbench_gui.engine.measure.room import host_room
from hwbench_gui.engine.measure.stats import median, spread
from hwbench_gui.engine.measure.timing import (
    Steps,
    cpu_count,
    cuda_device,
    cuda_label,
    duration_text,
    figure,
    torch_missing_reason,
)
from hwbench_gui.engine.models.llm import arithmetic as ar
from hwbench_gui.engine.models.llm.architectures import BUILT_IN, Architecture, resolve
from hwbench_gui.engine.models.llm.generate import STEP_MODES, Clock, build_model
from hwbench_gui.engine.models.llm.infer_fits import fit_table, free_all, free_bytes, machine_memory, what_fits
from hwbench_gui.engine.models.llm.infer_limits import Limits, measure_limits
from hwbench_gui.engine.models.llm.infer_timing import (
    FILL_CHUNK,
    WARMUP_WINDOWS,
    depth_rows,
    minimum_seconds,
    percentiles,
    serve_scenario,
)
from hwbench_gui.engine.models.llm.methods import held_against, infer_method, infer_precision, int4_product, \
    summary_lines, weights_line
from hwbench_gui.engine.models.llm.storage import INT4_KERNEL_HELP, INT4_ROUTE_NAMES, PRECISIONS, WEIGHT_KINDS, \
    Storage, int4_misfit, storage
from hwbench_gui.engine.serving.batcher import CHUNK_TOKENS
from hwbench_gui.engine.serving.presets import HWBENCH
from hwbench_gui.engine.spec.benchmark import (
    Benchmark,
    BenchmarkUnavailable,
    Outcome,
    Param,
    ParamError,
    Reporter,
    Series,
)
from hwbench_gui.engine.spec.device import AUTO, CPU, resolve_auto
from hwbench_gui.engine.spec.device import parse as parse_device
from hwbench_gui.engine.spec.precision import BF16, from_key

GPU_DEPTHS, CPU_DEPTHS = [0, 4096, 16384], [0, 1024]
GPU_CONCURRENCY, CPU_CONCURRENCY = [1, 4, 16, 64, 256], [1, 4]
SERVE_CHUNK_TOKENS = CHUNK_TOKENS  # prompts a serving group processes at once: hwbench serve batches alike
#: CPU threads = one per this many matmul weights (at least one, at most every core): a step of a small
#: model is shorter than the synchronisation of many threads, which then spin against each other.
CPU_WEIGHTS_PER_THREAD = 4_000_000
WHY_CPU_SIZED = ("on a CPU, depths {depths} and concurrencies {conc} instead of 0/4096/16384 and 1..256: a CPU "
                 "processes a 16384-position context and 256 sequences in minutes, not the under-a-minute run "
                 "this default is for; ask for more with -p depths=... -p concurrency=...")


def cpu_threads(arch: Architecture, cores: int) -> int:
    """Threads for ``arch`` on a CPU of ``cores``: one per ``CPU_WEIGHTS_PER_THREAD`` matmul weights."""
    return max(1, min(cores, ar.matmul_params(arch) // CPU_WEIGHTS_PER_THREAD))


def _auto(params: dict[str, Any], kind: str, arch: Architecture) -> tuple[dict[str, Any], list[str]]:
    """Values for the parameters left to the run (empty lists, ``auto``, 0), and what was sized down."""
    resolved, notes = {}, []
    if kind == "cpu" and params["threads"] == 0:
        resolved["threads"] = cpu_threads(arch, cpu_count())
        if resolved["threads"] < cpu_count():
            notes.append(f"{resolved['threads']} of {cpu_count()} CPU threads: {arch.name}'s "
                         f"{ar.matmul_params(arch):,} matmul weights make steps shorter than the synchronisation "
                         "of more threads (one thread per "
                         f"{CPU_WEIGHTS_PER_THREAD:,} weights); set -p threads=N to choose")
    if not params["depths"]:
        resolved["depths"] = GPU_DEPTHS if kind == "cuda" else CPU_DEPTHS
    if not params["concurrency"]:
        resolved["concurrency"] = GPU_CONCURRENCY if kind == "cuda" else CPU_CONCURRENCY
    if params["step"] == "auto":
        resolved["step"] = "eager" if kind != "cuda" else "fused" if _has_triton() else "graph"
        if resolved["step"] == "graph":
            notes.append("step=graph, not fused: this PyTorch has no Triton for torch.compile's GPU kernels, so the "
                         "one-token step runs PyTorch's own kernels (slower at batch 1)")
    if kind == "cpu" and ("depths" in resolved or "concurrency" in resolved):
        notes.append(WHY_CPU_SIZED.format(depths=resolved.get("depths", params["depths"]),
                                          conc=resolved.get("concurrency", params["concurrency"])))
    return resolved, notes


def _has_triton() -> bool:
    from torch.utils._triton import has_triton

    return bool(has_triton())


#: The share of the run's time limit that its least possible timed work may take (building the model, measuring
#: the limits and compiling take the rest): a run is refused before it starts when it would need more.
WORK_SHARE = 2 / 3
#: What that share is of the default time limit (1800 s), where the parent set none (a run called in-process).
TIME_LIMIT_S = 1800.0 * WORK_SHARE


def time_allowed() -> tuple[float, str]:
    """Seconds the run's timed work may take at most, and why, in words with units."""
    limit = child.run_time_limit_s()
    if limit is None:
        return TIME_LIMIT_S, f"{duration_text(TIME_LIMIT_S)} (two thirds of the default 30-minute time limit)"
    return limit * WORK_SHARE, (f"{duration_text(limit * WORK_SHARE)} (two thirds of this run's time limit of "
                                f"{duration_text(limit)})")


def _refuse_unless_fits(plan: ar.MemoryPlan, free: int, what: str, room: str = "") -> None:
    if plan.total_bytes > free:
        raise BenchmarkUnavailable(f"{what} does not fit: {plan.text()} needed, "
                                   + (room or f"{free / (1 << 30):.2f} GiB free"))


def run(params: dict[str, Any], reporter: Reporter) -> Outcome:
    import torch

    asked = parse_device(params["device"])
    where = resolve_auto(asked)
    kind = "cuda" if where.kind != CPU else "cpu"
    index = where.index
    device = "cpu"
    if kind == "cuda":
        device = str(cuda_device(index))
        torch.cuda.set_device(index)
    arch = resolve(params["model"])
    if params["model"].strip().lower() not in BUILT_IN:  # its files are checked before any limit is measured
        from hwbench_gui.engine.models.llm import weights

        weights.check_folder(params["model"], arch)
    precision = from_key(params["precision"])
    held = _held(precision, params["weights"], arch, device)
    dtype = getattr(torch, held.dtype)
    in_what = precision.label + (f" with {held.weight_only} weights" if held.weight_only else "")
    resolved, warnings = _auto(params, kind, arch)
    params = {**params, **resolved}
    int4_route, int4_text = int4_product(held, params["int4_kernel"], device, params["step"], warnings)
    params["int4_kernel"] = int4_route or params["int4_kernel"]
    if kind == "cpu" and params["threads"]:
        torch.set_num_threads(params["threads"])
    if asked.kind == AUTO and kind == "cpu":
        warnings.append("no CUDA GPU visible to PyTorch: device=auto measured the CPU")
    pp, tg, batch, span = params["pp"], params["tg"], params["batch"], max(params["pp"], params["tg"])
    depths = []
    for depth in sorted(set(params["depths"])):
        if depth + span > arch.max_positions:
            warnings.append(f"depth {depth} skipped: {depth} + {span} positions exceed {arch.name}'s "
                            f"{arch.max_positions}")
        else:
            depths.append(depth)
    if not depths:
        raise ParamError(f"no depth fits {arch.name}'s {arch.max_positions} positions with pp{pp} / tg{tg}")
    step_mode = params["step"]
    if step_mode == "graph" and kind != "cuda":
        raise ParamError("step=graph needs a CUDA GPU (CUDA graphs); use step=eager, compile or auto on the CPU")

    fill_chunk = FILL_CHUNK[kind]
    positions = max(depths) + span
    # RoPE tables cover the serving sweep's sequences too.
    table_positions = max(positions, params["serve_prompt"] + params["serve_output"] if params["serve"] else 0)
    # The prompt pass attends pp queries to max(depths) + pp keys at once (the mask and SDPA's copy of it).
    plan = ar.memory_plan(arch, held.element_bytes, batch, positions, max(pp, fill_chunk) * batch, held.weights,
                          attention=(pp, positions), rope_positions=min(arch.max_positions, table_positions))
    free_each = free_all(torch, kind, index)
    free_before = free_each[0]
    fits = what_fits(free_each, positions, max(pp, fill_chunk))
    _refuse_unless_fits(plan, free_before, f"{arch.name} in {in_what} at depth {max(depths)}, batch {batch}, pp{pp}",
                        room=host_room().what if kind == "cpu" else "")

    label = BF16.label if held.fp8_blocks else precision.label  # the rate the prompt's 16-bit products run at
    fp8_rate = held.fp8_blocks or held.weight_only == "fp8" and kind == "cuda" and _fp8_prompts(device)
    limits = measure_limits(torch, kind, device, label, reporter, fp8=fp8_rate, arch=arch, tokens=pp * batch,
                             read_bytes=held.weights.read_per_step(arch), rows=batch, pp=pp, depths=tuple(depths))
    floor_s = minimum_seconds(arch, held, params, depths, limits)
    allowed_s, allowed = time_allowed()
    if floor_s > allowed_s:
        raise BenchmarkUnavailable(
            f"{arch.name} in {in_what} here would take at least {floor_s / 60:,.0f} minutes even at this "
            f"device's measured limits ({limits.bandwidth_gbps:.0f} GB/s, {median(limits.matmul_tflops):.2f} "
            f"TFLOP/s), more than the {allowed} a run may spend at them: choose a smaller model (model=tiny), "
            "fewer depths or sequences, or serve=false")
    reporter.progress(0.08, f"building {arch.name} in {in_what} on {device}")
    if kind == "cuda":
        torch.cuda.reset_peak_memory_stats(index)

    def built(done: int, total: int) -> None:
        reporter.progress(0.08, f"building {arch.name} in {in_what}: {done} of {total} blocks")

    with torch.no_grad():
        model = build_model(torch, params["model"], arch, dtype, device, min(arch.max_positions, table_positions),
                            held.fp8_blocks, built, held.weights_key, params["int4_kernel"])
    clock = Clock(torch, kind == "cuda")

    def sync() -> None:
        if kind == "cuda":
            torch.cuda.synchronize(index)

    rows: dict[str, list[dict[str, Any]]] = {"pp": [], "tg": []}
    steps = Steps(reporter, len(depths) * 2 + len(params["concurrency"]))
    with torch.no_grad():
        for depth in depths:
            pp_row, tg_row = depth_rows(torch, model, depth, params, held, device, step_mode, clock, sync,
                                        reporter, steps.say)
            _bound(pp_row, tg_row, limits, arch, params)
            for key, row in (("pp", pp_row), ("tg", tg_row)):
                rows[key].append(row)
                n = pp if key == "pp" else tg
                value = median(row["tokens_per_s"])
                reporter.metric(f"{key}{n}", value, "tokens/s", x=depth, x_label="context depth (tokens)",
                                series=f"{key}{n}")
                steps.advance(f"{key}{n} at depth {depth}: {value:.1f} tokens/s")
            if kind == "cuda":
                torch.cuda.empty_cache()
        peak_bench = int(torch.cuda.max_memory_allocated(index)) if kind == "cuda" else _rss()
        if any(median(r["tokens_per_s"]) > r["bound_tokens_per_s"] for key in rows for r in rows[key]):
            # A figure above its bound says the limit came out low (a busy machine, a short measurement): measure
            # the limits again, now that the model's own work has run, and keep the higher of each.
            steps.say("a figure is above its bound: measuring the limits again")
            limits = limits.best_of(measure_limits(torch, kind, device, label, reporter, fp8=fp8_rate,
                                                    arch=arch, tokens=pp * batch,
                                                    read_bytes=held.weights.read_per_step(arch), rows=batch, pp=pp,
                                                    depths=tuple(depths)))
            for pp_row, tg_row in zip(rows["pp"], rows["tg"]):
                _bound(pp_row, tg_row, limits, arch, params)

        serving, serve_skipped = _serving_sweep(torch, model, held, params, clock, kind, index, device, reporter,
                                                steps) if params["serve"] else ([], {})
    outcome = _outcome(params, arch, precision.label, limits, rows, serving, serve_skipped, warnings, plan,
                       free_before, peak_bench, kind, index, torch, held, int4_text)
    memory, gpus, gpu_bytes, against = machine_memory(free_each if kind == "cuda" else None)
    outcome.details["what_fits"] = {"free_bytes": free_each, "positions": positions, "models": fits,
                                    "table": fit_table(memory, gpus, gpu_bytes), "table_against": against}
    return outcome


def _held(precision: Any, weights: str, arch: Architecture, device: str) -> Storage:
    """How the run stores the model, refused in one line where the precision, the weights or the device cannot:
    FP8 products need compute capability 8.9 and torch._scaled_mm; int4 needs matrices its groups divide."""
    try:
        held = storage(precision, weights)
    except ValueError as exc:
        raise ParamError(str(exc)) from None
    why = int4_misfit(arch) if held.weight_only == "int4" else None
    if why:
        raise ParamError(why)
    if held.fp8_blocks:
        from hwbench_gui.engine.models.llm.fp8 import unavailable_reason as fp8_unavailable

        why = fp8_unavailable(device)
        if why:
            raise BenchmarkUnavailable(f"precision=fp8: {why}")
    return held


def _fp8_prompts(device: str) -> bool:
    from hwbench_gui.engine.models.llm.weight_only import fp8_prompt_products

    return fp8_prompt_products(device)


def _serving_sweep(torch: Any, model: Any, held: Storage, params: dict[str, Any], clock: Clock, kind: str,
                   index: int, device: str, reporter: Reporter, steps: Steps
                   ) -> tuple[list[dict[str, Any]], dict[int, str]]:
    """Each serving concurrency's scenario on the built model, or why it was skipped (its cache and prompt
    activations do not fit beside the weights)."""
    arch, step_mode = model.arch, params["step"]
    serving, serve_skipped = [], {}
    for concurrency in sorted(set(params["concurrency"])):
        chunk = SERVE_CHUNK_TOKENS[kind]
        group = max(1, min(concurrency, chunk // params["serve_prompt"]))
        need = ar.memory_plan(arch, held.element_bytes, concurrency,
                              params["serve_prompt"] + params["serve_output"], group * params["serve_prompt"],
                              held.weights, attention=(params["serve_prompt"], params["serve_prompt"]))
        free = free_bytes(torch, kind, index)
        extra = need.total_bytes - need.weights_bytes  # the weights are already resident
        if extra > free or params["serve_prompt"] + params["serve_output"] > arch.max_positions:
            serve_skipped[concurrency] = (f"needs {extra / (1 << 30):.2f} GiB beside the weights "
                                          f"({need.text()}), {free / (1 << 30):.2f} GiB free")
            steps.advance(f"{concurrency} sequences skipped: do not fit")
            continue
        if kind == "cuda":
            torch.cuda.reset_peak_memory_stats(index)
        point = serve_scenario(torch, model, clock, concurrency, params["serve_prompt"], params["serve_output"],
                               chunk, step_mode, device, params["serve_repeats"], reporter)
        point["plan"] = need.to_json()
        point["peak_allocated_bytes"] = int(torch.cuda.max_memory_allocated(index)) if kind == "cuda" else None
        serving.append(point)
        reporter.metric("serving", median(point["output_tokens_per_s"]), "tokens/s", x=concurrency,
                        x_label="concurrent sequences", series="output tokens/s")
        steps.advance(f"{concurrency} sequences: {median(point['output_tokens_per_s']):.0f} output tokens/s")
        if kind == "cuda":
            torch.cuda.empty_cache()
    return serving, serve_skipped


def _bound(pp_row: dict[str, Any], tg_row: dict[str, Any], limits: Limits, arch: Architecture,
           params: dict[str, Any]) -> None:
    """Each row's bound at ``limits``: the prompt's tokens over the least time of its FLOPs, the generation's tokens
    × bandwidth over the bytes its steps move."""
    pp, tg, batch, depth = params["pp"], params["tg"], params["batch"], pp_row["depth"]
    pp_row["bound_tokens_per_s"] = batch * pp / (batch * limits.prompt_seconds(arch, pp, depth, 1))
    tg_row["bound_tokens_per_s"] = batch * tg * limits.bandwidth_bytes_per_s / tg_row["work"]


def _rss() -> int:
    import psutil

    return int(psutil.Process().memory_info().rss)


def _outcome(params, arch, label, limits, rows, serving, serve_skipped, warnings, plan, free_before, peak, kind,
             index, torch, held: Storage, int4_kernel: str | None = None) -> Outcome:
    pp, tg = params["pp"], params["tg"]
    gpu_name = torch.cuda.get_device_name(index) if kind == "cuda" else None
    sheet = datasheets.lookup(gpu_name) if gpu_name else None
    figures: dict[str, dict[str, Any]] = {}
    series: list[Series] = []
    for key, n, limit_name in (("tg", tg, "bandwidth"), ("pp", pp, "matmul")):
        for row in rows[key]:
            value = median(row["tokens_per_s"])
            row["fraction_of_bound"], reason = held_against(
                value, row["bound_tokens_per_s"], "bandwidth" if key == "tg" else f"{label} matmul rate")
            if reason:
                row["bound_reason"] = reason
                warnings.append(f"{key}{n} @ depth {row['depth']}: {reason}")
            figures[f"{key}{n} @ depth {row['depth']}"] = figure(
                row["tokens_per_s"], "tokens/s", depth=row["depth"], bound_tokens_per_s=row["bound_tokens_per_s"],
                fraction_of_bound=row["fraction_of_bound"], bound=limit_name,
                **({"bound_reason": reason} if reason else {}))
        depths = [float(r["depth"]) for r in rows[key]]
        y_label = "generated tokens/s" if key == "tg" else "prompt tokens/s"
        series.append(Series(f"{key}{n}", depths, [median(r["tokens_per_s"]) for r in rows[key]],
                             "context depth (tokens)", y_label,
                             y_spread=[spread(r["tokens_per_s"]) for r in rows[key]]))
        series.append(Series(f"{key}{n} bound ({'measured copy bandwidth' if key == 'tg' else 'measured matmul rate'})",
                             depths, [r["bound_tokens_per_s"] for r in rows[key]], "context depth (tokens)", y_label))
    tpot_target_s, ttft_target_s = params["tpot_target_ms"] / 1e3, params["ttft_target_s"]
    largest = None
    for point in serving:
        point["ttft"] = percentiles(point["ttft_s"])
        point["tpot"] = percentiles(point["tpot_s"])
        point["meets_target"] = point["tpot"]["p99"] <= tpot_target_s and point["ttft"]["p99"] <= ttft_target_s
        if point["meets_target"]:
            largest = point["concurrency"]
        c = point["concurrency"]
        figures[f"serving {c} sequences: output tokens/s"] = figure(point["output_tokens_per_s"], "tokens/s",
                                                                    concurrency=c)
        figures[f"serving {c} sequences: TTFT"] = figure(point["ttft_s"], "s", higher_is_better=False, concurrency=c,
                                                         p99=point["ttft"]["p99"])
        figures[f"serving {c} sequences: TPOT"] = figure([s * 1e3 for s in point["tpot_s"]], "ms",
                                                         higher_is_better=False, concurrency=c,
                                                         p99=point["tpot"]["p99"] * 1e3)
    if serving:
        series.append(Series("serving: TPOT p99 against output tokens/s",
                             [median(p["output_tokens_per_s"]) for p in serving],
                             [p["tpot"]["p99"] * 1e3 for p in serving], "output tokens/s (all sequences)",
                             "time per output token, p99 (ms)"))
    headline = rows["tg"][0]
    for c, why in serve_skipped.items():
        warnings.append(f"serving {c} sequences skipped: {why}")
    bandwidth_gbps, tflops = limits.bandwidth_gbps, median(limits.matmul_tflops)
    datasheet = None
    matmul_label = BF16.label if held.fp8_blocks else label  # what tflops measured
    if sheet:
        datasheet = {"model": sheet.model, "memory_gb_per_s": sheet.memory_gb_per_s,
                     "peak_tflops": sheet.peak_tflops(matmul_label), "source": sheet.source,
                     "measured_copy_fraction": bandwidth_gbps / sheet.memory_gb_per_s,
                     "measured_matmul_fraction": (tflops / sheet.peak_tflops(matmul_label)
                                                  if sheet.peak_tflops(matmul_label) else None)}
    weights_read = held.weights.read_per_step(arch)
    kv_per_position = ar.kv_bytes_per_token(arch, held.element_bytes)
    precision_details = infer_precision(held, label)[0]
    method = infer_method(params, arch, label, held, limits, cuda_label(index) if kind == "cuda" else "the CPU",
                          kind == "cuda", bool(serving or serve_skipped), WARMUP_WINDOWS, SERVE_CHUNK_TOKENS[kind])
    details = {
        "model": {"name": arch.name, "source": arch.source, "parameters": ar.total_params(arch),
                  "matmul_parameters": ar.matmul_params(arch), "embedding_parameters": ar.embedding_params(arch),
                  "weights_read_per_step_bytes": weights_read,
                  **({"weights_read_per_step": held.weights.parts(arch)} if held.weight_only else {}),
                  "kv_bytes_per_position": kv_per_position,
                  "layers": arch.layers, "hidden": arch.hidden, "heads": arch.heads, "kv_heads": arch.kv_heads},
        "precision": precision_details, "weights": held.weights_key,
        **({"int4_matmul": int4_kernel} if held.weight_only == "int4" else {}),
        "limits": {"copy_gbps": limits.copy_gbps, "copy_bytes": limits.copy_bytes,
                   "matmul_tflops": limits.matmul_tflops, "matmul_n": limits.matmul_n,
                   "matmul_products": limits.matmul_products, "measured_times": limits.measured_times,
                   **({"read_gbps": limits.read_gbps, "read_bytes": limits.read_bytes} if limits.read_gbps else {}),
                   **({"fp8_matmul_tflops": limits.fp8_matmul_tflops, "fp8_scales": "row-wise",
                       "fp8_matmul_tflops_median": median(limits.fp8_matmul_tflops)}
                      if limits.fp8_matmul_tflops else {}),
                   "bandwidth_gbps_median": bandwidth_gbps, "matmul_tflops_median": tflops},
        "datasheet": datasheet if sheet else {"value": None,
                                              "reason": datasheets.unknown_reason(gpu_name) if kind == "cuda"
                                              else "the CPU has no datasheet entry"},
        "pp": rows["pp"], "tg": rows["tg"],
        "serving": [{k: v for k, v in p.items()} for p in serving],
        "serving_skipped": {str(c): why for c, why in serve_skipped.items()},
        "largest_concurrency_within_target": largest,
        "targets": {"tpot_p99_ms": params["tpot_target_ms"], "ttft_p99_s": params["ttft_target_s"]},
        "memory": {"plan": plan.to_json(), "free_before_bytes": free_before,
                   ("peak_allocated_bytes" if kind == "cuda" else "process_rss_bytes"): peak},
        "torch": torch.__version__,
        "summary": summary_lines(rows, pp, tg, limits, BF16.label if held.fp8_blocks else label,
                                 weights_line(held, arch, int4_kernel)),
    }
    return Outcome(
        figure_name=f"tg{tg} @ depth {headline['depth']}",
        unit="tokens/s",
        samples=headline["tokens_per_s"],
        precision=label,
        method=method,
        figures=figures,
        series=series,
        warnings=warnings,
        details=details,
        device=cuda_label(index) if kind == "cuda" else f"cpu ({torch.get_num_threads()} threads)",
        resolved_params={k: params[k] for k in ("depths", "concurrency", "step", "threads")
                         + (("int4_kernel",) if held.weight_only == "int4" else ())},
    )


def _availability() -> str | None:
    return torch_missing_reason()


BENCHMARK = Benchmark(
    id="llm.infer",
    title="Language-model inference",
    category="Language models",
    description=("Prompt (pp) and generation (tg) tokens/s of a decoder-only language model at context depths, "
                 "each as a fraction of this device's measured bandwidth or matmul limit, and a serving sweep: "
                 "time to first token, time per output token and the concurrency a latency target allows."),
    params=(
        Param("device", "device", "auto", "Where to run: 'auto' (GPU 0 when PyTorch sees one, else the CPU), "
              "'cuda:N' or 'cpu'.", decides_comparability=False),
        Param("model", "str", "llama-3.1-8b", f"A built-in architecture with random weights ({', '.join(BUILT_IN)}) "
              "or a Hugging Face folder (config.json + *.safetensors)."),
        Param("precision", "choice", BF16.key, "Weights, KV cache and activations: bf16, fp16 or fp32; fp8 = the "
              "blocks' matmul weights in FP8 e4m3 (a scale per output channel, inputs quantised per token, "
              "torch._scaled_mm), everything else BF16 (compute capability 8.9+).",
              choices=tuple(p.key for p in PRECISIONS)),
        Param("weights", "choice", "bf16", "The blocks' matmul weights: bf16 = not quantized (stored in "
              "`precision`); weight-only quantized, dequantised inside the product with BF16 activations and KV cache "
              "(precision=bf16), as gpt-fast does: fp8 = FP8 e4m3 and int8 = int8, each with a BF16 scale per output "
              "channel; int4 = 4-bit groups of 128 with a BF16 scale and zero each (held as int4_kernel says). A "
              "prompt dequantises each layer to BF16 for cuBLAS (fp8: FP8 tensor cores where the GPU has them).",
              choices=WEIGHT_KINDS, added_later=True),
        Param("int4_kernel", "choice", "auto", INT4_KERNEL_HELP, choices=("auto", *INT4_ROUTE_NAMES), added_later=True),
        Param("pp", "int", 512, "Prompt tokens processed at once (pp N).", minimum=1, maximum=65536),
        Param("tg", "int", 128, "Tokens generated one at a time (tg N).", minimum=1, maximum=65536),
        Param("depths", "int_list", [], "Context depths (positions in the KV cache before pp/tg); empty = "
              "0,4096,16384 on a GPU, 0,1024 on the CPU.", minimum=0, maximum=1 << 20, allow_empty=True),
        Param("batch", "int", 1, "Sequences processed together in pp/tg.", minimum=1, maximum=1024),
        Param("step", "choice", "auto", "The one-token step: graph = PyTorch's kernels captured in a CUDA graph; "
              "compile = torch.compile's fused kernels (in a CUDA graph on a GPU); fused = each block's step compiled "
              "with gpt-fast's Inductor settings (coordinate-descent-tuned one-row matmuls, in a CUDA graph on a "
              "GPU; fastest at batch 1: 0.85 of the bandwidth bound on an H100 where graph gave 0.64); eager; "
              "auto = fused on a GPU (graph where PyTorch has no Triton), eager on the CPU.", choices=STEP_MODES),
        Param("serve", "bool", True, "Run the serving sweep."),
        Param("concurrency", "int_list", [], "Concurrent sequences of the serving sweep; empty = 1,4,16,64,256 on "
              "a GPU (as many as fit), 1,4 on the CPU.", minimum=1, maximum=4096, allow_empty=True),
        Param("serve_prompt", "int", 512, "Prompt tokens per request in the serving sweep.", minimum=1,
              maximum=65536),
        Param("serve_output", "int", 128, "Output tokens per request in the serving sweep.", minimum=2,
              maximum=65536),
        Param("tpot_target_ms", "float", HWBENCH.tpot_p99_s * 1e3, "Latency target: time per output token, p99.",
              minimum=0.001, unit="ms"),
        Param("ttft_target_s", "float", HWBENCH.ttft_p99_s, "Latency target: time to first token, p99.",
              minimum=0.001, unit="s"),
        Param("threads", "int", 0, "CPU threads (the CPU only); 0 = one per 4M matmul weights, up to every core.",
              minimum=0, maximum=4096, decides_comparability=False),
        Param("repeats", "int", 5, "Timed windows per pp/tg figure.", minimum=2, maximum=1000,
              decides_comparability=False),
        Param("serve_repeats", "int", 4, "Timed scenarios per concurrency (after one warm-up); 4 lets a comparison "
              "of output tokens/s reach significance.", minimum=1,
              maximum=100, decides_comparability=False),
    ),
    run=run,
    version="1",
    needs=frozenset({"torch"}),
    availability=_availability,
    default_timeout_s=1800.0,
)
