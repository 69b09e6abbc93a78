"""Each weight-only layer of llama-3.1-8b's shapes timed alone on a GPU, beside BF16: a prompt's product
(``--rows`` rows, default 512: the dequantised weight times cuBLAS, or the packed int4 kernel) and a one-token
product (compiled with step=fused's Inductor settings: the converted weight's reduction for int8/FP8, the grouped
nibble expression for int4 "compiled", the packed kernel for int4 "packed"). Prints, per layer and kind, the time,
the prompt's TFLOP/s and the one-token product's GB/s of quantized bytes read; writes the rows as JSON to
``$OUT/quant_layers.json`` where ``$OUT`` is set. What to expect of the prompt from the arithmetic: dequantising
costs 3 bytes a weight for int8 and 2.5 for int4 (read, write BF16) beside cuBLAS's product.

    PYTHONPATH=. python3 scripts/llm_quant_layers.py [--rows 512] [--repeats 20]
"""

from __future__ import annotations

import argparse
import json
import os

import torch

from hwbench_gui.engine.measure.timing import time_cuda
from hwbench_gui.engine.models.llm import weight_only as wo
from hwbench_gui.engine.models.llm.architectures import builtin
from hwbench_gui.engine.models.llm.generate import FUSED_INDUCTOR_OPTIONS, capture


def _seconds(fn, repeats: int, inner: int = 1) -> float:
    """Median seconds of one call of ``fn`` over ``repeats`` windows of ``inner`` calls each (CUDA events)."""
    times = time_cuda(fn, repeats=repeats, inner=inner, warmup=3)
    return sorted(times)[len(times) // 2]


def _layers(kind: str, n: int, k: int, weight: torch.Tensor):
    if kind == "bf16":
        layer = torch.nn.Linear(k, n, bias=False, dtype=torch.bfloat16, device="cuda")
        layer.weight.data.copy_(weight)
        return layer, 2 * n * k
    if kind.startswith("int4"):
        layer = wo.Int4Linear(k, n, False, "cuda" if kind == "int4-packed" else None, device="cuda")
    else:
        layer = wo.ChannelLinear(k, n, False, kind, device="cuda", fp8_prompts=wo.fp8_prompt_products("cuda"))
    layer.set_weight(weight)
    per_weight = {"int8": 1, "fp8": 1}.get(kind, 0.5 + 4 / wo.INT4_GROUP)
    return layer, int(n * k * per_weight)


def _measure(kind: str, weight: torch.Tensor, x: torch.Tensor, repeats: int) -> dict:
    """One layer of ``kind`` holding ``weight``: its prompt product of ``x`` and its compiled one-token product."""
    n, k = weight.shape
    layer, stored = _layers(kind, n, k, weight)
    prompt_s = _seconds(lambda: layer(x), repeats)
    step = torch.compile(layer, fullgraph=True, dynamic=False, options=FUSED_INDUCTOR_OPTIONS)
    one = x[:1].clone()
    # replayed from a CUDA graph, as step=fused runs it: a 25 MB matrix is read in ~10 us, less than launching a
    # compiled function from Python takes
    graph = capture(torch, lambda: step(one))
    token_s = _seconds(graph.replay, repeats, inner=20)
    return {"out": n, "in": k, "kind": kind, "rows": x.shape[0], "prompt_s": prompt_s,
            "prompt_tflops": 2 * x.shape[0] * n * k / prompt_s / 1e12, "token_s": token_s,
            "token_gbps": stored / token_s / 1e9, "stored_bytes": stored}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=512)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    arch = builtin("llama-3.1-8b")
    shapes = {"qkv": (arch.q_size + 2 * arch.kv_size, arch.hidden), "out": (arch.hidden, arch.q_size),
              "up": (2 * arch.intermediate, arch.hidden), "down": (arch.hidden, arch.intermediate),
              "head": (arch.vocab, arch.hidden)}
    torch._dynamo.config.recompile_limit = 64
    rows = []
    print(f"{'layer':6} {'kind':12} {'prompt ms':>10} {'TFLOP/s':>8} {'token us':>9} {'GB/s':>7}")
    with torch.no_grad():
        for name, (n, k) in shapes.items():
            weight = torch.randn(n, k, dtype=torch.bfloat16, device="cuda") * 0.02
            x = torch.randn(args.rows, k, dtype=torch.bfloat16, device="cuda")
            for kind in ("bf16", "int8", "fp8", "int4", "int4-packed"):
                row = {"layer": name, **_measure(kind, weight, x, args.repeats)}
                rows.append(row)
                print(f"{name:6} {kind:12} {row['prompt_s'] * 1e3:10.3f} {row['prompt_tflops']:8.0f} "
                      f"{row['token_s'] * 1e6:9.1f} {row['token_gbps']:7.0f}", flush=True)
                torch.cuda.empty_cache()
    if os.environ.get("OUT"):
        with open(os.path.join(os.environ["OUT"], "quant_layers.json"), "w") as handle:
            json.dump({"torch": torch.__version__, "device": torch.cuda.get_device_name(), "rows": rows}, handle,
                      indent=1)


if __name__ == "__main__":
    main()
