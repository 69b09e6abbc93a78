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

from typing import Any

from hwbench_gui.engine.models.keras_fasterrcnn_boxes import SOURCE as SOURCE


def build(num_classes: int, image_size: int) -> Any:
    """The Keras model (random init) for ``image_size`` (a multiple of 32) and ``num_classes`` (with background)."""
    if image_size % 32:
        raise ValueError(f"Faster R-CNN needs an image size that is a multiple of 32, not {image_size}")
    import tensorflow as tf

    from hwbench_gui.engine.models.keras_fasterrcnn_net import FasterRCNN

    model = FasterRCNN(num_classes, image_size)
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
