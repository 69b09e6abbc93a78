"""Several shuffled passes over a dataset as one DataLoader epoch.

A DataLoader does not prefetch across its epochs: each epoch starts with an empty queue, and the
training step waits for the workers' first batches. Drawing ``passes`` shuffled passes per epoch
(what ``RandomSampler(dataset, num_samples=k * len(dataset))`` does, without replacement inside
each pass) lets the workers prefetch straight through a pass boundary, so a measurement sees the
loader's steady state rather than the restarts of a small dataset. No torch import: DataLoader
accepts any sized iterable of indices as its sampler.
"""

from __future__ import annotations

import math
import random
from typing import Iterator


class PassesSampler:
    """``passes`` shuffled permutations of ``range(n)``, one after another; each ``iter()`` (each
    DataLoader epoch) draws new permutations."""

    def __init__(self, n: int, passes: int, seed: int = 0):
        if n < 1 or passes < 1:
            raise ValueError(f"PassesSampler needs n >= 1 and passes >= 1, not {n} and {passes}")
        self.n, self.passes = n, passes
        self._rng = random.Random(seed)

    def __len__(self) -> int:
        return self.n * self.passes

    def __iter__(self) -> Iterator[int]:
        seed = self._rng.getrandbits(64)  # drawn now: an epoch's order does not depend on how far the last got
        rng = random.Random(seed)
        for _ in range(self.passes):
            order = list(range(self.n))
            rng.shuffle(order)
            yield from order


def passes_for(n: int, batch: int, steps: int) -> int:
    """Passes over ``n`` images that hold ``steps`` batches of ``batch`` with one pass to spare."""
    return max(2, math.ceil(steps * batch / max(1, n)) + 1)
