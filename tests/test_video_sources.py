"""The demos' shared video sources and writer (hwbench_gui/demos/video.py): files, cameras, pacing."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from hwbench_gui.demos import video
from hwbench_gui.demos.video import (
    DEFAULT_FPS,
    CameraSource,
    Mp4Writer,
    Pacer,
    SourceError,
    VideoFileSource,
    open_source,
    parse_source,
)

FRAMES, FPS, SIZE_WH = 7, 12.0, (64, 48)
LEVELS = [20 + 30 * i for i in range(FRAMES)]  # grey level of frame i: tells frames apart after MPEG-4 coding


@pytest.fixture(scope="module")
def clip(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("video") / "clip.mp4"
    with Mp4Writer(path, FPS, SIZE_WH) as writer:
        for level in LEVELS:
            writer.write(np.full((SIZE_WH[1], SIZE_WH[0], 3), level, np.uint8))
    assert writer.frames == FRAMES
    return path


def _level(frame: np.ndarray) -> int:
    """The level in LEVELS nearest the frame's mean grey."""
    return min(LEVELS, key=lambda v: abs(v - float(frame.mean())))


def test_parse_source():
    assert parse_source("0") == 0 and parse_source(" 2 ") == 2 and parse_source(3) == 3
    assert parse_source("clip.mp4") == "clip.mp4" and parse_source(" clip.mp4 ") == "clip.mp4"
    assert parse_source(Path("0")) == "0"  # a Path is always a file
    assert parse_source("-1") == "-1" and parse_source("²") == "²"  # not camera indices


def test_a_file_reads_back_with_its_frames_and_rate(clip):
    with open_source(str(clip)) as src:
        assert isinstance(src, VideoFileSource) and not src.live and src.description == "clip.mp4"
        assert src.fps == pytest.approx(FPS) and src.reported_fps == pytest.approx(FPS)
        assert src.frame_count == FRAMES
        frames = list(src)
    assert len(frames) == FRAMES
    assert all(f.shape == (SIZE_WH[1], SIZE_WH[0], 3) and f.dtype == np.uint8 for f in frames)
    assert [_level(f) for f in frames] == LEVELS
    assert src.read() is None  # closed by the with block


def test_a_looping_file_starts_again(clip):
    with open_source(clip, loop=True) as src:
        levels = [_level(src.read()) for _ in range(2 * FRAMES + 3)]
    assert levels == LEVELS + LEVELS + LEVELS[:3]


def test_missing_empty_and_unreadable_files(tmp_path):
    with pytest.raises(SourceError, match=r"video file not found: .*missing\.mp4"):
        open_source(str(tmp_path / "missing.mp4"))
    with pytest.raises(SourceError, match="a folder: not read as a video"):
        open_source(tmp_path)
    with pytest.raises(SourceError, match="no source given"):
        open_source("  ")
    junk = tmp_path / "junk.mp4"
    junk.write_bytes(b"not a video at all" * 100)
    with pytest.raises(SourceError, match=r"cannot read video .*junk\.mp4.*could not decode"):
        open_source(str(junk))


def test_missing_camera_names_the_indices_tried_and_probes_quietly(capfd):
    with pytest.raises(SourceError) as err:
        CameraSource(99)
    message = str(err.value)
    assert "no camera at index 99" in message and "tried indices 99, 0, 1, 2, 3" in message
    assert "Plug in a webcam or pick a video file" in message
    with pytest.raises(SourceError, match="no camera at index 98"):
        open_source(" 98 ")
    # without the quiet open OpenCV prints a "[ WARN ... can't open camera by index" line per index tried
    assert "WARN" not in capfd.readouterr().err


class _FakeCapture:
    """Stands in for cv2.VideoCapture to feed the rate check numbers no real file here reports."""

    def __init__(self, fps: float) -> None:
        self.fps = fps

    def get(self, prop: int) -> float:
        return self.fps if prop == cv2.CAP_PROP_FPS else 0.0

    def read(self):
        return False, None

    def release(self) -> None:
        pass


@pytest.mark.parametrize("reported", [0.0, -1.0, float("nan"), 90000.0])
def test_an_unusable_reported_rate_falls_back_to_the_default(reported):
    src = video._CaptureSource(_FakeCapture(reported), np.zeros((16, 16, 3), np.uint8))
    assert src.reported_fps is None and src.fps == DEFAULT_FPS
    assert src.read() is not None and src.read() is None  # the first frame, then the (empty) capture


def test_pacer_waits_one_period_and_not_at_zero_fps():
    delays: list[float] = []

    class Stop:
        def wait(self, delay_s: float) -> None:
            delays.append(delay_s)

    Pacer(0.0).wait(Stop())
    assert delays == []
    Pacer(1.0).wait(Stop())
    assert len(delays) == 1 and 0 < delays[0] <= 1.0


def test_writer_resizes_frames_of_another_size(tmp_path):
    path = tmp_path / "sub" / "out.mp4"
    with Mp4Writer(path, 0, SIZE_WH) as writer:  # fps 0: the default rate
        writer.write(np.zeros((100, 30, 3), np.uint8))
    with VideoFileSource(path) as src:
        frame = src.read()
        assert frame.shape == (SIZE_WH[1], SIZE_WH[0], 3) and src.fps == pytest.approx(DEFAULT_FPS)
