"""Generation beside the model, through its public API (build_model, new_cache, prefill, Stepper): greedy tokens
from a prompt pass and one-token steps over the KV cache are the tokens a full forward pass without a cache picks
at every length, for a batch of sequences."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from hwbench_gui.engine.models.llm import architectures as archs  # noqa: E402
from hwbench_gui.engine.models.llm import generate  # noqa: E402

TINY = archs.builtin("tiny")


def test_prefill_then_steps_pick_the_tokens_a_full_pass_picks():
    with torch.inference_mode():
        model = generate.build_model(torch, "tiny", TINY, torch.float32, "cpu", positions=64)
        prompts = torch.randint(0, TINY.vocab, (3, 7), generator=torch.Generator().manual_seed(2))
        cache = generate.new_cache(model, batch=3, positions=32)
        logits = generate.prefill(model, prompts, cache)
        assert logits.shape == (3, TINY.vocab)
        stepper = generate.Stepper(torch, model, cache, batch=3, mode="eager")
        stepper.tokens.copy_(logits.argmax(dim=-1, keepdim=True))
        stepper.at(prompts.shape[1])
        cached = [stepper.tokens.clone()]
        for _ in range(5):
            stepper.step()
            cached.append(stepper.tokens.clone())
        cached = torch.cat(cached, dim=1)

        # the same greedy continuation recomputed from scratch: every position's logits from a pass without a cache
        sequence = prompts
        for _ in range(6):
            nxt = model(sequence)[:, -1].argmax(dim=-1, keepdim=True)
            sequence = torch.cat([sequence, nxt], dim=1)
    assert torch.equal(cached, sequence[:, prompts.shape[1]:])
    assert int(stepper.position) == prompts.shape[1] + 5


def test_fill_writes_the_first_positions_only():
    with torch.inference_mode():
        model = generate.build_model(torch, "tiny", TINY, torch.float32, "cpu", positions=64)
        cache = generate.new_cache(model, batch=2, positions=40)
        generate.fill(torch, model, cache, depth=20, chunk=8, batch=2)
    assert cache.k[:, :, :, :20].abs().sum() > 0
    assert cache.k[:, :, :, 20:].abs().sum() == 0
