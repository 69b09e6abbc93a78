"""The Keras Faster R-CNN against torchvision's ``fasterrcnn_resnet50_fpn``: parameter counts, anchors,
box coding, IoU, RoIAlign and the matcher, on the CPU at tiny sizes."""

from __future__ import annotations

import numpy as np
import pytest

# torch and torchvision first: importing torchvision after TensorFlow crashes the process
torch = pytest.importorskip("torch")
pytest.importorskip("torchvision.models.detection")
pytest.importorskip("torchvision.ops")

tf = pytest.importorskip("tensorflow")

from hwbench_gui.engine.models import keras_fasterrcnn as kf  # noqa: E402
from hwbench_gui.engine.models import keras_fasterrcnn_boxes as kb  # noqa: E402

NUM_CLASSES = 21  # Pascal VOC and background, as the benchmark


def _count(params) -> int:
    return sum(int(np.prod(p.shape)) for p in params)


@pytest.fixture(scope="module")
def models():
    from torchvision.models.detection import fasterrcnn_resnet50_fpn

    import keras

    keras.utils.set_random_seed(7)  # the losses at initialisation below are checked against known values
    torch_model = fasterrcnn_resnet50_fpn(weights=None, weights_backbone=None, num_classes=NUM_CLASSES)
    return torch_model, kf.build(NUM_CLASSES, 64)


def test_parameter_counts_match_torchvision(models):
    torch_model, keras_model = models
    total_torch = _count(torch_model.parameters())
    total_keras = _count(keras_model.trainable_variables)
    assert total_torch == 41_449_656
    assert abs(total_keras - total_torch) / total_torch < 0.01
    rpn = [keras_model.rpn_conv, keras_model.rpn_cls, keras_model.rpn_bbox]
    head = [keras_model.fc6, keras_model.fc7, keras_model.cls_score, keras_model.bbox_pred]
    # RPN and box head: the same layers, so the same count exactly
    assert _count(v for layer in rpn for v in layer.trainable_variables) == _count(torch_model.rpn.parameters())
    assert _count(v for layer in head for v in layer.trainable_variables) == _count(torch_model.roi_heads.parameters())
    # backbone + FPN: keras.applications' ResNet-50 convolutions carry biases (26,560 of them)
    backbone = total_keras - _count(v for layer in rpn + head for v in layer.trainable_variables)
    assert backbone - _count(torch_model.backbone.parameters()) == 26_560


def test_anchors_are_torchvisions():
    from torchvision.models.detection.anchor_utils import AnchorGenerator
    from torchvision.models.detection.image_list import ImageList

    size = 64
    generator = AnchorGenerator(tuple((s,) for s in kb.ANCHOR_SIZES), (kb.ASPECT_RATIOS,) * 5)
    feats = [torch.zeros(1, 1, side, side) for side in kb.level_shapes(size)]
    expected = generator(ImageList(torch.zeros(1, 3, size, size), [(size, size)]), feats)[0].numpy()
    assert np.allclose(kb.make_anchors(size), expected)


def test_box_coding_and_iou_are_torchvisions():
    from torchvision.models.detection._utils import BoxCoder
    from torchvision.ops import box_iou

    rng = np.random.default_rng(3)
    xy = rng.uniform(0, 50, (6, 2))
    a = np.concatenate([xy, xy + rng.uniform(5, 40, (6, 2))], 1).astype(np.float32)
    xy = rng.uniform(0, 50, (6, 2))
    b = np.concatenate([xy, xy + rng.uniform(5, 40, (6, 2))], 1).astype(np.float32)
    coder = BoxCoder(kb.ROI_WEIGHTS)
    deltas = coder.encode_single(torch.tensor(a), torch.tensor(b)).numpy()
    assert np.allclose(kb.encode(tf, a, b, kb.ROI_WEIGHTS).numpy(), deltas, atol=1e-5)
    assert np.allclose(kb.decode(tf, deltas, b, kb.ROI_WEIGHTS).numpy(), a, atol=1e-3)
    assert np.allclose(kb.box_iou(tf, a, b).numpy(), box_iou(torch.tensor(a), torch.tensor(b)).numpy(), atol=1e-6)


def test_roi_align_through_crop_and_resize_matches_torchvision(models):
    from torchvision.ops import MultiScaleRoIAlign

    _, keras_model = models
    rng = np.random.default_rng(5)
    sides = kb.level_shapes(64)[:4]
    feats = [rng.standard_normal((1, s, s, 8)).astype(np.float32) for s in sides]
    # boxes of several sizes so that several FPN levels are used
    # (a box at the border, a box smaller than a feature pixel: RoIAlign's two edge rules)
    boxes = np.array([[[4, 6, 20, 30], [1, 1, 63, 63], [10, 12, 18, 15], [0, 20, 44, 64]]], np.float32)
    ours = keras_model.roi_align([tf.constant(f) for f in feats], tf.constant(boxes)).numpy()
    pool = MultiScaleRoIAlign(["0", "1", "2", "3"], output_size=7, sampling_ratio=2)
    theirs = pool({str(i): torch.tensor(f).permute(0, 3, 1, 2) for i, f in enumerate(feats)},
                  [torch.tensor(boxes[0])], [(64, 64)]).permute(0, 2, 3, 1).numpy()
    assert ours.shape == theirs.shape == (4, 7, 7, 8)
    assert np.allclose(ours, theirs, atol=1e-4)


def test_matcher_and_sampler_follow_torchvision():
    iou = tf.constant([[[0.9, 0.1], [0.5, 0.2], [0.1, 0.25], [0.05, 0.0]]])
    index, fg, bg = kb.match(tf, iou, 0.7, 0.3, allow_low_quality=True)
    # anchor 0 matches box 0 (0.9); anchor 2 is box 1's best (0.25): a low-quality match, foreground
    assert index.numpy().tolist() == [[0, 0, 1, 0]]
    assert fg.numpy().tolist() == [[True, False, True, False]]
    assert bg.numpy().tolist() == [[False, False, False, True]]
    positive = tf.constant([[True] * 10 + [False] * 90])
    pos, neg = kb.sample(tf, positive, ~positive, 16, 0.25)
    assert int(tf.reduce_sum(tf.cast(pos, tf.int32))) == 4 and int(tf.reduce_sum(tf.cast(neg, tf.int32))) == 12
    assert not bool(tf.reduce_any(pos & ~positive))


def test_a_training_step_and_detection_at_tiny_size(models):
    _, keras_model = models
    tf.random.set_seed(11)
    images, boxes, labels = kf.synthetic_batch(tf, 2, 64, NUM_CLASSES)
    with tf.GradientTape() as tape:
        losses = keras_model.losses_for(images, boxes, labels)
        total = tf.add_n(list(losses.values()))
    grads = tape.gradient(total, keras_model.trainable_variables)
    assert set(losses) == {"loss_objectness", "loss_rpn_box_reg", "loss_classifier", "loss_box_reg"}
    assert all(np.isfinite(float(v)) for v in losses.values())
    assert float(losses["loss_objectness"]) == pytest.approx(np.log(2), abs=0.1)  # torchvision's init: ~ln 2
    assert float(losses["loss_classifier"]) == pytest.approx(np.log(NUM_CLASSES), abs=0.5)
    assert all(g is not None and bool(tf.reduce_all(tf.math.is_finite(g))) for g in grads)
    det_boxes, scores, classes, valid = keras_model.detect(images)
    assert det_boxes.shape == (2, 100, 4) and scores.shape == (2, 100) and valid.shape == (2,)
