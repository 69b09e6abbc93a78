"""The serving sweep over HTTP: closed batches at each concurrency (one warm-up, then timed scenarios, as
``llm.infer``'s in-process sweep), Poisson arrivals at a rate, and the largest concurrency within a preset's limits
found by doubling and bisection (:func:`..measure.largest_fit.search_max_batch`, the batch search's own loop)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from hwbench_gui.engine.measure.largest_fit import search_max_batch
from hwbench_gui.engine.serving import load
from hwbench_gui.engine.serving.client import EndpointError
from hwbench_gui.engine.serving.presets import LatencyLimits
from hwbench_gui.engine.serving.stats import RequestRecord, level_figures


@dataclass
class Sweep:
    """One endpoint, one request shape, one preset; ``levels`` keeps every concurrency measured (the search
    reuses them)."""

    base: str
    shape: load.Shape
    limits: LatencyLimits
    repeats: int
    seed: int = 0
    on_scenario: Callable[[str, int | None], None] = lambda phase, repeat: None
    levels: dict[int, dict[str, Any]] = field(default_factory=dict)

    def probe(self) -> RequestRecord:
        """One request of the sweep's shape (also the server's first warm-up); EndpointError with its one line
        when it fails: the URL does not answer, or not with an OpenAI stream."""
        records, _ = load.closed_batch(self.base, self.shape, 1, self.seed)
        if not records[0].ok:
            raise EndpointError(records[0].error or f"{self.base}: the request gave no answer")
        return records[0]

    def closed(self, concurrency: int) -> dict[str, Any]:
        """The figures of ``concurrency`` requests arriving together, over ``repeats`` timed scenarios after one
        warm-up; ``output_tokens_per_s`` holds one figure per timed scenario."""
        if concurrency in self.levels:
            return self.levels[concurrency]
        records: list[RequestRecord] = []
        throughput, walls = [], []
        for repeat in range(self.repeats + 1):
            timed = repeat > 0
            self.on_scenario("timed" if timed else "warmup", repeat - 1 if timed else None)
            batch, wall = load.closed_batch(self.base, self.shape, concurrency, self.seed + repeat)
            self.on_scenario("end", repeat - 1 if timed else None)
            if not timed:
                continue
            records += batch
            walls.append(wall)
            throughput.append(sum(r.output_tokens for r in batch if r.ok) / wall)
        point = {"concurrency": concurrency, **level_figures(records, sum(walls), self.limits),
                 "output_tokens_per_s": throughput, "scenario_seconds": walls}
        self.levels[concurrency] = point
        return point

    def poisson(self, rate_per_s: float, count: int) -> dict[str, Any]:
        """``count`` requests at Poisson arrivals of ``rate_per_s`` (one run; no warm-up beyond the sweep's)."""
        self.on_scenario("timed", 0)
        records, wall = load.poisson(self.base, self.shape, rate_per_s, count, self.seed)
        self.on_scenario("end", 0)
        point = {"rate_per_s": rate_per_s, **level_figures(records, wall, self.limits)}
        point["output_tokens_per_s"] = [point["output_tokens_per_s"]]
        return point

    def largest_within(self, limit: int) -> dict[str, Any]:
        """The largest concurrency (1..``limit``) whose level meets the preset: doubling from 1 until one fails,
        then bisection; every try is a measured level (kept in ``levels``)."""
        result = search_max_batch(lambda c: self.closed(c)["meets_target"], start=1, limit=limit)
        return {"largest": result.largest or None, "smallest_failing": result.smallest_failing,
                "tries": [{"concurrency": c, "meets_target": ok} for c, ok in result.tries], "limit": limit}
