"""Video in and out for the demos: frames from a webcam or a video file, pacing, MP4 files.

Sources give BGR ``uint8`` frames. Opening one reads its first frame, so a source that opens is one
that delivers; every failure is a :class:`SourceError` whose message says what was tried (camera
indices, the file and why it could not be read) and is meant for the user as it stands.

    with open_source("0") as src:          # camera 0; "clip.mp4" would be a file
        for frame in src:
            ...
"""

from __future__ import annotations

import abc
import math
import os
import sys
import time
from pathlib import Path
from typing import Iterator

import cv2
import numpy as np

from hwbench_gui.engine.foreign import ForeignFileError, check_pixels, check_regular

#: Frame rate assumed when a file or camera does not report a usable one.
DEFAULT_FPS = 30.0
#: Frames smaller than this a side cannot be tracked (a detector's resize of a 1×1 frame fails).
MIN_FRAME_SIDE_PX = 16
#: A video file larger than this is refused unread (frames are streamed, so this only bounds the absurd).
MAX_VIDEO_FILE_BYTES = 1 << 40
#: Reported rates above this are container time bases, not frame rates (some WebM/MKV files say 1000).
MAX_PLAUSIBLE_FPS = 1000.0
#: Indices probed besides the requested one, so a "no camera" message can say which ones exist.
PROBE_INDICES = tuple(range(4))


class SourceError(RuntimeError):
    """A camera or video file that cannot be opened or read; the message is meant for the user."""


def parse_source(spec: str | int | os.PathLike) -> int | str:
    """A camera index (``0``, ``"0"``, ``" 1 "``) becomes an int; anything else is a file path (a str).

    Only strings are read as numbers: a ``Path("0")`` stays a file called ``0``.
    """
    if isinstance(spec, int):
        return spec
    if not isinstance(spec, str):
        return os.fspath(spec)
    text = spec.strip()
    return int(text) if text.isascii() and text.isdigit() else text


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
    """Frames one at a time: ``read()`` gives the next BGR frame or None at the end; ``close()`` frees it.

    Iterating yields frames until the end (forever for a camera or a looping file). Use as a context
    manager or call :meth:`close`.
    """

    #: What the user picked, for messages ("camera 0", "clip.mp4").
    description = ""
    #: A camera: frames come at the device's pace and never end; no pacing needed.
    live = False
    #: Frames per second to play or record at: the reported rate, else :data:`DEFAULT_FPS`; always > 0.
    fps = DEFAULT_FPS
    #: The rate the file or device reported, None when it reported none (or an implausible one).
    reported_fps: float | None = None
    #: Frames in a file as its container states them (may be an estimate); None for cameras or when unknown.
    frame_count: int | None = None

    @abc.abstractmethod
    def read(self) -> np.ndarray | None:
        """The next BGR frame, or None at the end of the source."""

    def close(self) -> None:
        pass

    def __iter__(self) -> Iterator[np.ndarray]:
        while (frame := self.read()) is not None:
            yield frame

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class _CaptureSource(FrameSource):
    """An opened ``cv2.VideoCapture`` whose first frame was already read (to prove it delivers)."""

    def __init__(self, cap: cv2.VideoCapture, first: np.ndarray) -> None:
        if min(first.shape[:2]) < MIN_FRAME_SIDE_PX:
            cap.release()
            raise SourceError(f"{self.where()}: frames of {first.shape[1]}×{first.shape[0]} pixels are too small to "
                              f"track (at least {MIN_FRAME_SIDE_PX}×{MIN_FRAME_SIDE_PX})")
        self._cap = cap
        self._first: np.ndarray | None = first
        self._size = (int(first.shape[1]), int(first.shape[0]))
        fps = float(cap.get(cv2.CAP_PROP_FPS) or 0.0)
        self.reported_fps = fps if math.isfinite(fps) and 0 < fps <= MAX_PLAUSIBLE_FPS else None
        self.fps = self.reported_fps or DEFAULT_FPS

    @property
    def frame_size(self) -> tuple[int, int]:
        """(width, height) of the frames, from the first one."""
        return self._size

    def read(self) -> np.ndarray | None:
        if self._first is not None:
            frame, self._first = self._first, None
            return frame
        ok, frame = self._cap.read()
        return frame if ok else None

    def close(self) -> None:
        self._first = None
        self._cap.release()

    def where(self) -> str:
        """The source in words, for a message (its description is set once it is open)."""
        return str(getattr(self, "path", None) or f"camera {getattr(self, 'index', '?')}")


class CameraSource(_CaptureSource):
    """A webcam opened by index, asking for ``size_wh`` (None: the device's default).

    Raises :class:`SourceError` listing the indices tried and those that do open.
    """

    live = True

    def __init__(self, index: int, size_wh: tuple[int, int] | None = (640, 480)) -> None:
        self.index = index
        cap = _quiet_open(index)
        first = None
        if cap.isOpened():
            if size_wh:
                cap.set(cv2.CAP_PROP_FRAME_WIDTH, size_wh[0])
                cap.set(cv2.CAP_PROP_FRAME_HEIGHT, size_wh[1])
            ok, first = cap.read()
            first = first if ok else None
        if first is None:
            cap.release()
            raise SourceError(_no_camera_message(index))
        super().__init__(cap, first)
        self.description = f"camera {index}"


def _no_camera_message(index: int) -> str:
    others = [i for i in PROBE_INDICES if i != index]
    found = list_cameras(others)
    tried = ", ".join(str(i) for i in [index, *others])
    hint = (f"cameras that do open: {', '.join(map(str, found))}" if found
            else "no camera opened at any of them")
    if sys.platform.startswith("linux"):
        devices = sorted(str(p) for p in Path("/dev").glob("video*"))
        hint += f"; video devices in /dev: {', '.join(devices) if devices else 'none'}"
    return (f"no camera at index {index}: tried indices {tried}; {hint}. "
            "Plug in a webcam or pick a video file instead.")


class VideoFileSource(_CaptureSource):
    """A video file; ``loop=True`` starts again at the end (the GUI), else ``read()`` ends with None.

    Raises :class:`SourceError` when the file is missing or OpenCV cannot decode a frame from it.
    """

    def __init__(self, path: str | os.PathLike, loop: bool = False) -> None:
        self.path = Path(path)
        self.loop = loop
        if not self.path.exists() and not self.path.is_symlink():
            raise SourceError(f"video file not found: {self.path}")
        try:  # OpenCV opens the path itself: a pipe or a device must be refused before it does
            check_regular(self.path, MAX_VIDEO_FILE_BYTES, "a video")
        except ForeignFileError as exc:
            raise SourceError(f"cannot read video {exc}") from None
        cap = cv2.VideoCapture(str(self.path))
        if cap.isOpened():  # the container's frame size, known before any frame is decoded
            try:
                check_pixels(int(cap.get(cv2.CAP_PROP_FRAME_WIDTH) or 1), int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT) or 1),
                             self.path)
            except ForeignFileError as exc:
                cap.release()
                raise SourceError(f"cannot read video {exc}") from None
        ok, first = cap.read() if cap.isOpened() else (False, None)
        if not ok or first is None:
            cap.release()
            raise SourceError(f"cannot read video {self.path}: OpenCV could not decode a frame from it "
                              "(not a video, an unsupported codec, or a damaged file)")
        super().__init__(cap, first)
        count = int(cap.get(cv2.CAP_PROP_FRAME_COUNT) or 0)
        self.frame_count = count if count > 0 else None
        self.description = self.path.name

    def read(self) -> np.ndarray | None:
        frame = super().read()
        if frame is None and self.loop:
            self._cap.set(cv2.CAP_PROP_POS_FRAMES, 0)
            frame = super().read()
        return frame


def open_source(spec: str | int | os.PathLike, *, loop: bool = False,
                camera_size_wh: tuple[int, int] | None = (640, 480)) -> FrameSource:
    """A camera when ``spec`` is an int or a string of digits (see :func:`parse_source`), else a video file.

    ``loop`` applies to files; ``camera_size_wh`` (None: the device's default) to cameras.
    """
    where = parse_source(spec)
    if isinstance(where, int):
        return CameraSource(where, size_wh=camera_size_wh)
    if not where:
        raise SourceError("no source given: a camera index (0, 1, …) or a video file path")
    return VideoFileSource(where, loop=loop)


class Pacer:
    """Sleeps so frames go out at ``fps`` (a file played at its own rate); ``fps`` 0 never sleeps.

    Call :meth:`wait` once per frame. When processing falls behind, it does not try to catch up with
    a burst of unpaced frames.
    """

    def __init__(self, fps: float) -> None:
        self.period_s = 1.0 / fps if fps and fps > 0 else 0.0
        self._next = time.perf_counter()

    def wait(self, stop=None) -> None:
        """Sleep until the next frame is due; ``stop`` (a ``threading.Event``) cuts the sleep short when set."""
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
            self._next = time.perf_counter()


class Mp4Writer:
    """BGR frames of one size into an MP4 (MPEG-4 Part 2, fourcc ``mp4v``: in every OpenCV wheel).

    Frames of another size are resized. ``fps`` 0 or None writes at :data:`DEFAULT_FPS`. Use as a
    context manager or call :meth:`close`. Raises ``OSError`` when OpenCV cannot open a writer at ``path``.
    """

    def __init__(self, path: str | os.PathLike, fps: float, size_wh: tuple[int, int]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.size_wh = (int(size_wh[0]), int(size_wh[1]))
        self._writer = cv2.VideoWriter(str(self.path), cv2.VideoWriter_fourcc(*"mp4v"), float(fps or DEFAULT_FPS),
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
