"""Tracking demo logic: Darknet cfg/weights, YOLO model, Kalman filter, gating, association, Deep SORT on a
generated crossing, MOT text, metrics. No window, no GPU."""

from __future__ import annotations

import numpy as np
import pytest

from hwbench_gui.demos.tracking import darknet, synthetic
from hwbench_gui.demos.tracking.boxes import iou_matrix, xyah_to_xyxy, xyxy_to_xyah
from hwbench_gui.demos.tracking.deepsort import Detection, Tracker
from hwbench_gui.demos.tracking.kalman import CHI2INV95, KalmanFilter
from hwbench_gui.demos.tracking.matching import min_cost_matching
from hwbench_gui.demos.tracking.io import MotRow, MotWriter, read_mot

# -- cfg and weights ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name, layers, convs, yolos, params", [
    ("yolov3", 107, 75, 3, 62_001_757),
    ("yolov3-tiny", 24, 13, 2, 8_858_734),
])
def test_shipped_cfgs_parse_to_the_official_layer_counts(name, layers, convs, yolos, params):
    net = darknet.parse_cfg(darknet.shipped_cfg(name))
    assert len(net.layers) == layers
    assert len(net.conv_layers()) == convs
    assert len(net.yolo_layers()) == yolos
    assert net.num_classes == 80
    # The official files are 248,007,048 and 35,434,956 bytes: a 20-byte header and these parameters.
    assert net.param_count() == params
    assert darknet.expected_size_bytes(net) == {"yolov3": 248_007_048, "yolov3-tiny": 35_434_956}[name]


def test_route_and_shortcut_resolve_channels():
    net = darknet.parse_cfg(darknet.shipped_cfg("yolov3"))
    route = net.layers[86]
    assert route.type == "route" and route.sources == (85, 61)
    assert route.out_channels == 256 + 512
    assert net.layers[4].type == "shortcut" and net.layers[4].sources == (1,)


def test_bad_cfg_names_the_line():
    with pytest.raises(darknet.CfgError, match=r"cfg:4: layer type \[lstm\]"):
        darknet.parse_cfg_text("[net]\nwidth=416\n\n[lstm]\nbatch=1\n")
    with pytest.raises(darknet.CfgError, match="first section must be"):
        darknet.parse_cfg_text("[convolutional]\nfilters=1\nsize=1\n")


@pytest.fixture(scope="module")
def tiny():
    return darknet.parse_cfg(darknet.shipped_cfg("yolov3-tiny"))


def test_weights_round_trip_into_identical_layer_tensors(tmp_path, tiny):
    torch = pytest.importorskip("torch")
    from hwbench_gui.demos.tracking.yolo import YoloV3

    written = darknet.random_weights(tiny, seed=3)
    written.seen = 32_013_312
    path = darknet.write_weights(tmp_path / "tiny.weights", written)
    assert path.stat().st_size == darknet.expected_size_bytes(tiny)

    read = darknet.read_weights(path, tiny)
    assert (read.major, read.minor, read.revision, read.seen) == (0, 2, 0, 32_013_312)
    model = YoloV3(tiny)
    model.load_darknet(read)
    modules = {layer.index: module for layer, module in zip(tiny.layers, model.layers)}
    for conv in written.convs:
        m = modules[conv.layer_index]
        assert torch.equal(m.conv.weight, torch.from_numpy(conv.weights))
        if conv.bn is not None:
            for tensor, array in zip((m.bn.bias, m.bn.weight, m.bn.running_mean, m.bn.running_var), conv.bn):
                assert torch.equal(tensor, torch.from_numpy(array))
        else:
            assert torch.equal(m.conv.bias, torch.from_numpy(conv.bias))


def test_old_header_with_32_bit_seen_is_read(tmp_path, tiny):
    w = darknet.random_weights(tiny, seed=1)
    w.major, w.minor, w.seen = 0, 1, 7
    path = darknet.write_weights(tmp_path / "old.weights", w)
    assert path.stat().st_size == 16 + 4 * tiny.param_count()
    assert darknet.read_weights(path, tiny).seen == 7


def test_wrong_size_weights_file_says_expected_and_actual_bytes(tmp_path, tiny):
    path = darknet.write_weights(tmp_path / "tiny.weights", darknet.random_weights(tiny))
    full = darknet.parse_cfg(darknet.shipped_cfg("yolov3"))
    with pytest.raises(darknet.WeightsError) as info:
        darknet.read_weights(path, full)
    message = str(info.value)
    assert "expected 248,007,048 bytes" in message and "got 35,434,956 bytes" in message
    truncated = tmp_path / "cut.weights"
    truncated.write_bytes(path.read_bytes()[:-4])
    with pytest.raises(darknet.WeightsError, match="got 35,434,952 bytes"):
        darknet.read_weights(truncated, tiny)


def test_tiny_yolo_runs_and_decodes_on_cpu(tmp_path, tiny):
    torch = pytest.importorskip("torch")
    from hwbench_gui.demos.tracking.yolo import YoloV3, letterbox, postprocess

    model = YoloV3(tiny)
    model.load_darknet(darknet.random_weights(tiny, seed=0))
    model.eval()
    frame = torch.from_numpy(np.random.default_rng(0).integers(0, 255, (120, 160, 3), dtype=np.uint8))
    x, scale, (dx, dy) = letterbox(frame, 128)
    assert x.shape == (1, 3, 128, 128) and scale == pytest.approx(0.8) and (dx, dy) == (0.0, 16.0)
    with torch.inference_mode():
        raw = model(x)
        assert [tuple(r.shape) for r in raw] == [(1, 255, 4, 4), (1, 255, 8, 8)]
        fused_raw = YoloV3(tiny)
        fused_raw.load_darknet(darknet.random_weights(tiny, seed=0))
        fused_out = fused_raw.eval().fuse()(x)
        for a, b in zip(raw, fused_out):  # folding BN into conv changes nothing but rounding
            assert torch.allclose(a, b, rtol=1e-3, atol=1e-3)
        pred = model.decode(raw, (128, 128))
        assert pred.shape == (1, 3 * (16 + 64), 85)
        dets = postprocess(pred, 0.0, 0.45, max_det=7)[0]
    assert dets.shape[1] == 6 and 0 < len(dets) <= 7


def test_yolo_detector_without_weights_says_where_they_come_from():
    from hwbench_gui.demos.tracking.detectors import YoloDetector, yolo_unavailable_reason

    reason = yolo_unavailable_reason(None)
    assert "pjreddie.com" in reason and "Darknet" in reason
    with pytest.raises(FileNotFoundError, match="no YOLOv3 weights"):
        YoloDetector(weights=None)


def test_yolo_detector_with_a_weights_file_maps_boxes_to_the_frame(tmp_path, tiny):
    pytest.importorskip("torch")
    from hwbench_gui.demos.tracking.detectors import YoloDetector

    path = darknet.write_weights(tmp_path / "tiny.weights", darknet.random_weights(tiny, seed=2))
    det = YoloDetector(cfg=darknet.shipped_cfg("yolov3-tiny"), weights=path, size=128, conf_threshold=0.0,
                       max_det=5)
    frame = np.random.default_rng(1).integers(0, 255, (90, 200, 3), dtype=np.uint8)
    out = det.detect(frame)
    assert 0 < len(out) <= 5 and det.precision == "FP32" and not det.random_weights
    assert out.boxes[:, [0, 2]].max() <= 200 and out.boxes[:, [1, 3]].max() <= 90 and out.boxes.min() >= 0


# -- Kalman filter, gating, assignment -------------------------------------------------------------------

def test_box_conversions_round_trip():
    boxes = np.array([[10, 20, 40, 100], [0, 0, 5, 5]], float)
    assert np.allclose(xyah_to_xyxy(xyxy_to_xyah(boxes)), boxes)


def test_kalman_learns_constant_velocity():
    kf = KalmanFilter()
    mean, cov = kf.initiate(np.array([100.0, 50.0, 0.5, 80.0]))
    for step in range(1, 15):
        mean, cov = kf.predict(mean, cov)
        mean, cov = kf.update(mean, cov, np.array([100.0 + 5 * step, 50.0, 0.5, 80.0]))
    predicted, _ = kf.predict(mean, cov)
    assert predicted[0] == pytest.approx(100 + 5 * 15, abs=1.0)
    assert predicted[4] == pytest.approx(5.0, abs=0.3)


def test_batched_update_matches_single_update():
    kf = KalmanFilter()
    states = [kf.initiate(np.array([10.0 * i, 20.0, 0.4, 60.0 + i])) for i in range(3)]
    meas = np.array([[10.0 * i + 2, 21.0, 0.41, 61.0 + i] for i in range(3)])
    means, covs = kf.update(np.stack([s[0] for s in states]), np.stack([s[1] for s in states]), meas)
    for i, (m, c) in enumerate(states):
        m1, c1 = kf.update(m, c, meas[i])
        assert np.allclose(means[i], m1) and np.allclose(covs[i], c1)


def test_mahalanobis_gate_keeps_near_and_rejects_far():
    kf = KalmanFilter()
    mean, cov = kf.predict(*kf.initiate(np.array([100.0, 100.0, 0.5, 80.0])))
    d2 = kf.gating_distance(mean, cov, np.array([[101.0, 100.0, 0.5, 80.0], [180.0, 100.0, 0.5, 80.0]]))
    assert d2[0] < CHI2INV95[4] < d2[1]


def test_min_cost_matching_refuses_costly_pairs():
    cost = np.array([[0.1, 0.9], [0.8, 0.95]])
    matches, un_t, un_d = min_cost_matching(cost, 0.5, [7, 8], [3, 4])
    assert matches == [(7, 3)] and un_t == [8] and un_d == [4]


def test_iou_matrix():
    iou = iou_matrix(np.array([[0, 0, 10, 10]]), np.array([[5, 0, 15, 10], [20, 20, 30, 30]]))
    assert iou[0, 0] == pytest.approx(50 / 150) and iou[0, 1] == 0


def test_tracks_confirm_after_n_init_and_die_after_max_age():
    tracker = Tracker(n_init=3, max_age=2)
    box = np.array([10.0, 10.0, 30.0, 60.0])
    for frame in range(3):
        tracker.predict()
        tracker.update([Detection(box + frame)])
    assert [t.track_id for t in tracker.active_tracks()] == [1]
    for _ in range(4):
        tracker.predict()
        tracker.update([])
    assert tracker.tracks == []


def test_cascade_uses_appearance_to_keep_ids_when_boxes_swap_positions():
    """Two overlapping tracks, both inside each other's Mahalanobis gate: appearance decides who is who."""
    tracker = Tracker(n_init=1)
    a, b = np.eye(4, dtype=np.float32)[0], np.eye(4, dtype=np.float32)[1]
    left, right = np.array([100.0, 100.0, 120.0, 150.0]), np.array([103.0, 100.0, 123.0, 150.0])
    for _ in range(3):
        tracker.predict()
        tracker.update([Detection(left, feature=a), Detection(right, feature=b)])
    ids = {tuple(t.last_box): t.track_id for t in tracker.active_tracks()}
    tracker.predict()
    tracker.update([Detection(left, feature=b), Detection(right, feature=a)])  # they swapped places
    swapped = {tuple(t.last_box): t.track_id for t in tracker.active_tracks()}
    assert swapped[tuple(left)] == ids[tuple(right)] and swapped[tuple(right)] == ids[tuple(left)]


def _ids_across_a_crossing(split_colour: bool, split_depth: bool = True
                           ) -> tuple[dict[int, set[int]], dict[int, set[int]], int]:
    """Track ids each figure of the generated crossing gets before its first overlap and after it, through the
    demo's motion detector, and the frames of the overlap in which the detector saw one blob."""
    from hwbench_gui.demos.tracking.detectors import MotionDetector
    from hwbench_gui.demos.tracking.pipeline import TrackingPipeline

    pipeline = TrackingPipeline(MotionDetector(scale=1.0, split_colour=split_colour, split_depth=split_depth))
    before: dict[int, set[int]] = {1: set(), 2: set()}
    after: dict[int, set[int]] = {1: set(), 2: set()}
    phase = before
    merged_frames = 0
    for _, frame, gt in synthetic.render(synthetic.crossing_spec(n_frames=60)):
        result = pipeline.step(frame)
        if len(gt) == 2 and iou_matrix(np.array([gt[0].box]), np.array([gt[1].box]))[0, 0] > 0:
            phase = after  # from the first overlap on, ids must be the ones seen before it
            merged_frames += len(result.detections) == 1
            continue
        if not result.tracks:
            continue
        boxes = np.array([t.box for t in result.tracks])
        for g in gt:
            iou = iou_matrix(np.array([g.box]), boxes)[0]
            if iou.max() >= 0.5:
                phase[g.object_id].add(result.tracks[int(iou.argmax())].track_id)
    return before, after, merged_frames


def test_ids_survive_a_crossing_with_the_motion_detector():
    """Two figures walk into each other (the detector sees one blob for a few frames) and out again. The colour
    cut would part the two (they wear different colours), and so would the depth cut (the blob is wider than
    one person): off, so the tracker meets the merged blob this test is about; the test below checks the ids with
    the cuts on."""
    before, after, merged_frames = _ids_across_a_crossing(split_colour=False, split_depth=False)
    assert merged_frames >= 3, "the figures must really merge into one blob for a while"
    assert all(len(ids) == 1 for ids in before.values()) and before[1] != before[2], before
    assert after == before


def test_ids_survive_a_crossing_with_the_colour_cut_on():
    """The same crossing through the demo's detector as it ships (figures in different colours cut
    apart where they touch): one id per figure before the overlap, the same ones after it."""
    before, after, _ = _ids_across_a_crossing(split_colour=True)
    assert all(len(ids) == 1 for ids in before.values()) and before[1] != before[2], before
    assert after == before


# -- files and metrics ------------------------------------------------------------------------------------

def test_mot_text_format(tmp_path):
    path = tmp_path / "tracks.txt"
    with MotWriter(path) as w:
        w.write(1, 3, (10.0, 20.0, 40.5, 80.0), 0.9)
        w.write(2, 3, (11.0, 21.0, 41.0, 81.0), 1.0)
    lines = path.read_text().splitlines()
    assert lines[0] == "1,3,10.00,20.00,30.50,60.00,0.9000,-1,-1,-1"
    rows = read_mot(path)
    assert rows[1] == MotRow(2, 3, (11.0, 21.0, 41.0, 81.0), 1.0)


def test_metrics_perfect_and_with_an_id_switch():
    from hwbench_gui.demos.tracking.metrics import evaluate

    gt = [MotRow(f, i, (10.0 * i + f, 0.0, 10.0 * i + f + 8, 20.0), 1.0) for f in range(1, 11) for i in (1, 5)]
    perfect = evaluate(gt, [MotRow(r.frame, r.object_id + 100, r.box, 1.0) for r in gt])
    assert perfect["MOTA"] == pytest.approx(1.0) and perfect["IDF1"] == pytest.approx(1.0) and perfect["IDSW"] == 0
    switched = [MotRow(r.frame, r.object_id + (200 if r.frame > 5 and r.object_id == 1 else 100), r.box, 1.0)
                for r in gt]
    m = evaluate(gt, switched)
    assert m["IDSW"] == 1 and m["MOTA"] == pytest.approx(1 - 1 / 20) and m["IDF1"] < 1.0


def test_generated_sequence_ground_truth_follows_visible_pixels():
    spec = synthetic.SequenceSpec(width=100, height=80, n_frames=3, figures=[
        synthetic.FigureSpec(1, 20, 40, 1, 10, 10, 5, 0, ((200, 200, 200), (0, 0, 255), (255, 0, 0)))],
        pillars=[(40, 0, 60, 80)], noise_sigma=0)
    frames = list(synthetic.render(spec))
    n, frame, gt = frames[0]
    assert n == 1 and frame.shape == (80, 100, 3) and gt[0].box == (10.0, 10.0, 30.0, 50.0)
    # Third frame: x = 20..40, fully clear of the pillar at 40..60.
    assert frames[2][2][0].box == (20.0, 10.0, 40.0, 50.0)


def test_appearance_works_without_opencv_hog(monkeypatch):
    """A GPU box may carry OpenCV 5 (no HOGDescriptor): the embedder falls back to numpy HOG."""
    import cv2
    import numpy as np

    from hwbench_gui.demos.tracking import appearance

    rng = np.random.default_rng(0)
    frame = rng.integers(0, 255, (120, 160, 3), dtype=np.uint8)
    boxes = np.array([[10, 10, 40, 70], [80, 20, 120, 100]], float)
    with_cv2 = appearance.ColorHogEmbedder().embed(frame, boxes)
    monkeypatch.delattr(cv2, "HOGDescriptor")
    fallback = appearance.ColorHogEmbedder()
    assert "numpy" in fallback.description
    feats = fallback.embed(frame, boxes)
    assert feats.shape == with_cv2.shape
    assert np.allclose(np.linalg.norm(feats, axis=1), 1, atol=1e-5)
    # same layout, different binning: the two descriptors of one crop agree closely
    assert float(feats[0] @ with_cv2[0]) > 0.9


def test_pipeline_steps_with_numpy_blas_held_to_one_thread():
    """Idle OpenBLAS threads spin after each small product and starved the GPU feeder (31 vs 69 FPS on
    the H200); every step runs with BLAS at one thread, and the process limit comes back afterwards."""
    from threadpoolctl import ThreadpoolController, threadpool_limits

    from hwbench_gui.demos.tracking.detectors import Detections
    from hwbench_gui.demos.tracking.pipeline import TrackingPipeline

    def blas_threads() -> list[int]:
        return [p["num_threads"] for p in ThreadpoolController().info() if p["user_api"] == "blas"]

    seen: list[list[int]] = []

    class RecordingDetector:
        def reset(self):
            pass

        def detect(self, frame):
            seen.append(blas_threads())
            return Detections(np.array([[10, 10, 40, 80]], np.float32), np.array([0.9], np.float32),
                              np.zeros(1, np.int64))

    if not blas_threads():
        pytest.skip("numpy here links no BLAS that threadpoolctl can see")
    with threadpool_limits(limits=2, user_api="blas"):
        before = blas_threads()
        pipeline = TrackingPipeline(RecordingDetector())
        for _ in range(3):
            pipeline.step(np.zeros((120, 160, 3), np.uint8))
        assert seen == [[1] * len(before)] * 3
        assert blas_threads() == before


def test_overlapped_run_gives_the_results_of_step_by_step():
    """run() detects the next frame in a thread while this one is tracked; ids and boxes must not change."""
    import threading

    from hwbench_gui.demos.tracking.detectors import MotionDetector
    from hwbench_gui.demos.tracking.pipeline import TrackingPipeline

    frames = [frame for _, frame, _ in synthetic.render(synthetic.crossing_spec(n_frames=40))]
    threads: set[int] = set()

    class ThreadRecording(MotionDetector):
        def detect(self, frame, keep_boxes=None):
            threads.add(threading.get_ident())
            return super().detect(frame, keep_boxes)

    step_pipeline = TrackingPipeline(MotionDetector(scale=1.0))
    sequential = [step_pipeline.step(f) for f in frames]
    overlapped = list(TrackingPipeline(ThreadRecording(scale=1.0)).run(iter(frames)))
    assert [r.index for r in overlapped] == list(range(1, 41))
    assert threading.get_ident() not in threads and len(threads) == 1
    for a, b in zip(sequential, overlapped):
        assert [t.track_id for t in a.tracks] == [t.track_id for t in b.tracks]
        if a.tracks:
            np.testing.assert_allclose([t.box for t in a.tracks], [t.box for t in b.tracks])
        assert b.frame is not None and b.timing_s["frame_s"] > 0
    assert max(len(r.tracks) for r in overlapped) >= 2  # the comparison covered real tracks


def test_a_detector_error_in_the_overlapped_run_reaches_the_caller():
    from hwbench_gui.demos.tracking.pipeline import TrackingPipeline

    class Broken:
        def reset(self):
            pass

        def detect(self, frame):
            raise RuntimeError("CUDA error: out of memory")

    with pytest.raises(RuntimeError, match="out of memory"):
        list(TrackingPipeline(Broken()).run([np.zeros((48, 64, 3), np.uint8)] * 3))


def test_held_boxes_are_drawn_dashed_dimmer_and_tagged():
    """A held track (its box the tracker's prediction inside a merged blob) must not look like a
    detection: dashed outline in a dimmer shade of the id colour, and a longer label ("#3 held")."""
    from hwbench_gui.demos.tracking.detectors import Detections
    from hwbench_gui.demos.tracking.pipeline import FrameResult, TrackBox
    from hwbench_gui.demos.tracking.render import HELD_DIM, draw_tracks, id_color

    frame = np.zeros((200, 300, 3), np.uint8)

    def drawn(held: bool) -> np.ndarray:
        box = TrackBox(3, np.array([50.0, 60, 150, 160]), 1.0, 0, [], held=held)
        return draw_tracks(frame, FrameResult(1, [box], Detections(), {}))

    solid, dashed = drawn(False), drawn(True)
    edge = (slice(159, 161), slice(52, 148))  # the bottom edge (the label sits on the top one)
    color = np.array(id_color(3))
    solid_edge = solid[edge].reshape(-1, 3)
    assert (solid_edge == color).all(axis=1).all(), "a matched track: a solid line in its colour"
    dashed_edge = dashed[edge].reshape(-1, 3)
    lit = dashed_edge.any(axis=1)
    assert 0.3 < lit.mean() < 0.7, "dashes and gaps"
    assert (np.abs(dashed_edge[lit].astype(int) - (color * HELD_DIM).astype(int)) <= 1).all(), "dimmer"
    label_width = [int((img[45:58, 50:] != 0).any(axis=(0, 2)).sum()) for img in (solid, dashed)]
    assert label_width[1] > label_width[0] + 20, "the label says 'held'"
