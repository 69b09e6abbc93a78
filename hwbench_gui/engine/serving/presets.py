"""Latency limits a serving load is held to: p99 time to first token and p99 time per output token.

Declared once here: ``llm.infer``'s in-process serving sweep takes its default targets from :data:`HWBENCH`, and
``llm.endpoint`` (the same sweep over HTTP) offers all three by name.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LatencyLimits:
    """A named pair of p99 limits; a load meets it when both p99s are at most these."""

    key: str
    title: str
    ttft_p99_s: float
    tpot_p99_s: float
    source: str

    def met_by(self, ttft_p99_s: float | None, tpot_p99_s: float | None) -> bool:
        """Both p99s measured and within the limits (a level without a measured p99 meets nothing)."""
        return (ttft_p99_s is not None and tpot_p99_s is not None
                and ttft_p99_s <= self.ttft_p99_s and tpot_p99_s <= self.tpot_p99_s)

    def text(self) -> str:
        return f"{self.title} (TTFT p99 ≤ {self.ttft_p99_s:g} s, TPOT p99 ≤ {self.tpot_p99_s * 1e3:g} ms)"


HWBENCH = LatencyLimits("hwbench", "hwbench", 2.0, 0.050,
                        "hwbench's own: a reply starts within 2 s and streams at 20 tokens/s or faster "
                        "(faster than people read)")
MLPERF_SERVER = LatencyLimits("mlperf-server", "MLPerf server", 2.0, 0.100,
                              "MLPerf Inference v5.1, Llama-3.1-8B, server scenario")
MLPERF_INTERACTIVE = LatencyLimits("mlperf-interactive", "MLPerf interactive", 0.5, 0.030,
                                   "MLPerf Inference v5.1, Llama-3.1-8B, interactive scenario")

PRESETS = {p.key: p for p in (HWBENCH, MLPERF_SERVER, MLPERF_INTERACTIVE)}
