"""Joining the pieces of one person that a background subtractor gives as separate blobs.

A person whose clothes are close to the background in colour (a grey shirt before a white wall, which
MOG2's shadow test also takes for a shadow), or who stood still long enough to be partly learnt, comes
out as a head, a pair of legs and an arm: pieces of one upright figure, one above the other. Each would
start a track of its own. What joins them is the person's expected shape where they stand
(:class:`~.blobs.PersonHeights`): the pieces together are no taller than a person standing on their
lowest row, and at least ``min_aspect`` times as tall as they are wide. Two people side by side make a
group too wide; one behind the other, too tall; and only pieces far shorter than that person join a
group (``max_piece``), so a person cut whole out of a group is never joined to the one behind them.
"""

from __future__ import annotations

from hwbench_gui.demos.tracking.blobs import PersonHeights

Box = tuple[float, float, float, float]


def _union(a: Box, b: Box) -> Box:
    return min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3])


def person_groups(boxes: list[Box], heights: PersonHeights, blobs: list[int] | None = None, max_ratio: float = 1.15,
                  min_aspect: float = 1.6, max_piece: float = 0.6) -> list[list[int]]:
    """Indices of ``boxes`` (xyxy, in the pixels ``heights`` was learnt in) grouped into the people they are
    pieces of, each group led by its largest box; every box alone while no heights are known. A box joins a
    group when it is shorter than ``max_piece`` of a person standing on the bottom row of the group with it,
    and the group with it is no taller than ``max_ratio`` of that person and at least ``min_aspect`` times
    as tall as wide. ``blobs``: the blob each box was cut from. A part of the lead's own blob joins only a
    lead shorter than ``max_piece`` too: a blob cut into most of a person and a foot was cut at a dip in
    its outline, and the box the tracker follows is the large part."""
    order = sorted(range(len(boxes)), key=lambda i: -(boxes[i][2] - boxes[i][0]) * (boxes[i][3] - boxes[i][1]))
    taken: set[int] = set()
    groups = []
    for lead in order:
        if lead in taken:
            continue
        taken.add(lead)
        group, box = [lead], boxes[lead]
        grew = True
        while grew:
            grew = False
            for i in order:
                if i in taken:
                    continue
                joined = _union(box, boxes[i])
                same_blob = blobs is not None and blobs[i] == blobs[lead]
                pieces = (boxes[lead], boxes[i]) if same_blob else (boxes[i],)
                if _one_person(joined, pieces, heights, max_ratio, min_aspect, max_piece):
                    group.append(i)
                    taken.add(i)
                    box, grew = joined, True
        groups.append(group)
    return groups


def _one_person(joined: Box, pieces: tuple[Box, ...], heights: PersonHeights, max_ratio: float, min_aspect: float,
                max_piece: float) -> bool:
    expected = heights.expected(joined[3])
    if expected is None:
        return False
    height, width = joined[3] - joined[1], joined[2] - joined[0]
    return (all(p[3] - p[1] < max_piece * expected for p in pieces) and height <= max_ratio * expected
            and height >= min_aspect * width)
