"""What the burn-in watches on every GPU, through :mod:`hwbench_gui.engine.nvml` and the telemetry's GPU reader.

Every 0.5 s (:meth:`HealthWatch.sample`): the telemetry reader's figures (SM and memory clock, GPU
temperature, power and its limit, utilisation, the clock-event reasons bitmask) plus memory
temperature, fan speed and the PCIe link's current generation and width. Before and after the load:
the ECC and memory-repair counters (:data:`~.rules.COUNTERS`), and throughout, XID events through an
NVML event set. What the GPU or driver does not report is ``None`` with NVML's reason, recorded once
per GPU and reading, and becomes a NOTE in the verdict, never a failure.
"""

from __future__ import annotations

from typing import Any

from hwbench_gui.engine import nvml
from hwbench_gui.engine.health.rules import COUNTERS, GpuEvidence
from hwbench_gui.engine.telemetry.gpu_metrics import GpuReader, field_value

#: Columns of a GPU's timeline, in the order the document stores them.
TIMELINE_KEYS = ("sm_clock_mhz", "mem_clock_mhz", "temp_c", "mem_temp_c", "power_w", "power_limit_w",
                 "fan_percent", "util_percent", "reasons", "pcie_gen", "pcie_width")
#: nvmlEventTypeXidCriticalError (pynvml's name; the value is NVML's).
_XID_EVENT = 0x8
_FI_DEV_MEMORY_TEMP = 82
#: Rows a stored timeline keeps at most (10 minutes at 0.5 s is 1,200; a 12-hour run is merged 36 to 1): the
#: document stays a few MB with eight GPUs, under the results folder's limit on a file.
MAX_POINTS = 2400  # NVML_FI_DEV_MEMORY_TEMP: HBM temperature, where the GPU has a sensor


class HealthWatch:
    """Watches every GPU NVML sees. ``count`` is 0 and ``reason`` says why when NVML is unavailable."""

    def __init__(self, reader: GpuReader | None = None) -> None:
        self.reader = reader if reader is not None else GpuReader()
        self.count = self.reader.count
        self.reason = self.reader.reason
        self._m: Any = nvml.init() if self.count else None
        self._handles = self.reader.handles
        self.names = [self._value(h, "nvmlDeviceGetName") or f"GPU {i}" for i, h in enumerate(self._handles)]
        self.samples: list[list[dict[str, Any]]] = [[] for _ in range(self.count)]
        #: ``{reading: reason}`` per GPU for what NVML refused (once per reading).
        self.unavailable: list[dict[str, str]] = [{} for _ in range(self.count)]
        self.link_max = [{"gen": self._read(i, "pcie_max_gen", "nvmlDeviceGetMaxPcieLinkGeneration"),
                          "width": self._read(i, "pcie_max_width", "nvmlDeviceGetMaxPcieLinkWidth")}
                         for i in range(self.count)]
        self.counters_before: list[dict[str, int | None]] = []
        self.counters_after: list[dict[str, int | None]] = []
        self.counter_reasons: list[dict[str, str]] = [{} for _ in range(self.count)]
        self.xid_events: list[list[dict[str, Any]]] = [[] for _ in range(self.count)]
        self.xid_reasons: list[str | None] = [None] * self.count
        self._event_set: Any = None
        if self.count:
            self.counters_before = [self._counters(i) for i in range(self.count)]
            self._open_event_set()

    # -- one reading ----------------------------------------------------------------------------
    def _value(self, handle: Any, func: str, *args: Any) -> Any:
        if handle is None:
            return None
        value, _ = nvml.call(self._m, func, handle, *args)
        return value

    def _read(self, i: int, key: str, func: str, *args: Any) -> Any:
        handle = self._handles[i]
        if handle is None:
            self.unavailable[i].setdefault(key, "NVML gave no handle for this GPU")
            return None
        value, why = nvml.call(self._m, func, handle, *args)
        if why is not None:
            self.unavailable[i].setdefault(key, why)
        return value

    def _const(self, name: str, default: int) -> int:
        return int(getattr(self._m, name, default))

    def _counters(self, i: int) -> dict[str, int | None]:
        out: dict[str, int | None] = dict.fromkeys(COUNTERS)
        reasons = self.counter_reasons[i]
        h = self._handles[i]
        if h is None:
            reasons.update(dict.fromkeys(COUNTERS, "NVML gave no handle for this GPU"))
            return out
        volatile = self._const("NVML_VOLATILE_ECC", 0)
        for key, kind in (("ecc_volatile_corrected", self._const("NVML_MEMORY_ERROR_TYPE_CORRECTED", 0)),
                          ("ecc_volatile_uncorrected", self._const("NVML_MEMORY_ERROR_TYPE_UNCORRECTED", 1))):
            value, why = nvml.call(self._m, "nvmlDeviceGetTotalEccErrors", h, kind, volatile)
            self._put(out, reasons, key, value, why)
        sbe = self._const("NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS", 0)
        dbe = self._const("NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR", 1)
        for key, cause in (("retired_pages_sbe", sbe), ("retired_pages_dbe", dbe)):
            value, why = nvml.call(self._m, "nvmlDeviceGetRetiredPages", h, cause)
            self._put(out, reasons, key, None if value is None else len(value), why)
        value, why = nvml.call(self._m, "nvmlDeviceGetRetiredPagesPendingStatus", h)
        self._put(out, reasons, "retired_pages_pending", value, why)
        value, why = nvml.call(self._m, "nvmlDeviceGetRemappedRows", h)
        for j, key in enumerate(("remapped_rows_correctable", "remapped_rows_uncorrectable", "remap_pending",
                                 "remap_failure")):
            self._put(out, reasons, key, None if value is None else value[j], why)
        return out

    @staticmethod
    def _put(out: dict, reasons: dict, key: str, value: Any, why: str | None) -> None:
        if why is not None:
            reasons.setdefault(key, why)
        out[key] = None if value is None else int(value)

    # -- XID events -----------------------------------------------------------------------------
    def _open_event_set(self) -> None:
        event_set, why = nvml.call(self._m, "nvmlEventSetCreate")
        if why is not None:
            self.xid_reasons = [why] * self.count
            return
        self._event_set = event_set
        xid = self._const("nvmlEventTypeXidCriticalError", _XID_EVENT)
        for i, h in enumerate(self._handles):
            if h is None:
                self.xid_reasons[i] = "NVML gave no handle for this GPU"
                continue
            _, why = nvml.call(self._m, "nvmlDeviceRegisterEvents", h, xid, event_set)
            self.xid_reasons[i] = why

    def poll_events(self, t: float) -> None:
        """Take every XID event waiting in the event set (never blocks); ``t``: seconds since the load began."""
        if self._event_set is None:
            return
        wait = "nvmlEventSetWait_v2" if hasattr(self._m, "nvmlEventSetWait_v2") else "nvmlEventSetWait"
        for _ in range(64):  # a storm of events must not hold the watch
            data, why = nvml.call(self._m, wait, self._event_set, 0)
            if data is None:
                if why is not None and "Timeout" not in why:
                    for i in range(self.count):
                        self.xid_reasons[i] = self.xid_reasons[i] or why
                    self._close_event_set()
                return
            index, _ = nvml.call(self._m, "nvmlDeviceGetIndex", data.device)
            if index is not None and 0 <= index < self.count:
                self.xid_events[index].append({"t": t, "xid": int(data.eventData)})

    def _close_event_set(self) -> None:
        if self._event_set is not None:
            nvml.call(self._m, "nvmlEventSetFree", self._event_set)
            self._event_set = None

    # -- the 0.5 s readings -----------------------------------------------------------------------
    def sample(self, t: float, now_s: float) -> None:
        """One reading of every GPU at ``t`` seconds since the load began (``now_s``: a monotonic clock)."""
        if not self.count:
            return
        figures: dict[str, Any] = {}
        self.reader.read(now_s, figures)
        for i in range(self.count):
            row = {"t": t}
            for key in ("sm_clock_mhz", "mem_clock_mhz", "temp_c", "power_w", "power_limit_w", "util_percent"):
                row[key] = figures.get(f"gpu{i}_{key}")
            mask = figures.get(f"gpu{i}_throttle_reasons")
            row["reasons"] = None if mask is None else int(mask)
            row["mem_temp_c"] = self._memory_temp(i)
            row["fan_percent"] = self._read(i, "fan_percent", "nvmlDeviceGetFanSpeed")
            row["pcie_gen"] = self._read(i, "pcie_gen", "nvmlDeviceGetCurrPcieLinkGeneration")
            row["pcie_width"] = self._read(i, "pcie_width", "nvmlDeviceGetCurrPcieLinkWidth")
            self.samples[i].append(row)
        self.poll_events(t)

    def _memory_temp(self, i: int) -> float | None:
        field = self._const("NVML_FI_DEV_MEMORY_TEMP", _FI_DEV_MEMORY_TEMP)
        values = self._read(i, "mem_temp_c", "nvmlDeviceGetFieldValues", [field])
        if not values:
            return None
        if int(values[0].nvmlReturn) != 0:
            self.unavailable[i].setdefault("mem_temp_c", f"NVML field {field} returned {int(values[0].nvmlReturn)}")
            return None
        try:
            return field_value(values[0])
        except IndexError:
            return None

    def finish(self, t: float) -> None:
        """Read the counters after the load and the last events; close the event set."""
        if not self.count:
            return
        self.poll_events(t)
        self.counters_after = [self._counters(i) for i in range(self.count)]
        self._close_event_set()

    def evidence(self, i: int) -> GpuEvidence:
        """GPU ``i``'s watched evidence for :func:`~.rules.judge_gpu` (the load adds rates and check errors)."""
        return GpuEvidence(
            index=i, name=self.names[i], samples=list(self.samples[i]), link_max=dict(self.link_max[i]),
            counters_before=dict(self.counters_before[i]) if self.counters_before else {},
            counters_after=dict(self.counters_after[i]) if self.counters_after else {},
            counter_reasons=dict(self.counter_reasons[i]), xid_events=list(self.xid_events[i]),
            xid_reason=self.xid_reasons[i])

    def timeline(self, i: int) -> dict[str, list]:
        """GPU ``i``'s readings as columns (``t`` and :data:`TIMELINE_KEYS`), as the document stores them: at most
        :data:`MAX_POINTS` rows (see :func:`decimate`); the verdict was taken on every reading."""
        return decimate(self.samples[i])


def decimate(rows: list[dict[str, Any]], max_points: int | None = None) -> dict[str, list]:
    """Rows as columns, every ``k`` consecutive rows merged into one so at most ``max_points`` remain: its
    ``t`` the first row's, readings their mean, the reasons mask the OR of theirs (a band is never lost),
    the PCIe generation and width their minimum (a narrowed link neither). ``step`` says ``k``."""
    max_points = max_points or MAX_POINTS
    k = max(1, -(-len(rows) // max_points))
    out: dict[str, list] = {"t": [], **{key: [] for key in TIMELINE_KEYS}}
    for start in range(0, len(rows), k):
        bucket = rows[start:start + k]
        out["t"].append(bucket[0]["t"])
        for key in TIMELINE_KEYS:
            values = [r.get(key) for r in bucket if r.get(key) is not None]
            if not values:
                value = None
            elif key == "reasons":
                value = 0
                for mask in values:
                    value |= int(mask)
            elif key in ("pcie_gen", "pcie_width"):
                value = min(values)
            else:
                value = sum(values) / len(values) if k > 1 else values[0]
            out[key].append(value)
    out["step"] = k
    return out
