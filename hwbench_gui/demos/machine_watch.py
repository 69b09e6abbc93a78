"""How busy the machine was while a demo ran, measured as a benchmark run's is: a telemetry sampler of the
demo's own beside it, whose summary (with its noise: other processes' CPU and GPU use, and the busy flag) the
demo's result document stores. A demo runs in this process, which the sampler counts as its own, so what it calls
"others" is the rest of the machine."""

from __future__ import annotations

import time
from typing import Any

#: A sample a second: a demo runs for seconds to hours, and the noise is a median over its samples.
INTERVAL_S = 1.0
#: Samples kept: the longest demo run whose whole span is summarised (six hours).
HISTORY_S = 6 * 3600


class MachineWatch:
    """Start it when a demo run starts; :meth:`finish` when it ends gives the run's telemetry summary."""

    def __init__(self, interval_s: float = INTERVAL_S) -> None:
        from hwbench_gui.engine.telemetry import Sampler

        self.sampler = Sampler(interval_s=interval_s, history_s=HISTORY_S)
        self.since = time.time()
        self.sampler.start()

    def finish(self) -> dict[str, Any] | None:
        """The summary from start to now (None when no sample was taken); the sampler stops."""
        self.sampler.stop()
        self.sampler.sample_once()  # the run's end: a run shorter than a sample still has one
        summary = self.sampler.summary_for_result(self.since, time.time())
        return summary if summary.get("samples") else None
