"""Darknet ``.cfg`` parsing and the ``.weights`` file format (no torch here: plain numpy).

A ``.weights`` file is a header — major, minor, revision (int32 each) and ``seen`` (int64 when
``major * 10 + minor >= 2``, else int32) — followed by float32 parameters of every
``[convolutional]`` layer in cfg order: with ``batch_normalize=1`` the BN biases, scales, rolling
means and rolling variances (``filters`` each), without it the conv biases; then the conv weights
(``filters × in_channels × size × size``). Nothing else: the file carries no shapes, so a file
meant for another cfg is caught only by its size, which :func:`read_weights` checks first.

The official files (``yolov3.weights``, ``yolov3-tiny.weights``, trained on COCO) come from the
Darknet project (pjreddie.com/darknet/yolo); hwbench never downloads them.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from hwbench_gui.engine.foreign import ForeignFileError, open_regular, read_regular
from hwbench_gui.engine.paths import resources_dir

#: Cfg files shipped in ``resources/tracking/``.
SHIPPED_CFGS = ("yolov3", "yolov3-tiny")
#: A bigger .cfg is refused unread (yolov3.cfg is 8 kB). A .weights file's bound is the exact size
#: its cfg declares, checked before it is read.
MAX_CFG_BYTES = 1 << 20


class CfgError(ValueError):
    """A .cfg that cannot be parsed or describes a network hwbench cannot build."""


class WeightsError(ValueError):
    """A .weights file that does not fit its .cfg (wrong size, truncated, unreadable)."""


@dataclass
class Block:
    """One ``[section]`` of a cfg: its type (``net``, ``convolutional``, ``yolo``…) and raw options."""

    type: str
    options: dict[str, str] = field(default_factory=dict)
    line: int = 0

    def int(self, key: str, default: int | None = None) -> int:
        if key not in self.options:
            if default is None:
                raise CfgError(f"[{self.type}] at line {self.line} has no '{key}'")
            return default
        try:
            return int(self.options[key])
        except ValueError:
            raise CfgError(f"[{self.type}] at line {self.line}: "
                           f"{key}={self.options[key]!r} is not an integer") from None

    def ints(self, key: str) -> list[int]:
        raw = self.options.get(key, "")
        try:
            return [int(v) for v in raw.split(",") if v.strip()]
        except ValueError:
            raise CfgError(f"[{self.type}] at line {self.line}: {key}={raw!r} is not a list of integers") from None

    def str(self, key: str, default: str = "") -> str:
        return self.options.get(key, default)


@dataclass
class Layer:
    """A parsed layer (cfg block after ``[net]``) with the shape facts the model and loader need."""

    index: int
    block: Block
    in_channels: int
    out_channels: int
    #: For route/shortcut: absolute indices of the layers read.
    sources: tuple[int, ...] = ()
    #: Input pixels per output cell (8 for a [yolo] layer on a 52×52 grid at 416×416).
    stride: int = 1

    @property
    def type(self) -> str:
        return self.block.type


@dataclass
class Network:
    """A parsed cfg: the ``[net]`` options and the layers, with channel counts resolved."""

    name: str
    net: Block
    layers: list[Layer]

    @property
    def width(self) -> int:
        return self.net.int("width", 416)

    @property
    def height(self) -> int:
        return self.net.int("height", 416)

    @property
    def channels(self) -> int:
        return self.net.int("channels", 3)

    def conv_layers(self) -> list[Layer]:
        return [layer for layer in self.layers if layer.type == "convolutional"]

    def yolo_layers(self) -> list[Layer]:
        return [layer for layer in self.layers if layer.type == "yolo"]

    @property
    def num_classes(self) -> int:
        yolos = self.yolo_layers()
        return yolos[0].block.int("classes", 80) if yolos else 0

    def param_count(self) -> int:
        """float32 parameters a .weights file holds for this network."""
        return sum(conv_param_count(layer) for layer in self.conv_layers())


def conv_param_count(layer: Layer) -> int:
    b = layer.block
    filters, size = b.int("filters"), b.int("size")
    groups = b.int("groups", 1)
    per_filter = 4 if b.int("batch_normalize", 0) else 1
    return filters * per_filter + filters * (layer.in_channels // groups) * size * size


_SUPPORTED = {"convolutional", "maxpool", "upsample", "route", "shortcut", "yolo"}


def parse_cfg_text(text: str, name: str = "cfg") -> Network:
    """Parse Darknet cfg text. Raises :class:`CfgError` naming the line for anything unsupported."""
    blocks: list[Block] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("["):
            if not line.endswith("]"):
                raise CfgError(f"{name}:{number}: unterminated section header {line!r}")
            blocks.append(Block(line[1:-1].strip().lower(), {}, number))
            continue
        if not blocks:
            raise CfgError(f"{name}:{number}: option before the first [section]")
        if "=" not in line:
            raise CfgError(f"{name}:{number}: expected key=value, got {line!r}")
        key, value = line.split("=", 1)
        blocks[-1].options[key.strip()] = value.strip()
    if not blocks or blocks[0].type not in ("net", "network"):
        raise CfgError(f"{name}: the first section must be [net]")
    net, body = blocks[0], blocks[1:]
    layers: list[Layer] = []
    channels = net.int("channels", 3)
    stride = 1
    for index, block in enumerate(body):
        if block.type not in _SUPPORTED:
            raise CfgError(f"{name}:{block.line}: layer type [{block.type}] is not supported (yolov3-family cfgs only)")
        in_channels, sources = channels, ()
        if block.type == "convolutional":
            channels = block.int("filters")
            block.int("size")
            stride *= block.int("stride", 1)
        elif block.type == "maxpool":
            stride *= block.int("stride", block.int("size", 2))
        elif block.type == "upsample":
            stride //= block.int("stride", 2)
        elif block.type == "route":
            sources = tuple(_absolute(index, v, name, block) for v in block.ints("layers"))
            if not sources:
                raise CfgError(f"{name}:{block.line}: [route] without layers")
            channels = sum(layers[s].out_channels for s in sources)
            stride = layers[sources[0]].stride
        elif block.type == "shortcut":
            sources = (_absolute(index, block.int("from"), name, block),)
            if layers[sources[0]].out_channels != channels:
                raise CfgError(f"{name}:{block.line}: [shortcut] adds {layers[sources[0]].out_channels} "
                               f"channels to {channels}")
        elif block.type == "yolo":
            mask, anchors = block.ints("mask"), block.ints("anchors")
            if len(anchors) % 2 or not mask or max(mask) >= len(anchors) // 2:
                raise CfgError(f"{name}:{block.line}: [yolo] mask {mask} does not fit {len(anchors) // 2} anchors")
            if channels != len(mask) * (block.int("classes", 80) + 5):
                raise CfgError(f"{name}:{block.line}: [yolo] gets {channels} channels, expected "
                               f"{len(mask)} × (classes + 5) = {len(mask) * (block.int('classes', 80) + 5)}")
        layers.append(Layer(index, block, in_channels, channels, sources, max(1, stride)))
    return Network(name, net, layers)


def _absolute(index: int, ref: int, name: str, block: Block) -> int:
    target = index + ref if ref < 0 else ref
    if not 0 <= target < index:
        raise CfgError(f"{name}:{block.line}: [{block.type}] refers to layer {ref} (absolute {target}), "
                       f"outside 0..{index - 1}")
    return target


def parse_cfg(path: str | os.PathLike) -> Network:
    path = Path(path)
    try:
        text = read_regular(path, MAX_CFG_BYTES, "a Darknet .cfg").decode("utf-8")
    except ForeignFileError as exc:
        raise CfgError(str(exc)) from None
    except UnicodeDecodeError as exc:
        raise CfgError(f"{path}: cannot read: {exc}") from None
    return parse_cfg_text(text, path.name)


def shipped_cfg(name: str = "yolov3") -> Path:
    """Path of a cfg shipped in ``resources/tracking/`` (``yolov3`` or ``yolov3-tiny``)."""
    if name not in SHIPPED_CFGS:
        raise ValueError(f"no shipped cfg {name!r}; choose from {', '.join(SHIPPED_CFGS)}")
    return resources_dir() / "tracking" / f"{name}.cfg"


def coco_names() -> list[str]:
    """The 80 COCO class names in Darknet's order (``resources/tracking/coco.names``)."""
    path = resources_dir() / "tracking" / "coco.names"
    return [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


# -- weights --------------------------------------------------------------------------------------

@dataclass
class ConvWeights:
    """The parameters of one convolutional layer as Darknet stores them (float32 numpy arrays).

    ``bn`` holds (biases, scales, rolling_mean, rolling_variance) for a batch-normalised layer, and is
    None otherwise; ``bias`` is then the conv bias. ``weights`` has shape (filters, in/groups, k, k).
    """

    layer_index: int
    weights: np.ndarray
    bias: np.ndarray | None = None
    bn: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None


@dataclass
class DarknetWeights:
    major: int
    minor: int
    revision: int
    seen: int
    convs: list[ConvWeights]


def header_bytes(major: int, minor: int) -> int:
    wide_seen = (major * 10 + minor) >= 2 and major < 1000 and minor < 1000
    return 12 + (8 if wide_seen else 4)


def expected_size_bytes(network: Network, major: int = 0, minor: int = 2) -> int:
    return header_bytes(major, minor) + 4 * network.param_count()


def read_weights(path: str | os.PathLike, network: Network) -> DarknetWeights:
    """Read a Darknet .weights file for ``network``.

    Raises :class:`WeightsError` when the file cannot be read or its size is not the header plus
    exactly the parameters the cfg declares (the message gives expected and actual bytes).
    """
    path = Path(path)
    # The size is checked before the parameters are read: a wrong or huge file (a 30 GB sparse one)
    # must give this message, not a MemoryError.
    try:
        with open_regular(path, sys.maxsize, "a .weights file") as handle:  # bounded by `expected` below
            size = os.fstat(handle.fileno()).st_size
            header = handle.read(20)
            if len(header) < 16:
                raise WeightsError(f"{path}: {size} bytes is too short for a Darknet weights header")
            major, minor, revision = (int(v) for v in np.frombuffer(header, "<i4", 3))
            head = header_bytes(major, minor)
            expected = head + 4 * network.param_count()
            if size != expected:
                raise WeightsError(
                    f"{path}: expected {expected:,} bytes for {network.name} ({network.param_count():,} float32 "
                    f"parameters after a {head}-byte header, version {major}.{minor}.{revision}), "
                    f"got {size:,} bytes — are these the weights for this .cfg?")
            handle.seek(0)
            data = handle.read(expected)
    except ForeignFileError as exc:
        raise WeightsError(f"{path}: {exc.reason}") from None
    except OSError as exc:
        raise WeightsError(f"{path}: cannot read: {exc}") from None
    if len(data) != expected:  # shrank while it was read
        raise WeightsError(f"{path}: expected {expected:,} bytes, read {len(data):,}")
    seen = int(np.frombuffer(data, "<i8" if head == 20 else "<i4", 1, offset=12)[0])
    values = np.frombuffer(data, "<f4", offset=head)
    convs, pos = [], 0

    def take(n: int) -> np.ndarray:
        nonlocal pos
        out = values[pos:pos + n].copy()
        pos += n
        return out

    for layer in network.conv_layers():
        b = layer.block
        filters, size, groups = b.int("filters"), b.int("size"), b.int("groups", 1)
        if b.int("batch_normalize", 0):
            bn = (take(filters), take(filters), take(filters), take(filters))
            bias = None
        else:
            bn, bias = None, take(filters)
        w = take(filters * (layer.in_channels // groups) * size * size)
        convs.append(ConvWeights(layer.index, w.reshape(filters, layer.in_channels // groups, size, size), bias, bn))
    return DarknetWeights(major, minor, revision, seen, convs)


def write_weights(path: str | os.PathLike, weights: DarknetWeights) -> Path:
    """Write ``weights`` in Darknet's format (atomically: temp file then rename)."""
    path = Path(path)
    parts = [np.array([weights.major, weights.minor, weights.revision], "<i4").tobytes(),
             np.array([weights.seen], "<i8" if header_bytes(weights.major, weights.minor) == 20 else "<i4").tobytes()]
    for conv in weights.convs:
        arrays = list(conv.bn) if conv.bn is not None else [conv.bias]
        parts.extend(np.ascontiguousarray(a, "<f4").tobytes() for a in arrays + [conv.weights])
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(b"".join(parts))
    os.replace(tmp, path)
    return path


def random_weights(network: Network, seed: int = 0) -> DarknetWeights:
    """Random parameters shaped for ``network`` (for tests and speed runs, never for detection).

    Conv weights are He-scaled so activations stay finite through 100+ layers; BN variances are
    positive. The convs feeding a [yolo] layer get the usual training-from-scratch prior on their
    biases (as in Ultralytics' ``_initialize_biases``: about 8 objects per 640×640 image, class
    probability 0.6 / classes), so a random network proposes few boxes, like a trained one on an
    ordinary scene, instead of thousands. The numbers mean nothing: its detections are noise.
    """
    rng = np.random.default_rng(seed)
    feeds_yolo = {layer.index - 1: layer for layer in network.yolo_layers()}
    convs = []
    for layer in network.conv_layers():
        b = layer.block
        filters, size, groups = b.int("filters"), b.int("size"), b.int("groups", 1)
        fan_in = (layer.in_channels // groups) * size * size
        w = (rng.standard_normal((filters, layer.in_channels // groups, size, size)) * np.sqrt(1.0 / fan_in))
        if b.int("batch_normalize", 0):
            bn = (rng.normal(0, 0.1, filters), rng.uniform(0.5, 1.5, filters), rng.normal(0, 0.1, filters),
                  rng.uniform(0.5, 2.0, filters))
            convs.append(ConvWeights(layer.index, w.astype(np.float32), None, tuple(a.astype(np.float32) for a in bn)))
            continue
        bias = rng.normal(0, 0.1, filters)
        yolo = feeds_yolo.get(layer.index)
        if yolo is not None:
            classes = yolo.block.int("classes", 80)
            per_anchor = bias.reshape(len(yolo.block.ints("mask")), classes + 5)
            per_anchor[:, 4] += np.log(8.0 / (640.0 / yolo.stride) ** 2)
            per_anchor[:, 5:] += np.log(0.6 / (classes - 0.99))
        convs.append(ConvWeights(layer.index, w.astype(np.float32), bias.astype(np.float32)))
    return DarknetWeights(0, 2, 0, 0, convs)
