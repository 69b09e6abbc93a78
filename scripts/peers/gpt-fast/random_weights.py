"""gpt-fast's own generation (generate.py's ``generate`` and its ``--compile`` setting: ``decode_one_token``
compiled with mode="reduce-overhead", fullgraph=True, and its Inductor settings set at import) on a model of random
weights in BF16, or int8 weight-only by quantize.py's WeightOnlyInt8QuantHandler (every linear layer, the output
projection included), timed as generate.py's ``main`` times it: tokens generated ÷ the wall time of ``generate``
(prefill of a short prompt included), after one untimed run that compiles. Random weights instead of a checkpoint
(no download; speed does not depend on the values) and no tokenizer (a synthetic prompt, as generate.py's
``--prompt N`` makes; nothing is decoded to text): its ``tokenizer`` module (sentencepiece, tiktoken) is replaced by a
stub, the rest is gpt-fast's code unchanged (commit in README.md). Prints one JSON line per run:

    python scripts/peers/gpt-fast/random_weights.py --model llama-3.1-8b --weights int8 --max-new-tokens 128
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import types
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
_stub = types.ModuleType("tokenizer")


def _no_tokenizer(*_args, **_kwargs):
    raise RuntimeError("random weights: no tokenizer")


_stub.get_tokenizer = _no_tokenizer
sys.modules.setdefault("tokenizer", _stub)

import generate as gf  # noqa: E402  (gpt-fast's generate.py: sets its Inductor settings on import)
from model import Transformer  # noqa: E402


def build(name: str, weights: str, device: str) -> Transformer:
    torch.manual_seed(0)
    torch.set_default_dtype(torch.bfloat16)
    with torch.device(device):
        model = Transformer.from_name(name)
    torch.set_default_dtype(torch.float32)
    if weights == "int8":
        from quantize import WeightOnlyInt8QuantHandler

        handler = WeightOnlyInt8QuantHandler(model)
        state = handler.create_quantized_state_dict()
        model = handler.convert_for_runtime()
        model.load_state_dict(state, assign=True)
    return model.to(device=device).eval()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="llama-3.1-8b")
    parser.add_argument("--weights", choices=("bf16", "int8"), default="bf16")
    parser.add_argument("--max-new-tokens", type=int, default=128)
    parser.add_argument("--prompt-tokens", type=int, default=6)
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--no-compile", action="store_true", help="eager (a smoke test where compiling is too slow)")
    args = parser.parse_args()
    device = args.device
    started = time.perf_counter()
    model = build(args.model, args.weights, device)
    built_s = time.perf_counter() - started
    if not args.no_compile:
        gf.decode_one_token = torch.compile(gf.decode_one_token, mode="reduce-overhead", fullgraph=True)
    prompt = torch.randint(0, 1024, (args.prompt_tokens,), device=device, dtype=torch.int64)
    rates, compile_s = [], None
    for sample in range(-1, args.samples):  # -1: compilation, untimed (as generate.py's main with --compile)
        gf.device_sync(device)
        t0 = time.perf_counter()
        y, _ = gf.generate(model, prompt, args.max_new_tokens, batch_size=1, interactive=False, draft_model=None,
                           temperature=0.8, top_k=200)
        gf.device_sync(device)
        seconds = time.perf_counter() - t0
        if sample < 0:
            compile_s = seconds
            continue
        rates.append((y.size(-1) - args.prompt_tokens) / seconds)
    size = sum(t.numel() * t.element_size() for name, t in [*model.named_parameters(), *model.named_buffers()]
               if not any(part in name for part in ("kv_cache", "freqs_cis", "causal_mask")))
    peer = "gpt-fast generate.py" + ("" if args.no_compile else " --compile")
    print(json.dumps({"peer": peer, "model": args.model, "weights": args.weights,
                      "max_new_tokens": args.max_new_tokens, "prompt_tokens": args.prompt_tokens,
                      "tokens_per_s": rates, "tokens_per_s_median": statistics.median(rates),
                      "build_s": built_s, "compile_run_s": compile_s, "model_bytes": size,
                      "compiled": not args.no_compile, "torch": torch.__version__,
                      "gpu": torch.cuda.get_device_name() if device.startswith("cuda") else device}), flush=True)


if __name__ == "__main__":
    main()
