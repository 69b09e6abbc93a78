"""llm.ollama: a model served by Ollama, measured through its own API (``/api/generate``'s ``eval_count`` and
``eval_duration``, ``prompt_eval_*``) and held against this machine's limit like llm.llamacpp: generation tokens/s
÷ (bandwidth ÷ the bytes a token reads, counted from the GGUF file Ollama loaded)."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from typing import Any

from hwbench_gui.engine.benchmarks.llm_llamacpp import engine_outcome
from hwbench_gui.engine.serving import engine_bound
from hwbench_gui.engine.serving.engine_bound import Bandwidth
from hwbench_gui.engine.spec.benchmark import Benchmark, BenchmarkUnavailable, Outcome, Param, ParamError, Reporter


@dataclass(frozen=True)
class _Test:
    """An Ollama measurement in llama-bench's terms (what :func:`engine_outcome` reads)."""

    kind: str
    tokens: int
    depth: int
    samples_ts: list[float]
    type_k: str = "f16"
    type_v: str = "f16"

    @property
    def name(self) -> str:
        return f"{self.kind}{self.tokens} @ depth {self.depth}"


@dataclass(frozen=True)
class _Run:
    gpu_info: str
    backends: str
    build: str = ""
    model_type: str = ""


def _availability() -> str | None:
    missing = [m for m in ("aiohttp", "gguf") if importlib.util.find_spec(m) is None]
    return f"needs {' and '.join(missing)} (pip install 'hwbench-gui[serve]')" if missing else None


def _bandwidth(on_gpu: bool, given: float, reporter: Reporter) -> tuple[Bandwidth, str]:
    if given > 0:
        return Bandwidth(given, f"given: bandwidth_gbps={given:g}"), ""
    if importlib.util.find_spec("torch") is None:
        return Bandwidth(None, "PyTorch is not installed here to measure the bandwidth"), ""
    import torch

    device = "cuda:0" if on_gpu and torch.cuda.is_available() else "cpu"
    name = torch.cuda.get_device_name(0) if device != "cpu" else ""
    reporter.progress(0.8, f"measuring the copy bandwidth of {device}")
    return engine_bound.measured(device), name


def run(params: dict[str, Any], reporter: Reporter) -> Outcome:
    from hwbench_gui.engine.models.llm import gguf_file
    from hwbench_gui.engine.serving import ollama
    from hwbench_gui.engine.serving.client import EndpointError, base_url

    model = params["model"].strip()
    if not model:
        raise ParamError("model: name the Ollama model (e.g. llama3.1:8b)")
    try:
        base = base_url(params["url"])
        reporter.progress(0.05, f"generating with {model} at {base}")
        generations, loaded_path, vram = ollama.measure(base, model, params["prompt_words"], params["output_tokens"],
                                                        params["repeats"], params["seed"], params["timeout_s"])
    except EndpointError as exc:
        raise BenchmarkUnavailable(str(exc)) from None
    path = params["gguf"].strip() or loaded_path
    if not path:
        raise BenchmarkUnavailable(f"{base}/api/show names no GGUF file for {model}; give it with -p gguf=...")
    model_file = gguf_file.read(path)
    tg = [g.eval_count / g.eval_s for g in generations if g.eval_s > 0 and g.eval_count]
    pp = [g.prompt_eval_count / g.prompt_eval_s for g in generations if g.prompt_eval_s > 0 and g.prompt_eval_count]
    if not tg:
        raise BenchmarkUnavailable(f"{base}/api/generate reported no generated tokens for {model}")
    counts = sorted(g.eval_count for g in generations)
    depth = sorted(g.prompt_eval_count for g in generations)[len(generations) // 2]
    tests = [_Test("tg", counts[len(counts) // 2], depth, tg)] + ([_Test("pp", depth, 0, pp)] if pp else [])
    on_gpu = bool(vram)
    bandwidth, gpu = _bandwidth(on_gpu, params["bandwidth_gbps"], reporter)
    outcome = engine_outcome("Ollama", tests, model_file, bandwidth, on_gpu, params,
                             _Run(gpu, "CUDA" if on_gpu else "CPU"))
    outcome.details["ollama"] = {"url": base, "model": model, "size_vram_bytes": vram, "loaded_gguf": loaded_path,
                                 "eval_counts": [g.eval_count for g in generations],
                                 "prompt_eval_counts": [g.prompt_eval_count for g in generations]}
    outcome.method = (f"Ollama at {base}, model {model}: one warm-up and {params['repeats']} generations of "
                      f"{params['output_tokens']} tokens (num_predict, temperature 0, raw) after a new prompt of "
                      f"{params['prompt_words']} random words each; tokens/s = eval_count / eval_duration and "
                      "prompt_eval_count / prompt_eval_duration, Ollama's own counts. " + outcome.method)
    if counts[0] < params["output_tokens"]:
        outcome.warnings.append(f"Ollama stopped some generations before {params['output_tokens']} tokens "
                                f"({counts[0]} the fewest): the model ended them")
    return outcome


BENCHMARK = Benchmark(
    id="llm.ollama",
    title="Ollama model",
    category="Language models",
    description=("Generation and prompt tokens/s of a model Ollama serves, from Ollama's own eval counts and "
                 "durations, each generation figure as a share of this machine's bandwidth bound (bytes a token "
                 "reads, from the GGUF Ollama loaded)."),
    params=(
        Param("url", "str", "http://127.0.0.1:11434", "Ollama's address.", decides_comparability=False),
        Param("model", "str", "", "The Ollama model (as `ollama list` names it)."),
        Param("gguf", "path", "", "Its GGUF file; empty = the one Ollama's /api/show names (its blob).",
              decides_comparability=False),
        Param("prompt_words", "int", 16, "Random words of the prompt before each generation.", minimum=1,
              maximum=100000),
        Param("output_tokens", "int", 128, "Tokens generated (num_predict).", minimum=2, maximum=100000),
        Param("repeats", "int", 5, "Timed generations, after one warm-up.", minimum=1, maximum=1000,
              decides_comparability=False),
        Param("bandwidth_gbps", "float", 0.0, "A bandwidth measured elsewhere (GB/s); 0 = measured here.",
              minimum=0.0, maximum=1e5, unit="GB/s", decides_comparability=False),
        Param("timeout_s", "float", 600.0, "Seconds one request may take (the first loads the model).", minimum=1.0,
              maximum=86400.0, unit="s", decides_comparability=False),
        Param("seed", "int", 0, "Seed of the prompts.", minimum=0, maximum=2**31 - 1, decides_comparability=False),
    ),
    run=run,
    version="1",
    availability=_availability,
)
