"""Live telemetry: host, watched-process and NVML GPU figures sampled on a plain thread.

Public API: :class:`Sampler` (start/stop, history, summary, CSV), :func:`read_csv` for recorded
files, :func:`decode_throttle_reasons`. No Qt here: the Monitor tab adapts it.
"""

from hwbench_gui.engine.telemetry.csv_export import read_csv
from hwbench_gui.engine.telemetry.gpu_metrics import GPU_METRIC_SUFFIXES, decode_throttle_reasons
from hwbench_gui.engine.telemetry.sampler import MAX_INTERVAL_S, MIN_INTERVAL_S, Sampler

__all__ = [
    "GPU_METRIC_SUFFIXES",
    "MAX_INTERVAL_S",
    "MIN_INTERVAL_S",
    "Sampler",
    "decode_throttle_reasons",
    "read_csv",
]
