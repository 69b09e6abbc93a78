"""A stand-in NVML for the health burn-in's tests: a few GPUs whose readings follow a script in time.

It answers what :class:`~hwbench_gui.engine.telemetry.gpu_metrics.GpuReader` and
:class:`~hwbench_gui.engine.health.watch.HealthWatch` ask, through :mod:`hwbench_gui.engine.nvml` as
the real pynvml would: refusals are ``NVMLError`` subclasses, the event set times out with
``NVMLError_Timeout``. ``clock`` is the test's fake clock; a script is a function of its time.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, Callable

from hwbench_gui.engine.health.load import Load


class NVMLError(Exception):
    pass


class NVMLError_NotSupported(NVMLError):  # noqa: N801 (pynvml's own class names)
    pass


class NVMLError_Timeout(NVMLError):  # noqa: N801
    pass


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += max(seconds, 0.0)


class StandInNvml:
    NVMLError = NVMLError
    NVML_TEMPERATURE_GPU = 0
    NVML_CLOCK_SM, NVML_CLOCK_MEM = 1, 2
    NVML_PCIE_UTIL_TX_BYTES, NVML_PCIE_UTIL_RX_BYTES = 0, 1
    NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 0, 1
    NVML_VOLATILE_ECC = 0
    NVML_FI_DEV_MEMORY_TEMP = 82
    nvmlEventTypeXidCriticalError = 0x8

    def __init__(self, clock: FakeClock, gpus: int = 1) -> None:
        self.clock = clock
        self.gpus = gpus
        self.t0 = clock.now
        #: Scripts: functions of (gpu index, seconds since t0).
        self.reasons: Callable[[int, float], int] = lambda i, t: 0x4  # power cap: a GPU at full load
        self.link: Callable[[int, float], tuple[int, int]] = lambda i, t: (5, 16)
        self.ecc: dict[int, dict[int, int]] = {i: {0: 0, 1: 0} for i in range(gpus)}  # kind -> count now
        self.remap: dict[int, tuple[int, int, int, int]] = {i: (0, 0, 0, 0) for i in range(gpus)}
        self.events: list[tuple[float, int, int]] = []  # (t, gpu, xid) delivered once t has passed
        self.event_sets = 0

    def t(self) -> float:
        return self.clock.now - self.t0

    @staticmethod
    def _i(handle: str) -> int:
        return int(handle[1:])

    def nvmlDeviceGetCount(self):
        return self.gpus

    def nvmlDeviceGetHandleByIndex(self, i):
        return f"h{i}"

    def nvmlDeviceGetIndex(self, h):
        return self._i(h)

    def nvmlDeviceGetName(self, h):
        return b"NVIDIA H200"

    def nvmlDeviceGetUtilizationRates(self, h):
        return SimpleNamespace(gpu=100, memory=60)

    def nvmlDeviceGetMemoryInfo(self, h):
        return SimpleNamespace(used=40 << 30, total=141 << 30)

    def nvmlDeviceGetPowerUsage(self, h):
        return 695_000

    def nvmlDeviceGetEnforcedPowerLimit(self, h):
        return 700_000

    def nvmlDeviceGetTemperature(self, h, sensor):
        return 61

    def nvmlDeviceGetClockInfo(self, h, kind):
        return {1: 1755, 2: 3201}[kind]

    def nvmlDeviceGetPcieThroughput(self, h, counter):
        return 1000

    def nvmlDeviceGetNvLinkState(self, h, link):
        raise NVMLError_NotSupported("Not Supported")

    def nvmlDeviceGetComputeRunningProcesses(self, h):
        return []

    def nvmlDeviceGetCurrentClocksEventReasons(self, h):
        return self.reasons(self._i(h), self.t())

    def nvmlDeviceGetFieldValues(self, h, fields):
        return [SimpleNamespace(nvmlReturn=0, valueType=1, value=SimpleNamespace(uiVal=70)) for _ in fields]

    def nvmlDeviceGetFanSpeed(self, h):
        raise NVMLError_NotSupported("Not Supported")  # passively cooled, as a datacenter GPU is

    def nvmlDeviceGetMaxPcieLinkGeneration(self, h):
        return 5

    def nvmlDeviceGetMaxPcieLinkWidth(self, h):
        return 16

    def nvmlDeviceGetCurrPcieLinkGeneration(self, h):
        return self.link(self._i(h), self.t())[0]

    def nvmlDeviceGetCurrPcieLinkWidth(self, h):
        return self.link(self._i(h), self.t())[1]

    def nvmlDeviceGetTotalEccErrors(self, h, kind, counter):
        return self.ecc[self._i(h)][kind]

    def nvmlDeviceGetRetiredPages(self, h, cause):
        return []

    def nvmlDeviceGetRetiredPagesPendingStatus(self, h):
        return 0

    def nvmlDeviceGetRemappedRows(self, h):
        return self.remap[self._i(h)]

    def nvmlEventSetCreate(self):
        self.event_sets += 1
        return "set"

    def nvmlDeviceRegisterEvents(self, h, kinds, event_set):
        return None

    def nvmlEventSetWait_v2(self, event_set, timeout_ms):
        due = [e for e in self.events if e[0] <= self.t()]
        if not due:
            raise NVMLError_Timeout("Timeout")
        self.events.remove(due[0])
        return SimpleNamespace(device=f"h{due[0][1]}", eventType=0x8, eventData=due[0][2])

    def nvmlEventSetFree(self, event_set):
        self.event_sets -= 1


class ScriptedLoad(Load):
    """A load whose rates and wrong results follow a script instead of running work (no thread)."""

    unit = "TFLOP/s"

    def __init__(self, name: str, rate: Callable[[float], float], *, duration_s: float,
                 errors: tuple[tuple[float, str], ...] = ()) -> None:
        super().__init__(0.0)
        self.name = name
        self._script, self._duration_s, self._errors = rate, duration_s, errors

    def start(self) -> None:
        steps = int(self._duration_s / 0.5)
        self.rate = [(k * 0.5 + 0.25, self._script(k * 0.5 + 0.25)) for k in range(steps)]
        self.check_errors = [{"t": t, "what": "gemm", "text": text} for t, text in self._errors]

    def join(self, timeout_s: float) -> bool:
        return True


def install(monkeypatch, gpus: int = 1) -> tuple[StandInNvml, FakeClock]:
    """Make :mod:`hwbench_gui.engine.nvml` answer with a stand-in of ``gpus`` H200s."""
    from hwbench_gui.engine import nvml

    clock = FakeClock()
    fake = StandInNvml(clock, gpus)
    monkeypatch.setattr(nvml, "init", lambda: fake)
    monkeypatch.setattr(nvml, "unavailable_reason", lambda: None)
    return fake, clock


def burn(fake: StandInNvml, clock: FakeClock, rates: dict[int, Callable[[float], float]], *, duration_s: float = 120.0,
         errors: dict[int, tuple[tuple[float, str], ...]] | None = None, before_finish: Callable[[], Any] | None = None
         ) -> dict[str, Any]:
    """Run the burn-in's loop on the stand-in: the watch reads the stand-in, the loads follow ``rates``."""
    from hwbench_gui.engine.health.burnin import BurninPlan, run_burnin
    from hwbench_gui.engine.health.watch import HealthWatch

    watch = HealthWatch()
    plan = BurninPlan(duration_s=duration_s, gpu_loads={
        i: ScriptedLoad(f"gpu{i}", script, duration_s=duration_s, errors=(errors or {}).get(i, ()))
        for i, script in rates.items()})
    if before_finish is not None:
        original = watch.finish

        def finish(t):
            before_finish()
            original(t)
        watch.finish = finish
    return run_burnin(plan, watch, clock=clock, sleep=clock.sleep)
