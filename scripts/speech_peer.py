"""The peer speech.transcribe is held against: Hugging Face transformers' ``WhisperForConditionalGeneration.generate``
at its defaults on a random-initialised Whisper of the same architecture (from hwbench's declaration), same batch,
same precision, same number of tokens per 30-second window.

    python3 scripts/speech_peer.py --model large-v3 --batch 1 --out /tmp/peer.json          (GPU box)
    python3 scripts/speech_peer.py --model tiny --device cpu --batch 1 --tokens 8 --repeats 2 --out /tmp/p.json

``generate`` is called as users call it: log-mel features in, its own defaults (SDPA attention, the dynamic cache, no
compilation, greedy), with ``max_new_tokens = min_new_tokens = --tokens`` so that every window transcribes the same
number of tokens as hwbench's run (a random model would otherwise stop at a random end token). Its prompt is what the
random configuration's generation config gives (<|startoftranscript|> alone: a random config has no language or task
tokens), one token where hwbench's run processes four. The encoder runs inside ``generate``, so one call is a whole
window: real-time factor = batch × 30 s / call time, timed with a CUDA synchronize (perf_counter on a CPU), one warm-up
call, then ``--repeats`` timed calls; median and p5-p95. The input is the same synthesised audio's log-mel as hwbench's.
A failure is written to the document with its message, never hidden.
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

from hwbench_gui.engine.measure.stats import percentile  # noqa: E402
from hwbench_gui.engine.models.speech.architectures import BUILT_IN, WINDOW_S, to_hf_config  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="large-v3", choices=sorted(BUILT_IN))
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--precision", default="bf16", choices=("bf16", "fp16", "fp32"))
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    doc = {"peer": "transformers WhisperForConditionalGeneration.generate (defaults)", "model": args.model,
           "batch": args.batch, "tokens_per_window": args.tokens, "precision": args.precision.upper(),
           "window_s": WINDOW_S}
    try:
        doc.update(measure(args))
    except Exception as exc:  # the peer's failure is a result too: recorded with its message
        doc["error"] = f"{type(exc).__name__}: {str(exc)[:500]}"
        doc["traceback"] = traceback.format_exc()[-3000:]
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
    shown = {k: v for k, v in doc.items() if k not in ("traceback", "seconds", "real_time_factor", "tokens_per_s")}
    print(json.dumps(shown))
    return 0 if "error" not in doc else 1


def measure(args: argparse.Namespace) -> dict:
    import torch
    import transformers

    from hwbench_gui.engine.models.speech import audio

    arch = BUILT_IN[args.model]
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[args.precision]
    config = transformers.WhisperConfig(**{k: v for k, v in to_hf_config(arch).items() if k != "model_type"})
    torch.manual_seed(0)
    with torch.device(args.device):
        model = transformers.WhisperForConditionalGeneration(config)
    model = model.to(dtype).eval()
    mel = audio.log_mel(audio.speech_like(args.batch, device=args.device), arch.mels).to(dtype)
    cuda = args.device.startswith("cuda")

    def call() -> tuple[float, int]:
        if cuda:
            torch.cuda.synchronize()
        start = time.perf_counter()
        with torch.no_grad():
            out = model.generate(input_features=mel, max_new_tokens=args.tokens, min_new_tokens=args.tokens)
        if cuda:
            torch.cuda.synchronize()
        sequences = out if isinstance(out, torch.Tensor) else out["sequences"]
        return time.perf_counter() - start, int(sequences.shape[1])

    call()  # warm-up
    seconds, lengths = [], []
    for _ in range(args.repeats):
        s, n = call()
        seconds.append(s)
        lengths.append(n)
    rtf = [args.batch * WINDOW_S / s for s in seconds]
    return {"seconds": seconds, "returned_tokens": lengths, "real_time_factor": rtf,
            "tokens_per_s": [args.batch * args.tokens / s for s in seconds],
            "real_time_factor_median": statistics.median(rtf),
            "real_time_factor_p5_p95": [percentile(rtf, 5.0), percentile(rtf, 95.0)],
            "prompt": list(map(int, [model.generation_config.decoder_start_token_id])),
            "attn_implementation": str(getattr(model.config, "_attn_implementation", None)),
            "transformers": transformers.__version__, "torch": torch.__version__,
            "device": torch.cuda.get_device_name() if cuda else "cpu"}


if __name__ == "__main__":
    sys.exit(main())
