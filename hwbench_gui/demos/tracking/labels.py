"""Where each track's label goes so that no two labels overlap, as a map places town names.

Each label tries its places in order (above its box's top-left corner, below its bottom-left, inside its
top-left, above its top-right); the first that lies in the frame and touches no label already placed
wins. A label with no free place is shortened (``#12 held`` → ``#12``) and tried again, and hidden when
even that finds none. Labels are placed in the order given: the caller puts those that matter most first.
"""

from __future__ import annotations

from typing import Callable, Sequence

Box = tuple[float, float, float, float]  # x1 y1 x2 y2
Size = tuple[int, int]  # width, height in pixels


def _places(box: Box, size: Size) -> list[Box]:
    x1, y1, x2, y2 = box
    w, h = size
    return [(x1, y1 - h, x1 + w, y1), (x1, y2, x1 + w, y2 + h), (x1, y1, x1 + w, y1 + h), (x2 - w, y1 - h, x2, y1)]


def _overlaps(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def place_labels(boxes: Sequence[Box], texts: Sequence[Sequence[str]], measure: Callable[[str], Size],
                 frame_wh: tuple[int, int]) -> list[tuple[str, Box] | None]:
    """For each box, (the text shown, its rectangle) or None when hidden. ``texts[i]`` lists the
    label's forms from the fullest to the shortest; ``measure`` gives a text's size in pixels."""
    fw, fh = frame_wh
    placed: list[Box] = []
    out: list[tuple[str, Box] | None] = []
    for box, forms in zip(boxes, texts):
        chosen = None
        for text in forms:
            for rect in _places(box, measure(text)):
                inside = rect[0] >= 0 and rect[1] >= 0 and rect[2] <= fw and rect[3] <= fh
                if inside and not any(_overlaps(rect, other) for other in placed):
                    chosen = (text, rect)
                    break
            if chosen:
                break
        if chosen:
            placed.append(chosen[1])
        out.append(chosen)
    return out
