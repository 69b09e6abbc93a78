"""cpu.decode, host.membw and the test-image generator, at tiny sizes."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from recording import Recorder

from hwbench_gui.engine.benchmarks import cpu_decode, host_membw
from hwbench_gui.engine.measure import imagegen
from hwbench_gui.engine.spec.benchmark import BenchmarkUnavailable


def test_generated_jpegs_have_real_content():
    import cv2

    jpegs = imagegen.make_jpegs(4, 96, quality=85, seed=1)
    assert len(set(jpegs)) == 4
    for data in jpegs:
        pixels = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
        assert pixels.shape == (96, 96, 3)
        assert pixels.std() > 10 and 0 < pixels.mean() < 255
    assert imagegen.make_jpegs(2, 64, seed=7) == imagegen.make_jpegs(2, 64, seed=7)


def _image_as_first_drawn(side_px: int, rng) -> np.ndarray:
    """make_image's first, plain formulation: the pixels every shipped cpu.decode reference and
    generated data-path dataset were measured on."""
    y, x = np.mgrid[0:side_px, 0:side_px].astype(np.float32) / max(1, side_px - 1)
    channels = []
    for _ in range(3):
        a, b, c = rng.uniform(-1, 1, 3)
        wave = np.sin((x * a + y * b) * rng.uniform(1, 6) + c * np.pi)
        channels.append(128 + 60 * (a * x + b * y) + 50 * wave)
    canvas = np.clip(np.stack(channels, axis=-1), 0, 255).astype(np.uint8)
    imagegen.draw_shapes(canvas, rng)  # unchanged since
    return np.clip(canvas + rng.normal(0, 6, canvas.shape), 0, 255).astype(np.uint8)


@pytest.mark.parametrize("side_px", [37, 120])
def test_generated_pixels_stay_those_the_references_were_measured_on(side_px):
    for seed in range(3):
        expected = _image_as_first_drawn(side_px, np.random.default_rng(seed))
        np.testing.assert_array_equal(imagegen.make_image(side_px, np.random.default_rng(seed)), expected)


def test_decode_with_one_and_two_workers():
    bench = cpu_decode.BENCHMARK
    rec = Recorder()
    params = bench.resolve_params({"count": 20, "image_size": 64, "workers": "1,2", "repeats": 1,
                                   "repeat_s": 0.05})
    outcome = bench.run(params, rec)
    assert outcome.unit == "images/s" and outcome.figure_name == "JPEG decode, OpenCV, largest worker count"
    assert len(outcome.samples) == 1 and outcome.samples[0] > 0
    libraries = ["OpenCV", "PIL"] if importlib.util.find_spec("PIL") else ["OpenCV"]
    assert [s.label for s in outcome.series] == libraries
    for series in outcome.series:
        assert series.x == [1.0, 2.0] and all(y > 0 for y in series.y)
    assert set(outcome.figures) == {f"{lib}, {w}" for lib in libraries for w in ("1 worker", "2 workers")}
    assert outcome.details["images"] == 20
    assert len(rec.metrics) == 2 * len(libraries)
    assert rec.progress_calls[-1][0] == 1.0
    assert "spawn" in outcome.method


def test_decode_from_a_folder(tmp_path):
    for i, data in enumerate(imagegen.make_jpegs(3, 48)):
        (tmp_path / f"img{i}.JPG").write_bytes(data)
    (tmp_path / "notes.txt").write_text("not an image")
    bench = cpu_decode.BENCHMARK
    params = bench.resolve_params({"folder": str(tmp_path), "workers": "1", "repeats": 1, "repeat_s": 0.02})
    outcome = bench.run(params, Recorder())
    assert outcome.details["images"] == 3
    assert str(tmp_path) in outcome.method and outcome.samples[0] > 0


def test_decode_from_a_folder_without_jpegs(tmp_path):
    bench = cpu_decode.BENCHMARK
    with pytest.raises(BenchmarkUnavailable, match="no JPEG"):
        bench.run(bench.resolve_params({"folder": str(tmp_path), "workers": "1"}), Recorder())


@pytest.mark.parametrize("engine", ["numpy", "torch"])
def test_membw_tiny_arrays(engine):
    if engine == "torch" and importlib.util.find_spec("torch") is None:
        pytest.skip("torch not installed")
    bench = host_membw.BENCHMARK
    rec = Recorder()
    outcome = bench.run(bench.resolve_params({"array_mib": 1, "threads": "1,2", "repeats": 2, "engine": engine}), rec)
    assert outcome.figure_name == "triad, largest thread count" and outcome.unit == "GB/s"
    assert len(outcome.samples) == 2 and all(s > 0 for s in outcome.samples)
    assert [s.label for s in outcome.series] == list(host_membw.KERNELS)
    assert all(len(s.y) == 2 and all(y > 0 for y in s.y) for s in outcome.series)
    assert {"copy, 2 threads", "scale, 1 thread", "triad, 1 thread"} <= set(outcome.figures)
    assert outcome.details["engine"] == engine and outcome.details["array_bytes"] == 1 << 20
    if outcome.details["last_level_cache_bytes"]:
        assert any("last-level cache" in w for w in outcome.warnings)  # 1 MiB cannot exceed 4× the LLC
    assert len(rec.metrics) == 4 * 2


def test_llc_size_is_positive_where_sysfs_has_it():
    size = host_membw.last_level_cache_bytes()
    assert size is None or size >= 64 << 10
