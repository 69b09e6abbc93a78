"""The Keras Faster R-CNN R50-FPN network (:mod:`.keras_fasterrcnn` describes it); keras and tensorflow are imported
here, so this module is imported only where TensorFlow runs (:func:`.keras_fasterrcnn.build`)."""

from __future__ import annotations

import math

import keras
import tensorflow as tf

from hwbench_gui.engine.models.data import MEAN, STD
from hwbench_gui.engine.models.keras_fasterrcnn_boxes import (
    ASPECT_RATIOS,
    BACKBONE_OUTPUTS,
    FPN_CHANNELS,
    ROI,
    ROI_WEIGHTS,
    RPN,
    RPN_WEIGHTS,
    STRIDES,
    box_iou,
    decode,
    encode,
    level_shapes,
    make_anchors,
    match,
    sample,
    smooth_l1_sum,
)

layers = keras.layers


def _initialisers() -> tuple[dict, dict, dict]:
    """torchvision's initialisation, made for each model: the box head's linear layers PyTorch's default
    (uniform within 1 / sqrt(fan_in)), the FPN kaiming_uniform(a=1), the RPN normal(std 0.01), biases 0."""
    linear = {"kernel_initializer": keras.initializers.VarianceScaling(1.0 / 3, "fan_in", "uniform")}
    fpn = {"kernel_initializer": keras.initializers.VarianceScaling(1.0, "fan_in", "uniform"),
           "bias_initializer": "zeros"}
    rpn = {"kernel_initializer": keras.initializers.RandomNormal(stddev=0.01), "bias_initializer": "zeros"}
    return linear, fpn, rpn


class FasterRCNN(keras.Model):
    """``losses_for(images, boxes, labels)`` (training: the four losses) and ``detect(images)``."""

    def __init__(self, num_classes: int, image_size: int):
        super().__init__(name="fasterrcnn_resnet50_fpn")
        linear_init, fpn_init, rpn_init = _initialisers()
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
