"""What one streamed request measured, and a load level's figures from its requests (vLLM's benchmark_serving
definitions: TTFT = first content token − sent; TPOT = (end − first token) / (output tokens − 1) per request;
ITL = the gaps between a request's streamed chunks; output tokens/s = all output tokens / the level's wall time)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hwbench_gui.engine.measure.stats import percentile
from hwbench_gui.engine.serving.presets import LatencyLimits


@dataclass
class RequestRecord:
    """One request: times in seconds from the level's start (``sent_s``) and from its own sending (the rest).
    ``output_tokens``: the server's own count (``usage.completion_tokens``) when it sent one, else the content
    chunks streamed (``tokens_counted_by`` says which). ``error``: one line, when it failed."""

    sent_s: float
    asked_tokens: int
    output_tokens: int = 0
    prompt_tokens: int | None = None
    ttft_s: float | None = None
    e2e_s: float | None = None
    itl_s: list[float] = field(default_factory=list)
    tokens_counted_by: str = "chunks"
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.ttft_s is not None and self.e2e_s is not None

    @property
    def tpot_s(self) -> float | None:
        if not self.ok or self.output_tokens < 2:
            return None
        return (self.e2e_s - self.ttft_s) / (self.output_tokens - 1)


def percentiles(values: list[float]) -> dict[str, float | None]:
    return {"p50": percentile(values, 50.0), "p99": percentile(values, 99.0)}


def level_figures(records: list[RequestRecord], wall_s: float, limits: LatencyLimits) -> dict[str, Any]:
    """A level's figures: p50/p99 of TTFT, TPOT, ITL and end-to-end latency over its good requests, output
    tokens/s over its wall time, how many failed (with the first reasons) or stopped short of what was asked,
    and whether it meets ``limits``. Nothing is computed from a failed request."""
    good = [r for r in records if r.ok]
    ttft = [r.ttft_s for r in good]
    tpot = [t for t in (r.tpot_s for r in good) if t is not None]
    itl = [gap for r in good for gap in r.itl_s]
    e2e = [r.e2e_s for r in good]
    output = sum(r.output_tokens for r in good)
    ttft_p, tpot_p = percentiles(ttft), percentiles(tpot)
    return {
        "requests": len(records), "failed": len(records) - len(good),
        "errors": sorted({r.error for r in records if r.error})[:3],
        "short": sum(1 for r in good if r.output_tokens < r.asked_tokens),
        "output_tokens": output, "asked_tokens": sum(r.asked_tokens for r in records),
        "prompt_tokens": sum(r.prompt_tokens or 0 for r in good) if all(r.prompt_tokens for r in good) else None,
        "wall_s": wall_s,
        "output_tokens_per_s": output / wall_s if wall_s > 0 and good else 0.0,
        "ttft": ttft_p, "tpot": tpot_p, "itl": percentiles(itl), "e2e": percentiles(e2e),
        "ttft_s": ttft, "tpot_s": tpot, "e2e_s": e2e,
        "meets_target": bool(good) and len(good) == len(records) and limits.met_by(ttft_p["p99"], tpot_p["p99"]),
    }
