"""Faster R-CNN R50-FPN in Keras: a Keras implementation of torchvision's ``fasterrcnn_resnet50_fpn``
architecture, so the seed's detector has a TensorFlow cell. No maintained TensorFlow Faster R-CNN
installs beside TensorFlow 2.21 (the Model Garden pins 2.20; KerasHub has none), so this is built
here, as U-Net is: it is not a published TensorFlow model, and results say so.

Same architecture, hyper-parameters and losses as torchvision (``torchvision/models/detection``):

- backbone: ``keras.applications.ResNet50`` (its convolutions carry biases, torchvision's do not:
  0.06 % more parameters), outputs C2..C5 (strides 4..32);
- FPN: 1x1 lateral and 3x3 output convolutions of 256 channels, nearest-neighbour top-down path,
  P6 = max pool (1, stride 2) of P5 (``LastLevelMaxPool``);
- RPN: anchors of 32..512 px (one size per level) × aspect ratios 0.5, 1, 2, one 3x3 conv and 1x1
  objectness / box-delta convs shared by the levels; proposals: per level the top 2000 (training) /
  1000 (inference) by objectness, decoded, clipped, NMS 0.7 per level, the best 2000 / 1000 kept;
  training: anchors matched at IoU 0.7 / 0.3 with low-quality matches, 256 sampled per image, half
  positive at most, binary cross-entropy + smooth L1 (beta 1/9) over the sampled count;
- RoI heads: ground-truth boxes added to the proposals, matched at IoU 0.5, 512 sampled per image
  (25 % positive at most); RoIAlign 7x7 with 2x2 samples per bin through ``tf.image.crop_and_resize``
  (14x14 samples at RoIAlign's sample points, then 2x2 average pooling), each RoI from the FPN level
  torchvision's ``LevelMapper`` picks (canonical 224 px at level 4, levels 2..5); two-layer MLP head
  (1024, 1024), class scores and class-specific box deltas (weights 10, 10, 5, 5); cross-entropy +
  smooth L1 (beta 1/9) over the sampled count; inference: softmax, score > 0.05, NMS 0.5 per class,
  100 detections per image (``tf.image.combined_non_max_suppression``).

Input images are square, ``image_size`` a multiple of 32 (torchvision pads each batch to one), normalised
with ImageNet's mean and standard deviation as ``GeneralizedRCNNTransform`` does. Boxes are (x1, y1,
x2, y2) in pixels, a fixed number of ground-truth boxes per image. Box arithmetic runs in FP32 under a
mixed-precision policy. tensorflow and keras are imported inside.
"""

from __future__ import annotations

import math
from typing import Any

from hwbench_gui.engine.models.data import MEAN, STD

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


def build(num_classes: int, image_size: int) -> Any:
    """The Keras model (random init) for ``image_size`` (a multiple of 32) and ``num_classes`` (with background)."""
    import keras
    import tensorflow as tf

    if image_size % 32:
        raise ValueError(f"Faster R-CNN needs an image size that is a multiple of 32, not {image_size}")
    layers = keras.layers
    # torchvision's initialisation: FPN kaiming_uniform(a=1), RPN normal(std 0.01), biases 0; the box
    # head's linear layers PyTorch's default, uniform within 1 / sqrt(fan_in)
    linear_init = {"kernel_initializer": keras.initializers.VarianceScaling(1.0 / 3, "fan_in", "uniform")}
    fpn_init = {"kernel_initializer": keras.initializers.VarianceScaling(1.0, "fan_in", "uniform"),
                "bias_initializer": "zeros"}
    rpn_init = {"kernel_initializer": keras.initializers.RandomNormal(stddev=0.01), "bias_initializer": "zeros"}

    class FasterRCNN(keras.Model):
        """``losses_for(images, boxes, labels)`` (training: the four losses) and ``detect(images)``."""

        def __init__(self):
            super().__init__(name="fasterrcnn_resnet50_fpn")
            resnet = keras.applications.ResNet50(include_top=False, weights=None,
                                                 input_shape=(image_size, image_size, 3))
            self.backbone = keras.Model(resnet.input, [resnet.get_layer(n).output for n in BACKBONE_OUTPUTS],
                                        name="resnet50_body")
            self.lateral = [layers.Conv2D(FPN_CHANNELS, 1, name=f"fpn_inner{i}", **fpn_init) for i in range(4)]
            self.output_convs = [layers.Conv2D(FPN_CHANNELS, 3, padding="same", name=f"fpn_layer{i}", **fpn_init)
                                 for i in range(4)]
            self.upsample = [layers.UpSampling2D(2, interpolation="nearest") for _ in range(3)]
            self.p6 = layers.MaxPooling2D(1, strides=2, padding="same")
            anchors = len(ASPECT_RATIOS)
            self.rpn_conv = layers.Conv2D(FPN_CHANNELS, 3, padding="same", activation="relu", name="rpn_conv",
                                          **rpn_init)
            self.rpn_cls = layers.Conv2D(anchors, 1, name="rpn_cls_logits", **rpn_init)
            self.rpn_bbox = layers.Conv2D(anchors * 4, 1, name="rpn_bbox_pred", **rpn_init)
            self.fc6 = layers.Dense(1024, activation="relu", name="box_head_fc6", **linear_init)
            self.fc7 = layers.Dense(1024, activation="relu", name="box_head_fc7", **linear_init)
            self.cls_score = layers.Dense(num_classes, name="cls_score", **linear_init)
            self.bbox_pred = layers.Dense(num_classes * 4, name="bbox_pred", **linear_init)
            self.anchors = tf.constant(make_anchors(image_size))
            self.num_classes = num_classes
            self.image_size = image_size
            self.mean = tf.constant(MEAN, tf.float32)
            self.std = tf.constant(STD, tf.float32)

        # -- network -----------------------------------------------------------------------------
        def features(self, images, training):
            c = self.backbone((images - self.mean) / self.std, training=training)
            inner = self.lateral[3](c[3])
            p = [self.output_convs[3](inner)]
            for i in (2, 1, 0):
                inner = self.lateral[i](c[i]) + self.upsample[i](inner)
                p.insert(0, self.output_convs[i](inner))
            return p + [self.p6(p[-1])]

        def rpn(self, feats):
            logits, deltas = [], []
            for f in feats:
                t = self.rpn_conv(f)
                n = tf.shape(t)[0]
                logits.append(tf.reshape(tf.cast(self.rpn_cls(t), tf.float32), (n, -1)))
                deltas.append(tf.reshape(tf.cast(self.rpn_bbox(t), tf.float32), (n, -1, 4)))
            return logits, deltas

        def proposals(self, logits, deltas, training):
            """Per image the best ``post_nms`` proposals (padded) and their validity."""
            pre, post = RPN["pre_nms"][training], RPN["post_nms"][training]
            boxes, scores, level_ids, start = [], [], [], 0
            for level, (lg, dl) in enumerate(zip(logits, deltas)):
                count = int(lg.shape[1])
                k = min(pre, count)
                top = tf.math.top_k(tf.stop_gradient(lg), k=k)
                anchors = tf.gather(self.anchors[start:start + count], top.indices)
                picked = tf.gather(tf.stop_gradient(dl), top.indices, batch_dims=1)
                boxes.append(decode(tf, picked, anchors, RPN_WEIGHTS))
                scores.append(tf.sigmoid(top.values))
                level_ids.append(tf.fill(tf.shape(top.values), float(level)))
                start += count
            boxes = tf.clip_by_value(tf.concat(boxes, 1), 0.0, float(self.image_size))
            scores, level_ids = tf.concat(scores, 1), tf.concat(level_ids, 1)
            w, h = boxes[..., 2] - boxes[..., 0], boxes[..., 3] - boxes[..., 1]
            scores = tf.where((w >= RPN["min_size"]) & (h >= RPN["min_size"]), scores, -1.0)
            # NMS within each level (torchvision's batched_nms): the levels' boxes moved apart
            shifted = boxes + (level_ids * (self.image_size + 1.0))[..., None]

            def one(args):
                b, s, original = args
                keep = tf.image.non_max_suppression(b, s, post, RPN["nms"], score_threshold=0.0)
                n = tf.shape(keep)[0]
                chosen = tf.pad(tf.gather(original, keep), [[0, post - n], [0, 0]])
                return chosen, tf.sequence_mask(n, post)

            return tf.map_fn(one, (shifted, scores, boxes),
                             fn_output_signature=(tf.TensorSpec((post, 4), tf.float32),
                                                  tf.TensorSpec((post,), tf.bool)))

        def roi_align(self, feats, rois):
            """(images, R, 4) boxes -> (images * R, 7, 7, 256): each from its FPN level."""
            n, r = tf.shape(rois)[0], tf.shape(rois)[1]
            flat = tf.reshape(rois, (-1, 4))
            image_index = tf.repeat(tf.range(n), r)
            area = (flat[:, 2] - flat[:, 0]) * (flat[:, 3] - flat[:, 1])
            level = tf.floor(ROI["canonical_level"] + tf.math.log(tf.sqrt(tf.maximum(area, 1e-12))
                                                                   / ROI["canonical_size"]) / math.log(2.0) + 1e-6)
            level = tf.cast(tf.clip_by_value(level, 2.0, 5.0), tf.int32) - 2
            parts = tf.dynamic_partition(tf.range(tf.shape(flat)[0]), level, 4)
            samples = ROI["output"] * ROI["sampling"]
            crops = []
            for i in range(4):
                # One replicated pixel around the map: RoIAlign reads the border for samples up to one
                # pixel outside and 0 beyond, crop_and_resize 0 outside; on the padded map they agree.
                feature = tf.pad(tf.cast(feats[i], tf.float32), [[0, 0], [1, 1], [1, 1], [0, 0]], mode="SYMMETRIC")
                side = float(feature.shape[1])
                scale = 1.0 / STRIDES[i]
                b = tf.gather(flat, parts[i]) * scale + 1.0
                # RoIAlign (aligned=False) takes boxes of at least 1 x 1 and samples bin j at
                # start + (j + 0.5) / samples of the box; crop_and_resize samples evenly from
                # y1 * (side - 1) to y2 * (side - 1): match the two
                step_x = tf.maximum(b[:, 2] - b[:, 0], 1.0) / samples
                step_y = tf.maximum(b[:, 3] - b[:, 1], 1.0) / samples
                x1, x2 = b[:, 0] + 0.5 * step_x, b[:, 0] + (samples - 0.5) * step_x
                y1, y2 = b[:, 1] + 0.5 * step_y, b[:, 1] + (samples - 0.5) * step_y
                norm = tf.stack([y1, x1, y2, x2], axis=1) / (side - 1.0)
                crop = tf.image.crop_and_resize(feature, norm, tf.gather(image_index, parts[i]), (samples, samples))
                crops.append(tf.nn.avg_pool2d(crop, ROI["sampling"], ROI["sampling"], "VALID"))
            return tf.dynamic_stitch(parts, crops)

        def box_head(self, pooled):
            x = tf.reshape(tf.cast(pooled, self.compute_dtype), (tf.shape(pooled)[0], -1))
            x = self.fc7(self.fc6(x))
            return tf.cast(self.cls_score(x), tf.float32), tf.cast(self.bbox_pred(x), tf.float32)

        def call(self, images, training=False):
            return self.detect(images)

        # -- training --------------------------------------------------------------------------
        def losses_for(self, images, gt_boxes, gt_labels):
            """The four losses of torchvision's training forward: objectness, RPN box, classifier, box."""
            feats = self.features(images, training=True)
            logits, deltas = self.rpn(feats)
            logits, deltas = tf.concat(logits, 1), tf.concat(deltas, 1)
            # RPN targets
            n = tf.shape(images)[0]
            anchors = tf.broadcast_to(self.anchors[None], (n, *self.anchors.shape))
            iou = box_iou(tf, anchors, gt_boxes)
            index, fg, bg = match(tf, iou, RPN["fg_iou"], RPN["bg_iou"], True)
            pos, neg = sample(tf, fg, bg, RPN["batch"], RPN["positive_fraction"])
            sampled = tf.cast(pos | neg, tf.float32)
            count = tf.maximum(tf.reduce_sum(sampled), 1.0)
            target = encode(tf, tf.gather(gt_boxes, index, batch_dims=1), anchors, RPN_WEIGHTS)
            target = tf.where(pos[..., None], target, 0.0)  # a target only where it is used: no 0 * NaN
            objectness = tf.nn.sigmoid_cross_entropy_with_logits(tf.cast(pos, tf.float32), logits)
            loss_objectness = tf.reduce_sum(objectness * sampled) / count
            loss_rpn_box = smooth_l1_sum(tf, deltas, tf.stop_gradient(target), tf.cast(pos, tf.float32)) / count
            # RoI head targets: proposals (no gradient) and the ground truth
            rois, valid = self._proposals_from_flat(logits, deltas, True)
            rois = tf.concat([tf.stop_gradient(rois), gt_boxes], axis=1)
            valid = tf.concat([valid, tf.ones(tf.shape(gt_boxes)[:2], tf.bool)], axis=1)
            iou = box_iou(tf, rois, gt_boxes)
            index, fg, bg = match(tf, iou, ROI["fg_iou"], ROI["bg_iou"], False)
            pos, neg = sample(tf, fg & valid, bg & valid, ROI["batch"], ROI["positive_fraction"])
            keep = tf.math.top_k(tf.where(pos, 2.0, tf.where(neg, 1.0, 0.0)) + tf.random.uniform(tf.shape(iou)[:2]),
                                 k=min(ROI["batch"], int(rois.shape[1]))).indices
            chosen = tf.gather(rois, keep, batch_dims=1)
            chosen_pos = tf.gather(pos, keep, batch_dims=1)
            chosen_w = tf.cast(chosen_pos | tf.gather(neg, keep, batch_dims=1), tf.float32)
            labels = tf.where(chosen_pos, tf.gather(gt_labels, tf.gather(index, keep, batch_dims=1), batch_dims=1), 0)
            matched = tf.gather(gt_boxes, tf.gather(index, keep, batch_dims=1), batch_dims=1)
            # padded proposals are empty boxes: their deltas are NaN and unused
            target = tf.where(chosen_pos[..., None], encode(tf, matched, chosen, ROI_WEIGHTS), 0.0)
            class_logits, box_deltas = self.box_head(self.roi_align(feats, chosen))
            flat_w = tf.reshape(chosen_w, (-1,))
            sampled_count = tf.maximum(tf.reduce_sum(flat_w), 1.0)
            ce = tf.nn.sparse_softmax_cross_entropy_with_logits(tf.reshape(labels, (-1,)), class_logits)
            loss_classifier = tf.reduce_sum(ce * flat_w) / sampled_count
            per_class = tf.reshape(box_deltas, (-1, self.num_classes, 4))
            picked = tf.gather(per_class, tf.reshape(labels, (-1,)), batch_dims=1)
            loss_box = smooth_l1_sum(tf, picked, tf.stop_gradient(tf.reshape(target, (-1, 4))),
                                     tf.cast(tf.reshape(chosen_pos, (-1,)), tf.float32)) / sampled_count
            return {"loss_objectness": loss_objectness, "loss_rpn_box_reg": loss_rpn_box,
                    "loss_classifier": loss_classifier, "loss_box_reg": loss_box}

        def _proposals_from_flat(self, logits, deltas, training):
            """:meth:`proposals` from the levels' outputs concatenated (split back by level size)."""
            sizes = [side * side * len(ASPECT_RATIOS) for side in level_shapes(self.image_size)]
            return self.proposals(tf.split(logits, sizes, axis=1), tf.split(deltas, sizes, axis=1), training)

        # -- inference -------------------------------------------------------------------------
        def detect(self, images):
            """(boxes (images, 100, 4) as x1, y1, x2, y2, scores, classes, valid detections)."""
            feats = self.features(images, training=False)
            logits, deltas = self.rpn(feats)
            rois, valid = self.proposals(logits, deltas, False)
            class_logits, box_deltas = self.box_head(self.roi_align(feats, rois))
            n, r = tf.shape(rois)[0], tf.shape(rois)[1]
            scores = tf.nn.softmax(class_logits)[:, 1:]
            per_class = tf.reshape(box_deltas, (-1, self.num_classes, 4))[:, 1:]
            boxes = decode(tf, per_class, tf.reshape(rois, (-1, 1, 4)), ROI_WEIGHTS)
            boxes = tf.clip_by_value(boxes, 0.0, float(self.image_size))
            w, h = boxes[..., 2] - boxes[..., 0], boxes[..., 3] - boxes[..., 1]
            scores = tf.where((w >= 1e-2) & (h >= 1e-2) & tf.reshape(valid, (-1, 1)), scores, 0.0)
            yx = tf.stack([boxes[..., 1], boxes[..., 0], boxes[..., 3], boxes[..., 2]], axis=-1)
            out = tf.image.combined_non_max_suppression(
                tf.reshape(yx, (n, r, self.num_classes - 1, 4)), tf.reshape(scores, (n, r, self.num_classes - 1)),
                ROI["detections"], ROI["detections"], ROI["nms"], ROI["score_thresh"], clip_boxes=False)
            nms_boxes = tf.stack([out.nmsed_boxes[..., 1], out.nmsed_boxes[..., 0], out.nmsed_boxes[..., 3],
                                  out.nmsed_boxes[..., 2]], axis=-1)
            return nms_boxes, out.nmsed_scores, out.nmsed_classes + 1, out.valid_detections

    model = FasterRCNN()
    model.detect(tf.zeros((1, image_size, image_size, 3)))  # builds every layer
    return model


def synthetic_batch(tf: Any, batch: int, size: int, num_classes: int, boxes_per_image: int = 4) -> tuple:
    """Random images in [0, 1) and ``boxes_per_image`` random boxes per image (corners within the
    image, sides 10..40 % of it) with labels 1..num_classes-1: the PyTorch variant's synthetic data."""
    images = tf.random.uniform((batch, size, size, 3))
    xy = tf.random.uniform((batch, boxes_per_image, 2)) * size * 0.6
    wh = (tf.random.uniform((batch, boxes_per_image, 2)) * 0.3 + 0.1) * size
    labels = tf.random.uniform((batch, boxes_per_image), 1, num_classes, dtype=tf.int32)
    return images, tf.concat([xy, xy + wh], axis=-1), labels
