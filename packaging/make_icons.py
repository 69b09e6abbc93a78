"""Write hwbench's icon: resources/icons/hwbench.svg, PNGs of every size, hwbench.ico and hwbench.icns.

The drawing (a chip with rising bars: hardware, measured) is declared once as shapes on a 256-unit
canvas; the SVG is written from those shapes and the bitmaps are drawn from them with Pillow
(4x supersampled, then reduced, for smooth edges), so all formats show the same picture.

Run from the repository root: ``.venv/bin/python packaging/make_icons.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from PIL import Image, ImageDraw

CANVAS = 256
PNG_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
SUPERSAMPLE = 4

BACKGROUND = "#1d3557"
CHIP = "#e9eef5"
PIN = "#a8b8cc"
BARS = ("#2a9d8f", "#e9c46a", "#e76f51")

# (x, y, width, height, corner radius, fill) on the 256-unit canvas, drawn in order.
_PIN_W, _PIN_L = 10, 16


def shapes() -> list[tuple[float, float, float, float, float, str]]:
    out = [(8, 8, 240, 240, 48, BACKGROUND)]
    chip_x, chip_y, chip_s = 56, 56, 144
    for i in range(4):  # four pins on each side of the chip
        offset = chip_x + 22 + i * 30
        out += [(offset, chip_y - _PIN_L, _PIN_W, _PIN_L + 4, 2, PIN),
                (offset, chip_y + chip_s - 4, _PIN_W, _PIN_L + 4, 2, PIN),
                (chip_x - _PIN_L, offset, _PIN_L + 4, _PIN_W, 2, PIN),
                (chip_x + chip_s - 4, offset, _PIN_L + 4, _PIN_W, 2, PIN)]
    out.append((chip_x, chip_y, chip_s, chip_s, 16, CHIP))
    base = chip_y + chip_s - 24
    for i, (height, colour) in enumerate(zip((40, 68, 96), BARS)):
        out.append((chip_x + 24 + i * 34, base - height, 26, height, 4, colour))
    return out


def svg_text() -> str:
    rects = "\n".join(
        f'  <rect x="{x:g}" y="{y:g}" width="{w:g}" height="{h:g}" rx="{r:g}" fill="{fill}"/>'
        for x, y, w, h, r, fill in shapes())
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{CANVAS}" height="{CANVAS}" '
            f'viewBox="0 0 {CANVAS} {CANVAS}">\n  <title>hwbench</title>\n{rects}\n</svg>\n')


def render(size: int) -> Image.Image:
    """The icon as an RGBA image of ``size`` x ``size`` pixels."""
    big = size * SUPERSAMPLE
    scale = big / CANVAS
    image = Image.new("RGBA", (big, big), (0, 0, 0, 0))
    draw = ImageDraw.Draw(image)
    for x, y, w, h, r, fill in shapes():
        box = (x * scale, y * scale, (x + w) * scale - 1, (y + h) * scale - 1)
        draw.rounded_rectangle(box, radius=r * scale, fill=fill)
    return image.resize((size, size), Image.Resampling.LANCZOS)


def write_all(folder: Path) -> list[Path]:
    """Write every icon file into ``folder``; returns the paths written."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    svg = folder / "hwbench.svg"
    svg.write_text(svg_text(), encoding="utf-8")
    written.append(svg)
    images = {size: render(size) for size in PNG_SIZES}
    for size, image in images.items():
        path = folder / f"hwbench-{size}.png"
        image.save(path, optimize=True)
        written.append(path)
    ico = folder / "hwbench.ico"
    images[256].save(ico, sizes=[(s, s) for s in ICO_SIZES],
                     append_images=[images[s] for s in ICO_SIZES if s != 256])
    written.append(ico)
    icns = folder / "hwbench.icns"
    images[512].save(icns, append_images=[images[s] for s in (16, 32, 64, 128, 256)])
    written.append(icns)
    return written


def main() -> int:
    root = Path(__file__).resolve().parent.parent
    for path in write_all(root / "resources" / "icons"):
        print(f"{path.relative_to(root)}  {path.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
