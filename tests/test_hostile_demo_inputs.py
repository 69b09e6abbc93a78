"""Hostile demo inputs: every size a file or an argument can set is bounded
before anything is allocated, and each refusal is one line naming the file. The hostile files are
written here."""

from __future__ import annotations

import argparse
import os
import struct
import threading

import numpy as np
import pytest
from support import no_traceback, one_line, run_cli

posix_only = pytest.mark.skipif(os.name != "posix", reason="FIFOs")


def _shipped_payload() -> dict:
    import torch

    from hwbench_gui.demos.snake.checkpoint import shipped_checkpoint

    return torch.load(shipped_checkpoint(), map_location="cpu", weights_only=True)


@pytest.mark.parametrize("board, shown", [({"height": 200000, "width": 200000}, "200000×200000"),
                                          ({"height": -5, "width": 12}, "-5×12"),
                                          ({"height": 12.0, "width": 12}, "12.0×12")])
def test_a_checkpoints_board_is_bounded_before_anything_is_sized_by_it(tmp_path, board, shown):
    import torch

    from hwbench_gui.demos.snake.checkpoint import CheckpointError, load_checkpoint

    path = tmp_path / "hostile.pt"
    torch.save({**_shipped_payload(), "board": board}, path)
    with pytest.raises(CheckpointError) as info:
        load_checkpoint(path)
    assert info.value.reason == f"its board {shown} is not 4 to 64 cells a side"


@posix_only
def test_a_checkpoint_that_is_a_pipe_is_refused_unread(tmp_path):
    from hwbench_gui.demos.snake.checkpoint import CheckpointError, read_checkpoint

    os.mkfifo(tmp_path / "pipe.pt")
    with pytest.raises(CheckpointError, match="not a regular file"):
        read_checkpoint(tmp_path / "pipe.pt")


def test_training_minutes_are_bounded_in_the_engine_and_the_parser(cli_env, tmp_path):
    from hwbench_gui.commands.argtypes import positive_at_most
    from hwbench_gui.demos.snake.train import MAX_MINUTES, TrainConfig, train

    stopped = threading.Event()
    stopped.set()  # without the bound, training would return at once rather than run for 1e300 minutes
    with pytest.raises(ValueError, match="at most 10080"):
        train(TrainConfig(minutes=1e300, n_boards=1), stop=stopped)
    assert positive_at_most(MAX_MINUTES)("10080") == MAX_MINUTES
    with pytest.raises(argparse.ArgumentTypeError, match="must be at most 10080, got 1e300"):
        positive_at_most(MAX_MINUTES)("1e300")
    proc = run_cli(["demo", "snake", "train", "--minutes", "1e300", "--out", str(tmp_path / "s.pt")], cli_env)
    no_traceback(proc)
    assert proc.returncode == 2 and proc.stderr.splitlines()[-1].endswith(
        "error: argument --minutes: must be at most 10080, got 1e300")


def _jpeg_claiming(width: int, height: int) -> bytes:
    import cv2

    data = bytearray(cv2.imencode(".jpg", np.zeros((16, 16, 3), np.uint8))[1].tobytes())
    sof = data.find(b"\xff\xc0")
    data[sof + 5:sof + 9] = struct.pack(">HH", height, width)
    return bytes(data)


def test_a_target_whose_header_claims_20000_square_is_refused_before_decoding(tmp_path):
    from hwbench_gui.demos.motion.targets import TargetError, read_image

    bomb = tmp_path / "bomb.jpg"
    bomb.write_bytes(_jpeg_claiming(20000, 20000))
    assert bomb.stat().st_size < 1000
    with pytest.raises(TargetError) as info:
        read_image(bomb)
    assert str(info.value) == f"target image {bomb}: an image of 400 megapixels (at most 120 are decoded)"
    wide = tmp_path / "wide.jpg"  # under PIL's own limit, over hwbench's
    wide.write_bytes(_jpeg_claiming(60000, 2100))
    with pytest.raises(TargetError, match=r"60000×2100 pixels \(126 megapixels; at most 120 are decoded\)"):
        read_image(wide)


def test_a_keypoints_sidecar_is_read_bounded_and_checked(tmp_path):
    import cv2

    from hwbench_gui.demos.motion.targets import MAX_SIDECAR_BYTES, TargetError, load_target

    image = tmp_path / "face.png"
    cv2.imwrite(str(image), np.full((64, 64, 3), 128, np.uint8))
    side = tmp_path / "face.keypoints.json"
    point = '{"x": 1.5, "y": 2.5}'
    side.write_text('{"keypoints": [' + ",".join([point] * (MAX_SIDECAR_BYTES // len(point) + 1)) + "]}")
    with pytest.raises(TargetError, match=r"keypoints file .*face\.keypoints\.json: too large for a keypoints file"):
        load_target(image, detect_face=False)
    points = ",".join([point] * 3)
    for body, reason in ((f'{{"keypoints": [{points}], "size": [0, 64]}}', "'size' is not a positive width and height"),
                         ('{"keypoints": [{"x": "a", "y": 1}]}', "not a list of points with numbers x and y"),
                         ('[1, 2]', "not a list of points"),
                         ("[" * 100000, "RecursionError")):
        side.write_text(body)
        with pytest.raises(TargetError, match=reason):
            load_target(image, detect_face=False)
    side.write_text(f'{{"keypoints": [{points}], "size": [64, 64]}}')
    assert load_target(image, detect_face=False).keypoints.shape == (3, 2)


def test_output_size_and_region_are_bounded(tmp_path):
    from hwbench_gui.demos.motion import MAX_OUT_SIZE_PX
    from hwbench_gui.demos.motion.pipeline import MotionPipeline, roi_problem

    assert roi_problem((5, 5, 20, 20), (64, 48)) is None
    assert roi_problem((5000, 5000, 10, 10), (64, 48)) == ("the region 5000,5000,10,10 (X,Y,W,H) is not inside the "
                                                         "64×48 frame")
    assert roi_problem((-1, 0, 10, 10), (64, 48)) is not None and roi_problem((60, 0, 10, 10), (64, 48)) is not None
    with pytest.raises(ValueError, match="output size 100000 px is not 16 to 4096"):
        MotionPipeline(None, None, out_size_px=100000)
    assert MAX_OUT_SIZE_PX == 4096


def _video(path, width: int, height: int) -> None:
    import cv2

    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10, (width, height))
    for _ in range(3):
        writer.write(np.full((height, width, 3), 128, np.uint8))
    writer.release()


def test_a_1x1_video_and_a_pipe_are_refused_as_sources(tmp_path):
    from hwbench_gui.demos.video import SourceError, open_source

    tiny = tmp_path / "tiny.avi"
    _video(tiny, 1, 1)
    with pytest.raises(SourceError) as info:
        open_source(str(tiny))
    assert str(info.value) == f"{tiny}: frames of 1×1 pixels are too small to track (at least 16×16)"
    if os.name == "posix":
        os.mkfifo(tmp_path / "pipe.avi")
        with pytest.raises(SourceError, match="not a regular file"):
            open_source(str(tmp_path / "pipe.avi"))


def test_motion_cli_gives_one_line_for_a_region_off_the_frame(cli_env, tmp_path):
    from hwbench_gui.engine.paths import resources_dir

    clip = tmp_path / "clip.avi"
    _video(clip, 64, 48)
    proc = run_cli(["demo", "motion", "--source", str(clip), "--target", str(resources_dir() / "motion" / "robot.png"),
                    "--roi", "5000,5000,10,10", "--out", str(tmp_path / "m.mp4"), "--no-result"], cli_env)
    no_traceback(proc)
    assert proc.returncode == 2
    assert one_line(proc.stderr) == (f"error: {clip}: the region 5000,5000,10,10 (X,Y,W,H) is not inside the 64×48 "
                                     "frame")


def test_track_classes_and_ground_truth_are_checked(tmp_path):
    from hwbench_gui.commands.demo_track import _classes
    from hwbench_gui.demos.tracking.io import read_mot

    names = [f"c{i}" for i in range(80)]
    assert _classes("0,c5,79", names) == [0, 5, 79]
    with pytest.raises(ValueError, match="class id 999 is not a COCO class"):
        _classes("999", names)
    if os.name == "posix":
        os.mkfifo(tmp_path / "gt.txt")
        with pytest.raises(ValueError, match="not a regular file"):
            read_mot(tmp_path / "gt.txt")


@posix_only
def test_darknet_weights_and_cfg_that_are_pipes_are_refused_unread(tmp_path):
    from hwbench_gui.demos.tracking import darknet

    os.mkfifo(tmp_path / "w.weights")
    os.mkfifo(tmp_path / "n.cfg")
    net = darknet.parse_cfg(darknet.shipped_cfg("yolov3-tiny"))
    with pytest.raises(darknet.WeightsError, match="not a regular file"):
        darknet.read_weights(tmp_path / "w.weights", net)
    with pytest.raises(darknet.CfgError, match="not a regular file"):
        darknet.parse_cfg(tmp_path / "n.cfg")
