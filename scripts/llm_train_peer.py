"""The peer llm.train is held against: a plain Hugging Face transformers training loop at llm.train's settings.

    python3 scripts/llm_train_peer.py --model gpt2-124m --seq 1024 --micro-batch 32 --out /tmp/peer.json   (GPU box)
    python3 scripts/llm_train_peer.py --model llama-3.1-8b --method lora --seq 2048 --micro-batch 4 --out ...
    python3 scripts/llm_train_peer.py --model tiny --device cpu --seq 32 --micro-batch 2 --steps 2 --no-compile
        (a check)

The loop people write from transformers' documentation: ``AutoModelForCausalLM.from_config`` (random
initialised, the same architecture as hwbench's declaration: GPT2Config, LlamaConfig or Qwen2Config),
``attn_implementation="sdpa"``, the model compiled with ``torch.compile`` (default mode), BF16 autocast
with FP32 weights (full training) or the base in BF16 with peft's LoRA adapters on the attention and MLP
projections (rank and alpha as llm.train's), ``model(input_ids, labels=input_ids)`` (transformers shifts the
labels and computes the loss on FP32 logits), fused AdamW, random token ids. Figures: tokens/s of
``--windows`` timed windows of ``--steps`` steps after ``--warmup`` steps (median, p5-p95), the peak memory,
and MFU with hwbench's own FLOPs per token and datasheet peak (the same definitions as llm.train's, so the
two compare). A micro-batch that runs out of memory is recorded and halved until one fits (transformers'
FP32 logits of a 128k vocabulary take 8 GB for 16k tokens, and as much for their gradient).

transformers (and peft for LoRA) are not hwbench dependencies; this script needs them (and torch).
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

from hwbench_gui.engine.inventory import datasheets
from hwbench_gui.engine.measure.stats import percentile
from hwbench_gui.engine.models.llm import training_arithmetic as ta
from hwbench_gui.engine.models.llm.architectures import Architecture, builtin

GPT2_LORA_TARGETS = ["c_attn", "c_proj", "c_fc"]
LLAMA_LORA_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def hf_config(arch: Architecture):
    """The transformers config of hwbench's architecture ``arch`` (GPT-2, Llama or Qwen2 shaped)."""
    if arch.positional == "learned":
        from transformers import GPT2Config

        return GPT2Config(vocab_size=arch.vocab, n_positions=arch.max_positions, n_embd=arch.hidden,
                          n_layer=arch.layers, n_head=arch.heads, n_inner=arch.intermediate,
                          activation_function="gelu_new", layer_norm_epsilon=arch.norm_eps, resid_pdrop=0.0,
                          embd_pdrop=0.0, attn_pdrop=0.0, tie_word_embeddings=True, attn_implementation="sdpa")
    scaling = arch.rope_scaling.to_hf() if arch.rope_scaling else None
    common = dict(vocab_size=arch.vocab, hidden_size=arch.hidden, num_hidden_layers=arch.layers,
                  num_attention_heads=arch.heads, num_key_value_heads=arch.kv_heads,
                  intermediate_size=arch.intermediate, max_position_embeddings=arch.max_positions,
                  rms_norm_eps=arch.norm_eps, rope_theta=arch.rope_theta, tie_word_embeddings=arch.tied_embeddings,
                  attn_implementation="sdpa", bos_token_id=None, eos_token_id=None, pad_token_id=0)
    if arch.bias == "qkv":
        from transformers import Qwen2Config

        return Qwen2Config(**common, rope_scaling=scaling)
    from transformers import LlamaConfig

    return LlamaConfig(**common, head_dim=arch.head_dim, rope_scaling=scaling)


def build(torch, arch: Architecture, args):
    from transformers import AutoModelForCausalLM

    lora = args.method == "lora"
    dtype = torch.bfloat16 if lora else torch.float32
    with torch.device(args.device):
        model = AutoModelForCausalLM.from_config(hf_config(arch), dtype=dtype)
    model.train()
    adapters = None
    if lora:
        targets = GPT2_LORA_TARGETS if arch.positional == "learned" else LLAMA_LORA_TARGETS
        try:
            from peft import LoraConfig, get_peft_model
        except ImportError:  # no peft on this machine: hwbench's adapters on the same transformers modules
            from hwbench_gui.engine.models.llm.lora import apply_lora

            for param in model.parameters():
                param.requires_grad_(False)
            apply_lora(model, args.lora_rank, args.lora_alpha, tuple(targets))
            adapters = "hwbench_gui.engine.models.llm.lora (peft is not installed)"
        else:
            model = get_peft_model(model, LoraConfig(r=args.lora_rank, lora_alpha=args.lora_alpha, lora_dropout=0.0,
                                                     target_modules=targets))
            for param in model.parameters():
                if param.requires_grad:
                    param.data = param.data.float()  # FP32 adapters, as llm.train's
            import peft

            adapters = f"peft {peft.__version__}"
    return model, adapters


def run_at(torch, arch: Architecture, args, micro_batch: int) -> dict:
    cuda = args.device.startswith("cuda")
    model, adapters = build(torch, arch, args)
    net = torch.compile(model) if args.compile else model
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=3e-4, betas=(0.9, 0.95), weight_decay=0.1, fused=cuda or None)
    generator = torch.Generator(device=args.device).manual_seed(0)
    batches = [torch.randint(0, arch.vocab, (micro_batch, args.seq), device=args.device, generator=generator)
               for _ in range(args.grad_accum)]
    device_type = "cuda" if cuda else "cpu"

    def step():
        for ids in batches:
            with torch.autocast(device_type, dtype=torch.bfloat16):
                loss = net(input_ids=ids, labels=ids).loss
            (loss / len(batches)).backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss

    def sync():
        if cuda:
            torch.cuda.synchronize()

    start = time.perf_counter()
    for _ in range(args.warmup):
        step()
    sync()
    warmup_s = time.perf_counter() - start
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    tokens = micro_batch * args.grad_accum * args.seq
    rates = []
    for _ in range(args.windows):
        sync()
        start = time.perf_counter()
        for _ in range(args.steps):
            loss = step()
        sync()
        rates.append(args.steps * tokens / (time.perf_counter() - start))
    dims = ta.dims_of(arch, args.method, args.lora_rank)
    fpt = ta.flops_per_token(dims, args.seq, args.method, args.lora_rank)
    name = torch.cuda.get_device_name() if cuda else None
    sheet = datasheets.lookup(name)
    peak = sheet.peak_tflops("bf16") if sheet else None
    median = statistics.median(rates)
    return {"micro_batch": micro_batch, "tokens_per_step": tokens, "tokens_per_s": median,
            "p5": percentile(rates, 5), "p95": percentile(rates, 95), "samples": rates,
            "flops_per_token": fpt, "mfu_datasheet": ta.mfu(median, fpt, peak), "peak_tflops": peak,
            "gpu": name, "warmup_s": warmup_s, "final_loss": float(loss.detach().float()),
            "peak_allocated_gib": torch.cuda.max_memory_allocated() / ta.GIB if cuda else None,
            "trainable_params": sum(p.numel() for p in trainable), "adapters": adapters}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="gpt2-124m")
    parser.add_argument("--method", choices=("full", "lora"), default="full")
    parser.add_argument("--seq", type=int, default=1024)
    parser.add_argument("--micro-batch", type=int, default=16)
    parser.add_argument("--grad-accum", type=int, default=1)
    parser.add_argument("--lora-rank", type=int, default=16)
    parser.add_argument("--lora-alpha", type=float, default=32.0)
    parser.add_argument("--steps", type=int, default=10, help="steps per timed window")
    parser.add_argument("--windows", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--no-compile", dest="compile", action="store_false")
    parser.add_argument("--out", default="")
    args = parser.parse_args()

    import torch
    import transformers

    arch = builtin(args.model)
    record = {"peer": "transformers training loop", "model": args.model, "method": args.method, "seq": args.seq,
              "grad_accum": args.grad_accum, "compile": "torch.compile(default)" if args.compile else None,
              "precision": "BF16-AMP", "transformers": transformers.__version__, "torch": torch.__version__,
              "asked_micro_batch": args.micro_batch, "out_of_memory_at": [], "error": None}
    micro_batch = args.micro_batch
    while micro_batch >= 1:
        try:
            record.update(run_at(torch, arch, args, micro_batch))
            break
        except torch.cuda.OutOfMemoryError as exc:
            record["out_of_memory_at"].append(micro_batch)
            print(f"micro-batch {micro_batch}: out of memory ({str(exc).splitlines()[0][:160]})", flush=True)
        except Exception as exc:  # the peer's failure is a result to report, not a crash to hide
            record["error"] = f"{type(exc).__name__}: {exc}"
            traceback.print_exc()
            break
        import gc

        gc.collect()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
        micro_batch //= 2
    if "tokens_per_s" in record:
        mfu = record["mfu_datasheet"]
        print(f"peer {args.model} {args.method} seq {args.seq} micro-batch {record['micro_batch']}: "
              f"{record['tokens_per_s']:,.0f} tokens/s (p5 {record['p5']:,.0f}, p95 {record['p95']:,.0f})"
              + (f", MFU {mfu:.3f} of {record['peak_tflops']:g} TFLOP/s" if mfu is not None else ""), flush=True)
    elif not record["error"]:
        record["error"] = "out of memory at every micro-batch down to 1"
    if args.out:
        with open(args.out, "w") as handle:
            json.dump(record, handle, indent=1)
    return 0 if "tokens_per_s" in record else 1


if __name__ == "__main__":
    raise SystemExit(main())
