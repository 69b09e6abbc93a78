"""How busy a GPU was during a timed loop: NVML utilisation sampled in a thread while the loop's timed windows run."""

from __future__ import annotations

import threading
from typing import Any

from hwbench_gui.engine.measure.timing import nvml_handle_for

#: Seconds between two utilisation samples.
INTERVAL_S = 0.1


class GpuBusySampler:
    """NVML GPU utilisation of GPU ``index`` sampled in a thread while ``timed`` is set (the timed loop runs);
    :meth:`mean` is the mean busy share, :attr:`reason` why there is none."""

    def __init__(self, index: int, timed: threading.Event):
        self.index, self.timed = index, timed
        self.samples: list[float] = []
        self.reason: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def __enter__(self) -> "GpuBusySampler":
        self.handle = nvml_handle_for(self.index)
        if self.handle is None:
            from hwbench_gui.engine import nvml

            self.reason = nvml.unavailable_reason() or "NVML has no handle for this GPU"
        else:
            self._thread.start()
        return self

    def _loop(self) -> None:
        from hwbench_gui.engine import nvml

        while not self._stop.wait(INTERVAL_S):
            if not self.timed.is_set():
                continue
            rates = nvml.query("nvmlDeviceGetUtilizationRates", self.handle)
            if rates is not None:
                self.samples.append(float(rates.gpu))

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(2.0)
        if self.handle is not None and not self.samples:
            self.reason = "NVML returned no utilisation sample during the timed loop"

    def mean(self) -> float | None:
        return sum(self.samples) / len(self.samples) if self.samples else None
