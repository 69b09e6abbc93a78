"""llm.infer's one-token step kinds on the CPU: step=fused (the block's step compiled with gpt-fast's Inductor
settings) generates the same greedy tokens as the eager step from the same filled cache, one compilation serves
every block, and no kind's warm-up overwrites a position the run has filled."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from hwbench_gui.engine.models.llm import architectures as archs  # noqa: E402
from hwbench_gui.engine.models.llm import generate  # noqa: E402
from hwbench_gui.engine.models.llm import model as llm  # noqa: E402

TINY = archs.builtin("tiny")


def _generate(model, mode: str, prompt, steps: int):
    with torch.inference_mode():
        cache = llm.KVCache.allocate(TINY, prompt.shape[0], 32, torch.float32, "cpu")
        logits = model(prompt, cache=cache, start=0, last_only=True)
        filled = cache.k[:, :, :, :prompt.shape[1]].clone()
        stepper = generate.Stepper(torch, model, cache, prompt.shape[0], mode)  # compiles and warms up here
        assert torch.equal(cache.k[:, :, :, :prompt.shape[1]], filled)
        stepper.tokens.copy_(logits[:, 0].argmax(dim=-1, keepdim=True))
        stepper.at(prompt.shape[1])
        tokens = [stepper.tokens.clone()]
        for _ in range(steps):
            stepper.step()
            tokens.append(stepper.tokens.clone())
    return torch.cat(tokens, dim=1), int(stepper.position)


def test_the_fused_step_generates_what_the_eager_step_does():
    model = llm.build(TINY, torch.float32, "cpu", rope_positions=64, seed=1)
    prompt = torch.randint(0, TINY.vocab, (2, 8), generator=torch.Generator().manual_seed(0))
    eager, at_eager = _generate(model, "eager", prompt, 6)
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    counters.clear()
    fused, at_fused = _generate(model, "fused", prompt, 6)
    # the blocks share code and shapes: one graph compiled for all of them, not one per block
    assert TINY.layers > 1 and counters["stats"]["unique_graphs"] == 1
    assert at_eager == at_fused == 14
    assert torch.equal(fused, eager)
    # The tokens depend on the cache: a different prompt gives a different continuation.
    other, _ = _generate(model, "eager", (prompt + 1) % TINY.vocab, 6)
    assert not torch.equal(other, eager)


def test_the_compiled_prompt_pass_equals_the_eager_one():
    model = llm.build(TINY, torch.float32, "cpu", rope_positions=64, seed=2)
    prompt = torch.randint(0, TINY.vocab, (2, 8), generator=torch.Generator().manual_seed(3))
    layer = torch.compile(llm.Block.prefill, fullgraph=True, dynamic=False)
    out = []
    with torch.inference_mode():
        for run_layer in (None, layer):
            cache = llm.KVCache.allocate(TINY, 2, 32, torch.float32, "cpu")
            model(prompt[:, :4], cache=cache, start=0)  # a depth filled first, as llm.infer does
            logits = model(prompt[:, 4:], cache=cache, start=4, last_only=True, layer=run_layer)
            out.append((logits, cache.k[:, :, :, :8].clone(), cache.v[:, :, :, :8].clone()))
    for eager, compiled in zip(out[0], out[1]):
        torch.testing.assert_close(compiled, eager, rtol=1e-4, atol=1e-5)
    assert out[1][1][:, :, :, 4:].abs().sum() > 0  # the compiled pass wrote its positions into the cache
