"""A machine as a user means one: what decides its figures, not which host or GPU serial produced them.

Cloud loans give every run a new host and new GPU UUIDs; a user's runs of one box over a week share them.
Either way a comparison asks "this kind of machine against that one", so documents are grouped by what
decides the figures: the GPUs (model and count), the CPU (model and thread count), the RAM (to the nearest
:data:`RAM_STEP_GIB`) and the software that changes kernels (PyTorch and TensorFlow major.minor, the CUDA
runtime, the driver's major version). Host names and UUIDs stay as detail (:func:`grouping_text`), and
:func:`hwbench_gui.engine.results.describe.machine_key` still tells two identical boxes apart when asked.

A published figure is its own kind (its publisher and system), never merged with a measured one.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from hwbench_gui.engine.results import describe

#: RAM is part of a machine's kind to this step: two loans of one cloud type report 125.7 and 126.1 GiB.
RAM_STEP_GIB = 8


def _section(doc: dict[str, Any], name: str) -> dict[str, Any]:
    inventory = doc.get("inventory") if isinstance(doc.get("inventory"), dict) else {}
    value = inventory.get(name)
    return value if isinstance(value, dict) else {}


def _major_minor(version: Any) -> str:
    match = re.match(r"\s*(\d+)(?:\.(\d+))?", str(version or ""))
    if not match:
        return ""
    return match.group(1) + (f".{match.group(2)}" if match.group(2) else "")


def _ram_gib(doc: dict[str, Any]) -> float | None:
    total = _section(doc, "memory").get("total_bytes")
    return total / 1024 ** 3 if describe.is_number(total) and total > 0 else None


def _driver(doc: dict[str, Any]) -> str:
    software = doc.get("software") if isinstance(doc.get("software"), dict) else {}
    driver = _section(doc, "gpu_system").get("driver_version") or software.get("driver")
    match = re.match(r"\s*(\d+)", str(driver or ""))
    return match.group(1) if match else ""


def facts(doc: dict[str, Any], *, as_read: bool = False) -> dict[str, str]:
    """What decides a measured document's figures, in words (empty strings for what it does not say): the RAM
    to the nearest :data:`RAM_STEP_GIB` (what groups), or ``as_read`` (what a reader is told)."""
    software = doc.get("software") if isinstance(doc.get("software"), dict) else {}
    ram = _ram_gib(doc)
    ram_text = "" if ram is None else f"{ram:.0f} GiB" if as_read else f"{round(ram / RAM_STEP_GIB) * RAM_STEP_GIB} GiB"
    return {
        "GPU": describe.gpu_summary(doc),
        "CPU": describe.cpu_summary(doc),
        "RAM": ram_text,
        "driver": _driver(doc),
        "torch": _major_minor(software.get("torch")),
        "tensorflow": _major_minor(software.get("tensorflow")),
        "CUDA": _major_minor(software.get("cuda_runtime")),
    }


def kind_key(doc: dict[str, Any]) -> str:
    """The machine kind of ``doc``: documents with one key are one machine in a comparison."""
    if describe.is_published(doc):
        return "published|" + describe.machine_name(doc)
    return "|".join(f"{k}={v}" for k, v in facts(doc).items())


def _hosts(docs: Iterable[dict[str, Any]]) -> list[str]:
    """One entry per host (:func:`describe.machine_key`), in order of appearance."""
    return list(dict.fromkeys(describe.machine_key(d) for d in docs))


def kind_labels(docs: Iterable[dict[str, Any]]) -> dict[str, str]:
    """A name for each machine kind among ``docs``: the host's name (:func:`describe.machine_name`) where all
    its documents come from hosts of one name, else its GPUs (its CPU without a GPU) and the number of hosts;
    where two kinds would share a name, the first fact that tells them apart is added."""
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for doc in docs:
        by_kind.setdefault(kind_key(doc), []).append(doc)
    names: dict[str, str] = {}
    for key, group in by_kind.items():
        first = group[0]
        host_names = {str(d.get("hostname") or "") for d in group}
        if describe.is_published(first) or len(host_names) == 1:
            names[key] = describe.machine_name(first)
        else:
            gpus = describe.gpu_summary(first)
            names[key] = f"{describe.cpu_summary(first) if gpus == 'no GPU' else gpus} ({len(_hosts(group))} hosts)"
    labels: dict[str, str] = {}
    for key, name in names.items():
        twins = [k for k, n in names.items() if n == name]
        if len(twins) == 1:
            labels[key] = name
            continue
        mine = facts(by_kind[key][0])
        differing = [f for f in mine if len({facts(by_kind[k][0])[f] for k in twins}) > 1]
        suffix = ", ".join(f"{f} {mine[f] or 'unknown'}" for f in differing[:2]) or f"#{twins.index(key) + 1}"
        labels[key] = f"{name} [{suffix}]"
    return labels


def grouping_text(docs: list[dict[str, Any]]) -> str:
    """Why these documents are one machine, when they come from several hosts: empty for one host."""
    hosts = _hosts(docs)
    if len(hosts) < 2 or describe.is_published(docs[0]):
        return ""
    said = ", ".join(f"{k} {v}" for k, v in facts(docs[0], as_read=True).items() if v)
    return (f"{len(hosts)} hosts with the same {said}: one machine, each configuration's newest run its "
            f"figure and the older runs' range beside it (compare --by host tells the hosts apart)")
