"""llm.infer's timed work on a built model: the prompt (pp) and generation (tg) windows at one context depth, and
one serving scenario of concurrent sequences, each window a telemetry phase, timed by :class:`.generate.Clock`."""

from __future__ import annotations

import time
from typing import Any, Callable

from hwbench_gui.engine.measure.stats import percentile
from hwbench_gui.engine.models.llm import arithmetic as ar
from hwbench_gui.engine.models.llm.architectures import Architecture
from hwbench_gui.engine.models.llm.generate import Clock, Stepper, capture, compiled_prefill, fill, new_cache
from hwbench_gui.engine.models.llm.infer_limits import Limits
from hwbench_gui.engine.models.llm.storage import Storage
from hwbench_gui.engine.spec.benchmark import Reporter

#: Positions a prompt (the depth fill, a serving group) is processed in at once: bounds the activations.
FILL_CHUNK = {"cuda": 2048, "cpu": 512}
WARMUP_WINDOWS = 2


def windows(fn: Callable[[], None], clock: Clock, repeats: int, reporter: Reporter, sync: Callable[[], None]
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


def depth_rows(torch: Any, model: Any, depth: int, params: dict[str, Any], held: Storage, device: str,
               step_mode: str, clock: Clock, sync: Callable[[], None], reporter: Reporter, say: Callable[[str], None]
           ) -> tuple[dict[str, Any], dict[str, Any]]:
    """pp and tg at one depth: the cache filled, then the prompt's and the generation's timed windows. Each
    row's ``work`` is the FLOPs (pp) or bytes (tg) of one window, what its bound divides."""
    arch, pp, tg, batch = model.arch, params["pp"], params["tg"], params["batch"]
    cache = new_cache(model, batch, depth + max(pp, tg))
    say(f"depth {depth}: filling the cache and preparing the prompt pass")
    fill(torch, model, cache, depth, FILL_CHUNK["cpu" if device == "cpu" else "cuda"], batch)
    prompt = torch.randint(0, arch.vocab, (batch, pp), device=device)
    prepared = time.perf_counter()
    # step=compile and fused: the prompt pass too runs each block compiled
    layer = compiled_prefill(torch, model) if step_mode in ("compile", "fused") else None

    def process() -> None:
        model(prompt, cache=cache, start=depth, last_only=True, layer=layer)

    if device != "cpu" and step_mode in ("graph", "compile", "fused"):
        # one graph of the whole pass: launching its ~30 kernels per layer from Python takes about as long as
        # a 512-token prompt's matmuls on a fast GPU
        process = capture(torch, process).replay
    elif layer is not None:
        process()  # compiles now, so that the preparation's time is known apart from the warm-up windows
    prepared = time.perf_counter() - prepared
    seconds = windows(process, clock, params["repeats"], reporter, sync)
    pp_row = {"depth": depth, "tokens_per_s": [batch * pp / s for s in seconds], "window_seconds": seconds,
              "work": ar.forward_flops(arch, pp, depth, logit_tokens=1) * batch, "work_unit": "FLOP",
              "prompt_build_s": prepared}
    say(f"depth {depth}: {'compiling' if step_mode in ('compile', 'fused') else 'preparing'} the one-token step "
        f"(step={step_mode})")
    built = time.perf_counter()
    stepper = Stepper(torch, model, cache, batch, step_mode)
    built = time.perf_counter() - built

    def generate() -> None:
        stepper.at(depth)
        for _ in range(tg):
            stepper.step()

    seconds = windows(generate, clock, params["repeats"], reporter, sync)
    step_bytes = sum(ar.bytes_per_step(arch, held.weights, held.element_bytes, depth + i, batch)
                     for i in range(tg))
    tg_row = {"depth": depth, "tokens_per_s": [batch * tg / s for s in seconds], "window_seconds": seconds,
              "work": step_bytes, "work_unit": "byte", "step_build_s": built}
    return pp_row, tg_row


def serve_scenario(torch: Any, model: Any, clock: Clock, concurrency: int, prompt: int, output: int, chunk_tokens: int,
                   step_mode: str, device: str, repeats: int, reporter: Reporter) -> dict[str, Any]:
    """``concurrency`` requests arriving together: prompts processed a group at a time, every sequence's first
    token taken from its group's logits, then all sequences decoded in lockstep. Per request: time to first
    token from the common arrival, time per output token after its first."""
    arch = model.arch
    cache = new_cache(model, concurrency, prompt + output)
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


def percentiles(values: list[float]) -> dict[str, float]:
    return {"p50": percentile(values, 50.0), "p99": percentile(values, 99.0)}


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
