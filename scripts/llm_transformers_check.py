"""hwbench's decoder against transformers' own models, on the CPU: small random Llama (with Llama 3.1's RoPE
scaling), Qwen2 (q/k/v bias, tied embeddings) and GPT-2 models saved by transformers as safetensors, loaded by
hwbench's loader, and the largest difference of their logits printed.

    .venv/bin/python scripts/llm_transformers_check.py      (needs transformers: pip install transformers)

Last run (transformers 5.25, torch 2.14 CPU, FP32): largest |Δlogit| 1.8e-7 (Llama), 2.4e-7 (Qwen2),
1.5e-7 (GPT-2), logits of magnitude 0.6-1.5.
"""

from __future__ import annotations

import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from hwbench_gui.engine.models.llm import weights


def main() -> int:
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(0)
    small = dict(vocab_size=300, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                 intermediate_size=96, max_position_embeddings=20000)
    cases = [
        (LlamaForCausalLM, LlamaConfig(**small, rope_theta=500000.0, rope_scaling={
            "rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8192})),
        (Qwen2ForCausalLM, Qwen2Config(**small, rope_theta=1e6, tie_word_embeddings=True)),
        (GPT2LMHeadModel, GPT2Config(vocab_size=300, n_embd=64, n_layer=2, n_head=4, n_positions=128)),
    ]
    worst = 0.0
    for cls, config in cases:
        reference = cls(config).eval()
        with tempfile.TemporaryDirectory() as folder:
            reference.save_pretrained(folder)
            ours = weights.load(folder, torch.float32, "cpu")
        tokens = torch.randint(0, 300, (1, 30))
        with torch.no_grad():
            theirs, mine = reference(tokens).logits, ours(tokens)
        difference = (theirs - mine).abs().max().item()
        worst = max(worst, difference)
        print(f"{cls.__name__}: largest |Δlogit| {difference:.2g} (logits up to {theirs.abs().max().item():.2g})")
    return 0 if worst < 1e-4 else 1


if __name__ == "__main__":
    sys.exit(main())
