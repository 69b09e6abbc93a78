"""Mutated result documents for the property tests: a shipped document of each kind with a few of its fields
changed in type or range (NaN, infinities, 1e308, negatives, zeros, text, nothing), removed, or a list of it
grown (to at most :data:`GROWN` entries, so a test stays fast); up to six changes a document."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any, NamedTuple

from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
#: A grown list holds at most this many entries.
GROWN = 600
#: Every kind shipped (one document each, the first found) and the tests' own data-path fixture.
_SOURCES = sorted((ROOT / "resources" / "reference").rglob("*.json")) + [ROOT / "tests" / "fixtures" /
                                                                          "datapath_cpu.json"]


def _seeds() -> list[dict[str, Any]]:
    seeds: dict[str, dict[str, Any]] = {}
    for path in _SOURCES:
        doc = json.loads(path.read_text(encoding="utf-8"))
        key = f"{doc['benchmark']['id']}:{doc.get('provenance') or 'measured'}"
        seeds.setdefault(key, doc)
    return list(seeds.values())


SEEDS = _seeds()
KINDS = sorted({d["benchmark"]["id"] for d in SEEDS})
#: The kinds whose ``details`` a page and a report section of their own read.
DETAILED = ("health.burnin", "llm.infer", "llm.train")

REPLACEMENTS = (math.nan, math.inf, -math.inf, 1e308, -1e308, 0, 0.0, -1, -1e-300, 1e-300, "", "x", None, True,
                [], {}, [1e308], {"p99": "x"}, 10 ** 30)


def _paths(doc: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path to a value in ``doc`` (lists: their first three entries, so a long timeline is not all paths)."""
    out = []
    items = doc.items() if isinstance(doc, dict) else list(enumerate(doc))[:3] if isinstance(doc, list) else ()
    for key, value in items:
        if prefix == () and key in ("schema_version", "status", "benchmark"):
            continue  # those make a document a document: changing them is the older tests' ground
        out.append(prefix + (key,))
        out += _paths(value, prefix + (key,))
    return out


PATHS = [_paths(doc) for doc in SEEDS]


def _parent(doc: Any, path: tuple) -> Any:
    for key in path[:-1]:
        doc = doc[key]
    return doc


class Case(NamedTuple):
    seed: dict[str, Any]
    doc: dict[str, Any]
    done: list[str]

    def __repr__(self) -> str:  # what a failing example prints: the kind and the mutations, not 100 kB
        return f"Case({self.seed['benchmark']['id']}: {'; '.join(self.done)})"


@st.composite
def mutated(draw, kinds: tuple[str, ...] = ()) -> Case:
    """A seed (of one of ``kinds``, default any), a mutated copy of it and what was done to it."""
    # half the time one of the kinds whose details their own pages read, the rest any kind
    kinds = kinds or (DETAILED if draw(st.booleans()) else ())
    index = draw(st.sampled_from([i for i, d in enumerate(SEEDS) if not kinds or d["benchmark"]["id"] in kinds]))
    doc = copy.deepcopy(SEEDS[index])
    done = []
    details = [p for p in PATHS[index] if p[0] == "details"]
    for _ in range(draw(st.integers(1, 6))):
        pool = details if details and draw(st.booleans()) else PATHS[index]
        path = draw(st.sampled_from(pool))
        try:
            parent = _parent(doc, path)
            value = parent[path[-1]]
        except (KeyError, IndexError, TypeError):
            continue  # an earlier mutation took it away
        kind = draw(st.sampled_from(("replace", "replace", "negate", "remove", "grow", "fill")))
        if kind == "fill" and isinstance(value, list) and value:  # every entry one value: a power limit all 0
            parent[path[-1]] = [draw(st.sampled_from(REPLACEMENTS))] * len(value)
        elif kind == "remove":
            del parent[path[-1]]
        elif kind == "grow" and isinstance(value, list) and value:
            parent[path[-1]] = (value * (GROWN // len(value) + 1))[:draw(st.integers(len(value), GROWN))]
        elif kind == "negate" and isinstance(value, (int, float)) and not isinstance(value, bool):
            parent[path[-1]] = -value
        else:
            kind = "replace"
            parent[path[-1]] = draw(st.sampled_from(REPLACEMENTS))
        done.append(f"{kind} {'.'.join(map(str, path))}")
    doc["id"] = f"mutated{doc.get('id') or ''}"
    return Case(SEEDS[index], doc, done)


def write(folder: Path, seed: dict[str, Any], doc: dict[str, Any]) -> Path:
    """The seed and its mutation into ``folder``; the mutation's path (NaN and infinities written as JSON's
    ``NaN`` and ``Infinity``, as a careless writer would)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "seed.json").write_text(json.dumps(seed, ensure_ascii=False), encoding="utf-8")
    path = folder / "mutated.json"
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return path


def case(kind: str, changes: dict[tuple, Any]) -> Case:
    """A known mutation of the shipped ``kind``: each path set to its value (a list value of one entry followed by
    ``...`` fills the whole list with it)."""
    seed = next(d for d in SEEDS if d["benchmark"]["id"] == kind)
    doc = copy.deepcopy(seed)
    for path, value in changes.items():
        parent = _parent(doc, path)
        if isinstance(value, list) and value[-1:] == [...]:
            value = value[:1] * len(parent[path[-1]])
        parent[path[-1]] = value
    doc["id"] = f"mutated{doc.get('id') or ''}"
    return Case(seed, doc, [f"set {'.'.join(map(str, p))}" for p in changes])


#: Mutations found by hand: a power limit of 0, a datasheet without its bandwidth, a TTFT of the wrong type, a
#: stated PASS over a failed GPU row, an estimate of 0 GiB.
_GPU0 = ("details", "health", "gpus", 0)
KNOWN = [
    case("health.burnin", {_GPU0 + ("timeline", "power_limit_w"): [0.0, ...]}),
    case("health.burnin", {_GPU0 + ("verdict",): "FAIL", ("details", "health", "verdict"): "PASS"}),
    case("health.burnin", {("details", "health", "duration_s"): "long", _GPU0 + ("index",): "zero"}),
    case("llm.infer", {("details", "datasheet", "memory_gb_per_s"): None}),
    case("llm.infer", {("details", "serving", 1, "ttft"): {"p50": "x", "p99": 0.1}}),
    case("llm.train", {("figures", "memory_estimate_gib", "value"): 0}),
]
