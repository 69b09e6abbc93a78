"""The peer llm.infer is held against: Hugging Face transformers' ``generate`` on a random-initialised
LlamaForCausalLM of the same architecture, at llm.infer's settings (batch 1, greedy, BF16, SDPA).

    python3 scripts/llm_peer.py --model llama-3.1-8b --out /tmp/peer.json            (GPU box)
    python3 scripts/llm_peer.py --model tiny --device cpu --tg 8 --pp 32 --out /tmp/peer.json   (a check)

Three variants, each in its own try (a failure is recorded with its message, never hidden):
- ``eager``: ``generate`` with transformers' default (dynamic) cache and no compilation.
- ``static_compile``: what transformers' documentation recommends for speed ("LLM inference optimization"):
  ``cache_implementation="static"`` and the forward compiled with ``torch.compile(mode="reduce-overhead",
  fullgraph=True)`` (with transformers 5.17 on an H100 it ends in a CUDA-graphs "overwritten tensor" error).
- ``static_auto``: ``cache_implementation="static"`` alone: transformers 5 then compiles the forward itself
  (``generate``'s automatic compilation with its ``CompileConfig``).
Figures (tokens/s, median and p5-p95 over ``--repeats`` windows after warm-up): tg N = N new tokens after
the context (``generate`` with N + 1 new tokens minus the same with 1, so the prompt's processing is not
counted), pp N = a prompt of N tokens processed by ``generate`` with one new token. Depths other than 0
(``--depths 0,4096``) put that many random tokens before the prompt. transformers is not a hwbench
dependency; this script needs it (and torch) installed. The architecture comes from hwbench's declaration
(Llama-shaped models: ``tiny``'s q/k/v bias is dropped, as Llama has none).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from hwbench_gui.engine.measure.stats import percentile
from hwbench_gui.engine.models.llm.architectures import builtin


def llama_config(name: str):
    from transformers import LlamaConfig

    arch = builtin(name)
    if arch.positional != "rope" or arch.mlp != "swiglu":
        raise SystemExit(f"{name} is not Llama-shaped (RoPE, SwiGLU): the peer runs LlamaForCausalLM only")
    scaling = arch.rope_scaling.to_hf() if arch.rope_scaling else None
    return LlamaConfig(vocab_size=arch.vocab, hidden_size=arch.hidden, num_hidden_layers=arch.layers,
                       num_attention_heads=arch.heads, num_key_value_heads=arch.kv_heads, head_dim=arch.head_dim,
                       intermediate_size=arch.intermediate, max_position_embeddings=arch.max_positions,
                       rms_norm_eps=arch.norm_eps, rope_theta=arch.rope_theta, rope_scaling=scaling,
                       tie_word_embeddings=arch.tied_embeddings, attn_implementation="sdpa",
                       bos_token_id=None, eos_token_id=None, pad_token_id=0)


def timed(torch, device: str, fn) -> float:
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    start = time.perf_counter()
    fn()
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return time.perf_counter() - start


def summary(values: list[float]) -> dict:
    return {"median": statistics.median(values), "p5": percentile(values, 5), "p95": percentile(values, 95),
            "samples": values}


def measure(torch, model, device: str, args, generate_kwargs: dict) -> dict:
    results = {}
    vocab = model.config.vocab_size
    generator = torch.Generator(device="cpu").manual_seed(0)

    def generate(ids, new: int):
        return model.generate(ids, max_new_tokens=new, min_new_tokens=new, do_sample=False, **generate_kwargs)

    for depth in args.depths:
        context = torch.randint(0, vocab, (1, depth + args.pp), generator=generator).to(device)
        prompt = context[:, : depth + args.pp]
        for _ in range(args.warmup):
            generate(prompt, 1)
            generate(context[:, : max(1, depth)], args.tg + 1)
        pp = [args.pp / timed(torch, device, lambda: generate(prompt, 1)) for _ in range(args.repeats)]
        if depth:  # the depth's own processing is subtracted: pp N counts the last N tokens only
            base = statistics.median(timed(torch, device, lambda: generate(context[:, :depth], 1))
                                     for _ in range(args.repeats))
            pp = [args.pp / max(1e-9, args.pp / v - base) for v in pp]
        results[f"pp{args.pp} @ depth {depth}"] = summary(pp)
        start = context[:, : max(1, depth)]
        tg = []
        for _ in range(args.repeats):
            first = timed(torch, device, lambda: generate(start, 1))
            whole = timed(torch, device, lambda: generate(start, args.tg + 1))
            tg.append(args.tg / max(1e-9, whole - first))
        results[f"tg{args.tg} @ depth {depth}"] = summary(tg)
        for name in (f"pp{args.pp} @ depth {depth}", f"tg{args.tg} @ depth {depth}"):
            print(f"  {name}: {results[name]['median']:.1f} tokens/s (p5 {results[name]['p5']:.1f}, "
                  f"p95 {results[name]['p95']:.1f})", flush=True)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="llama-3.1-8b")
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--precision", default="bf16", choices=("bf16", "fp16", "fp32"))
    parser.add_argument("--pp", type=int, default=512)
    parser.add_argument("--tg", type=int, default=128)
    parser.add_argument("--depths", default="0", help="comma-separated context depths (default 0)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--variants", default="eager,static_compile")
    parser.add_argument("--out", default="llm_peer.json")
    args = parser.parse_args()
    args.depths = [int(d) for d in args.depths.split(",") if d.strip()]

    import torch
    import transformers
    from transformers import LlamaForCausalLM

    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[args.precision]
    config = llama_config(args.model)
    torch.manual_seed(0)
    previous = torch.get_default_dtype()
    torch.set_default_dtype(dtype)  # weights made in the run's dtype on the device, as llm.infer makes them
    with torch.device(args.device):
        model = LlamaForCausalLM(config).eval()
    torch.set_default_dtype(previous)
    doc = {"tool": "transformers generate", "transformers": transformers.__version__, "torch": torch.__version__,
           "model": args.model, "precision": args.precision.upper(), "device": args.device,
           "device_name": torch.cuda.get_device_name(args.device) if args.device.startswith("cuda") else "cpu",
           "batch": 1, "pp": args.pp, "tg": args.tg, "depths": args.depths, "repeats": args.repeats,
           "attention": "sdpa", "variants": {}}
    forward = model.forward
    for variant in args.variants.split(","):
        print(f"{variant}:", flush=True)
        started = time.perf_counter()
        try:
            with torch.inference_mode():
                if variant == "eager":
                    model.forward = forward
                    figures = measure(torch, model, args.device, args, {})
                elif variant == "static_auto":
                    # transformers 5 compiles the forward itself when the cache is static (its CompileConfig),
                    # marking each CUDA-graph step as it goes: what its documentation recommends today
                    model.forward = forward
                    figures = measure(torch, model, args.device, args, {"cache_implementation": "static"})
                elif variant == "static_compile":
                    model.forward = torch.compile(forward, mode="reduce-overhead", fullgraph=True)
                    figures = measure(torch, model, args.device, args, {"cache_implementation": "static"})
                else:
                    raise SystemExit(f"unknown variant {variant}")
            doc["variants"][variant] = {"status": "ok", "figures": figures}
        except Exception as exc:  # the peer's own failure is a result: record it and go on
            print(f"  failed: {type(exc).__name__}: {exc}", flush=True)
            doc["variants"][variant] = {"status": "failed", "error": f"{type(exc).__name__}: {exc}",
                                        "traceback": traceback.format_exc()[-4000:]}
        doc["variants"][variant]["wall_s"] = time.perf_counter() - started
        with open(args.out, "w") as handle:
            json.dump(doc, handle, indent=1)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
