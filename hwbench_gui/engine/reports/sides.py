"""The sides of a comparison: sets of result documents, one per machine (its kind), per host or per run, or a
published reference."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from hwbench_gui.engine.results import describe, machine_kind


@dataclass
class Side:
    name: str
    docs: list[dict[str, Any]]
    #: Why documents of several hosts are one side (:func:`machine_kind.grouping_text`); empty for one host.
    grouping: str = ""

    @property
    def published(self) -> bool:
        return bool(self.docs) and all(describe.is_published(d) for d in self.docs)


# -- grouping documents into sides ------------------------------------------------------------------

def sides_by_machine(docs: Sequence[dict[str, Any]], *, by_host: bool = False) -> list[Side]:
    """One side per machine, in the order the machines first appear in ``docs`` (the first machine given
    is the first side, the default baseline). A machine is what decides the figures
    (:func:`machine_kind.kind_key`: GPUs, CPU, RAM, the software that matters), so cloud loans of one
    kind or a box measured over a week are one side, its grouping said in :attr:`Side.grouping`;
    ``by_host`` tells hosts apart instead (:func:`describe.machine_key`: two boxes named alike stay apart)."""
    key_of = describe.machine_key if by_host else machine_kind.kind_key
    labels = describe.machine_labels(docs) if by_host else machine_kind.kind_labels(docs)
    sides: dict[str, Side] = {}
    for doc in docs:
        key = key_of(doc)
        sides.setdefault(key, Side(labels[key], [])).docs.append(doc)
    if not by_host:
        for side in sides.values():
            side.grouping = machine_kind.grouping_text(side.docs)
    return list(sides.values())


#: How documents become sides: one per machine (its kind), per host, or per run.
GROUPINGS = ("machine", "host", "run")


def sides_by(docs: Sequence[dict[str, Any]], by: str = "machine") -> list[Side]:
    """The sides of ``docs`` grouped ``by`` one of :data:`GROUPINGS`; ``ValueError`` for another word."""
    if by == "machine":
        return sides_by_machine(docs)
    if by == "host":
        return sides_by_machine(docs, by_host=True)
    if by == "run":
        return sides_by_run(docs)
    raise ValueError(f"group by one of {', '.join(GROUPINGS)}, not {by!r}")


def sides_by_run(docs: Sequence[dict[str, Any]]) -> list[Side]:
    """One side per document, named by machine, benchmark and date (made unique)."""
    sides = []
    used: set[str] = set()
    labels = machine_kind.kind_labels(docs)
    for doc in docs:
        bench_id = (doc.get("benchmark") or {}).get("id", "")
        name = f"{labels[machine_kind.kind_key(doc)]} · {bench_id} @ {describe.date_text(doc) or 'date not stated'}"
        base, n = name, 2
        while name in used:
            name, n = f"{base} #{n}", n + 1
        used.add(name)
        sides.append(Side(name, [doc]))
    return sides


def find_side(sides: Sequence[Side], name: str | None) -> int:
    """Index of the side called ``name`` (exact, else the only case-insensitive substring match).

    Raises ``ValueError`` naming the candidates when there is none or more than one.
    """
    if not name:
        return 0
    for i, side in enumerate(sides):
        if side.name == name:
            return i
    hits = [i for i, side in enumerate(sides) if name.lower() in side.name.lower()]
    if len(hits) == 1:
        return hits[0]
    names = "; ".join(s.name for s in sides)
    if not hits:
        raise ValueError(f"no side matches {name!r} (sides: {names})")
    raise ValueError(f"{name!r} matches several sides: {'; '.join(sides[i].name for i in hits)}")
