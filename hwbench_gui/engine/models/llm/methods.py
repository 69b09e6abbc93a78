"""The method paragraphs of the language-model family: what llm.infer's and llm.train's figures are, how they were
measured and what they are held against, written once here from a run's settings and measured limits (the
benchmarks pass what they measured; no torch)."""

from __future__ import annotations

from typing import Any

from hwbench_gui.engine.measure.stats import median
from hwbench_gui.engine.models.llm import arithmetic as ar
from hwbench_gui.engine.models.llm.architectures import BUILT_IN, Architecture
from hwbench_gui.engine.models.llm.infer_limits import LIMIT_REPEATS, Limits
from hwbench_gui.engine.models.llm.storage import WEIGHT_ONLY_DETAILS, Storage
from hwbench_gui.engine.spec.precision import BF16, BF16_AMP, FP8, FP32


def infer_precision(held: Storage, label: str) -> tuple[dict[str, str], str]:
    """llm.infer's precision in the document's terms (what each kind of tensor is stored in) and in words."""
    if held.weight_only:
        kind = held.weight_only
        product = ("torch's packed int4 matmul (_weight_int4pack_mm)" if kind == "int4" else
                   "F.linear of the input and the weight converted to BF16, times the scales (torch.compile fuses "
                   "the conversion into the one-token product)"
                   + ("; 16 rows or more (a prompt) on FP8 tensor cores where the GPU has them: the input "
                      "quantised per row, torch._scaled_mm" if kind == "fp8" else ""))
        return ({"block_matmul_weights": WEIGHT_ONLY_DETAILS[kind], "block_matmul_product": product,
                 "output_projection": f"{WEIGHT_ONLY_DETAILS[kind]} (unless it is the token table: then BF16)",
                 "activations": BF16.label, "embeddings": BF16.label, "norms_and_biases": BF16.label,
                 "kv_cache": BF16.label, "softmax_generation": FP32.label},
                f"every block's matmul weights and the output projection {WEIGHT_ONLY_DETAILS[kind]}, dequantised "
                f"inside the product ({product}); activations, embeddings, norms, biases, the KV cache and attention "
                "in BF16 (softmax of generation in FP32)")
    if held.fp8_blocks:
        from hwbench_gui.engine.models.llm.fp8 import PRECISION_DETAILS

        return dict(PRECISION_DETAILS), (
            "every block's matmul weights in FP8 e4m3 with an FP32 scale per output channel, their "
            "inputs quantised to FP8 per token, products by torch._scaled_mm with BF16 output; "
            "embeddings, norms, biases, the KV cache, attention, the output projection and the residual "
            "stream in BF16 (softmax of generation in FP32)")
    return ({"weights": label, "kv_cache": label, "activations": label, "softmax_generation": FP32.label},
            f"every tensor, the KV cache and the attention in {label} (softmax of generation in FP32)")


def infer_method(params: dict[str, Any], arch: Architecture, label: str, held: Storage, limits: Limits,
                 where: str, cuda: bool, serving: bool, warmup_windows: int, serve_chunk: int) -> str:
    """llm.infer's method paragraph: the model, pp and tg, the step, the bounds and their arithmetic, and (with
    ``serving``) the serving sweep. ``where``: the device in words; ``warmup_windows`` untimed before each
    figure; ``serve_chunk``: positions of a serving group's prompts processed at once."""
    pp, tg, batch = params["pp"], params["tg"], params["batch"]
    kind = "cuda" if cuda else "cpu"
    bandwidth_gbps, tflops = limits.bandwidth_gbps, median(limits.matmul_tflops)
    weights_read = held.weights.read_per_step(arch)
    kv_per_position = ar.kv_bytes_per_token(arch, held.element_bytes)
    in_precision = infer_precision(held, label)[1]
    method = (
        f"{arch.name} ({ar.total_params(arch):,} parameters, {arch.layers} layers, {arch.heads} heads / "
        f"{arch.kv_heads} KV heads, {arch.norm}, {arch.mlp}, {arch.positional} positions) with "
        + ("random weights made in " if params["model"].strip().lower() in BUILT_IN else "weights loaded from ")
        + f"{'FP8 and BF16' if held.fp8_blocks else label} on {where}; "
        f"{in_precision}. "
        f"pp{pp}: {pp} random tokens of each of {batch} sequences processed in one forward pass after `depth` "
        "cached positions (logits of the last position only); tg"
        f"{tg}: {tg} tokens generated one at a time (greedy, each fed back) starting after `depth` positions. "
        "Before each depth the KV cache is filled by processing random tokens (as llama-bench -d), untimed. "
        f"{warmup_windows} warm-up windows, then {params['repeats']} timed windows per figure (each a telemetry "
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
    if held.weight_only:
        parts = held.weights.parts(arch)
        method += (
            f" Weights {held.weight_only}: weights read per step = {held.weights.block_matmul:g} byte(s) per block "
            f"matmul and output projection weight ({_bytes(parts['quantized_weights'])}) + their scales"
            + (" and zeros" if held.weights.group_per_weight else "")
            + f" ({_bytes(parts['scales_and_zeros'])}) + 2 bytes per other weight read "
            f"({_bytes(parts['other_weights'])}); "
            + ("the prompt's block products run on FP8 tensor cores (input quantised per row), its bound counting "
               "them at the FP8 rate measured and the rest at the BF16 rate." if limits.fp8_matmul_tflops else
               f"the prompt's products dequantise the same weights, its bound the {label} matmul rate."))
    if serving:
        method += (
            f" Serving: for each concurrency c, c requests of {params['serve_prompt']} random prompt tokens and "
            f"{params['serve_output']} output tokens arrive together at t = 0 (a closed batch, no later arrivals); "
            f"prompts are processed a group of up to {serve_chunk} positions at a time, each request's "
            "first token comes from its group's logits, then all c sequences are decoded in lockstep. TTFT = its "
            "group's end − arrival; TPOT = (end of the last step − its first token) / (output − 1); output "
            "tokens/s = c × output / scenario time. One warm-up scenario, then "
            f"{params['serve_repeats']} timed; p50/p99 over every request of the timed ones. Target: TPOT p99 ≤ "
            f"{params['tpot_target_ms']:g} ms and TTFT p99 ≤ {params['ttft_target_s']:g} s."
        )
    return method



def held_against(value: float, bound: float, limit: str) -> tuple[float | None, str | None]:
    """``value``'s share of ``bound`` (what ``limit``, in words, allows), or (None, why) when the figure is above
    it: a figure above its bound means the limit was not measured reliably, and no share above 100 % is shown."""
    if bound > 0 and value <= bound:
        return value / bound, None
    return None, (f"limit not measured reliably here: {value:,.1f} tokens/s is above the {bound:,.1f} tokens/s that "
                  f"the {limit} measured in this run allows (measured again after the figures, the higher kept)")


def summary_lines(rows: dict[str, list[dict[str, Any]]], pp: int, tg: int, limits: Limits, matmul_label: str,
                  weights: str = "") -> list[str]:
    """What the CLI prints under the headline: the weights (``weights``, where they are quantized), each figure
    with its share of its bound (or why it has none), then the limits measured."""
    out = [weights] if weights else []
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

def train_method_word(params: dict[str, Any]) -> str:
    """llm.train's method in words: "full training" or "LoRA (rank r)"."""
    return "full training" if params["method"] == "full" else f"LoRA (rank {params['lora_rank']})"


def train_method(arch: Architecture, params: dict[str, Any], precision: Any, fpt: int, fp8_fpt: int, world: int,
                 tokens_per_step: int, timed_windows: int, window_steps: int, memory: Any) -> str:
    """llm.train's method paragraph: the model and method, the precision, the step, the timed windows, the
    FLOPs per token and MFU's arithmetic, and the memory estimate (``memory``: a
    :class:`.training_arithmetic.TrainingMemory`)."""
    in_precision = (f"{precision.label}: each block's q/k/v, out, up and down matmuls in {FP8.label} (tensorwise "
                    "dynamic scaling, one FP32 scale per tensor from its amax at every step; input and weight e4m3 "
                    "forward, gradient e5m2 backward; torch._scaled_mm, FP32 accumulation, BF16 results), FP32 "
                    f"master weights and AdamW, everything else {BF16_AMP.label} (torch.autocast)") if fp8_fpt \
        else f"{precision.label} (torch.autocast)"
    mfu_text = (f"MFU = tokens/s per GPU × ({FP8.label} FLOPs per token / {FP8.label} peak + other FLOPs per token / "
                f"{BF16.label} peak): the block matmuls' {fp8_fpt:,} FLOPs per token (6 × their parameters) against "
                f"the {FP8.label} figure, attention's and the output projection's {fpt - fp8_fpt:,} against the "
                f"{BF16.label} one, each against the datasheet's dense peaks and against the matmul rates measured "
                f"in this run ({FP8.label} with tensorwise scales, as the blocks multiply)") if fp8_fpt else (
        "MFU = tokens/s per GPU × FLOPs per token / peak, against the datasheet's dense peak and against the matmul "
        "rate measured in this run")
    return (
        f"{arch.name} {train_method_word(params)}, {in_precision}, sequence {params['seq']}, micro-batch "
        f"{params['micro_batch']} × grad_accum {params['grad_accum']} × {world} GPU(s) = {tokens_per_step:,} tokens "
        f"per optimizer step, random token ids made on the device once, next-token cross-entropy. "
        f"{'Activation checkpointing per block. ' if params['checkpointing'] else ''}"
        f"{'Each block and the loss chunk compiled (torch.compile, default mode). ' if params['compile'] else ''}"
        f"Step = forward, backward, AdamW (fused where PyTorch has it), zero_grad; the output projection and loss "
        f"fused a chunk of tokens at a time (no whole FP32 logits). {params['warmup']} warm-up steps, then "
        f"{timed_windows} timed windows of {window_steps} steps; each "
        f"window's tokens/s = its tokens / its wall time (synchronised); the figure is their median. "
        f"FLOPs per token {fpt:,} ("
        + ("6 × matmul parameters + 12 · layers · heads · head_dim · seq" if params["method"] == "full" else
           "frozen base: 4 × matmul parameters + 12 · layers · heads · head_dim · seq + the adapters' "
           "6 · r · (in + out)")
        + f"; recomputation not counted). {mfu_text}. Memory estimate: "
        f"{memory.scheme}; " + "; ".join(memory.lines()) + "."
    )


def weights_line(held: Storage, arch: Architecture, kernel: str | None = None) -> str:
    """One line naming quantized weights and what a decoding step reads of them ("" for unquantized weights)."""
    if not held.weight_only:
        return ""
    parts = held.weights.parts(arch)
    how = "" if held.weight_only != "int4" else f"; int4 product: {kernel}" if kernel else ""
    return (f"weights: {WEIGHT_ONLY_DETAILS[held.weight_only]}; a step reads {_bytes(sum(parts.values()))} of "
            f"weights ({_bytes(parts['quantized_weights'])} quantized, {_bytes(parts['scales_and_zeros'])} scales"
            f"{' and zeros' if held.weights.group_per_weight else ''}, {_bytes(parts['other_weights'])} BF16){how}")


def _bytes(count: float) -> str:
    """Bytes in decimal units, GB from a billion, MB below."""
    return f"{count / 1e9:.3f} GB" if count >= 1e9 else f"{count / 1e6:.3f} MB"


def int4_product(held: Storage, asked: str, device: str, step: str, warnings: list[str]
                 ) -> tuple[str | None, str | None]:
    """For int4 weights: the route ``int4_kernel`` = ``asked`` resolves to on ``device`` at decoding ``step``
    (:func:`.weight_only.int4_route`) and what multiplies the weights, in words, with a warning where the route costs
    the figures something (no packed kernel for the device, a GPU prompt through the packed kernel, nibbles decoded
    outside torch.compile); (None, None) for other weights."""
    if held.weight_only != "int4":
        return None, None
    from hwbench_gui.engine.models.llm.weight_only import INT4_FALLBACK, INT4_ROUTES, int4_route

    kernel, route = int4_route(asked, device)
    if kernel is not None:
        if kernel == "cuda":
            warnings.append("int4 in the packed layout: the prompt pass too goes through _weight_int4pack_mm, a kernel "
                            "made for a few rows (the packed layout has no cheap way back to BF16 for cuBLAS); "
                            "int4_kernel=compiled dequantises each layer for it instead")
        return route, (f"torch.ops.aten._weight_int4pack_mm{'_for_cpu' if kernel == 'cpu' else ''} (packed int4, "
                       "groups of 128) at every row count")
    if asked == "packed":
        warnings.append(f"weights=int4: {INT4_FALLBACK}")
        return route, INT4_FALLBACK
    if step not in ("compile", "fused"):
        warnings.append(f"int4_kernel=compiled with step={step}: the one-token expression is fused only under "
                        "torch.compile, so each step dequantises every int4 layer to BF16 and reads more than the "
                        "0.5 byte a weight the tg bound counts")
    return route, INT4_ROUTES[route]
