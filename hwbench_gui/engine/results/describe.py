"""What a result document says about itself, in words: its machine, GPUs and CPU, parameters, date,
the library table's row, and whether it is a published reference figure.

Published reference figures (``resources/reference/``) are documents with the top-level key
``provenance: "published"``, ``status: "published"`` and a ``reference`` block (source URL, date,
configuration). :func:`is_published` tells them apart everywhere.

Every reader here takes a document that :mod:`hwbench_gui.engine.results.library` has checked, and
still reads optional fields defensively (an inventory may be missing or partial).
"""

from __future__ import annotations

import math
from collections import Counter
from datetime import datetime, timezone
from typing import Any, Callable, Iterable

from hwbench_gui.engine.results.formatting import format_value

PUBLISHED = "published"


def deciding_params(doc: dict[str, Any],
                    declared: Callable[[str], Iterable[str] | None] | None = None) -> frozenset[str] | None:
    """Names of the parameters that decide what ``doc`` measured (``Param.decides_comparability``):
    as the document recorded them, else (documents written before it recorded them) what
    ``declared(benchmark id)`` says this install declares; None when neither knows (all count).

    The benchmarks are registered above this layer, so a caller that can look them up passes
    ``declared``.
    """
    bench = doc.get("benchmark") or {}
    names = bench.get("comparability_params")
    if isinstance(names, list):
        return frozenset(str(n) for n in names)
    if declared is None:
        return None
    found = declared(str(bench.get("id")))
    return None if found is None else frozenset(found)


def asked_params(doc: dict[str, Any]) -> dict[str, Any]:
    """The parameters as the user asked them: ``params_requested`` (where the run chose a value itself: the
    largest micro-batch that fits, an auto memory format or step kind) over the resolved ``params``."""
    params = doc.get("params") if isinstance(doc.get("params"), dict) else {}
    requested = doc.get("params_requested") if isinstance(doc.get("params_requested"), dict) else {}
    return {**params, **requested}


def is_number(value: Any) -> bool:
    """A finite int or float (not a bool): what a numeric field of a document must hold."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def is_published(doc: dict[str, Any]) -> bool:
    return doc.get("provenance") == PUBLISHED


def gpu_summary(doc: dict[str, Any]) -> str:
    """``"2× NVIDIA H200"``, ``"no GPU"``, or ``"unknown GPU"`` when there is no inventory."""
    inventory = doc.get("inventory")
    if not isinstance(inventory, dict):
        return "unknown GPU"
    gpus = inventory.get("gpus")
    if not isinstance(gpus, list) or not gpus:
        return "no GPU"
    names = Counter(str(g.get("name") or "unnamed GPU") if isinstance(g, dict) else "unnamed GPU" for g in gpus)
    return ", ".join(f"{count}× {name}" if count > 1 else name for name, count in names.items())


def cpu_summary(doc: dict[str, Any]) -> str:
    inventory = doc.get("inventory") if isinstance(doc.get("inventory"), dict) else {}
    cpu = inventory.get("cpu") if isinstance(inventory.get("cpu"), dict) else {}
    model = cpu.get("model")
    cores = cpu.get("logical_cores")
    if not model:
        return "unknown CPU"
    return f"{model} ({cores} threads)" if cores else str(model)


def machine_name(doc: dict[str, Any]) -> str:
    """What a comparison calls the machine that produced ``doc``.

    Measured: ``"hostname · GPUs"``, or ``"hostname · CPU model (N threads)"`` without a GPU (host
    names such as "vm" or "localhost" alone do not tell machines apart). Published:
    ``"publisher · GPUs (published)"``, so a published figure never shares a side with a measured one.
    """
    if is_published(doc):
        ref = doc.get("reference") or {}
        system = ref.get("system") or gpu_summary(doc)
        return f"{ref.get('publisher') or 'unknown publisher'} · {system} (published)"
    hostname = doc.get("hostname") or (doc.get("inventory") or {}).get("hostname") or "unknown host"
    gpus = gpu_summary(doc)
    return f"{hostname} · {cpu_summary(doc) if gpus == 'no GPU' else gpus}"


def machine_key(doc: dict[str, Any]) -> str:
    """Which machine produced ``doc``: what groups documents into one machine (a side, a library entry).

    A host name alone merges machines ("vm" names many cloud instances): a measured document's key adds
    its GPUs' UUIDs (or their models where no UUID was read), its CPU model and thread count, and the
    board's and OS install's identity digests where its inventory read them. A published figure's key is
    its name. Documents whose inventory lacks a field simply leave it out of their key.
    """
    if is_published(doc):
        return machine_name(doc)
    inventory = doc.get("inventory") if isinstance(doc.get("inventory"), dict) else {}
    gpus = inventory.get("gpus") if isinstance(inventory.get("gpus"), list) else []
    uuids = sorted(str(g["uuid"]) for g in gpus if isinstance(g, dict) and g.get("uuid"))
    cpu = inventory.get("cpu") if isinstance(inventory.get("cpu"), dict) else {}
    system = inventory.get("system") if isinstance(inventory.get("system"), dict) else {}
    hostname = doc.get("hostname") or inventory.get("hostname") or "unknown host"
    parts = [str(hostname), ",".join(uuids) or gpu_summary(doc), str(cpu.get("model") or ""),
             str(cpu.get("logical_cores") or ""), str(system.get("board_id") or ""),
             str(system.get("machine_id") or "")]
    return "|".join(parts)


def machine_labels(docs: Iterable[dict[str, Any]]) -> dict[str, str]:
    """A name for each machine (:func:`machine_key`) among ``docs``: :func:`machine_name`, and where two
    machines would share it, what sets each apart (its first GPU's UUID, else its CPU, else a number)."""
    first: dict[str, dict[str, Any]] = {}
    for doc in docs:
        first.setdefault(machine_key(doc), doc)
    by_name: dict[str, list[str]] = {}
    for key, doc in first.items():
        by_name.setdefault(machine_name(doc), []).append(key)
    labels = {}
    for name, keys in by_name.items():
        if len(keys) == 1:
            labels[keys[0]] = name
            continue
        suffixes = [_machine_suffix(first[key]) for key in keys]
        if len(set(suffixes)) < len(suffixes):
            suffixes = [f"{suffix}, #{n}" if suffix else f"#{n}" for n, suffix in enumerate(suffixes, 1)]
        # After the host name, where a narrow column or a legend that cuts the rest still shows it.
        host, _, rest = name.partition(" · ")
        labels.update({key: f"{host} ({suffix})" + (f" · {rest}" if rest else "")
                       for key, suffix in zip(keys, suffixes)})
    return labels


def _machine_suffix(doc: dict[str, Any]) -> str:
    inventory = doc.get("inventory") if isinstance(doc.get("inventory"), dict) else {}
    gpus = inventory.get("gpus") if isinstance(inventory.get("gpus"), list) else []
    uuids = sorted(str(g["uuid"]) for g in gpus if isinstance(g, dict) and g.get("uuid"))
    if uuids:
        return "GPU " + uuids[0].removeprefix("GPU-")[:8]
    system = inventory.get("system") if isinstance(inventory.get("system"), dict) else {}
    if system.get("board_id") or system.get("machine_id"):
        return "id " + str(system.get("board_id") or system.get("machine_id"))[:8]
    return cpu_summary(doc)


def params_text(params: dict[str, Any] | None) -> str:
    if not params:
        return ""
    return ", ".join(f"{k}={param_value(v)}" for k, v in params.items())


def param_value(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        # an empty list asks for the benchmark's default list: never a blank in "sizes  here"
        return ",".join(str(v) for v in value) if value else "(default)"
    return "''" if value == "" else str(value)


def started(doc: dict[str, Any]) -> datetime | None:
    try:
        when = datetime.fromisoformat(str(doc.get("started_at")))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def date_text(doc: dict[str, Any]) -> str:
    if is_published(doc):
        return str((doc.get("reference") or {}).get("published") or "")
    when = started(doc)
    return when.astimezone().strftime("%Y-%m-%d %H:%M") if when else ""


#: Columns of :func:`row`, in the order the library table shows them.
ROW_COLUMNS = ("machine", "gpu", "benchmark", "parameters", "precision", "figure", "status", "date")


def row(doc: dict[str, Any]) -> dict[str, str]:
    """The library table's text for one document (keys: :data:`ROW_COLUMNS`)."""
    figure = doc.get("figure") or {}
    if figure.get("value") is not None:
        figure_text = f"{figure.get('name', '')}: {format_value(figure['value'], figure.get('unit', ''))}"
    else:
        figure_text = doc.get("reason") or ""
    bench = doc.get("benchmark") or {}
    return {
        "machine": machine_name(doc),
        "gpu": gpu_summary(doc),
        "benchmark": str(bench.get("id") or ""),
        "parameters": params_text(doc.get("params")),
        "precision": str(doc.get("precision") or ""),
        "figure": figure_text,
        "status": str(doc.get("status") or ""),
        "date": date_text(doc),
    }


def matches(doc: dict[str, Any], text: str) -> bool:
    """Case-insensitive: every word of ``text`` occurs somewhere in the document's row."""
    haystack = " ".join(row(doc).values()).lower()
    return all(word in haystack for word in text.lower().split())
