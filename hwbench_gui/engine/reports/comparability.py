"""What makes two result documents comparable: the parameters that decide what was measured (as each benchmark
declares them), normalised, and the key two measured documents must share."""

from __future__ import annotations

import functools
from typing import Any

from hwbench_gui.engine.results import describe
from hwbench_gui.engine.spec.precision import of_document as precision_of


def normalised(value: Any) -> Any:
    """A parameter's value as two documents' values are compared: text without case or surrounding space, lists
    as tuples, whole floats as integers."""
    if isinstance(value, str):
        return value.strip().lower()
    if isinstance(value, list):
        return tuple(normalised(v) for v in value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def deciding_params(doc: dict[str, Any]) -> frozenset[str] | None:
    """:func:`describe.deciding_params`, with this install's declarations for older documents."""
    return describe.deciding_params(doc, _declared_params)


@functools.lru_cache(maxsize=64)
def _declared_params(bench_id: str) -> frozenset[str] | None:
    from hwbench_gui.engine.run import registry

    try:
        return frozenset(registry.get(bench_id).comparability_params())
    except KeyError:
        return None


def comparable_params(doc: dict[str, Any]) -> dict[str, Any]:
    """The document's parameters that decide what was measured, as asked (normalised for comparison): a
    value the machine chose ("largest that fits", "auto") is part of its answer, not a setting, so two
    machines that asked alike compare whatever each chose (:func:`resolved_params` says what that was)."""
    deciding = deciding_params(doc)
    asked = describe.asked_params(doc)
    # a document older than a parameter ran at its default: it is filled in, so an older BF16 run pairs with
    # a new weights=bf16 run and never with weights=fp8
    later = _added_later(str((doc.get("benchmark") or {}).get("id")))
    asked = {**later, **asked}
    return {str(k): normalised(v) for k, v in sorted(asked.items())
            if deciding is None or k in deciding or k in later}


@functools.lru_cache(maxsize=64)
def _added_later(bench_id: str) -> dict[str, Any]:
    """Defaults of the benchmark's parameters declared ``added_later`` (older documents ran at them)."""
    from hwbench_gui.engine.run import registry

    try:
        return {p.name: p.default for p in registry.get(bench_id).params if p.added_later}
    except KeyError:
        return {}


def resolved_params(doc: dict[str, Any]) -> dict[str, Any]:
    """What the run chose itself for the deciding parameters it was asked to choose: ``{"micro_batch": 10}``
    for a run asked for the largest micro-batch that fits; empty where nothing was chosen."""
    params = doc.get("params") if isinstance(doc.get("params"), dict) else {}
    requested = doc.get("params_requested") if isinstance(doc.get("params_requested"), dict) else {}
    deciding = deciding_params(doc)
    # A list asked empty is the benchmark's default list, filled in alike everywhere, not a machine's choice.
    return {str(k): params[k] for k in sorted(requested) if k in params and params[k] != requested[k]
            and (deciding is None or k in deciding) and not isinstance(params[k], list)}


def comparability_key(doc: dict[str, Any]) -> tuple:
    """What two measured documents must share to be compared: benchmark id, code version,
    precision, headline figure name and unit, and :func:`comparable_params`."""
    figure = doc.get("figure") or {}
    bench = doc.get("benchmark") or {}
    return (bench.get("id"), str(bench.get("version")), normalised(precision_of(doc)),
            figure.get("name"), figure.get("unit"), tuple(comparable_params(doc).items()))


def ran_params(doc: dict[str, Any]) -> dict[str, Any]:
    """The deciding parameters as the run ran them (normalised): what it chose where it was asked to choose
    (precision auto ran BF16, size 0 ran the model's own 1024, batch 0 ran the 32 that fit)."""
    params = doc.get("params") if isinstance(doc.get("params"), dict) else {}
    return {k: normalised(params[k]) for k in comparable_params(doc) if k in params}


def agrees_with_published(published: dict[str, Any], asked: dict[str, Any], ran: dict[str, Any]) -> bool:
    """Whether a published figure's parameters (what its source ran: BF16, 1024 px, 30 steps) agree with a measured
    run's, asked (``asked``: "auto", 0) or as it ran them (``ran``): on every key both state, the published value is
    one of the two. A key only one of them states does not keep them apart, as in :func:`params_agree`."""
    return all(published[k] in (asked[k], ran.get(k)) for k in published.keys() & asked.keys())


def params_agree(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two documents' comparable parameters agree on every key both have."""
    return all(a[k] == b[k] for k in a.keys() & b.keys())


def params_difference(a: dict[str, Any], b: dict[str, Any], chosen_a: dict[str, Any] | None = None,
                      chosen_b: dict[str, Any] | None = None) -> str:
    """``"batch 256 here, 128 in the baseline"`` for each shared key that differs (and keys only one has);
    ``a`` is this side's parameters, ``b`` the baseline's. ``chosen_a`` / ``chosen_b``: what each run chose
    itself where it was asked to (:func:`resolved_params`), said beside the asked value."""
    def value(params: dict[str, Any], chosen: dict[str, Any] | None, key: str) -> str:
        text = describe.param_value(params[key])
        return f"{text} (the run chose {describe.param_value(chosen[key])})" if chosen and key in chosen else text

    parts = [f"{k} {value(a, chosen_a, k)} here, {value(b, chosen_b, k)} in the baseline"
             for k in sorted(a.keys() & b.keys()) if a[k] != b[k]]
    parts += [f"{k} only here" for k in sorted(a.keys() - b.keys())]
    parts += [f"{k} only in the baseline" for k in sorted(b.keys() - a.keys())]
    return ", ".join(parts) or "same parameters"
