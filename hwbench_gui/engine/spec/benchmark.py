"""What a benchmark module declares, and what its code receives and returns.

A benchmark is one module under ``engine/benchmarks/`` that defines a module-level ``BENCHMARK``
(a :class:`Benchmark`). Its ``run`` is executed in a child process by the runner; it reports
through a :class:`Reporter` and returns a :class:`Outcome`. Nothing here imports torch: a module
imports heavy frameworks inside ``run`` and ``availability`` only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Protocol, Sequence

from hwbench_gui.engine.spec import sizes

ParamKind = Literal["int", "float", "str", "bool", "choice", "path", "int_list", "device"]

#: Names a benchmark may list in ``needs``; the availability check explains a missing one.
NEEDS = ("cuda", "multi_gpu", "torch", "tf")

class ParamError(ValueError):
    """A parameter value is missing, of the wrong type or out of range; the message says which."""


@dataclass(frozen=True)
class Param:
    """One parameter, declared once: the GUI form, the CLI, the result document and comparisons read this.

    ``decides_comparability``: two results whose values differ measured different things (batch,
    precision, sizes), so comparisons only pair results that agree on it; False for parameters that
    only say where or how long (device index, a local folder, repeat counts, time limits).
    A ``device`` parameter takes :mod:`~hwbench_gui.engine.spec.device`'s grammar; its ``choices``
    are the device kinds it allows (all when empty) and its value is the canonical text.
    ``allow_empty``: an ``int_list`` may be given empty (the benchmark then picks its own values);
    otherwise an empty list is refused, as the child could not run with it. A float is always finite.
    ``added_later``: a deciding parameter that documents written before it existed lack (they ran at its
    default): at its default it is left out of comparisons, so those documents still compare with new ones.
    """

    name: str
    kind: ParamKind
    default: Any
    help: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[Any, ...] = ()
    unit: str = ""
    decides_comparability: bool = True
    allow_empty: bool = False
    added_later: bool = False

    def parse(self, raw: Any) -> Any:
        """``raw`` as this parameter's type, range-checked: the one parser of the form, the CLI and the child.

        Text is read as typed ("64 MiB", "16G" and "1e3" for a byte size; "1e3" for any int); a value
        that already has the type (a form's spin box, a JSON number the parent sent) is checked, not
        turned into text and read again. ``ParamError`` says why a value is refused.
        """
        if self.kind == "device":
            from hwbench_gui.engine.spec import device  # device.py imports ParamError from here

            return str(device.parse(raw, allow=tuple(self.choices) or (device.AUTO, device.CPU, device.CUDA)))
        try:
            if self.kind == "int":
                value: Any = _parse_int(raw, byte_size=self.unit == "bytes")
            elif self.kind == "float":
                value = float(raw)
            elif self.kind == "bool":
                value = _parse_bool(raw)
            elif self.kind == "int_list":
                value = _parse_int_list(raw, byte_size=self.unit == "bytes")
            elif self.kind == "choice" and isinstance(raw, bool):
                value = "true" if raw else "false"  # a document's resolved true/false for a true/false/auto choice
            else:
                value = str(raw)
        except (TypeError, ValueError) as exc:
            raise ParamError(f"{self.name}: {raw!r} is not a valid {self.kind} ({exc})") from None
        if self.kind == "float" and not math.isfinite(value):
            raise ParamError(f"{self.name}: {raw!r} is not a finite number")
        if self.kind == "int_list" and not value and not self.allow_empty:
            raise ParamError(f"{self.name}: give at least one value")
        if self.kind == "choice" and value not in self.choices:
            raise ParamError(f"{self.name}: {value!r} is not one of {', '.join(map(str, self.choices))}")
        numbers = value if isinstance(value, list) else [value]
        if self.kind in ("int", "float", "int_list"):
            for number in numbers:
                if self.minimum is not None and number < self.minimum:
                    raise ParamError(f"{self.name}: {_shown(number)} is below the minimum {self._bound(self.minimum)}")
                if self.maximum is not None and number > self.maximum:
                    raise ParamError(f"{self.name}: {_shown(number)} is above the maximum {self._bound(self.maximum)}")
        return value

    def _bound(self, bound: float) -> str:
        return sizes.format_size(int(bound)) if self.unit == "bytes" and bound == int(bound) else f"{bound:g}"


def _shown(number: float) -> str:
    """``number`` for a message; one of thousands of digits (which Python will not even print) by its count."""
    if isinstance(number, int) and abs(number) >= 10**30:
        return f"a number of about {round(abs(number).bit_length() * math.log10(2))} digits"
    return str(number)


def _parse_bool(raw: Any) -> bool:
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ValueError("expected true/false")


def _parse_int(raw: Any, *, byte_size: bool = False) -> int:
    if isinstance(raw, bool):
        raise ValueError("true/false is not a number")
    if isinstance(raw, int):
        return raw
    if isinstance(raw, float):
        if not raw.is_integer():
            raise ValueError("not a whole number")
        return int(raw)
    return sizes.parse_int(str(raw), byte_size=byte_size)


def _parse_int_list(raw: Any, *, byte_size: bool = False) -> list[int]:
    if isinstance(raw, (list, tuple)):
        return [_parse_int(v, byte_size=byte_size) for v in raw]
    return [_parse_int(part, byte_size=byte_size) for part in str(raw).split(",") if part.strip()]


class ResolvedParams(dict):
    """Every parameter of benchmark ``bench_id`` parsed and range-checked, defaults filled in.

    Resolved once where a run is asked for (CLI, GUI, suite); handing it on resolves nothing again.
    """

    def __init__(self, bench_id: str, values: dict[str, Any]) -> None:
        super().__init__(values)
        self.bench_id = bench_id

    def copy(self) -> ResolvedParams:
        """A copy that is still resolved (``dict.copy`` would forget it)."""
        return ResolvedParams(self.bench_id, self)


class Reporter(Protocol):
    """How ``run`` talks to whoever started it (JSON lines on stdout in the child)."""

    def progress(self, fraction: float, message: str = "") -> None:
        """Fraction done in [0, 1] and what is happening now."""

    def log(self, message: str) -> None:
        """A line for the run's log."""

    def metric(self, name: str, value: float, unit: str, **extra: Any) -> None:
        """An intermediate figure (one point of a sweep, one repeat) shown while the run goes on."""

    def phase(self, phase: str, state: str, repeat: int | None = None) -> None:
        """The run enters (``state="start"``) or leaves (``"end"``) ``phase`` ("warmup" or "timed").

        Mark every timed window (with its ``repeat`` index): the telemetry a result stores is the
        telemetry of those windows, not of model building, compilation and warm-up.
        """


@dataclass
class Series:
    """One curve of a sweep: ``y`` against ``x`` (e.g. GB/s against transfer bytes)."""

    label: str
    x: list[float]
    y: list[float]
    x_label: str
    y_label: str
    x_log: bool = False
    y_spread: list[tuple[float, float]] | None = None  # (p5, p95) per point where measured

    def to_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "x": list(self.x),
            "y": list(self.y),
            "x_label": self.x_label,
            "y_label": self.y_label,
            "x_log": self.x_log,
            "y_spread": [list(p) for p in self.y_spread] if self.y_spread else None,
        }


@dataclass
class Outcome:
    """What ``run`` returns: the headline figure with its raw samples, and everything behind it.

    ``samples`` are the per-repeat values of ``figure``'s quantity (the result document computes
    median and spread from them). ``figures`` holds further named figures of the same run
    (e.g. D2H beside H2D), each ``{"value", "unit", "higher_is_better", "samples"}``.
    ``precision``: the label of what was measured when the benchmark chose it (gpu.matmul's headline of
    several); empty, the document names the run's own ``precision`` parameter (or "n/a" without one).
    """

    figure_name: str
    unit: str
    samples: list[float]
    higher_is_better: bool = True
    precision: str = ""
    method: str = ""
    figures: dict[str, dict[str, Any]] = field(default_factory=dict)
    series: list[Series] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)
    device: str = ""  # what ran it: "cuda:0 (NVIDIA H200)", "cpu (8 threads)"
    #: Values the run chose for parameters given as 0 / ``auto`` (a batch, a memory format): the document
    #: stores these in ``params`` and what was asked in ``params_requested``.
    resolved_params: dict[str, Any] = field(default_factory=dict)


class BenchmarkUnavailable(RuntimeError):
    """Raised by ``run`` when it finds at run time that it cannot run here; the message says why."""


@dataclass(frozen=True)
class Benchmark:
    """The declaration a benchmark module exports as ``BENCHMARK``."""

    id: str
    title: str
    category: str
    description: str
    params: Sequence[Param]
    run: Callable[[dict[str, Any], Reporter], Outcome]
    version: str = "1"
    needs: frozenset[str] = frozenset()
    availability: Callable[[], str | None] | None = None
    default_timeout_s: float = 600.0
    #: ``notes(params, outcome, telemetry)``: warnings the run's timed-phase telemetry implies for this
    #: benchmark's figure (the runner adds them to the document), e.g. a GPU left idle by the CPU.
    telemetry_notes: Callable[[dict[str, Any], dict[str, Any], dict[str, Any]], list[str]] | None = None
    #: The parameter whose value 0 makes the run search its own largest batch (doubling and bisection in
    #: the run's process, :mod:`hwbench_gui.engine.measure.largest_fit`), for a benchmark with no ``batch``:
    #: ``hwbench maxbatch`` asks for that search instead of a child run per try.
    searched_batch_param: str | None = None

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise ParamError(f"{self.id} has no parameter {name!r}; it has {', '.join(p.name for p in self.params)}")

    def resolve_params(self, given: dict[str, Any] | None = None) -> ResolvedParams:
        """Every parameter with its value: defaults filled in, ``given`` parsed and range-checked."""
        if isinstance(given, ResolvedParams) and given.bench_id == self.id:
            return given
        given = dict(given or {})
        values = {}
        for p in self.params:
            values[p.name] = p.parse(given.pop(p.name)) if p.name in given else p.default
        if given:
            raise ParamError(f"{self.id} has no parameter {', '.join(sorted(given))}; it has "
                             f"{', '.join(p.name for p in self.params)}")
        return ResolvedParams(self.id, values)

    def comparability_params(self) -> list[str]:
        """Names of the parameters that decide whether two of its results measured the same thing."""
        return [p.name for p in self.params if p.decides_comparability]
