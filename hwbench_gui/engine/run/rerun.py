"""Measure here what another document measured: the parameters that make a new run comparable."""

from __future__ import annotations

from typing import Any

from hwbench_gui.engine.results.describe import asked_params, deciding_params
from hwbench_gui.engine.run import registry
from hwbench_gui.engine.spec.benchmark import ParamError, ResolvedParams


def run_like(doc: dict[str, Any], overrides: dict[str, Any] | None = None) -> tuple[str, ResolvedParams]:
    """(benchmark id, parameters) for a run on this machine that compares with ``doc``.

    The parameters that decide comparability are taken from ``doc`` as it asked them (``params_requested``
    where that run chose a value itself, e.g. the largest micro-batch that fits: this machine chooses its
    own; a published figure states only some); the rest (device, folders, repeat counts) keep this
    machine's defaults; ``overrides`` win.
    Raises KeyError when this install has no such benchmark and ParamError when one of the
    document's values does not fit the benchmark's declaration here.
    """
    bench_id = str((doc.get("benchmark") or {}).get("id"))
    bench = registry.get(bench_id)
    deciding = deciding_params(doc)
    if deciding is None:
        deciding = frozenset(bench.comparability_params())
    known = {p.name for p in bench.params}
    taken = {k: v for k, v in asked_params(doc).items() if k in deciding and k in known}
    try:
        return bench.id, bench.resolve_params({**taken, **(overrides or {})})
    except ParamError as exc:
        raise ParamError(f"the reference's parameters do not fit {bench.id} here: {exc}") from None
