"""llm.endpoint: the serving sweep over HTTP against any OpenAI-compatible server (vLLM, SGLang, llama.cpp's
llama-server, Ollama, TGI, ``hwbench serve``) by URL: streamed requests (server-sent events) in closed batches at
each concurrency and at Poisson arrivals, time to first token, time per output token and the gaps between tokens
(p50/p99), output tokens/s, held to a named latency preset (MLPerf server, MLPerf interactive, hwbench's own), and
the largest concurrency within it found by search.

The client, the loads and the figures are :mod:`..serving` (why not AIPerf or GuideLLM: :mod:`..serving.load`).
A URL that does not answer, or answers something that is not an OpenAI stream, ends the run with one line naming it.
"""

from __future__ import annotations

import importlib.util
from typing import Any

from hwbench_gui.engine.measure.stats import median, spread
from hwbench_gui.engine.measure.timing import Steps, figure
from hwbench_gui.engine.serving.presets import PRESETS
from hwbench_gui.engine.spec.benchmark import Benchmark, BenchmarkUnavailable, Outcome, Param, Reporter, Series

APIS = ("completions", "chat")


def _availability() -> str | None:
    if importlib.util.find_spec("aiohttp") is None:
        return "needs aiohttp (pip install 'hwbench-gui[serve]')"
    return None


def _record(point: dict[str, Any], figures: dict[str, dict[str, Any]], name: str) -> None:
    figures[f"{name}: output tokens/s"] = figure(point["output_tokens_per_s"], "tokens/s")
    if point["ttft_s"]:
        figures[f"{name}: TTFT"] = figure(point["ttft_s"], "s", higher_is_better=False, p99=point["ttft"]["p99"])
    if point["tpot_s"]:
        figures[f"{name}: TPOT"] = figure([s * 1e3 for s in point["tpot_s"]], "ms", higher_is_better=False,
                                          p99=point["tpot"]["p99"] * 1e3)


def _within_share(point: dict[str, Any], limits: Any) -> float:
    """The share of a level's requests that finished within both limits (failed ones count as outside)."""
    inside = sum(1 for ttft, tpot in zip(point["ttft_s"], point["tpot_s"])
                 if ttft <= limits.ttft_p99_s and tpot <= limits.tpot_p99_s)
    return inside / point["requests"] if point["requests"] else 0.0


def run(params: dict[str, Any], reporter: Reporter) -> Outcome:
    from hwbench_gui.engine.serving import load
    from hwbench_gui.engine.serving.client import EndpointError, base_url
    from hwbench_gui.engine.serving.sweep import Sweep

    limits = PRESETS[params["preset"]]
    try:
        base = base_url(params["url"])
        reporter.progress(0.01, f"asking {base}/v1/models")
        listed = load.models(base, min(30.0, params["timeout_s"]))
    except EndpointError as exc:
        raise BenchmarkUnavailable(str(exc)) from None
    model = params["model"].strip() or (listed[0] if listed else "")
    if not model:
        raise BenchmarkUnavailable(f"{base}/v1/models lists no model; name one with -p model=...")
    warnings = []
    if listed and model not in listed:
        warnings.append(f"{model!r} is not among the models {base}/v1/models lists ({', '.join(listed[:5])})")
    shape = load.Shape(params["api"], model, params["prompt_tokens"], params["output_tokens"], params["ignore_eos"],
                       params["timeout_s"])

    def scenario(phase: str, repeat: int | None) -> None:
        if phase == "end":
            reporter.phase(last[0], "end", repeat=repeat)
        else:
            last[0] = phase
            reporter.phase(phase, "start", repeat=repeat)

    last = ["warmup"]
    sweep = Sweep(base, shape, limits, params["repeats"], params["seed"], scenario)
    levels = sorted(set(params["concurrency"]))
    steps = Steps(reporter, len(levels) + (params["rate"] > 0) + (4 if params["search"] else 0) + 1)
    steps.say(f"probing {base} with one request of {shape.prompt_tokens} + {shape.output_tokens} tokens")
    try:
        probe = sweep.probe()
    except EndpointError as exc:
        raise BenchmarkUnavailable(str(exc)) from None
    steps.advance(f"{base} streams: first token after {probe.ttft_s * 1e3:.0f} ms")
    for c in levels:
        point = sweep.closed(c)
        reporter.metric("serving", median(point["output_tokens_per_s"]), "tokens/s", x=c,
                        x_label="concurrent sequences", series="output tokens/s")
        steps.advance(f"{c} sequences: {median(point['output_tokens_per_s']):.1f} output tokens/s, TTFT p99 "
                      f"{_ms(point['ttft']['p99'])}, TPOT p99 {_ms(point['tpot']['p99'])}")
    poisson = None
    if params["rate"] > 0:
        poisson = sweep.poisson(params["rate"], params["poisson_requests"])
        steps.advance(f"Poisson arrivals at {params['rate']:g}/s: {poisson['output_tokens_per_s'][0]:.1f} "
                      "output tokens/s")
    search = sweep.largest_within(params["search_limit"]) if params["search"] else None
    return _outcome(params, base, model, limits, sweep, levels, poisson, search, probe, warnings)


def _ms(seconds: float | None) -> str:
    return "n/a" if seconds is None else f"{seconds * 1e3:.3g} ms"


def _outcome(params, base, model, limits, sweep, levels, poisson, search, probe, warnings) -> Outcome:
    figures: dict[str, dict[str, Any]] = {}
    serving = [sweep.levels[c] for c in sorted(sweep.levels)]
    for point in serving:
        point["within_limits_share"] = _within_share(point, limits)
        _record(point, figures, f"serving {point['concurrency']} sequences")
        if point["failed"]:
            warnings.append(f"{point['concurrency']} sequences: {point['failed']} of {point['requests']} requests "
                            f"failed ({'; '.join(point['errors'])})")
        if point["short"]:
            warnings.append(f"{point['concurrency']} sequences: {point['short']} requests ended before the "
                            f"{params['output_tokens']} tokens asked (the server stopped them: ignore_eos not "
                            "honoured?)"
                            "; their TPOT counts the tokens they streamed")
    if poisson:
        poisson["within_limits_share"] = _within_share(poisson, limits)
        _record(poisson, figures, f"Poisson {params['rate']:g} requests/s")
    within = [p["concurrency"] for p in serving if p["meets_target"]]
    largest = search["largest"] if search else (max(within) if within else None)
    headline = sweep.levels[max(levels)]
    series = [Series("HTTP serving: TPOT p99 against output tokens/s",
                     [median(p["output_tokens_per_s"]) for p in serving],
                     [(p["tpot"]["p99"] or 0.0) * 1e3 for p in serving], "output tokens/s (all sequences)",
                     "time per output token, p99 (ms)"),
              Series("HTTP serving: output tokens/s", [float(p["concurrency"]) for p in serving],
                     [median(p["output_tokens_per_s"]) for p in serving], "concurrent sequences", "output tokens/s",
                     x_log=True, y_spread=[spread(p["output_tokens_per_s"]) for p in serving])]
    method = (
        f"{base}{'/v1/completions' if params['api'] == 'completions' else '/v1/chat/completions'} with stream: true "
        f"(server-sent events), model {model!r}; every request {params['prompt_tokens']} random prompt tokens ("
        + ("token ids" if params["api"] == "completions" else "words of digits; the server's tokenizer decides the "
           "count") + f"), max_tokens {params['output_tokens']}, temperature 0"
        + (", ignore_eos" if params["ignore_eos"] else "") + ", usage asked at the end of the stream. "
        f"For each concurrency c, c requests are sent together (a closed batch, as llm.infer's in-process sweep), "
        f"one warm-up scenario then {params['repeats']} timed; output tokens/s = output tokens of a scenario / its "
        "wall time (from sending the first request to the end of the last stream). Per request, timed on the client "
        "(time.perf_counter, aiohttp): TTFT = first chunk with content − sent; TPOT = (last chunk − first) / (output "
        "tokens − 1); ITL = gaps between chunks; output tokens = the server's usage.completion_tokens, else the "
        "chunks with content (vLLM benchmark_serving's definitions). p50/p99 over every request of the timed "
        f"scenarios. Preset {limits.text()}, {limits.source}."
        + (f" Poisson: {params['poisson_requests']} requests at exponential gaps of mean {1 / params['rate']:.3g} s "
           f"(seed {params['seed']}), each sent when due whatever is still streaming." if poisson else "")
        + (f" The largest concurrency within the preset: doubling from 1 until a level fails it, then bisection, "
           f"up to {params['search_limit']} (every try a measured level)." if search else ""))
    details = {
        "endpoint": {"url": base, "model": model, "api": params["api"], "probe_ttft_s": probe.ttft_s,
                     "tokens_counted_by": probe.tokens_counted_by},
        "serving": serving, "poisson": poisson, "search": search,
        "largest_concurrency_within_target": largest,
        "preset": {"key": limits.key, "title": limits.title, "source": limits.source},
        "targets": {"tpot_p99_ms": limits.tpot_p99_s * 1e3, "ttft_p99_s": limits.ttft_p99_s},
        "summary": [f"{p['concurrency']} sequences: {median(p['output_tokens_per_s']):,.1f} output tokens/s, TTFT "
                    f"p99 {_ms(p['ttft']['p99'])}, TPOT p99 {_ms(p['tpot']['p99'])}, ITL p99 {_ms(p['itl']['p99'])}"
                    f"{' (within ' + limits.title + ')' if p['meets_target'] else ''}" for p in serving]
        + [f"largest concurrency within {limits.text()}: {largest if largest else 'none measured'}"],
    }
    return Outcome(
        figure_name=f"output tokens/s @ {headline['concurrency']} sequences",
        unit="tokens/s", samples=headline["output_tokens_per_s"], precision="", method=method, figures=figures,
        series=series, warnings=warnings, details=details, device=f"endpoint {base}")


BENCHMARK = Benchmark(
    id="llm.endpoint",
    title="Language-model server over HTTP",
    category="Language models",
    description=("The serving sweep against any OpenAI-compatible server by URL (vLLM, SGLang, llama-server, Ollama, "
                 "TGI, hwbench serve): streamed requests at each concurrency and Poisson arrivals; TTFT, TPOT and ITL "
                 "p50/p99, output tokens/s, and the largest load within MLPerf's or hwbench's latency limits."),
    params=(
        Param("url", "str", "http://127.0.0.1:8000/v1", "The server's base URL (with or without /v1).",
              decides_comparability=False),
        Param("model", "str", "", "The model id to ask for; empty = the first the server lists at /v1/models."),
        Param("api", "choice", "completions", "completions = /v1/completions with token-id prompts (exact lengths); "
              "chat = /v1/chat/completions with text.", choices=APIS),
        Param("concurrency", "int_list", [1, 4, 16, 64], "Concurrent requests of each closed level.", minimum=1,
              maximum=4096),
        Param("prompt_tokens", "int", 512, "Prompt tokens per request.", minimum=1, maximum=1 << 20),
        Param("output_tokens", "int", 128, "Output tokens per request (max_tokens).", minimum=2, maximum=1 << 20),
        Param("preset", "choice", "hwbench", "Latency limits: " + "; ".join(f"{k} = {p.text()}"
                                                                             for k, p in PRESETS.items()) + ".",
              choices=tuple(PRESETS)),
        Param("rate", "float", 0.0, "Requests per second of a Poisson level; 0 = none.", minimum=0.0, maximum=1e4),
        Param("poisson_requests", "int", 64, "Requests of the Poisson level.", minimum=1, maximum=100000),
        Param("search", "bool", False, "Search the largest concurrency within the preset (doubling, then bisection)."),
        Param("search_limit", "int", 256, "The largest concurrency the search tries.", minimum=1, maximum=4096),
        Param("ignore_eos", "bool", True, "Ask the server to generate max_tokens whatever the model ends on "
              "(vLLM's and llama.cpp's ignore_eos)."),
        Param("repeats", "int", 4, "Timed scenarios per concurrency, after one warm-up (4 lets a comparison reach "
              "significance).", minimum=1, maximum=100,
              decides_comparability=False),
        Param("timeout_s", "float", 300.0, "Seconds one request may take.", minimum=1.0, maximum=86400.0, unit="s",
              decides_comparability=False),
        Param("seed", "int", 0, "Seed of the prompts and arrivals.", minimum=0, maximum=2**31 - 1,
              decides_comparability=False),
    ),
    run=run,
    version="1",
    availability=_availability,
    default_timeout_s=1800.0,
)
