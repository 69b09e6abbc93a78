"""A standard U-Net (Ronneberger, Fischer, Brox 2015) in PyTorch and in Keras, built the same way.

Four down steps (2×2 max pool) and four up steps (2×2 transposed conv, skip concatenation), two
3×3 conv + batch norm + ReLU per level, channels 64-128-256-512-1024, padded convolutions so the
output mask has the input's size (the original used unpadded ones and cropped). Random init, no
download. Image sides must be multiples of 16. torch / keras are imported inside the builders.
"""

from __future__ import annotations

from typing import Any

from hwbench_gui.engine.spec.precision import FP32

BASE_CHANNELS = 64
DEPTH = 4


def torch_unet(num_classes: int, in_channels: int = 3, base: int = BASE_CHANNELS) -> Any:
    """A ``torch.nn.Module`` mapping (N, in_channels, H, W) to logits (N, num_classes, H, W)."""
    from torch import cat, nn

    def double_conv(cin: int, cout: int) -> nn.Sequential:
        return nn.Sequential(
            nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
            nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))

    class UNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            widths = [base * 2**i for i in range(DEPTH + 1)]
            self.down = nn.ModuleList([double_conv(in_channels, widths[0])] +
                                      [double_conv(widths[i], widths[i + 1]) for i in range(DEPTH)])
            self.pool = nn.MaxPool2d(2)
            self.up = nn.ModuleList([nn.ConvTranspose2d(widths[i + 1], widths[i], 2, stride=2)
                                     for i in reversed(range(DEPTH))])
            self.up_conv = nn.ModuleList([double_conv(2 * widths[i], widths[i]) for i in reversed(range(DEPTH))])
            self.head = nn.Conv2d(widths[0], num_classes, 1)

        def forward(self, x):
            skips = []
            for i, block in enumerate(self.down):
                x = block(x if i == 0 else self.pool(x))
                skips.append(x)
            skips.pop()  # the bottom level is x itself
            for up, conv in zip(self.up, self.up_conv):
                x = conv(cat([skips.pop(), up(x)], dim=1))
            return self.head(x)

    return UNet()


def keras_unet(num_classes: int, image_size: int, in_channels: int = 3, base: int = BASE_CHANNELS) -> Any:
    """A ``keras.Model`` mapping (N, H, W, in_channels) to logits (N, H, W, num_classes), FP32 output."""
    import keras
    from keras import layers

    def double_conv(x, width: int):
        for _ in range(2):
            x = layers.Conv2D(width, 3, padding="same", use_bias=False)(x)
            x = layers.BatchNormalization()(x)
            x = layers.ReLU()(x)
        return x

    inputs = keras.Input((image_size, image_size, in_channels))
    x = inputs
    skips = []
    for i in range(DEPTH + 1):
        if i:
            x = layers.MaxPooling2D(2)(x)
        x = double_conv(x, base * 2**i)
        skips.append(x)
    skips.pop()
    for i in reversed(range(DEPTH)):
        x = layers.Conv2DTranspose(base * 2**i, 2, strides=2)(x)
        x = layers.Concatenate()([skips.pop(), x])
        x = double_conv(x, base * 2**i)
    # The logits stay FP32 under a mixed-precision policy so the loss is computed in FP32.
    outputs = layers.Conv2D(num_classes, 1, dtype=FP32.keras_policy)(x)
    return keras.Model(inputs, outputs, name="unet")
