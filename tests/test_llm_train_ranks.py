"""llm.train on several ranks through the model benchmarks' launcher, on CPU ranks (gloo): DDP and FSDP2
both step, and the run's document counts every rank's tokens."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from hwbench_gui.engine.benchmarks import llm_train  # noqa: E402
from recording import Recorder  # noqa: E402


@pytest.mark.parametrize("sharding", ["ddp", "fsdp"])
def test_two_cpu_ranks_train_tiny(sharding):
    params = llm_train.BENCHMARK.resolve_params({"model": "tiny", "device": "cpu", "gpus": 2, "seq": 16, "steps": 1,
                                                 "repeats": 2, "warmup": 1, "sharding": sharding})
    outcome = llm_train.run(params, Recorder())
    assert outcome.details["world_size"] == 2 and outcome.details["sharding"] == sharding
    assert outcome.figures["tokens_per_step"]["value"] == 2 * 16
    assert outcome.resolved_params == {"micro_batch": 1, "compile": "false", "sharding": sharding}
    assert len(outcome.samples) == 2 and all(s > 0 for s in outcome.samples)
    assert "and 1 more rank(s)" in outcome.device
