"""The result document: everything one benchmark run produced, as one JSON-ready dict.

Keys of a document (schema version 1); a value that could not be had is ``null`` and, where
the reason is not obvious, a sibling ``<key>_reason`` says why::

    schema_version   1
    id               uuid4 hex string of this run
    benchmark        {id, title, category, version}
    params           every parameter, resolved (defaults filled in)
    params_requested only where a run chose a value itself (batch 0, channels_last auto): what was
                     asked; ``params`` then holds the value used
    precision        the one place a document names its precision: the label ("FP32", "TF32",
                     "FP16-AMP", ... or "n/a"); for a failed run, the one its parameters asked for
                     (null when they name none). Readers take it through spec.precision.of_document
    figure           {name, value, unit, higher_is_better}; value = median of samples; null if failed
    samples          raw per-repeat values of the figure (null where one could not be measured)
    stats            {median, mean, p5, p95, stdev, min, max, n} of the samples (see stats.summarize)
    figures          {name: {value, unit, higher_is_better, samples, stats}} further figures
    series           [{label, x, y, x_label, y_label, x_log, y_spread}] sweeps
    method           one paragraph: what was measured and how
    device           what ran it ("cuda:0 (NVIDIA H200)"); null if failed before saying
    details          benchmark-specific facts (sizes, modes, ...)
    status           "ok" | "failed" | "cancelled"
    reason           why it failed or was cancelled (null when ok)
    error_kind       exception | unavailable | out_of_memory | crash | timeout | cancelled | ... (null when ok)
    warnings         list of strings ("fell back to CPU", ...)
    started_at       ISO 8601 in UTC
    duration_s       wall time from start of the child to its end
    timeout_s        the limit the run had
    exit_code        the child's exit status (negative: killed by a signal); null if none started
    exit_signal      "SIGSEGV" etc. when a signal ended the child, else null
    log_tail         last lines of the child's log for runs that did not end ok, else null
    hostname, hwbench_version
    inventory        hwbench_gui.engine.inventory.collect(use_torch_probe=False) snapshot
    software         hwbench_gui.engine.inventory.software_versions()
    telemetry        the sampler's summary of the timed phase when the child marked one ("scope":
                     "timed phase", its "windows"), else of the whole run ("scope": "whole run"): the
                     seed's five figures plus power and clocks (mean/max), every metric, and "noise"
                     (other processes' CPU and GPU use; "busy" with reasons)
    telemetry_whole_run  the same summary over the whole child process (build, warm-up, timed)

Inventory and software versions are collected once per process and reused.
"""

from __future__ import annotations

import socket
import threading
import uuid
from datetime import datetime, timezone
from typing import Any, Sequence

from hwbench_gui import __version__
from hwbench_gui.engine.jsonable import jsonable
from hwbench_gui.engine.measure import stats
from hwbench_gui.engine.spec.benchmark import Benchmark
from hwbench_gui.engine.spec.precision import NOT_APPLICABLE, requested_label

SCHEMA_VERSION = 1

STATUSES = ("ok", "failed", "cancelled")

_machine_lock = threading.Lock()
_machine_cache: dict[str, Any] = {}


def machine_facts() -> dict[str, Any]:
    """Inventory and software versions (with reasons when missing), collected once per process."""
    with _machine_lock:
        if not _machine_cache:
            _machine_cache.update(_collect_machine_facts())
        return dict(_machine_cache)


def _collect_machine_facts() -> dict[str, Any]:
    facts: dict[str, Any] = {}
    try:
        from hwbench_gui.engine import inventory
    except ImportError as exc:
        reason = f"inventory module unavailable: {exc}"
        return {"inventory": None, "inventory_reason": reason, "software": None, "software_reason": reason}
    for key, call in (("inventory", lambda: inventory.collect(use_torch_probe=False)),
                      ("software", lambda: inventory.software_versions())):
        try:
            facts[key] = jsonable(call())
            facts[f"{key}_reason"] = None
        except Exception as exc:  # a broken probe must not cost the measurement
            facts[key] = None
            facts[f"{key}_reason"] = f"{key} could not be collected: {type(exc).__name__}: {exc}"
    return facts


def now_utc() -> datetime:
    return datetime.now(timezone.utc)


def build_document(
    bench: Benchmark,
    params: dict[str, Any],
    *,
    status: str,
    started_at: datetime,
    duration_s: float | None,
    outcome: dict[str, Any] | None = None,
    reason: str | None = None,
    error_kind: str | None = None,
    exit_code: int | None = None,
    exit_signal: str | None = None,
    log_tail: Sequence[str] | None = None,
    telemetry: dict[str, Any] | None = None,
    telemetry_reason: str | None = None,
    telemetry_whole_run: dict[str, Any] | None = None,
    warnings: Sequence[str] = (),
    timeout_s: float | None = None,
    machine: dict[str, Any] | None = None,
    run_id: str | None = None,
) -> dict[str, Any]:
    """The document of one run.

    ``outcome`` is the JSON form of the benchmark's Outcome (the worker's result event), or
    ``None`` when the run produced none. An "ok" run whose outcome has no finite sample becomes
    "failed". ``machine`` overrides :func:`machine_facts` (for documents built elsewhere).
    """
    if status not in STATUSES:
        raise ValueError(f"status must be one of {STATUSES}, not {status!r}")
    all_warnings = [str(w) for w in warnings]
    doc: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "id": run_id or uuid.uuid4().hex,
        "benchmark": {"id": bench.id, "title": bench.title, "category": bench.category, "version": bench.version,
                      "comparability_params": bench.comparability_params()},
        "params": jsonable(params),
        "precision": requested_label(params.get("precision")),
        "figure": None,
        "samples": [],
        "stats": None,
        "figures": {},
        "series": [],
        "method": None,
        "device": None,
        "details": {},
    }
    if outcome is not None:
        doc.update(_from_outcome(outcome, all_warnings))
        if outcome.get("precision"):  # the benchmark measured another than its parameter names (matmul's "all")
            doc["precision"] = str(outcome["precision"])
        elif doc["precision"] is None:
            doc["precision"] = NOT_APPLICABLE
        chosen = outcome.get("resolved_params")
        if isinstance(chosen, dict):
            chosen = {k: v for k, v in jsonable(chosen).items() if k in doc["params"] and doc["params"][k] != v}
            if chosen:
                doc["params_requested"] = {k: doc["params"][k] for k in chosen}
                doc["params"].update(chosen)
        if status == "ok" and doc["stats"]["n"] == 0:
            status = "failed"
            reason = reason or "the benchmark reported no valid samples"
            error_kind = error_kind or "no_samples"
    if status != "ok":
        doc["figure"] = None  # a failed run has no headline figure, whatever it reported before failing
    doc.update({
        "status": status,
        "reason": None if status == "ok" else (reason or f"run {status}"),
        "error_kind": None if status == "ok" else error_kind,
        "warnings": all_warnings,
        "started_at": started_at.astimezone(timezone.utc).isoformat(timespec="milliseconds"),
        "duration_s": duration_s,
        "timeout_s": timeout_s,
        "exit_code": exit_code,
        "exit_signal": exit_signal,
        "log_tail": list(log_tail) if status != "ok" and log_tail is not None else None,
        "hostname": socket.gethostname(),
        "hwbench_version": __version__,
    })
    doc.update(machine if machine is not None else machine_facts())
    doc["telemetry"] = jsonable(telemetry)
    doc["telemetry_whole_run"] = jsonable(telemetry_whole_run)
    doc["telemetry_reason"] = telemetry_reason if telemetry is not None else (telemetry_reason or
                                                                              "no telemetry was sampled")
    return jsonable(doc)


def _from_outcome(outcome: dict[str, Any], warnings: list[str]) -> dict[str, Any]:
    name = str(outcome.get("figure_name") or "figure")
    samples = list(outcome.get("samples") or [])
    summary = stats.summarize(samples)
    missing = len(samples) - summary["n"]
    if missing:
        warnings.append(f"{missing} of {len(samples)} samples of {name} could not be measured (stored as null)")
    figures = {}
    for fig_name, fig in (outcome.get("figures") or {}).items():
        figures[str(fig_name)] = _figure_entry(fig if isinstance(fig, dict) else {"value": fig})
    warnings.extend(str(w) for w in outcome.get("warnings") or [])
    return {
        "figure": {"name": name, "value": summary["median"], "unit": outcome.get("unit", ""),
                   "higher_is_better": bool(outcome.get("higher_is_better", True))},
        "samples": [s if isinstance(s, (int, float)) and not isinstance(s, bool) else None for s in samples],
        "stats": summary,
        "figures": figures,
        "series": list(outcome.get("series") or []),
        "method": outcome.get("method") or "",
        "device": outcome.get("device") or None,
        "details": dict(outcome.get("details") or {}),
    }


def _figure_entry(fig: dict[str, Any]) -> dict[str, Any]:
    samples = list(fig.get("samples") or [])
    summary = stats.summarize(samples) if samples else None
    value = summary["median"] if summary and summary["n"] else fig.get("value")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        value = None
    entry = {**{k: v for k, v in fig.items() if k not in ("value", "samples")},
             "value": value, "unit": fig.get("unit", ""), "higher_is_better": bool(fig.get("higher_is_better", True)),
             "samples": samples, "stats": summary}
    if value is None:
        entry["reason"] = fig.get("reason") or "not measured"
    return entry
