"""Hostile files in a data-path dataset: each is skipped and counted with its
reason before any stage reads it, the other images stay, and nothing hangs or reads without bound.
Every hostile file is written here, into an ImageFolder tree of small real JPEGs."""

from __future__ import annotations

import os
import struct
from pathlib import Path

import numpy as np
import pytest

from hwbench_gui.engine import foreign
from hwbench_gui.engine.datapath import stages
from hwbench_gui.engine.datapath.dataset import open_dataset, screen_image
from hwbench_gui.engine.spec.benchmark import ParamError

posix_only = pytest.mark.skipif(os.name != "posix", reason="FIFOs, devices and symbolic links")


def _jpeg(width: int = 48, height: int = 32, seed: int = 0) -> bytes:
    import cv2

    pixels = (np.random.default_rng(seed).random((height, width, 3)) * 255).astype(np.uint8)
    return cv2.imencode(".jpg", pixels)[1].tobytes()


def _claiming(width: int, height: int) -> bytes:
    """A small real JPEG whose frame header (SOF0) claims ``width`` × ``height``."""
    data = bytearray(_jpeg(16, 16))
    sof = data.find(b"\xff\xc0")
    data[sof + 5:sof + 9] = struct.pack(">HH", height, width)
    return bytes(data)


def _tree(root: Path, per_class: int = 3) -> list[Path]:
    files = []
    for cls in ("a", "b"):
        (root / cls).mkdir(parents=True)
        for i in range(per_class):
            files.append(root / cls / f"img{i}.jpg")
            files[-1].write_bytes(_jpeg(seed=len(files)))
    return files


@posix_only
def test_every_hostile_file_is_skipped_with_its_reason_and_the_rest_kept(tmp_path):
    good = _tree(tmp_path)
    bad = tmp_path / "a"
    os.mkfifo(bad / "z1_fifo.jpg")  # read whole, it would block the run for good
    (bad / "z2_dev.jpg").symlink_to("/dev/zero")  # read whole, it never ends
    (bad / "z3_empty.jpg").write_bytes(b"")
    whole = _jpeg(64, 48)
    (bad / "z4_trunc.jpg").write_bytes(whole[:len(whole) // 2])
    (bad / "z5_text.jpg").write_text("not an image\n")
    (bad / "z6_loop.jpg").symlink_to(bad / "z6_loop.jpg")
    (bad / "z7_gone.jpg").symlink_to(tmp_path / "nowhere.jpg")
    (bad / "z8_bomb.jpg").write_bytes(_claiming(20000, 20000))
    (bad / "z9_wide.jpg").write_bytes(_claiming(60000, 2100))  # 126 MP: under PIL's own limit, over ours
    dataset = open_dataset(tmp_path)
    assert dataset.files == [str(p) for p in good]
    assert dataset.labels == [0, 0, 0, 1, 1, 1]
    reasons = {Path(path).name: reason for path, reason in dataset.skipped}
    assert reasons == {
        "z1_fifo.jpg": "not a regular file (a pipe, device or socket): not read as an image",
        "z2_dev.jpg": "not a regular file (a pipe, device or socket): not read as an image",
        "z3_empty.jpg": "empty file: not an image",
        "z4_trunc.jpg": reasons["z4_trunc.jpg"],
        "z5_text.jpg": reasons["z5_text.jpg"],
        "z6_loop.jpg": "cannot be read: a loop of symbolic links",
        "z7_gone.jpg": "cannot be read: No such file or directory",
        "z8_bomb.jpg": "an image of 400 megapixels (at most 120 are decoded)",
        "z9_wide.jpg": "an image of 60000×2100 pixels (126 megapixels; at most 120 are decoded)",
    }
    assert reasons["z4_trunc.jpg"].startswith("cannot be decoded (image file is truncated")
    assert reasons["z5_text.jpg"] == "not an image (no image format PIL reads)"
    assert dataset.total_bytes == sum(p.stat().st_size for p in good)
    assert dataset.skipped_json()["count"] == 9
    warning = dataset.skipped_warning()
    assert warning.startswith("9 file(s) of the dataset skipped as unusable: z1_fifo.jpg: not a regular file")
    assert warning.endswith("; and 6 more (listed in details.dataset.skipped)")
    assert "9 unusable file(s) skipped" in dataset.describe()


def test_limit_counts_usable_images_and_a_folder_of_none_is_one_line(tmp_path):
    good = _tree(tmp_path / "d")
    (tmp_path / "d" / "a" / "img0.jpg").write_bytes(b"\xff\xd8 broken")
    dataset = open_dataset(tmp_path / "d", limit=3)
    assert dataset.files == [str(p) for p in good[1:4]] and len(dataset.skipped) == 1
    empty = tmp_path / "e" / "a"
    empty.mkdir(parents=True)
    (empty / "x.jpg").write_bytes(b"")
    with pytest.raises(ParamError, match=r"has no usable image \(1 skipped; the first, .*x\.jpg: empty file"):
        open_dataset(tmp_path / "e")


def test_a_corrupt_jpeg_body_is_found_before_the_stages_decode_it(tmp_path):
    data = bytearray(_jpeg(256, 192))
    data[len(data) // 3:len(data) // 3 + 400] = bytes(400)  # entropy-coded data zeroed, then cut
    bad = tmp_path / "bad.jpg"
    bad.write_bytes(bytes(data[:len(data) * 2 // 3]))
    with pytest.raises(foreign.ForeignFileError, match="cannot be decoded"):
        screen_image(bad)


@posix_only
def test_the_stage_reader_refuses_a_file_swapped_for_a_pipe_after_screening(tmp_path):
    swapped = tmp_path / "x.jpg"
    os.mkfifo(swapped)
    with pytest.raises(foreign.ForeignFileError, match="not a regular file"):
        stages.read_file(str(swapped))


def test_read_regular_bounds_the_read_before_reading(tmp_path):
    big = tmp_path / "big.bin"
    with open(big, "wb") as handle:
        handle.truncate(10 << 20)  # sparse
    too_large = r"too large for a test file \(10,485,760 bytes; at most 1,024\)"
    with pytest.raises(foreign.ForeignFileError, match=too_large):
        foreign.read_regular(big, 1024, "a test file")
    assert foreign.check_regular(big, 20 << 20) == 10 << 20
    with pytest.raises(foreign.ForeignFileError, match="a folder: not read as a test file"):
        foreign.read_regular(tmp_path, 1024, "a test file")


@posix_only
def test_cpu_decode_skips_what_a_worker_could_not_decode_and_says_so(tmp_path):
    from hwbench_gui.engine.benchmarks.cpu_decode import _load_folder

    good = tmp_path / "a.jpg"
    good.write_bytes(_jpeg())
    os.mkfifo(tmp_path / "b.jpg")
    whole = _jpeg(64, 48)
    (tmp_path / "c.jpg").write_bytes(whole[:len(whole) // 2])
    jpegs, refused = _load_folder(str(tmp_path), 10)
    assert jpegs == [good.read_bytes()]
    assert [r.split(":")[0] for r in refused] == ["b.jpg", "c.jpg"] and "truncated" in refused[1]


@posix_only
def test_the_model_benchmarks_image_folder_leaves_out_pipes_and_devices(tmp_path):
    from hwbench_gui.engine.models.data import torch_dataset

    good = _tree(tmp_path)
    os.mkfifo(tmp_path / "a" / "z1_fifo.jpg")
    (tmp_path / "b" / "z2_dev.jpg").symlink_to("/dev/zero")
    dataset = torch_dataset("classify", str(tmp_path), 32)
    assert [path for path, _ in dataset.samples] == [str(p) for p in good]
    assert [Path(p).name for p, _ in dataset.skipped] == ["z1_fifo.jpg", "z2_dev.jpg"]
    assert dataset[0][0].shape == (3, 32, 32)
