"""Driving sources: a webcam by index or a video file, as BGR ``uint8`` frames.

Opening never hangs the caller for long, and every failure is a :class:`SourceError` whose message
says what was tried (camera indices, the file and why it could not be read).
"""

from __future__ import annotations

import abc
import os
import sys
import time
from pathlib import Path

import cv2
import numpy as np

#: Indices probed besides the requested one, so a "no camera" message can say which ones exist.
PROBE_INDICES = tuple(range(4))


class SourceError(RuntimeError):
    """The driving source cannot be opened or read; the message is meant for the user."""


def _quiet_open(index: int) -> cv2.VideoCapture:
    # OpenCV prints a V4L2 warning for every index that has no device; the message we raise says it better.
    level = cv2.utils.logging.getLogLevel()
    cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_SILENT)
    try:
        return cv2.VideoCapture(index)
    finally:
        cv2.utils.logging.setLogLevel(level)


def list_cameras(indices=PROBE_INDICES) -> list[int]:
    """Camera indices among ``indices`` that open and deliver a frame (slow-ish: opens each one)."""
    found = []
    for index in indices:
        cap = _quiet_open(index)
        try:
            if cap.isOpened() and cap.read()[0]:
                found.append(index)
        finally:
            cap.release()
    return found


class FrameSource(abc.ABC):
    """Common interface: ``read()`` gives the next BGR frame or None at the end; ``close()`` frees it."""

    description = ""
    live = False
    #: Frames per second the source delivers (a file's nominal rate; a camera's reported one, may be 0).
    fps = 0.0

    @abc.abstractmethod
    def read(self) -> np.ndarray | None:
        """The next BGR frame, or None at the end of the source."""

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class CameraSource(FrameSource):
    """A webcam opened by index. Raises :class:`SourceError` listing the indices tried and those found."""

    live = True

    def __init__(self, index: int, size: tuple[int, int] | None = (640, 480)) -> None:
        self.index = index
        self._cap = _quiet_open(index)
        first = None
        if self._cap.isOpened():
            if size:
                self._cap.set(cv2.CAP_PROP_FRAME_WIDTH, size[0])
                self._cap.set(cv2.CAP_PROP_FRAME_HEIGHT, size[1])
            ok, first = self._cap.read()
            first = first if ok else None
        if first is None:
            self._cap.release()
            others = [i for i in PROBE_INDICES if i != index]
            found = list_cameras(others)
            devices = sorted(str(p) for p in Path("/dev").glob("video*"))
            tried = ", ".join(str(i) for i in [index, *others])
            hint = (f"cameras that do open: {', '.join(map(str, found))}" if found
                    else "no camera opened at any of them")
            if sys.platform.startswith("linux"):
                hint += f"; video devices in /dev: {', '.join(devices) if devices else 'none'}"
            raise SourceError(f"no camera at index {index}: tried indices {tried}; {hint}. "
                              "Plug in a webcam or pick a video file instead.")
        self._first: np.ndarray | None = first
        self.fps = float(self._cap.get(cv2.CAP_PROP_FPS) or 0.0)
        self.description = f"camera {index}"

    def read(self) -> np.ndarray | None:
        if self._first is not None:
            frame, self._first = self._first, None
            return frame
        ok, frame = self._cap.read()
        return frame if ok else None

    def close(self) -> None:
        self._cap.release()


class VideoFileSource(FrameSource):
    """A video file; ``loop=True`` starts again at the end (the GUI), else ``read()`` ends with None."""

    def __init__(self, path: str | os.PathLike, loop: bool = False) -> None:
        self.path = Path(path)
        self.loop = loop
        if not self.path.is_file():
            raise SourceError(f"cannot read video {self.path}: no such file")
        self._cap = cv2.VideoCapture(str(self.path))
        ok, first = (self._cap.read() if self._cap.isOpened() else (False, None))
        if not ok or first is None:
            self._cap.release()
            raise SourceError(f"cannot read video {self.path}: OpenCV could not decode a frame from it "
                              "(not a video, an unsupported codec, or a damaged file)")
        self._first: np.ndarray | None = first
        self.fps = float(self._cap.get(cv2.CAP_PROP_FPS) or 0.0)
        self.frame_count = int(self._cap.get(cv2.CAP_PROP_FRAME_COUNT) or 0)
        self.description = self.path.name

    def read(self) -> np.ndarray | None:
        if self._first is not None:
            frame, self._first = self._first, None
            return frame
        ok, frame = self._cap.read()
        if not ok and self.loop:
            self._cap.set(cv2.CAP_PROP_POS_FRAMES, 0)
            ok, frame = self._cap.read()
        return frame if ok else None

    def close(self) -> None:
        self._cap.release()


def open_source(spec: str | int | os.PathLike, *, loop: bool = False) -> FrameSource:
    """A camera when ``spec`` is an int or a string of digits, else a video file."""
    if isinstance(spec, int) or (isinstance(spec, str) and spec.strip().isdigit()):
        return CameraSource(int(spec))
    return VideoFileSource(spec, loop=loop)


class Pacer:
    """Sleeps so a video file plays at its own frame rate (cameras pace themselves)."""

    def __init__(self, fps: float) -> None:
        self.period_s = 1.0 / fps if fps and fps > 0 else 0.0
        self._next = time.perf_counter()

    def wait(self, stop=None) -> None:
        if not self.period_s:
            return
        self._next += self.period_s
        delay = self._next - time.perf_counter()
        if delay > 0:
            if stop is not None:
                stop.wait(delay)
            else:
                time.sleep(delay)
        else:
            self._next = time.perf_counter()  # behind: don't try to catch up with a burst
