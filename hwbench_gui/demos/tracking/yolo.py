"""YOLOv3 in PyTorch, built from a Darknet cfg, with Darknet's own decode and torchvision NMS.

Imports torch at module level: import this module only inside code that runs a YOLO model (the
detectors do), never at GUI or CLI start-up.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn
from torchvision.ops import batched_nms

from hwbench_gui.demos.tracking.darknet import DarknetWeights, Network

#: Darknet's leaky slope.
LEAKY_SLOPE = 0.1
#: Darknet normalises with (x - mean) / (sqrt(var) + 1e-6); BatchNorm2d uses sqrt(var + eps). The two
#: agree to float32 precision for the variances trained networks hold.
BN_EPS = 1e-6


class _MaxPoolDarknet(nn.Module):
    """Darknet maxpool: padding ``size - 1`` split (left = pad // 2), out-of-image cells never win."""

    def __init__(self, size: int, stride: int) -> None:
        super().__init__()
        self.size, self.stride = size, stride
        pad = size - 1
        self.pad = (pad // 2, pad - pad // 2, pad // 2, pad - pad // 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if any(self.pad):
            x = F.pad(x, self.pad, mode="constant", value=float("-inf"))
        return F.max_pool2d(x, self.size, self.stride)


class YoloV3(nn.Module):
    """The network a cfg describes. ``forward`` returns the raw maps of the ``[yolo]`` layers."""

    def __init__(self, network: Network) -> None:
        super().__init__()
        self.network = network
        self.layers = nn.ModuleList()
        self.yolo_specs: list[dict] = []
        keep: set[int] = set()
        for layer in network.layers:
            b = layer.block
            if layer.type == "convolutional":
                size, stride = b.int("size"), b.int("stride", 1)
                pad = size // 2 if b.int("pad", 0) else b.int("padding", 0)
                bn = bool(b.int("batch_normalize", 0))
                seq = nn.Sequential()
                seq.add_module("conv", nn.Conv2d(layer.in_channels, b.int("filters"), size, stride, pad,
                                                 groups=b.int("groups", 1), bias=not bn))
                if bn:
                    seq.add_module("bn", nn.BatchNorm2d(b.int("filters"), eps=BN_EPS))
                act = b.str("activation", "logistic")
                if act == "leaky":
                    seq.add_module("act", nn.LeakyReLU(LEAKY_SLOPE, inplace=True))
                elif act == "relu":
                    seq.add_module("act", nn.ReLU(inplace=True))
                elif act == "logistic":
                    seq.add_module("act", nn.Sigmoid())
                elif act != "linear":
                    raise ValueError(f"layer {layer.index}: activation {act!r} not supported")
                self.layers.append(seq)
            elif layer.type == "maxpool":
                size = b.int("size", 2)
                self.layers.append(_MaxPoolDarknet(size, b.int("stride", size)))
            elif layer.type == "upsample":
                self.layers.append(nn.Upsample(scale_factor=b.int("stride", 2), mode="nearest"))
            else:  # route, shortcut, yolo: handled in forward
                self.layers.append(nn.Identity())
                keep.update(layer.sources)
            if layer.type == "yolo":
                anchors = b.ints("anchors")
                mask = b.ints("mask")
                self.yolo_specs.append({"layer": layer.index, "classes": b.int("classes", 80),
                                        "anchors": [(anchors[2 * m], anchors[2 * m + 1]) for m in mask]})
        self._keep = keep
        self._grids: dict = {}

    def forward(self, x: torch.Tensor) -> list[torch.Tensor]:
        saved: dict[int, torch.Tensor] = {}
        outputs = []
        for layer, module in zip(self.network.layers, self.layers):
            t = layer.type
            if t == "route":
                x = saved[layer.sources[0]] if len(layer.sources) == 1 else torch.cat(
                    [saved[s] for s in layer.sources], 1)
            elif t == "shortcut":
                x = x + saved[layer.sources[0]]
            elif t == "yolo":
                outputs.append(x)
            else:
                x = module(x)
            if layer.index in self._keep:
                saved[layer.index] = x
        return outputs

    # -- weights ----------------------------------------------------------------------------------
    def load_darknet(self, weights: DarknetWeights) -> None:
        """Copy Darknet parameters into the conv/BN modules (shapes checked per layer)."""
        by_index = {c.layer_index: c for c in weights.convs}
        for layer, module in zip(self.network.layers, self.layers):
            if layer.type != "convolutional":
                continue
            cw = by_index[layer.index]
            conv = module.conv
            _copy(conv.weight, cw.weights, layer.index, "weights")
            if cw.bn is not None:
                bn = module.bn
                for param, arr, name in zip((bn.bias, bn.weight, bn.running_mean, bn.running_var), cw.bn,
                                            ("bn biases", "bn scales", "rolling mean", "rolling variance")):
                    _copy(param, arr, layer.index, name)
            else:
                _copy(conv.bias, cw.bias, layer.index, "biases")

    @torch.no_grad()
    def fuse(self) -> "YoloV3":
        """Fold each BN into its conv (inference only; exact up to float rounding). Returns self."""
        for module in self.layers:
            if isinstance(module, nn.Sequential) and "bn" in module._modules:
                conv, bn = module.conv, module.bn
                scale = bn.weight / torch.sqrt(bn.running_var + bn.eps)
                fused = nn.Conv2d(conv.in_channels, conv.out_channels, conv.kernel_size, conv.stride, conv.padding,
                                  groups=conv.groups, bias=True).to(conv.weight.device, conv.weight.dtype)
                fused.weight.copy_(conv.weight * scale.view(-1, 1, 1, 1))
                fused.bias.copy_(bn.bias - bn.running_mean * scale)
                module.conv = fused
                del module._modules["bn"]
        return self

    # -- decode ----------------------------------------------------------------------------------
    def decode(self, outputs: list[torch.Tensor], input_hw: tuple[int, int]) -> torch.Tensor:
        """Raw maps → (B, N, 5 + classes): centre x, y, w, h in network-input pixels, objectness, class probs.

        Darknet v3: x = (sigmoid(tx) + cx) / W, w = exp(tw) · anchor_w (anchors in input pixels).
        """
        in_h, in_w = input_hw
        decoded = []
        for out, spec in zip(outputs, self.yolo_specs):
            bsz, _, h, w = out.shape
            na, nc = len(spec["anchors"]), spec["classes"]
            p = out.view(bsz, na, nc + 5, h, w).permute(0, 1, 3, 4, 2).float()
            grid, anchor = self._grid(spec, h, w, out.device)
            xy = (p[..., 0:2].sigmoid() + grid) * torch.tensor([in_w / w, in_h / h], device=out.device)
            wh = p[..., 2:4].exp() * anchor
            rest = p[..., 4:].sigmoid()
            decoded.append(torch.cat([xy, wh, rest], -1).reshape(bsz, -1, nc + 5))
        return torch.cat(decoded, 1)

    def _grid(self, spec: dict, h: int, w: int, device) -> tuple[torch.Tensor, torch.Tensor]:
        key = (spec["layer"], h, w, str(device))
        if key not in self._grids:
            ys, xs = torch.meshgrid(torch.arange(h, device=device), torch.arange(w, device=device), indexing="ij")
            grid = torch.stack([xs, ys], -1).float().view(1, 1, h, w, 2)
            anchor = torch.tensor(spec["anchors"], dtype=torch.float32, device=device).view(1, -1, 1, 1, 2)
            self._grids[key] = (grid, anchor)
        return self._grids[key]


def _copy(param: torch.Tensor, array, layer_index: int, name: str) -> None:
    src = torch.from_numpy(array)
    if tuple(src.shape) != tuple(param.shape):
        raise ValueError(f"layer {layer_index} {name}: file has shape {tuple(src.shape)}, model {tuple(param.shape)}")
    with torch.no_grad():
        param.copy_(src)


def postprocess(pred: torch.Tensor, conf_threshold: float, nms_threshold: float, max_det: int = 100,
                classes: list[int] | None = None) -> list[torch.Tensor]:
    """Per image: (K, 6) tensor of x1, y1, x2, y2, score, class (network-input pixels), best first.

    Score is objectness × the best class probability; NMS is per class (torchvision batched_nms).
    """
    results = []
    for p in pred:
        scores, cls = (p[:, 5:] * p[:, 4:5]).max(1)
        keep = scores > conf_threshold
        if classes is not None:
            keep &= torch.isin(cls, torch.as_tensor(classes, device=cls.device))
        p, scores, cls = p[keep], scores[keep], cls[keep]
        boxes = torch.cat([p[:, :2] - p[:, 2:4] / 2, p[:, :2] + p[:, 2:4] / 2], 1)
        idx = batched_nms(boxes, scores, cls, nms_threshold)[:max_det]
        results.append(torch.cat([boxes[idx], scores[idx, None], cls[idx, None].float()], 1))
    return results


def letterbox(frame: torch.Tensor, size: int) -> tuple[torch.Tensor, float, tuple[float, float]]:
    """(H, W, 3) uint8 BGR on any device → (1, 3, size, size) float RGB in [0, 1], grey-padded like Darknet.

    Returns the tensor, the scale applied and the (dx, dy) offset, to map boxes back.
    """
    h, w = frame.shape[:2]
    scale = min(size / w, size / h)
    nw, nh = max(1, round(w * scale)), max(1, round(h * scale))
    x = frame.permute(2, 0, 1).flip(0).unsqueeze(0).float().div_(255.0)
    x = F.interpolate(x, size=(nh, nw), mode="bilinear", align_corners=False)
    out = torch.full((1, 3, size, size), 0.5, dtype=x.dtype, device=x.device)
    dx, dy = (size - nw) // 2, (size - nh) // 2
    out[:, :, dy:dy + nh, dx:dx + nw] = x
    return out, scale, (float(dx), float(dy))
