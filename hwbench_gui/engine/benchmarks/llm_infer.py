"""llm.infer: a decoder-only language model's prompt and generation speed (llama-bench's pp N / tg N at
context depths), each held against the limit measured in the same run, and a serving sweep of concurrent
sequences (time to first token, time per output token, how many users fit a latency target).

The model is random-initialised in the run's precision on the device (the speed does not depend on the
weights' values) or a user's Hugging Face folder loaded through safetensors. Generation reads every weight
and the KV cache once per step, so its bound is measured copy bandwidth ÷ bytes per step; a prompt is
matmul-bound, so its bound is the measured matmul rate ÷ FLOPs. Both limits are measured by gpu.d2d's and
at the start of the run the way the model runs (:mod:`..measure.matmul_rate`: the model's own products, its
kernel, dtype and threads; :mod:`..measure.bandwidth`: a copy, and on a CPU a read of the step's weight bytes as a
decoding step reads them); a figure still above its bound has the limits measured again, and one above them both
is given no share of a bound (the limit was not measured reliably), never a share above 100 %.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

from hwbench_gui.engine import child, nvml
from hwbench_gui.engine.inventory import datasheets
from hwbench_gui.engine.measure import matmul_rate
from hwbench_gui.engine.measure.bandwidth import copy_rates_gbps, read_rates_gbps
from hwbench_gui.engine.measure.room import host_room
from hwbench_gui.engine.measure.stats import median, percentile, spread
from hwbench_gui.engine.measure.timing import (
    GB,
    Steps,
    cpu_count,
    cuda_device,
    cuda_label,
    duration_text,
    figure,
    nvml_handle_for,
    torch_missing_reason,
)
from hwbench_gui.engine.models.llm import arithmetic as ar
from hwbench_gui.engine.models.llm.architectures import BUILT_IN, Architecture, resolve
from hwbench_gui.engine.serving.presets import HWBENCH
from hwbench_gui.engine.spec.benchmark import Benchmark, BenchmarkUnavailable, Outcome, Param, ParamError, \
    Reporter, Series
from hwbench_gui.engine.spec.device import AUTO, CPU, resolve_auto
from hwbench_gui.engine.spec.device import parse as parse_device
from hwbench_gui.engine.spec.precision import BF16, FP8, FP16, FP32, Precision, from_key, from_label

PRECISIONS = (BF16, FP16, FP32, FP8)
GPU_DEPTHS, CPU_DEPTHS = [0, 4096, 16384], [0, 1024]
GPU_CONCURRENCY, CPU_CONCURRENCY = [1, 4, 16, 64, 256], [1, 4]
#: Positions a prompt (the depth fill, a serving group) is processed in at once: bounds the activations.
FILL_CHUNK = {"cuda": 2048, "cpu": 512}
SERVE_CHUNK_TOKENS = {"cuda": 8192, "cpu": 2048}
MATMUL_SIZE = {"cuda": 8192, "cpu": 1024}  # the square product measured beside the model's own
COPY_BYTES = {"cuda": 1 << 30, "cpu": 256 << 20}
LIMIT_REPEATS = 5
#: CPU threads = one per this many matmul weights (at least one, at most every core): a step of a small
#: model is shorter than the synchronisation of many threads, which then spin against each other.
CPU_WEIGHTS_PER_THREAD = 4_000_000
WARMUP_WINDOWS = 2
WHY_CPU_SIZED = ("on a CPU, depths {depths} and concurrencies {conc} instead of 0/4096/16384 and 1..256: a CPU "
                 "processes a 16384-position context and 256 sequences in minutes, not the under-a-minute run "
                 "this default is for; ask for more with -p depths=... -p concurrency=...")


@dataclass
class Limits:
    """The machine's limits measured in this run, with their samples."""

    copy_gbps: list[float]
    matmul_tflops: list[float]
    copy_bytes: int
    matmul_n: int
    #: precision=fp8: the rate of FP8 products (the blocks' matmuls), beside ``matmul_tflops`` in BF16 (the rest).
    fp8_matmul_tflops: list[float] | None = None
    #: The CPU: GB/s of reading ``read_bytes`` of weights as a decoding step reads them (a one-row ``F.linear``).
    read_gbps: list[float] | None = None
    read_bytes: int = 0
    #: Which product gave ``matmul_tflops`` and every product's median (:class:`..measure.matmul_rate.MatmulLimit`).
    matmul_products: dict[str, Any] | None = None
    #: How many times the limits were measured (2: again after a figure came out above its bound).
    measured_times: int = 1

    @property
    def bandwidth_gbps(self) -> float:
        """The faster of the copy and the read: a step can read its bytes no faster than the faster of the two."""
        return max(median(self.copy_gbps), median(self.read_gbps) if self.read_gbps else 0.0)

    @property
    def bandwidth_bytes_per_s(self) -> float:
        return self.bandwidth_gbps * GB

    def best_of(self, other: Limits) -> Limits:
        """Each limit from whichever of the two measurements gave the higher median, measured twice."""
        def better(a: list[float] | None, b: list[float] | None) -> list[float] | None:
            if not a or not b:
                return a or b
            return a if median(a) >= median(b) else b

        matmul_self = median(self.matmul_tflops) >= median(other.matmul_tflops)
        return Limits(better(self.copy_gbps, other.copy_gbps), better(self.matmul_tflops, other.matmul_tflops),
                      self.copy_bytes, self.matmul_n, better(self.fp8_matmul_tflops, other.fp8_matmul_tflops),
                      better(self.read_gbps, other.read_gbps), self.read_bytes or other.read_bytes,
                      self.matmul_products if matmul_self else other.matmul_products,
                      self.measured_times + other.measured_times)

    @property
    def flops_per_s(self) -> float:
        return median(self.matmul_tflops) * 1e12

    def prompt_seconds(self, arch: Architecture, tokens: int, depth: int, logit_tokens: int) -> float:
        """The least time of a prompt's FLOPs at the measured rates: with FP8 blocks, their matmuls at the FP8
        rate and attention and the output projection at the BF16 rate; otherwise all at ``matmul_tflops``."""
        flops = ar.forward_flops(arch, tokens, depth, logit_tokens=logit_tokens)
        if self.fp8_matmul_tflops is None:
            return flops / self.flops_per_s
        blocks = ar.block_matmul_flops(arch, tokens)
        return blocks / (median(self.fp8_matmul_tflops) * 1e12) + (flops - blocks) / self.flops_per_s


class Clock:
    """Timestamps of queued work: CUDA events on a GPU (read after one synchronize), perf_counter on a CPU."""

    def __init__(self, torch: Any, cuda: bool):
        self.torch, self.cuda = torch, cuda

    def mark(self) -> Any:
        if not self.cuda:
            return time.perf_counter()
        event = self.torch.cuda.Event(enable_timing=True)
        event.record()
        return event

    def seconds(self, start: Any, end: Any) -> float:
        if not self.cuda:
            return end - start
        end.synchronize()
        return start.elapsed_time(end) / 1e3


def capture(torch: Any, body: Callable[[], None], before: Callable[[], None] | None = None) -> Any:
    """``body`` (work on the current GPU with fixed shapes and buffers) captured in a CUDA graph after three
    warm-up calls on a side stream, as PyTorch's documentation does it, ``before`` run ahead of each warm-up call
    (outside the graph); ``graph.replay()`` runs it again."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            if before is not None:
                before()
            body()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        body()
    return graph


#: step=fused: gpt-fast's Inductor settings (never max-autotune). Coordinate-descent tuning is what matters at
#: batch 1: with it Inductor turns every one-row matmul into a Triton reduction (torch/_inductor/decomposition.py,
#: "our matrix vector multiplies only achieve peak bandwidth with coordinate descent tuning"), fuses the norm,
#: activation and residual add into it, and tunes its block sizes; the other two name kernels in a profile and
#: reuse compiled graphs across runs.
FUSED_INDUCTOR_OPTIONS = {"coordinate_descent_tuning": True, "triton.unique_kernel_names": True,
                          "fx_graph_cache": True}
STEP_MODES = ("auto", "graph", "compile", "fused", "eager")
RECOMPILE_LIMIT = 64  # Steppers of one run: depths + serving concurrencies, with room


class Stepper:
    """One decoding step of every sequence in ``cache``: logits, greedy next token fed back, position + 1.

    ``mode``: "eager" runs PyTorch's kernels one by one; "graph" captures the step once in a CUDA graph and
    replays it (no launch overhead per kernel); "compile" runs each block's step through ``torch.compile``
    (Inductor's fused kernels, default mode, never max-autotune; one compilation for every block) and, on a GPU,
    captures the whole step in a CUDA graph likewise; "fused" compiles the block's step with
    :data:`FUSED_INDUCTOR_OPTIONS`, residuals and biases added outside the matmuls so that every one-row matmul
    becomes a tuned reduction (``Decoder.decode``'s ``split``), and captures the step in a CUDA graph (what
    mode="reduce-overhead" does, done by hand: one graph, no CUDA-graph trees)."""

    def __init__(self, torch: Any, model: Any, cache: Any, batch: int, mode: str):
        self.torch = torch
        device = cache.k.device
        self.tokens = torch.randint(0, model.arch.vocab, (batch, 1), device=device)
        self.position = torch.zeros((), dtype=torch.long, device=device)
        self.graph = None

        def step(tokens: Any, position: Any, decode: Callable[..., Any], split: bool) -> None:
            logits = decode(tokens, position, cache, split=split)
            tokens.copy_(logits.argmax(dim=-1, keepdim=True))
            position.add_(1)

        if mode in ("compile", "fused"):
            # Every Stepper (each depth, each serving concurrency) compiles the same code for new shapes: past
            # Dynamo's default of 8 recompilations it would fall back to eager kernels and the figure would not say.
            torch._dynamo.config.recompile_limit = max(torch._dynamo.config.recompile_limit, RECOMPILE_LIMIT)
            # One block's step compiled once: the blocks share code and shapes, so the compilation (and in
            # step=fused the tuning of every kernel) is done for one block, not repeated for all of them.
            layer = torch.compile(type(model.blocks[0]).decode, fullgraph=True, dynamic=False,
                                  options=FUSED_INDUCTOR_OPTIONS if mode == "fused" else None)

            def decode(tokens: Any, position: Any, cache: Any, split: bool) -> Any:
                return model.decode(tokens, position, cache, split=split, layer=layer)

            def body() -> None:
                step(self.tokens, self.position, decode, mode == "fused")
        else:
            def body() -> None:
                step(self.tokens, self.position, model.decode, False)

        self.body = body

        last = min(cache.positions, model.rope_positions) - 1

        def at_last() -> None:
            # Warm-up steps write the last position both the cache and the position tables hold: no position a
            # run reads is overwritten, and the last is read only after a step at it has written it again.
            self.position.fill_(last)

        if mode in ("compile", "fused") and device.type != "cuda":
            at_last()
            body()  # compiles now, not inside the first timed window
        if device.type == "cuda" and mode in ("graph", "compile", "fused"):
            self.graph = capture(torch, body, before=at_last)

    def at(self, position: int) -> None:
        self.position.fill_(position)

    def step(self) -> None:
        if self.graph is not None:
            self.graph.replay()
        else:
            self.body()


@dataclass(frozen=True)
class Storage:
    """How a precision stores the model: ``dtype`` (torch's name) of every tensor but FP8 block weights,
    ``weights`` their bytes, ``element_bytes`` of a KV-cache entry and an activation, ``fp8_blocks``."""

    dtype: str
    weights: ar.WeightBytes
    element_bytes: int
    fp8_blocks: bool = False


def storage(precision: Precision) -> Storage:
    """FP8 keeps everything but the blocks' matmul weights in BF16 (:mod:`..models.llm.fp8`)."""
    if precision is FP8:
        return Storage("bfloat16", ar.FP8_BLOCKS, 2, fp8_blocks=True)
    size = 4 if precision is FP32 else 2
    return Storage(precision.tensor_dtype, ar.WeightBytes.uniform(size), size)


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


def _free_bytes(torch: Any, kind: str, index: int) -> int:
    """Bytes the run may allocate on its device: CUDA's free memory, or the RAM available (less where an
    address-space limit leaves less: :func:`..measure.room.host_room`)."""
    if kind == "cuda":
        return int(torch.cuda.mem_get_info(index)[0])
    return host_room().bytes


def what_fits(free_bytes: list[int], positions: int, chunk_tokens: int) -> list[dict[str, Any]]:
    """Every built-in model in each precision at batch 1 with ``positions`` cached: its memory plan, whether
    it fits the first device's free memory, and whether it would fit all of them together (split by layers;
    llm.infer itself runs on one device)."""
    rows = []
    for name, arch in BUILT_IN.items():
        for precision in PRECISIONS:
            held = storage(precision)
            plan = ar.memory_plan(arch, held.element_bytes, 1, min(positions, arch.max_positions), chunk_tokens,
                                  held.weights)
            rows.append({"model": name, "precision": precision.label, "positions": min(positions, arch.max_positions),
                         "total_bytes": plan.total_bytes, "fits_one": plan.total_bytes <= free_bytes[0],
                         "fits_all": plan.total_bytes <= sum(free_bytes)})
    return rows


def _free_all(torch: Any, kind: str, index: int) -> list[int]:
    """Free bytes of the run's device first (CUDA's own count), then of every other GPU as NVML reports it
    (asking CUDA would open a context, and take its memory, on each of them); a GPU NVML cannot read is left out."""
    if kind != "cuda":
        return [_free_bytes(torch, kind, index)]
    free = [_free_bytes(torch, kind, index)]
    for other in range(torch.cuda.device_count()):
        if other != index:
            handle = nvml_handle_for(other)
            info = nvml.query("nvmlDeviceGetMemoryInfo", handle) if handle is not None else None
            if info is not None:
                free.append(int(info.free))
    return free


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


def minimum_seconds(arch: Architecture, held: Storage | int, params: dict[str, Any], depths: list[int],
                    limits: Limits) -> float:
    """The least time the run's timed and warm-up work can take at the measured limits: every generated token
    its bytes ÷ bandwidth, every prompt its FLOPs ÷ matmul rate (the depth fills and serving prompts too).
    ``held``: the run's :class:`Storage`, or bytes of every element."""
    if isinstance(held, int):
        held = Storage("", ar.WeightBytes.uniform(held), held)
    weights, kv = held.weights, held.element_bytes
    bandwidth = limits.bandwidth_bytes_per_s
    pp, tg, batch = params["pp"], params["tg"], params["batch"]
    windows = params["repeats"] + WARMUP_WINDOWS
    total = 0.0
    for depth in depths:
        fill = limits.prompt_seconds(arch, depth, 0, logit_tokens=0) * batch
        prompt = limits.prompt_seconds(arch, pp, depth, logit_tokens=1) * batch
        generate = sum(ar.bytes_per_step(arch, weights, kv, depth + i, batch)
                       for i in range(tg)) / bandwidth
        total += fill + windows * (prompt + generate)
    if params["serve"]:
        prompt_len, output = params["serve_prompt"], params["serve_output"]
        for concurrency in params["concurrency"]:
            scenario = (concurrency * limits.prompt_seconds(arch, prompt_len, 0, logit_tokens=1)
                        + sum(ar.bytes_per_step(arch, weights, kv, prompt_len + i, concurrency)
                              for i in range(output)) / bandwidth)
            total += (params["serve_repeats"] + 1) * scenario
    return total


def _refuse_unless_fits(plan: ar.MemoryPlan, free: int, what: str, room: str = "") -> None:
    if plan.total_bytes > free:
        raise BenchmarkUnavailable(f"{what} does not fit: {plan.text()} needed, "
                                   + (room or f"{free / (1 << 30):.2f} GiB free"))


def limit_products(arch: Architecture, tokens: int, square: int, pp: int = 0,
                   depths: tuple[int, ...] = ()) -> list[matmul_rate.Product]:
    """The products a prompt pass of ``tokens`` positions (all sequences) multiplies in every block (q/k/v, the
    attention output, the MLP's up and down), a square one of ``square``, and the prompt's attention of ``pp``
    queries at each of ``depths``: the matmul limit is the fastest (no part of the pass runs faster)."""
    up = (2 if arch.mlp == "swiglu" else 1) * arch.intermediate
    shapes = ((arch.hidden, arch.q_size + 2 * arch.kv_size), (arch.q_size, arch.hidden), (arch.hidden, up),
              (arch.intermediate, arch.hidden))
    attention = [matmul_rate.Product(pp, arch.head_dim, arch.heads, matmul_rate.ATTENTION, arch.kv_heads, depth)
                 for depth in depths] if pp else []
    return [matmul_rate.Product(tokens, k, n) for k, n in shapes] + [matmul_rate.Product(square, square, square)] \
        + attention


def _measure_limits(torch: Any, kind: str, device: str, label: str, reporter: Reporter, fp8: bool = False,
                    arch: Architecture | None = None, tokens: int = 0, read_bytes: int = 0, rows: int = 1,
                    pp: int = 0, depths: tuple[int, ...] = ()) -> Limits:
    """The copy bandwidth (and on a CPU the read of ``read_bytes`` of weights by ``rows`` sequences), and the
    fastest of ``arch``'s products at ``tokens`` positions and of a square one, in ``label``, as the model runs."""
    reporter.progress(0.02, "measuring this device's copy bandwidth")
    n = COPY_BYTES[kind]
    src = torch.randint(0, 256, (n,), dtype=torch.uint8, device=device)
    dst = torch.empty_like(src)
    copy = copy_rates_gbps(src, dst, n, LIMIT_REPEATS, cuda=kind == "cuda")
    src = dst = None
    if kind == "cuda":
        torch.cuda.empty_cache()
    dtype = getattr(torch, from_label(label).tensor_dtype)
    read = None
    if kind == "cpu" and read_bytes:
        reporter.progress(0.03, f"measuring the read of {read_bytes / 2**20:.1f} MiB of weights as a decoding step "
                                "reads them")
        read_bytes = min(COPY_BYTES[kind], read_bytes)
        read = read_rates_gbps(read_bytes, dtype, device, LIMIT_REPEATS, rows=rows)
    reporter.progress(0.05, f"measuring the {label} matmul rate at the model's shapes")
    size = MATMUL_SIZE[kind]
    products = limit_products(arch, tokens, size, pp, depths) if arch is not None and tokens else \
        [matmul_rate.Product(size, size, size)]
    matmul = matmul_rate.limit_tflops(products, dtype, device, LIMIT_REPEATS, burst=kind == "cuda")
    fp8_rates = None
    if fp8:
        # gpu.matmul's FP8 product with row-wise scales, as the model's FP8 layers multiply (a GPU only)
        from hwbench_gui.engine.benchmarks.gpu_matmul import product_rates_tflops

        reporter.progress(0.06, "measuring the FP8 matmul rate (as gpu.matmul)")
        fp8_rates = product_rates_tflops(FP8.label, size, device, LIMIT_REPEATS,
                                         burst=kind == "cuda", fp8_rowwise=True)
    return Limits(copy, matmul.tflops, n, size, fp8_rates, read, read_bytes if read else 0, matmul.to_json())


def _build_model(torch: Any, model_name: str, arch: Architecture, dtype: Any, device: str, positions: int,
                 fp8_blocks: bool, on_block: Callable[[int, int], None] | None = None) -> Any:
    from hwbench_gui.engine.models.llm import model as llm

    if model_name.strip().lower() in BUILT_IN:
        return llm.build(arch, dtype, device, rope_positions=positions, seed=0, fp8_blocks=fp8_blocks,
                         on_block=on_block)
    from hwbench_gui.engine.models.llm import weights

    return weights.load(model_name, dtype, device, rope_positions=positions, fp8_blocks=fp8_blocks)


def _fill(torch: Any, model: Any, cache: Any, depth: int, chunk: int, batch: int) -> None:
    """The KV cache's first ``depth`` positions filled by processing random tokens (as ``llama-bench -d``)."""
    generator = torch.Generator(device=cache.k.device).manual_seed(depth)
    for start in range(0, depth, chunk):
        length = min(chunk, depth - start)
        tokens = torch.randint(0, model.arch.vocab, (batch, length), device=cache.k.device, generator=generator)
        model(tokens, cache=cache, start=start, last_only=True)


def _windows(fn: Callable[[], None], clock: Clock, repeats: int, reporter: Reporter, sync: Callable[[], None]
             ) -> list[float]:
    """Seconds of ``fn`` per timed window after warm-up; each window is a telemetry phase."""
    reporter.phase("warmup", "start")
    for _ in range(WARMUP_WINDOWS):
        fn()
    sync()
    reporter.phase("warmup", "end")
    seconds = []
    for repeat in range(repeats):
        reporter.phase("timed", "start", repeat=repeat)
        start = clock.mark()
        fn()
        end = clock.mark()
        seconds.append(clock.seconds(start, end))
        reporter.phase("timed", "end", repeat=repeat)
    return seconds


def _depth(torch: Any, model: Any, depth: int, params: dict[str, Any], dtype: Any, held: Storage, device: str,
           step_mode: str, clock: Clock, sync: Callable[[], None], reporter: Reporter, say: Callable[[str], None]
           ) -> tuple[dict[str, Any], dict[str, Any]]:
    """pp and tg at one depth: the cache filled, then the prompt's and the generation's timed windows. Each
    row's ``work`` is the FLOPs (pp) or bytes (tg) of one window, what its bound divides."""
    from hwbench_gui.engine.models.llm.model import KVCache

    arch, pp, tg, batch = model.arch, params["pp"], params["tg"], params["batch"]
    cache = KVCache.allocate(arch, batch, depth + max(pp, tg), dtype, device)
    say(f"depth {depth}: filling the cache and preparing the prompt pass")
    _fill(torch, model, cache, depth, FILL_CHUNK["cpu" if device == "cpu" else "cuda"], batch)
    prompt = torch.randint(0, arch.vocab, (batch, pp), device=device)
    # step=compile and fused: the prompt pass too runs each block compiled (once for every block): its norms,
    # rotations and residual adds fused around cuBLAS's matmuls instead of a dozen kernels each
    layer = torch.compile(type(model.blocks[0]).prefill, fullgraph=True, dynamic=False) \
        if step_mode in ("compile", "fused") else None

    def process() -> None:
        model(prompt, cache=cache, start=depth, last_only=True, layer=layer)

    if device != "cpu" and step_mode in ("graph", "compile", "fused"):
        # one graph of the whole pass: launching its ~30 kernels per layer from Python takes about as long as
        # a 512-token prompt's matmuls on a fast GPU
        process = capture(torch, process).replay
    seconds = _windows(process, clock, params["repeats"], reporter, sync)
    pp_row = {"depth": depth, "tokens_per_s": [batch * pp / s for s in seconds], "window_seconds": seconds,
              "work": ar.forward_flops(arch, pp, depth, logit_tokens=1) * batch, "work_unit": "FLOP"}
    say(f"depth {depth}: {'compiling' if step_mode in ('compile', 'fused') else 'preparing'} the one-token step "
        f"(step={step_mode})")
    built = time.perf_counter()
    stepper = Stepper(torch, model, cache, batch, step_mode)
    built = time.perf_counter() - built

    def generate() -> None:
        stepper.at(depth)
        for _ in range(tg):
            stepper.step()

    seconds = _windows(generate, clock, params["repeats"], reporter, sync)
    step_bytes = sum(ar.bytes_per_step(arch, held.weights, held.element_bytes, depth + i, batch)
                     for i in range(tg))
    tg_row = {"depth": depth, "tokens_per_s": [batch * tg / s for s in seconds], "window_seconds": seconds,
              "work": step_bytes, "work_unit": "byte", "step_build_s": built}
    return pp_row, tg_row


def _serve(torch: Any, model: Any, clock: Clock, concurrency: int, prompt: int, output: int, chunk_tokens: int,
           step_mode: str, dtype: Any, device: str, repeats: int, reporter: Reporter) -> dict[str, Any]:
    """``concurrency`` requests arriving together: prompts processed a group at a time, every sequence's first
    token taken from its group's logits, then all sequences decoded in lockstep. Per request: time to first
    token from the common arrival, time per output token after its first."""
    from hwbench_gui.engine.models.llm.model import KVCache

    arch = model.arch
    cache = KVCache.allocate(arch, concurrency, prompt + output, dtype, device)
    stepper = Stepper(torch, model, cache, concurrency, step_mode)
    group = max(1, min(concurrency, chunk_tokens // prompt))
    generator = torch.Generator(device=device).manual_seed(concurrency)
    prompts = torch.randint(0, arch.vocab, (concurrency, prompt), device=device, generator=generator)
    ttft, tpot, throughput = [], [], []
    for repeat in range(repeats + 1):  # the first scenario is the warm-up
        timed = repeat > 0
        reporter.phase("timed" if timed else "warmup", "start", repeat=repeat - 1 if timed else None)
        arrival = clock.mark()
        firsts = []
        for first in range(0, concurrency, group):
            count = min(group, concurrency - first)
            logits = model(prompts[first:first + count], cache=cache.narrow(first, count), start=0, last_only=True)
            stepper.tokens[first:first + count] = logits[:, 0].argmax(dim=-1, keepdim=True)
            firsts.append((count, clock.mark()))
        stepper.at(prompt)
        for _ in range(output - 1):
            stepper.step()
        end = clock.mark()
        total_s = clock.seconds(arrival, end)
        reporter.phase("timed" if timed else "warmup", "end", repeat=repeat - 1 if timed else None)
        if not timed:
            continue
        for count, mark in firsts:
            first_s = clock.seconds(arrival, mark)
            ttft += [first_s] * count
            tpot += [(total_s - first_s) / max(1, output - 1)] * count
        throughput.append(concurrency * output / total_s)
    del stepper, cache
    return {"concurrency": concurrency, "output_tokens_per_s": throughput, "ttft_s": ttft, "tpot_s": tpot,
            "prefill_group_sequences": group}


def _percentiles(values: list[float]) -> dict[str, float]:
    return {"p50": percentile(values, 50.0), "p99": percentile(values, 99.0)}


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
    held = storage(precision)
    dtype = getattr(torch, held.dtype)
    resolved, warnings = _auto(params, kind, arch)
    params = {**params, **resolved}
    if kind == "cpu" and params["threads"]:
        torch.set_num_threads(params["threads"])
    if asked.kind == AUTO and kind == "cpu":
        warnings.append("no CUDA GPU visible to PyTorch: device=auto measured the CPU")
    pp, tg, batch = params["pp"], params["tg"], params["batch"]
    span = max(pp, tg)
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
    if held.fp8_blocks:
        from hwbench_gui.engine.models.llm.fp8 import unavailable_reason as fp8_unavailable

        why_not = fp8_unavailable(device)
        if why_not:
            raise BenchmarkUnavailable(f"precision=fp8: {why_not}")
    # The prompt pass attends pp queries to max(depths) + pp keys at once (the mask and SDPA's copy of it).
    plan = ar.memory_plan(arch, held.element_bytes, batch, positions, max(pp, fill_chunk) * batch, held.weights,
                          attention=(pp, positions), rope_positions=min(arch.max_positions, table_positions))
    free_all = _free_all(torch, kind, index)
    free_before = free_all[0]
    fits = what_fits(free_all, positions, max(pp, fill_chunk))
    _refuse_unless_fits(plan, free_before, f"{arch.name} in {precision.label} at depth {max(depths)}, batch {batch}, "
                                           f"pp{pp}", room=host_room().what if kind == "cpu" else "")

    label = BF16.label if held.fp8_blocks else precision.label
    limits = _measure_limits(torch, kind, device, label, reporter, fp8=held.fp8_blocks, arch=arch, tokens=pp * batch,
                             read_bytes=held.weights.read_per_step(arch), rows=batch, pp=pp, depths=tuple(depths))
    floor_s = minimum_seconds(arch, held, params, depths, limits)
    allowed_s, allowed = time_allowed()
    if floor_s > allowed_s:
        raise BenchmarkUnavailable(
            f"{arch.name} in {precision.label} here would take at least {floor_s / 60:,.0f} minutes even at this "
            f"device's measured limits ({limits.bandwidth_gbps:.0f} GB/s, {median(limits.matmul_tflops):.2f} "
            f"TFLOP/s), more than the {allowed} a run may spend at them: choose a smaller model (model=tiny), "
            "fewer depths or sequences, or serve=false")
    reporter.progress(0.08, f"building {arch.name} in {precision.label} on {device}")
    if kind == "cuda":
        torch.cuda.reset_peak_memory_stats(index)

    def built(done: int, total: int) -> None:
        reporter.progress(0.08, f"building {arch.name} in {precision.label}: {done} of {total} blocks")

    with torch.no_grad():
        model = _build_model(torch, params["model"], arch, dtype, device, min(arch.max_positions, table_positions),
                             held.fp8_blocks, built)
    clock = Clock(torch, kind == "cuda")

    def sync() -> None:
        if kind == "cuda":
            torch.cuda.synchronize(index)

    rows: dict[str, list[dict[str, Any]]] = {"pp": [], "tg": []}
    steps = Steps(reporter, len(depths) * 2 + len(params["concurrency"]))
    with torch.no_grad():
        for depth in depths:
            pp_row, tg_row = _depth(torch, model, depth, params, dtype, held, device, step_mode, clock, sync, reporter,
                                    steps.say)
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
            limits = limits.best_of(_measure_limits(torch, kind, device, label, reporter, fp8=held.fp8_blocks,
                                                    arch=arch, tokens=pp * batch,
                                                    read_bytes=held.weights.read_per_step(arch), rows=batch, pp=pp,
                                                    depths=tuple(depths)))
            for pp_row, tg_row in zip(rows["pp"], rows["tg"]):
                _bound(pp_row, tg_row, limits, arch, params)

        serving, serve_skipped = [], {}
        for concurrency in sorted(set(params["concurrency"])) if params["serve"] else []:
            chunk = SERVE_CHUNK_TOKENS[kind]
            group = max(1, min(concurrency, chunk // params["serve_prompt"]))
            need = ar.memory_plan(arch, held.element_bytes, concurrency,
                                  params["serve_prompt"] + params["serve_output"], group * params["serve_prompt"],
                                  held.weights, attention=(params["serve_prompt"], params["serve_prompt"]))
            free = _free_bytes(torch, kind, index)
            extra = need.total_bytes - need.weights_bytes  # the weights are already resident
            if extra > free or params["serve_prompt"] + params["serve_output"] > arch.max_positions:
                serve_skipped[concurrency] = (f"needs {extra / (1 << 30):.2f} GiB beside the weights "
                                              f"({need.text()}), {free / (1 << 30):.2f} GiB free")
                steps.advance(f"{concurrency} sequences skipped: do not fit")
                continue
            if kind == "cuda":
                torch.cuda.reset_peak_memory_stats(index)
            point = _serve(torch, model, clock, concurrency, params["serve_prompt"], params["serve_output"], chunk,
                           step_mode, dtype, device, params["serve_repeats"], reporter)
            point["plan"] = need.to_json()
            point["peak_allocated_bytes"] = int(torch.cuda.max_memory_allocated(index)) if kind == "cuda" else None
            serving.append(point)
            reporter.metric("serving", median(point["output_tokens_per_s"]), "tokens/s", x=concurrency,
                            x_label="concurrent sequences", series="output tokens/s")
            steps.advance(f"{concurrency} sequences: {median(point['output_tokens_per_s']):.0f} output tokens/s")
            if kind == "cuda":
                torch.cuda.empty_cache()
    outcome = _outcome(params, arch, precision.label, limits, rows, serving, serve_skipped, warnings, plan,
                       free_before, peak_bench, kind, index, torch, held)
    outcome.details["what_fits"] = {"free_bytes": free_all, "positions": positions, "models": fits}
    return outcome


def _bound(pp_row: dict[str, Any], tg_row: dict[str, Any], limits: Limits, arch: Architecture,
           params: dict[str, Any]) -> None:
    """Each row's bound at ``limits``: the prompt's tokens over the least time of its FLOPs, the generation's tokens
    × bandwidth over the bytes its steps move."""
    pp, tg, batch, depth = params["pp"], params["tg"], params["batch"], pp_row["depth"]
    pp_row["bound_tokens_per_s"] = batch * pp / (batch * limits.prompt_seconds(arch, pp, depth, 1))
    tg_row["bound_tokens_per_s"] = batch * tg * limits.bandwidth_bytes_per_s / tg_row["work"]


def held_against(value: float, bound: float, limit: str) -> tuple[float | None, str | None]:
    """``value``'s share of ``bound`` (what ``limit``, in words, allows), or (None, why) when the figure is above
    it: a figure above its bound means the limit was not measured reliably, and no share above 100 % is shown."""
    if bound > 0 and value <= bound:
        return value / bound, None
    return None, (f"limit not measured reliably here: {value:,.1f} tokens/s is above the {bound:,.1f} tokens/s that "
                  f"the {limit} measured in this run allows (measured again after the figures, the higher kept)")


def summary_lines(rows: dict[str, list[dict[str, Any]]], pp: int, tg: int, limits: Limits, matmul_label: str
                  ) -> list[str]:
    """What the CLI prints under the headline: each figure with its share of its bound (or why it has none), then
    the limits measured."""
    out = []
    for key, n in (("pp", pp), ("tg", tg)):
        for row in rows[key]:
            value, fraction = median(row["tokens_per_s"]), row["fraction_of_bound"]
            held = (f"{fraction:.0%} of its {row['bound_tokens_per_s']:,.0f} tokens/s bound" if fraction is not None
                    else row.get("bound_reason", "no share of its bound"))
            out.append(f"{key}{n} @ depth {row['depth']}: {value:,.0f} tokens/s, {held}")
    read = f", read {median(limits.read_gbps):.1f} GB/s" if limits.read_gbps else ""
    fastest = f" ({limits.matmul_products['fastest']})" if limits.matmul_products else ""
    out.append(f"limits measured in this run: bandwidth {limits.bandwidth_gbps:.1f} GB/s (copy "
               f"{median(limits.copy_gbps):.1f} GB/s{read}), {matmul_label} matmul "
               f"{median(limits.matmul_tflops):.4g} TFLOP/s{fastest}")
    return out


def _rss() -> int:
    import psutil

    return int(psutil.Process().memory_info().rss)


def _outcome(params, arch, label, limits, rows, serving, serve_skipped, warnings, plan, free_before, peak, kind,
             index, torch, held: Storage) -> Outcome:
    pp, tg, batch = params["pp"], params["tg"], params["batch"]
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
        point["ttft"] = _percentiles(point["ttft_s"])
        point["tpot"] = _percentiles(point["tpot_s"])
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
    if held.fp8_blocks:
        from hwbench_gui.engine.models.llm.fp8 import PRECISION_DETAILS

        precision_details = dict(PRECISION_DETAILS)
        in_precision = ("every block's matmul weights in FP8 e4m3 with an FP32 scale per output channel, their "
                        "inputs quantised to FP8 per token, products by torch._scaled_mm with BF16 output; "
                        "embeddings, norms, biases, the KV cache, attention, the output projection and the residual "
                        "stream in BF16 (softmax of generation in FP32)")
    else:
        precision_details = {"weights": label, "kv_cache": label, "activations": label,
                             "softmax_generation": FP32.label}
        in_precision = f"every tensor, the KV cache and the attention in {label} (softmax of generation in FP32)"
    method = (
        f"{arch.name} ({ar.total_params(arch):,} parameters, {arch.layers} layers, {arch.heads} heads / "
        f"{arch.kv_heads} KV heads, {arch.norm}, {arch.mlp}, {arch.positional} positions) with "
        + ("random weights made in " if params["model"].strip().lower() in BUILT_IN else "weights loaded from ")
        + f"{'FP8 and BF16' if held.fp8_blocks else label} on {cuda_label(index) if kind == 'cuda' else 'the CPU'}; "
        f"{in_precision}. "
        f"pp{pp}: {pp} random tokens of each of {batch} sequences processed in one forward pass after `depth` "
        "cached positions (logits of the last position only); tg"
        f"{tg}: {tg} tokens generated one at a time (greedy, each fed back) starting after `depth` positions. "
        "Before each depth the KV cache is filled by processing random tokens (as llama-bench -d), untimed. "
        f"{WARMUP_WINDOWS} warm-up windows, then {params['repeats']} timed windows per figure (each a telemetry "
        "phase), timed with " + ("CUDA events" if kind == "cuda" else "perf_counter")
        + "; tokens/s = tokens of the window / its time; the figure is the median with p5-p95 over windows. "
        + {"graph": "The one-token step (eager PyTorch kernels) is captured once in a CUDA graph and replayed; ",
           "compile": "Each block's one-token step is compiled by torch.compile (default mode: Inductor's fused "
                      "kernels around cuBLAS's matmuls; one compilation serves every block)"
                      + (" and the whole step captured once in a CUDA graph; " if kind == "cuda" else "; "),
           "fused": "Each block's one-token step is compiled by torch.compile with gpt-fast's Inductor settings "
                    "(coordinate-descent tuning: every one-row matmul a tuned Triton reduction with the norm, "
                    "activation and residual add fused in; never max-autotune; one compilation serves every block)"
                    + (" and the whole step captured once in a CUDA graph; " if kind == "cuda" else "; "),
           "eager": "The one-token step runs eagerly; "}[params["step"]]
        + ("the prompt's blocks are compiled likewise (default mode, cuBLAS's matmuls); "
           if params["step"] in ("compile", "fused") else "")
        + ("the prompt's forward pass is replayed from a CUDA graph; " if kind == "cuda"
           and params["step"] in ("graph", "compile", "fused") else "")
        + "prompts use SDPA attention with the cache, generation batched matmuls over the static cache with "
        "later positions masked (the cache of a depth holds depth + max(pp, tg) positions rounded up to blocks of "
        f"{ar.ATTENTION_BLOCK}, read in blocks of that many; the bound counts only the positions attended, so "
        "reading the masked rest is this method's own cost). "
        f"Bounds, measured at the start of this run"
        + (" and again after the figures (one came out above its bound; the higher of each kept)"
           if limits.measured_times > 1 else "")
        + f": bandwidth {bandwidth_gbps:.0f} GB/s, the faster of a copy of "
        f"{limits.copy_bytes >> 20} MiB (bytes read + written, median of {LIMIT_REPEATS}: "
        f"{median(limits.copy_gbps):.0f} GB/s)"
        + (f" and a read of {limits.read_bytes / 2**20:.2f} MiB of {label} weights as a decoding step reads them (a "
           f"{batch}-row F.linear on the run's threads, median of {LIMIT_REPEATS}: "
           f"{median(limits.read_gbps):.0f} GB/s)" if limits.read_gbps else "")
        + f"; {BF16.label if held.fp8_blocks else label} matmul {tflops:.4g} TFLOP/s"
        + (f", FP8 matmul {median(limits.fp8_matmul_tflops):.1f} TFLOP/s (row-wise scales, as the model's layers)"
           if limits.fp8_matmul_tflops else "")
        + " (the fastest of the model's block products at the prompt's "
        f"{pp * batch} rows, a square {limits.matmul_n}³ one and the prompt's attention at each depth, each as the "
        f"model runs it: F.linear and SDPA with its mask, in its dtype on the run's threads, median of {LIMIT_REPEATS}"
        + (f"; fastest: {limits.matmul_products['fastest']}" if limits.matmul_products else "") + "). "
        f"tg bound = tokens × bandwidth / bytes, bytes = Σ over the window's steps of weights read per step "
        f"({weights_read / 1e9:.3f} GB: every block, the final norm and the output projection) + per sequence "
        f"{kv_per_position:,.0f} KV bytes per position × "
        "(positions attended + the one written). pp bound = tokens × matmul rate / FLOPs, FLOPs = 2 × block "
        "matmul weights × tokens + causal attention (4 × layers × heads × head_dim × keys attended) + 2 × output "
        "projection for the last position."
    )
    if held.fp8_blocks:
        method += (
            " FP8: weights read per step = 1 byte per block matmul weight + 4 bytes (its FP32 scale) per output "
            "channel + 2 bytes per other weight; pp bound = tokens / (block matmul FLOPs ÷ the FP8 rate + the rest's "
            "FLOPs ÷ the BF16 rate).")
    if serving or serve_skipped:
        method += (
            f" Serving: for each concurrency c, c requests of {params['serve_prompt']} random prompt tokens and "
            f"{params['serve_output']} output tokens arrive together at t = 0 (a closed batch, no later arrivals); "
            f"prompts are processed a group of up to {SERVE_CHUNK_TOKENS[kind]} positions at a time, each request's "
            "first token comes from its group's logits, then all c sequences are decoded in lockstep. TTFT = its "
            "group's end − arrival; TPOT = (end of the last step − its first token) / (output − 1); output "
            "tokens/s = c × output / scenario time. One warm-up scenario, then "
            f"{params['serve_repeats']} timed; p50/p99 over every request of the timed ones. Target: TPOT p99 ≤ "
            f"{params['tpot_target_ms']:g} ms and TTFT p99 ≤ {params['ttft_target_s']:g} s."
        )
    details = {
        "model": {"name": arch.name, "source": arch.source, "parameters": ar.total_params(arch),
                  "matmul_parameters": ar.matmul_params(arch), "embedding_parameters": ar.embedding_params(arch),
                  "weights_read_per_step_bytes": weights_read,
                  "kv_bytes_per_position": kv_per_position,
                  "layers": arch.layers, "hidden": arch.hidden, "heads": arch.heads, "kv_heads": arch.kv_heads},
        "precision": precision_details,
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
        "summary": summary_lines(rows, pp, tg, limits, BF16.label if held.fp8_blocks else label),
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
        resolved_params={k: params[k] for k in ("depths", "concurrency", "step", "threads")},
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
