"""llm.llamacpp: llama.cpp's own benchmark (``llama-bench -o json``) read into a document, its generation held
against this machine's limit: tokens/s ÷ (bandwidth ÷ bytes a token reads), the bytes counted from the GGUF file
itself (:mod:`..models.llm.gguf_file`), so "llama.cpp Q4_K_M: 142 tokens/s = 0.58 of this GPU's bound" is one line
and ``hwbench compare`` sets it beside hwbench's own llm.infer of the same machine.

Nothing is run: the figures are llama-bench's repetitions (``samples_ts``); the bandwidth is measured here when this
machine has the GPU the run names, else that GPU's datasheet, else the one given."""

from __future__ import annotations

import importlib.util
import os
from typing import Any

from hwbench_gui.engine.measure.stats import median
from hwbench_gui.engine.measure.timing import figure
from hwbench_gui.engine.serving import engine_bound
from hwbench_gui.engine.serving.engine_bound import Bandwidth
from hwbench_gui.engine.spec.benchmark import Benchmark, Outcome, Param, ParamError, Reporter


def _availability() -> str | None:
    if importlib.util.find_spec("gguf") is None:
        return "needs the gguf package (pip install 'hwbench-gui[serve]')"
    return None


def _this_gpu(gpu_info: str) -> str | None:
    """The CUDA device of this machine named like ``gpu_info`` (llama-bench names its GPUs as CUDA does), or None."""
    if not gpu_info or importlib.util.find_spec("torch") is None:
        return None
    import torch

    if not torch.cuda.is_available():
        return None
    for index in range(torch.cuda.device_count()):
        if torch.cuda.get_device_name(index).strip() in gpu_info:
            return f"cuda:{index}"
    return None


def bandwidth_for(gpu_info: str, on_gpu: bool, given_gbps: float, measure: bool, reporter: Reporter) -> Bandwidth:
    """The bandwidth the bound divides: given, else measured on this machine's GPU of that name (or the CPU for a
    CPU run), else the datasheet's."""
    if given_gbps > 0:
        return Bandwidth(given_gbps, f"given: bandwidth_gbps={given_gbps:g}")
    device = _this_gpu(gpu_info) if on_gpu else ("cpu" if importlib.util.find_spec("torch") else None)
    if measure and device:
        reporter.progress(0.3, f"measuring the copy bandwidth of {device}")
        return engine_bound.measured(device)
    if not on_gpu:
        return Bandwidth(None, "a CPU run, and no CPU limit measured (measure=false or no PyTorch here)")
    sheet = engine_bound.datasheet(gpu_info)
    if sheet.gbps is None:
        return Bandwidth(None, f"{gpu_info or 'the GPU'} is not this machine's, and {sheet.what}")
    return sheet


def run(params: dict[str, Any], reporter: Reporter) -> Outcome:
    from hwbench_gui.engine.models.llm import gguf_file
    from hwbench_gui.engine.serving import llama_bench

    tests = llama_bench.read(params["file"])
    first = tests[0]
    path = params["gguf"].strip() or first.model_filename
    if not path:
        raise ParamError("gguf: the llama-bench output names no model file; give its GGUF with -p gguf=...")
    if not params["gguf"].strip() and not os.path.isabs(path):
        path = os.path.join(os.path.dirname(os.path.abspath(params["file"])), path)
    reporter.progress(0.1, f"reading {path}")
    model = gguf_file.read(path)
    on_gpu = bool(first.gpu_info) and (first.n_gpu_layers or 0) > 0 and "CPU" != first.backends.upper()
    bandwidth = bandwidth_for(first.gpu_info, on_gpu, params["bandwidth_gbps"], params["measure"], reporter)
    outcome = engine_outcome("llama.cpp", tests, model, bandwidth, on_gpu, params, first)
    if on_gpu and _this_gpu(first.gpu_info) is None:
        outcome.warnings.append(f"llama-bench ran on {first.gpu_info}, which this machine does not have: the "
                                "document's inventory is the machine it was read on, not the one that ran it")
    return outcome


def engine_outcome(engine: str, tests: list[Any], model: Any, bandwidth: Bandwidth, on_gpu: bool,
                   params: dict[str, Any], first: Any) -> Outcome:
    """The document of an engine's pp/tg tests (llama-bench's :class:`Test` or the same fields), each tg held
    against ``bandwidth`` ÷ the GGUF's bytes."""
    from hwbench_gui.engine.models.llm.gguf_file import KV_TYPE_BYTES

    figures, rows, lines, warnings = {}, [], [], []
    whose = "this GPU's" if on_gpu else "this CPU's"
    for test in sorted(tests, key=lambda t: (t.kind != "tg", t.depth, t.tokens)):  # generation first
        value = median(test.samples_ts)
        row = {"test": test.name, "kind": test.kind, "tokens": test.tokens, "depth": test.depth,
               "tokens_per_s": test.samples_ts}
        extra: dict[str, Any] = {"depth": test.depth}
        if test.kind == "tg":
            kv = KV_TYPE_BYTES.get(test.type_k.lower(), 2.0) / 2 + KV_TYPE_BYTES.get(test.type_v.lower(), 2.0) / 2
            window = model.window_bytes(test.depth, test.tokens, kv)
            bound = engine_bound.bound_tokens_per_s(test.tokens, window, bandwidth.gbps) if bandwidth.gbps else None
            fraction, reason = engine_bound.held(value, bound, f"no bandwidth: {bandwidth.what}")
            row.update(window_bytes=window, bytes_per_token=window / test.tokens, bound_tokens_per_s=bound,
                       fraction_of_bound=fraction, bound_reason=reason)
            extra.update(bound_tokens_per_s=bound, fraction_of_bound=fraction, bound="bandwidth",
                         **({"bound_reason": reason} if reason else {}))
            lines.append(engine_bound.headline(engine, model.file_type, value, fraction, reason, whose)
                         + f" ({test.name}: {window / test.tokens / 1e9:.3g} GB a token"
                         + (f" at {bandwidth.gbps:,.0f} GB/s)" if bandwidth.gbps else ")"))
            if reason and bound is not None:
                warnings.append(f"{test.name}: {reason}")
        else:
            lines.append(f"{engine} {model.file_type or ''} {test.name}: {value:,.0f} tokens/s (a prompt is "
                         "matmul-bound; a quantized matmul's rate is not measured here, so no share is given)")
        figures[test.name] = figure(test.samples_ts, "tokens/s", **extra)
        rows.append(row)
    tg = [t for t in tests if t.kind == "tg"]
    head = min(tg or tests, key=lambda t: (t.depth, -t.tokens))
    method = (
        f"{engine}'s own figures: every repetition's tokens/s as {engine} reported it"
        + (" (llama-bench -o json: samples_ts)" if engine == "llama.cpp" else "")
        + f"; model {model.path} ({model.architecture}, {model.file_type or 'quantization not named'}), read with the "
        f"gguf package: {model.tensor_bytes / 1e9:.3f} GB of tensors as stored ("
        + ", ".join(f"{k} {v / 1e9:.3f} GB" for k, v in list(model.bytes_by_type.items())[:6])
        + f"); a token reads {model.weights_read_per_token / 1e9:.3f} GB of weights (every tensor, of the token table "
        + ("all of it: it is the output projection too" if model.tied_output else "one row")
        + f") plus {model.kv_bytes_per_position(2.0):,.0f} KV bytes per attended position at f16 "
        f"({model.layers} layers × {model.kv_heads} KV heads × ({model.key_length} + {model.value_length})), as "
        "llm.infer counts its own. tg bound = tokens × bandwidth / bytes of the window; bandwidth: "
        f"{bandwidth.what}.")
    details = {"engine": engine, "gguf": model.to_json(), "bandwidth": bandwidth.to_json(), "tests": rows,
               "gpu": first.gpu_info or None, "backends": first.backends, "build": first.build,
               "model_type": first.model_type, "summary": lines}
    return Outcome(
        figure_name=head.name, unit="tokens/s", samples=head.samples_ts, precision=model.file_type or "",
        method=method, figures=figures, warnings=warnings, details=details,
        device=(f"{first.backends} ({first.gpu_info})" if on_gpu else f"cpu ({first.backends or 'CPU'})"))


BENCHMARK = Benchmark(
    id="llm.llamacpp",
    title="llama.cpp run (llama-bench)",
    category="Language models",
    description=("Reads llama.cpp's llama-bench -o json output and its GGUF model: each tg figure as a share of "
                 "this GPU's bandwidth bound (bytes a token reads, from the GGUF), beside hwbench's own llm.infer."),
    params=(
        Param("file", "path", "", "llama-bench's JSON output (llama-bench -m MODEL.gguf -o json > FILE).",
              decides_comparability=False),
        Param("gguf", "path", "", "The GGUF it ran; empty = the model_filename in the output (relative to it).",
              decides_comparability=False),
        Param("measure", "bool", True, "Measure the bandwidth here when this machine has the GPU the run names "
              "(else its datasheet).", decides_comparability=False),
        Param("bandwidth_gbps", "float", 0.0, "A bandwidth measured elsewhere (GB/s, e.g. gpu.d2d's on that "
              "machine); 0 = measured here or the datasheet.", minimum=0.0, maximum=1e5, unit="GB/s",
              decides_comparability=False),
    ),
    run=run,
    version="1",
    availability=_availability,
)
