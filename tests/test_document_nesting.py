"""A result file nested deeper than the store's limit is refused with its reason, whether the nesting
is in objects, in lists or both; one level less loads. The document itself is level 1."""

from __future__ import annotations

import json

import pytest
from reports_data import make_doc

from hwbench_gui.engine.results import store
from hwbench_gui.engine.results.store import MAX_NESTING, ResultFileError, load_result


def _chain(levels: int, kinds: str):
    """``levels`` nested containers, outermost first; ``kinds`` is cycled: "d" an object, "l" a list."""
    value = None
    for i in reversed(range(levels)):
        kind = kinds[i % len(kinds)]
        if kind == "d":
            value = {"k": value} if value is not None else {}
        else:
            value = [value] if value is not None else []
    return value


def _write(tmp_path, details, name="doc.json"):
    doc = make_doc()
    doc["details"] = details  # level 2: the document is level 1
    path = tmp_path / name
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_limit_is_sixty_four_levels():
    assert MAX_NESTING == 64


@pytest.mark.parametrize("kinds", ["d", "l", "dl", "ld"])
def test_nesting_at_the_limit_loads(tmp_path, kinds):
    doc = load_result(_write(tmp_path, _chain(MAX_NESTING - 1, kinds)))
    assert doc["benchmark"]["id"] == "t.throughput"


@pytest.mark.parametrize("kinds", ["d", "l", "dl", "ld"])
def test_one_level_deeper_is_refused_with_its_reason(tmp_path, kinds):
    path = _write(tmp_path, _chain(MAX_NESTING, kinds))
    with pytest.raises(ResultFileError) as info:
        load_result(path)
    assert info.value.reason == f"not a result document (JSON nested too deeply: over {MAX_NESTING} levels)"
    assert info.value.path == path


def test_deep_object_beside_shallow_keys_is_found(tmp_path):
    # The deep branch is not the last key, so a walk that only follows one branch misses it.
    details = {"deep": _chain(MAX_NESTING, "d"), "a": 1, "b": {"c": [1, 2]}, "z": {}}
    with pytest.raises(ResultFileError, match="nested too deeply"):
        load_result(_write(tmp_path, details))


def test_a_listing_skips_the_deep_file_and_loads_the_others(tmp_path):
    from hwbench_gui.engine.results import library

    good = _write(tmp_path, {"size": 1}, "good.json")
    deep = _write(tmp_path, _chain(MAX_NESTING, "d"), "deep.json")
    docs, errors = library.scan([tmp_path])
    assert [d["_path"] for d in docs] == [str(good)]
    assert [(e.path, "nested too deeply" in e.reason) for e in errors] == [(deep, True)]


def test_walk_counts_levels_of_objects():
    assert not store._nested_deeper_than({"a": {"b": {}}}, 3)
    assert store._nested_deeper_than({"a": {"b": {"c": {}}}}, 3)
    assert not store._nested_deeper_than({"x": 1, "a": [{}], "y": 2}, 3)
    assert store._nested_deeper_than({"x": 1, "a": [{"b": []}], "y": 2}, 3)
