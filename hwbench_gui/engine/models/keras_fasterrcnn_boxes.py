"""The Keras Faster R-CNN's constants and box arithmetic, as torchvision's (anchors per FPN level, box coding,
IoU, matching, sampling, smooth L1): pure functions over the tensorflow module they are given, so they are tested
against torchvision without building the network (:mod:`.keras_fasterrcnn` describes the model)."""

from __future__ import annotations

import math
from typing import Any

FPN_CHANNELS = 256
ANCHOR_SIZES = (32, 64, 128, 256, 512)
ASPECT_RATIOS = (0.5, 1.0, 2.0)
STRIDES = (4, 8, 16, 32, 64)
BACKBONE_OUTPUTS = ("conv2_block3_out", "conv3_block4_out", "conv4_block6_out", "conv5_block3_out")
RPN = {"pre_nms": {True: 2000, False: 1000}, "post_nms": {True: 2000, False: 1000}, "nms": 0.7,
       "fg_iou": 0.7, "bg_iou": 0.3, "batch": 256, "positive_fraction": 0.5, "min_size": 1e-3}
ROI = {"fg_iou": 0.5, "bg_iou": 0.5, "batch": 512, "positive_fraction": 0.25, "score_thresh": 0.05,
       "nms": 0.5, "detections": 100, "output": 7, "sampling": 2, "canonical_size": 224, "canonical_level": 4}
RPN_WEIGHTS = (1.0, 1.0, 1.0, 1.0)
ROI_WEIGHTS = (10.0, 10.0, 5.0, 5.0)
BBOX_XFORM_CLIP = math.log(1000.0 / 16)
SMOOTH_L1_BETA = 1.0 / 9
SOURCE = ("hwbench_gui.engine.models.keras_fasterrcnn: Keras implementation of the torchvision "
          "fasterrcnn_resnet50_fpn architecture (keras.applications ResNet-50 backbone, random init); "
          "not a published TensorFlow model")


def base_anchors(size: int, ratios: tuple[float, ...] = ASPECT_RATIOS) -> list[list[float]]:
    """torchvision's ``AnchorGenerator.generate_anchors`` for one size: (x1, y1, x2, y2) around 0, rounded."""
    out = []
    for ratio in ratios:
        h = math.sqrt(ratio)
        w = 1.0 / h
        ws, hs = w * size, h * size
        out.append([float(round(v)) for v in (-ws / 2, -hs / 2, ws / 2, hs / 2)])
    return out


def level_shapes(image_size: int) -> list[int]:
    """Feature map sides of P2..P6 for a square input (P6: the 1x1 stride-2 max pool of P5)."""
    sides = [image_size // s for s in STRIDES[:4]]
    return sides + [(sides[-1] + 1) // 2]


def make_anchors(image_size: int) -> Any:
    """All anchors, (sum of H*W*3 over the levels, 4), ordered level, row, column, ratio as torchvision's."""
    import numpy as np

    levels = []
    for side, stride, size in zip(level_shapes(image_size), STRIDES, ANCHOR_SIZES):
        shifts = np.arange(side, dtype=np.float32) * stride
        sy, sx = np.meshgrid(shifts, shifts, indexing="ij")
        shift = np.stack([sx.ravel(), sy.ravel(), sx.ravel(), sy.ravel()], axis=1)
        base = np.asarray(base_anchors(size), dtype=np.float32)
        levels.append((shift[:, None, :] + base[None, :, :]).reshape(-1, 4))
    return np.concatenate(levels, axis=0)


# -- box arithmetic (tensorflow, float32) ----------------------------------------------------------

def encode(tf: Any, reference: Any, proposals: Any, weights: tuple[float, ...]) -> Any:
    """torchvision ``BoxCoder.encode_single``: deltas that take ``proposals`` to ``reference``."""
    wx, wy, ww, wh = weights
    pw, ph = proposals[..., 2] - proposals[..., 0], proposals[..., 3] - proposals[..., 1]
    px, py = proposals[..., 0] + 0.5 * pw, proposals[..., 1] + 0.5 * ph
    gw, gh = reference[..., 2] - reference[..., 0], reference[..., 3] - reference[..., 1]
    gx, gy = reference[..., 0] + 0.5 * gw, reference[..., 1] + 0.5 * gh
    return tf.stack([wx * (gx - px) / pw, wy * (gy - py) / ph, ww * tf.math.log(gw / pw), wh * tf.math.log(gh / ph)],
                    axis=-1)


def decode(tf: Any, deltas: Any, boxes: Any, weights: tuple[float, ...]) -> Any:
    """torchvision ``BoxCoder.decode_single`` (width/height deltas clipped at log(1000/16))."""
    wx, wy, ww, wh = weights
    w, h = boxes[..., 2] - boxes[..., 0], boxes[..., 3] - boxes[..., 1]
    cx, cy = boxes[..., 0] + 0.5 * w, boxes[..., 1] + 0.5 * h
    dx, dy = deltas[..., 0] / wx, deltas[..., 1] / wy
    dw = tf.minimum(deltas[..., 2] / ww, BBOX_XFORM_CLIP)
    dh = tf.minimum(deltas[..., 3] / wh, BBOX_XFORM_CLIP)
    px, py = dx * w + cx, dy * h + cy
    pw, ph = tf.exp(dw) * w, tf.exp(dh) * h
    return tf.stack([px - 0.5 * pw, py - 0.5 * ph, px + 0.5 * pw, py + 0.5 * ph], axis=-1)


def box_iou(tf: Any, a: Any, b: Any) -> Any:
    """IoU of every box of ``a`` (..., N, 4) with every box of ``b`` (..., M, 4): (..., N, M)."""
    area_a = (a[..., 2] - a[..., 0]) * (a[..., 3] - a[..., 1])
    area_b = (b[..., 2] - b[..., 0]) * (b[..., 3] - b[..., 1])
    lt = tf.maximum(a[..., :, None, :2], b[..., None, :, :2])
    rb = tf.minimum(a[..., :, None, 2:], b[..., None, :, 2:])
    wh = tf.maximum(rb - lt, 0.0)
    inter = wh[..., 0] * wh[..., 1]
    return inter / (area_a[..., :, None] + area_b[..., None, :] - inter)


def smooth_l1_sum(tf: Any, x: Any, y: Any, weight: Any, beta: float = SMOOTH_L1_BETA) -> Any:
    diff = tf.abs(x - y)
    loss = tf.where(diff < beta, 0.5 * diff * diff / beta, diff - 0.5 * beta)
    return tf.reduce_sum(tf.reduce_sum(loss, axis=-1) * weight)


def sample(tf: Any, positive: Any, negative: Any, batch: int, fraction: float) -> tuple[Any, Any]:
    """torchvision's ``BalancedPositiveNegativeSampler`` on (images, candidates) masks: at most
    ``batch * fraction`` positives, negatives to fill ``batch``, each chosen at random. Returns the
    (positive, negative) masks of the sampled ones."""
    def pick(mask, count, k):
        k = min(k, int(mask.shape[-1]))
        priority = tf.where(mask, tf.random.uniform(tf.shape(mask)), -1.0)
        values = tf.math.top_k(priority, k=k).values
        threshold = tf.gather(values, tf.maximum(count - 1, 0), axis=-1, batch_dims=1)
        threshold = tf.where(count > 0, threshold, 2.0)
        return mask & (priority >= threshold[:, None])

    max_pos = int(batch * fraction)
    num_pos = tf.minimum(tf.reduce_sum(tf.cast(positive, tf.int32), axis=-1), max_pos)
    num_neg = tf.minimum(tf.reduce_sum(tf.cast(negative, tf.int32), axis=-1), batch - num_pos)
    return pick(positive, num_pos, max_pos), pick(negative, num_neg, batch)


def match(tf: Any, iou: Any, high: float, low: float, allow_low_quality: bool) -> tuple[Any, Any, Any]:
    """torchvision ``Matcher`` on IoU (images, candidates, ground truth): (matched ground-truth index,
    foreground mask, background mask); between the thresholds a candidate is neither."""
    best = tf.reduce_max(iou, axis=-1)
    index = tf.argmax(iou, axis=-1, output_type=tf.int32)
    foreground = best >= high
    background = best < low
    if allow_low_quality:
        # each ground-truth box's best candidates count as foreground (ties included)
        best_per_gt = tf.reduce_max(iou, axis=1, keepdims=True)
        low_quality = tf.reduce_any((iou == best_per_gt) & (best_per_gt > 0), axis=-1)
        foreground = foreground | low_quality
        background = background & ~low_quality
    return index, foreground, background
