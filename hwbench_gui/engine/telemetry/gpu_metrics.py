"""Per-GPU figures from NVML, through :mod:`hwbench_gui.engine.nvml`.

Handles, function pointers and the NVLink link set are looked up once; every figure comes from
one ``nvml.query`` so a call the GPU or driver does not support leaves only its own metrics ``None``.
"""

from __future__ import annotations

from typing import Any, Callable

import psutil

from hwbench_gui.engine import nvml

#: Suffixes of the per-GPU metric names, in the order they are stored (``gpu{i}_<suffix>``).
GPU_METRIC_SUFFIXES = (
    "util_percent",
    "mem_util_percent",
    "vram_used_bytes",
    "power_w",
    "power_limit_w",
    "temp_c",
    "sm_clock_mhz",
    "mem_clock_mhz",
    "pcie_rx_bytes_per_s",
    "pcie_tx_bytes_per_s",
    "nvlink_rx_bytes_per_s",
    "nvlink_tx_bytes_per_s",
    "throttle_reasons",
)

#: Clock event ("throttle") reason bits, as NVML defines them (nvmlClocksEventReason*).
THROTTLE_REASONS = (
    (0x1, "GpuIdle"),
    (0x2, "ApplicationsClocksSetting"),
    (0x4, "SwPowerCap"),
    (0x8, "HwSlowdown"),
    (0x10, "SyncBoost"),
    (0x20, "SwThermalSlowdown"),
    (0x40, "HwThermalSlowdown"),
    (0x80, "HwPowerBrakeSlowdown"),
    (0x100, "DisplayClockSetting"),
)


def decode_throttle_reasons(mask: int | float | None) -> list[str] | None:
    """Names of the bits set in a clock-throttle bitmask; unknown bits show as ``0x...``."""
    if mask is None or mask != mask:  # None or NaN
        return None
    mask = int(mask)
    names = [name for bit, name in THROTTLE_REASONS if mask & bit]
    unknown = mask & ~sum(bit for bit, _ in THROTTLE_REASONS)
    if unknown:
        names.append(hex(unknown))
    return names


def gpu_metric_names(count: int) -> list[str]:
    return [f"gpu{i}_{suffix}" for i in range(count) for suffix in GPU_METRIC_SUFFIXES]


class _NvlinkCounters:
    """Cumulative NVLink TX/RX counters of one GPU, summed over its active links."""

    def __init__(self, fields: list[tuple[int, int]], scale_bytes: float, label: str):
        self.fields = fields  # (field id, link) pairs: TX ones first, then RX
        self.scale_bytes = scale_bytes
        self.label = label
        self.prev: tuple[float, float, float] | None = None  # (t, tx, rx)


def field_value(fv) -> float:
    """The number an ``nvmlFieldValue_t`` holds, whatever its value type (an unknown type: IndexError)."""
    kind = int(fv.valueType)
    attr = ("dVal", "uiVal", "ulVal", "ullVal", "sllVal", "siVal", "usVal")[kind]
    return float(getattr(fv.value, attr))


class GpuReader:
    """Reads every GPU NVML reports. ``count`` is 0 and ``reason`` says why when NVML is unavailable."""

    def __init__(self) -> None:
        self.reason: str | None = nvml.unavailable_reason()
        self.notes: list[str] = []
        self.count = 0
        self._m: Any = None
        self._handles: list[Any] = []
        self._nvlink: list[_NvlinkCounters | None] = []
        self._processes: list[dict[str, Any]] = []
        self._names_by_pid: dict[int, str] = {}
        if self.reason is not None:
            return
        self._m = nvml.init()
        self.count = nvml.device_count()
        if self.count == 0:
            self.reason = "NVML runs but reports no GPU"
            return
        self._handles = [nvml.handle(i) for i in range(self.count)]
        m = self._m
        self._f: dict[str, Callable | None] = {
            name: getattr(m, name, None)
            for name in (
                "nvmlDeviceGetUtilizationRates",
                "nvmlDeviceGetMemoryInfo",
                "nvmlDeviceGetPowerUsage",
                "nvmlDeviceGetEnforcedPowerLimit",
                "nvmlDeviceGetTemperature",
                "nvmlDeviceGetClockInfo",
                "nvmlDeviceGetPcieThroughput",
                "nvmlDeviceGetFieldValues",
                "nvmlDeviceGetComputeRunningProcesses",
            )
        }
        # Newer drivers renamed "throttle reasons" to "clock event reasons"; same bits.
        self._f["throttle"] = getattr(m, "nvmlDeviceGetCurrentClocksEventReasons", None) or getattr(
            m, "nvmlDeviceGetCurrentClocksThrottleReasons", None
        )
        for i, h in enumerate(self._handles):
            if h is None:
                self.notes.append(f"gpu{i}: no NVML handle; all its metrics are N/A")
            self._nvlink.append(self._probe_nvlink(i, h) if h is not None else None)

    @property
    def handles(self) -> list[Any]:
        """The NVML handle of each GPU, by NVML index (``None`` where NVML gave none)."""
        return list(self._handles)

    @property
    def names(self) -> list[str]:
        return gpu_metric_names(self.count)

    def _probe_nvlink(self, index: int, h: Any) -> _NvlinkCounters | None:
        m = self._m
        state_fn = getattr(m, "nvmlDeviceGetNvLinkState", None)
        max_links = int(getattr(m, "NVML_NVLINK_MAX_LINKS", 18))
        links = []
        if state_fn is not None:
            for link in range(max_links):
                state = nvml.query(state_fn, h, link)
                if state is None and link == 0:
                    break  # not supported on this GPU: every link would say so
                if state == getattr(m, "NVML_FEATURE_ENABLED", 1):
                    links.append(link)
        if not links:
            self.notes.append(f"gpu{index}: no active NVLink; NVLink metrics are N/A")
            return None
        # Older GPUs and drivers: data throughput counters in KiB. Newer (Hopper+ drivers): byte counters.
        candidates = [
            ("NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX", "NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX", 1024.0),
            ("NVML_FI_DEV_NVLINK_COUNT_XMIT_BYTES", "NVML_FI_DEV_NVLINK_COUNT_RCV_BYTES", 1.0),
        ]
        getter = self._f["nvmlDeviceGetFieldValues"]
        for tx_name, rx_name, scale in candidates:
            tx_id, rx_id = getattr(m, tx_name, None), getattr(m, rx_name, None)
            if getter is None or tx_id is None or rx_id is None:
                continue
            fields = [(tx_id, link) for link in links] + [(rx_id, link) for link in links]
            values = nvml.query(getter, h, fields)
            if values is not None and all(int(v.nvmlReturn) == 0 for v in values):
                label = f"gpu{index}: NVLink from {tx_name[8:]}/{rx_name[8:]} over {len(links)} links"
                self.notes.append(label)
                return _NvlinkCounters(fields, scale, label)
        self.notes.append(f"gpu{index}: {len(links)} NVLink links but no throughput counter; N/A")
        return None

    def read(self, now_s: float, out: dict[str, Any]) -> dict[int, list[str] | None]:
        """Add every GPU's metrics to ``out``; return decoded throttle reasons per GPU index."""
        decoded: dict[int, list[str] | None] = {}
        processes: list[dict[str, Any]] = []
        for i, h in enumerate(self._handles):
            values = self._read_one(i, h, now_s, processes)
            for suffix, value in zip(GPU_METRIC_SUFFIXES, values):
                out[f"gpu{i}_{suffix}"] = value
            decoded[i] = decode_throttle_reasons(values[-1])
        self._processes = processes
        # Keep names only for live PIDs, so a reused PID gets its new name.
        self._names_by_pid = {p["pid"]: p["name"] for p in processes if p["name"]}
        return decoded

    def processes(self) -> list[dict[str, Any]]:
        """Latest per-process GPU memory: ``{"gpu", "pid", "name", "used_bytes"}`` (bytes may be None)."""
        return list(self._processes)

    def _read_one(self, i: int, h: Any, now_s: float, processes: list) -> list:
        if h is None:
            return [None] * len(GPU_METRIC_SUFFIXES)
        f, m, q = self._f, self._m, nvml.query
        util = q(f["nvmlDeviceGetUtilizationRates"], h) if f["nvmlDeviceGetUtilizationRates"] else None
        mem = q(f["nvmlDeviceGetMemoryInfo"], h) if f["nvmlDeviceGetMemoryInfo"] else None
        power_mw = q(f["nvmlDeviceGetPowerUsage"], h) if f["nvmlDeviceGetPowerUsage"] else None
        limit_mw = q(f["nvmlDeviceGetEnforcedPowerLimit"], h) if f["nvmlDeviceGetEnforcedPowerLimit"] else None
        temp = q(f["nvmlDeviceGetTemperature"], h, m.NVML_TEMPERATURE_GPU) if f["nvmlDeviceGetTemperature"] else None
        clock = f["nvmlDeviceGetClockInfo"]
        sm = q(clock, h, m.NVML_CLOCK_SM) if clock else None
        memclk = q(clock, h, m.NVML_CLOCK_MEM) if clock else None
        # NVML samples PCIe over ~20 ms per call and reports KB/s (1024 bytes, as nvitop reads it).
        pcie = f["nvmlDeviceGetPcieThroughput"]
        rx_kb = q(pcie, h, m.NVML_PCIE_UTIL_RX_BYTES) if pcie else None
        tx_kb = q(pcie, h, m.NVML_PCIE_UTIL_TX_BYTES) if pcie else None
        nv_rx, nv_tx = self._read_nvlink(i, h, now_s)
        throttle = q(f["throttle"], h) if f["throttle"] else None
        self._read_processes(i, h, processes)
        return [
            _num(getattr(util, "gpu", None)),
            _num(getattr(util, "memory", None)),
            _num(getattr(mem, "used", None)),
            None if power_mw is None else power_mw / 1000.0,
            None if limit_mw is None else limit_mw / 1000.0,
            _num(temp),
            _num(sm),
            _num(memclk),
            None if rx_kb is None else rx_kb * 1024.0,
            None if tx_kb is None else tx_kb * 1024.0,
            nv_rx,
            nv_tx,
            _num(throttle),
        ]

    def _read_nvlink(self, i: int, h: Any, now_s: float) -> tuple[float | None, float | None]:
        counters = self._nvlink[i] if i < len(self._nvlink) else None
        if counters is None:
            return None, None
        values = nvml.query(self._f["nvmlDeviceGetFieldValues"], h, counters.fields)
        if values is None:
            counters.prev = None
            return None, None
        half = len(counters.fields) // 2
        try:
            tx = sum(field_value(v) for v in values[:half] if int(v.nvmlReturn) == 0)
            rx = sum(field_value(v) for v in values[half:] if int(v.nvmlReturn) == 0)
        except IndexError:  # a value type newer than field_value's table
            counters.prev = None
            return None, None
        prev, counters.prev = counters.prev, (now_s, tx, rx)
        if prev is None or now_s <= prev[0] or tx < prev[1] or rx < prev[2]:  # first read or reset
            return None, None
        dt = now_s - prev[0]
        return (rx - prev[2]) * counters.scale_bytes / dt, (tx - prev[1]) * counters.scale_bytes / dt

    def _read_processes(self, i: int, h: Any, processes: list) -> None:
        fn = self._f["nvmlDeviceGetComputeRunningProcesses"]
        procs = nvml.query(fn, h) if fn else None
        for p in procs or ():
            pid = int(p.pid)
            used = getattr(p, "usedGpuMemory", None)
            processes.append(
                {"gpu": i, "pid": pid, "name": self._process_name(pid),
                 "used_bytes": None if used is None else int(used)}
            )

    def _process_name(self, pid: int) -> str | None:
        name = self._names_by_pid.get(pid)
        if name is None:
            try:
                name = psutil.Process(pid).name()
            except psutil.Error:
                return None  # another PID namespace (containers) or already gone
        return name


def _num(value: Any) -> float | None:
    return None if value is None else float(value)
