"""The pieces of one person that background subtraction gives apart (a head and legs, the shirt between
them as pale as the wall) are joined into one box; people side by side or one behind the other are not."""

from __future__ import annotations

from hwbench_gui.demos.tracking.blobs import PersonHeights
from hwbench_gui.demos.tracking.pieces import person_groups


def _heights(person_px: float = 100.0, foot_y: float = 200.0) -> PersonHeights:
    """People 100 px tall standing on row 200 (40 blobs shaped like one person seen there)."""
    heights = PersonHeights()
    for _ in range(40):
        heights.add(100, foot_y - person_px, 140, foot_y)
    assert heights.expected(foot_y) == person_px
    return heights


def test_a_head_and_legs_are_one_person():
    head, legs = (110, 100, 130, 122), (104, 150, 136, 200)
    assert sorted(map(sorted, person_groups([head, legs], _heights()))) == [[0, 1]]


def test_an_arm_beside_the_body_joins_the_head_and_legs():
    head, legs, arm = (110, 100, 130, 122), (104, 150, 136, 200), (136, 125, 144, 160)
    assert [sorted(g) for g in person_groups([legs, head, arm], _heights())] == [[0, 1, 2]]


def test_two_heads_side_by_side_are_two_people():
    left, right = (60, 100, 80, 150), (120, 100, 140, 150)
    assert len(person_groups([left, right], _heights())) == 2


def test_pieces_taller_together_than_a_person_are_two_people():
    # One behind the other: the one behind's head 30 px above where a person on row 200 would end.
    behind, front = (110, 70, 130, 120), (104, 150, 136, 200)
    assert len(person_groups([behind, front], _heights())) == 2


def test_a_blob_cut_into_most_of_a_person_and_a_foot_stays_cut():
    # One blob cut at a dip in its outline into a box 80 % of a person tall and a foot below it: the
    # large part is the box the tracker follows.
    body, foot = (104, 100, 136, 180), (110, 180, 130, 200)
    assert len(person_groups([body, foot], _heights(), blobs=[1, 1])) == 2


def test_a_head_apart_from_most_of_a_person_joins_them():
    # Two blobs: the head, and the body below a collar taken for shadow (a gap of 8 px between them).
    head, body = (110, 100, 130, 118), (104, 126, 136, 200)
    assert [sorted(g) for g in person_groups([body, head], _heights(), blobs=[1, 2])] == [[0, 1]]


def test_nothing_is_joined_before_the_heights_are_known():
    head, legs = (110, 100, 130, 122), (104, 150, 136, 200)
    assert len(person_groups([head, legs], PersonHeights())) == 2
