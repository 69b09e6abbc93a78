"""Tracks as MOTChallenge text (frames in and out: :mod:`hwbench_gui.demos.video`).

MOTChallenge results: one line per box, ``frame,id,bb_left,bb_top,bb_width,bb_height,conf,-1,-1,-1``
(frames from 1, pixels, comma-separated). Ground truth: ``frame,id,left,top,width,height,1,1,visibility``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable


def mot_line(frame: int, track_id: int, box_xyxy, score: float) -> str:
    x1, y1, x2, y2 = (float(v) for v in box_xyxy)
    return f"{frame},{track_id},{x1:.2f},{y1:.2f},{x2 - x1:.2f},{y2 - y1:.2f},{score:.4f},-1,-1,-1"


class MotWriter:
    """Appends MOTChallenge result lines; writes to ``path + '.tmp'`` and renames on close."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._tmp = self.path.with_name(self.path.name + ".tmp")
        self._file = open(self._tmp, "w", encoding="ascii")
        self.lines = 0

    def write(self, frame: int, track_id: int, box_xyxy, score: float) -> None:
        self._file.write(mot_line(frame, track_id, box_xyxy, score) + "\n")
        self.lines += 1

    def close(self) -> None:
        if not self._file.closed:
            self._file.close()
            os.replace(self._tmp, self.path)

    def __enter__(self) -> "MotWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@dataclass
class MotRow:
    frame: int
    object_id: int
    box: tuple[float, float, float, float]  # xyxy
    score: float


#: A bigger tracks or ground-truth file is refused unread (MOT17's largest ground truth is about 2 MB).
MAX_MOT_FILE_BYTES = 256 << 20


def read_mot(path: str | os.PathLike) -> list[MotRow]:
    """Read MOTChallenge results or ground truth (``conf`` column is read as the score)."""
    from hwbench_gui.engine.foreign import ForeignFileError, read_regular

    try:
        text = read_regular(path, MAX_MOT_FILE_BYTES, "a MOTChallenge file").decode("ascii")
    except ForeignFileError as exc:
        raise ValueError(str(exc)) from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not ASCII text ({exc.reason} at byte {exc.start})") from None
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        parts = line.split(",")
        if len(parts) < 7:
            raise ValueError(f"{path}:{number}: expected at least 7 comma-separated fields, got {len(parts)}")
        f, i, x, y, w, h, c = parts[:7]
        rows.append(MotRow(int(float(f)), int(float(i)), (float(x), float(y), float(x) + float(w), float(y) + float(h)),
                           float(c)))
    return rows


def write_gt(path: str | os.PathLike, rows: Iterable[tuple[int, object]]) -> Path:
    """Ground truth lines from (frame, GtBox) pairs."""
    path = Path(path)
    lines = []
    for frame, g in rows:
        x1, y1, x2, y2 = g.box
        lines.append(f"{frame},{g.object_id},{x1:.2f},{y1:.2f},{x2 - x1:.2f},{y2 - y1:.2f},1,1,{g.visibility:.3f}")
    path.write_text("\n".join(lines) + ("\n" if lines else ""), encoding="ascii")
    return path
