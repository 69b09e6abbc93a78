"""Video output shared by the demos: MP4 files any OpenCV wheel can write."""

from __future__ import annotations

import os
from pathlib import Path

import cv2
import numpy as np


class Mp4Writer:
    """BGR frames of one size into an MP4 (MPEG-4 Part 2, fourcc ``mp4v``: in every OpenCV wheel).

    Frames of another size are resized. Use as a context manager or call :meth:`close`. Raises
    ``OSError`` when OpenCV cannot open a writer at ``path``.
    """

    def __init__(self, path: str | os.PathLike, fps: float, size_wh: tuple[int, int]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.size_wh = (int(size_wh[0]), int(size_wh[1]))
        self._writer = cv2.VideoWriter(str(self.path), cv2.VideoWriter_fourcc(*"mp4v"), float(fps or 30.0),
                                       self.size_wh)
        if not self._writer.isOpened():
            raise OSError(f"cannot write video {self.path}: OpenCV could not open an MP4 (mp4v) writer there")
        self.frames = 0

    def write(self, frame: np.ndarray) -> None:
        if (frame.shape[1], frame.shape[0]) != self.size_wh:
            frame = cv2.resize(frame, self.size_wh)
        self._writer.write(frame)
        self.frames += 1

    def close(self) -> None:
        self._writer.release()

    def __enter__(self) -> "Mp4Writer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
