"""The CLI's ranges include both ends: ``--board 4`` and ``--board 64`` are taken, 3 and 65 refused; the same
for number ranges (``--conf 0`` and ``--conf 1``) and lower bounds (``at_least``)."""

from __future__ import annotations

import argparse

import pytest

from hwbench_gui.commands.argtypes import at_least, int_between, number_between


@pytest.mark.parametrize("parse, inside, outside", [
    (int_between(4, 64), ["4", "64"], ["3", "65"]),
    (int_between(32, 2048, multiple_of=32), ["32", "2048"], ["0", "2080", "33"]),
    (number_between(0, 1), ["0", "1", "0.0", "1.0"], ["-0.001", "1.001", "nan"]),
    (at_least(1), ["1"], ["0"]),
], ids=["int_between", "int_between multiple", "number_between", "at_least"])
def test_both_ends_are_inside(parse, inside, outside):
    assert [parse(text) for text in inside] == [type(parse(inside[0]))(float(text)) for text in inside]
    for text in outside:
        with pytest.raises(argparse.ArgumentTypeError):
            parse(text)


def test_a_parameters_minimum_and_maximum_are_inside():
    """``--param`` values (and the form's) go through ``Param.parse``: its bounds are inclusive too."""
    from hwbench_gui.engine.spec.benchmark import Param, ParamError

    batch = Param("batch", "int", 8, "", minimum=1, maximum=4096)
    assert [batch.parse("1"), batch.parse("4096")] == [1, 4096]
    share = Param("share", "float", 0.5, "", minimum=0.0, maximum=1.0)
    assert [share.parse("0"), share.parse("1")] == [0.0, 1.0]
    for param, text in ((batch, "0"), (batch, "4097"), (share, "-0.01"), (share, "1.01")):
        with pytest.raises(ParamError):
            param.parse(text)
