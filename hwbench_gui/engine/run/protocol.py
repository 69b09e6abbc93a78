"""The JSON-lines protocol between a benchmark child (the worker) and the runner.

The child writes one JSON object per line on its stdout; every object has a ``"type"``:

``{"type": "progress", "fraction": 0.42, "message": "size 64 MiB"}``
    fraction in [0, 1].
``{"type": "log", "message": "..."}``
    a line for the run's log.
``{"type": "metric", "name": "h2d", "value": 12.3, "unit": "GB/s", ...extra}``
    an intermediate figure; ``value`` is ``null`` when it could not be measured.
``{"type": "phase", "phase": "timed", "state": "start", "repeat": 0, "t": 1733212345.12}``
    the run enters (``start``) or leaves (``end``) a phase: ``warmup`` or ``timed`` (one per timed
    repeat); ``t`` is the child's wall clock (``time.time()``), the sampler's clock too. Telemetry
    of the timed phase is summarised over the ``timed`` windows only.
``{"type": "result", "outcome": {...}}``
    the :class:`~hwbench_gui.engine.spec.benchmark.Outcome` as JSON (:func:`outcome_to_json`).
``{"type": "error", "message": "...", "kind": "exception"}``
    the run failed; ``kind`` is one of :data:`ERROR_KINDS`.

The runner adds events of its own, never written by a child:

``{"type": "started", "pid": 1234, "benchmark": "gpu.matmul", "params": {...}, "timeout_s": 600}``
    the child process is running.
``{"type": "log", "message": "...", "stream": "stderr"}``
    a line the child wrote outside the protocol (``stream`` is "stderr" or "stdout").
``{"type": "finished", "status": "ok", "reason": null}``
    the run is over (sent before the document is written).

Any stdout line that is not such an object is not an event: the runner puts it in the run's log.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from hwbench_gui.engine.jsonable import jsonable

#: Event types a child may write.
CHILD_EVENTS = ("progress", "log", "metric", "phase", "result", "error")
#: Phases a child may mark.
PHASES = ("warmup", "timed")
#: Event types only the runner produces.
RUNNER_EVENTS = ("started", "finished")

#: Values of an error event's ``kind``.
ERROR_KINDS = (
    "exception",  # the benchmark raised
    "unavailable",  # BenchmarkUnavailable: it cannot run on this machine
    "out_of_memory",  # MemoryError, CUDA / TensorFlow out of memory
    "bad_params",  # ParamError in the child
    "bad_file",  # ForeignFileError: a file the run reads was refused
    "unknown_benchmark",  # the child's registry does not know the id
    "bad_spec",  # the worker's argument was not a valid run spec
)

#: Kinds of an expected refusal (bad parameter, bad file, does not fit, cannot run here): the message is
#: the whole story, one line naming the parameter or the file and the reason; no traceback, no log tail.
REFUSAL_KINDS = ("unavailable", "bad_params", "bad_file", "unknown_benchmark", "bad_spec")
#: Kinds a person is shown as their one line: the refusals, and out of memory ("does not fit"), whose event
#: still carries its traceback into the document's log for whoever looks further.
ONE_LINE_KINDS = (*REFUSAL_KINDS, "out_of_memory")


def encode(event: dict[str, Any]) -> str:
    """One protocol line (without the newline); strictly valid JSON (no NaN)."""
    return json.dumps(jsonable(event), allow_nan=False, separators=(",", ":"))


def parse_line(line: str) -> dict[str, Any] | None:
    """The event a child's stdout line holds, or ``None`` when the line is not a protocol event."""
    text = line.strip()
    if not text.startswith("{"):
        return None
    try:
        event = json.loads(text)
    except ValueError:
        return None
    if not isinstance(event, dict) or event.get("type") not in CHILD_EVENTS:
        return None
    return event


def outcome_to_json(outcome: Any) -> dict[str, Any]:
    """An :class:`~hwbench_gui.engine.spec.benchmark.Outcome` as the JSON a result event carries."""
    data = {f.name: getattr(outcome, f.name) for f in dataclasses.fields(outcome)}
    data["series"] = [s.to_json() if hasattr(s, "to_json") else s for s in data.get("series") or []]
    return jsonable(data)
