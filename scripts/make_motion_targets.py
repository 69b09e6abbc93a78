"""Draw the motion-transfer demo's target characters and mark their keypoints.

Writes ``resources/motion/<name>.png`` (512×512) and ``<name>.keypoints.json`` beside it. The images
are made here with OpenCV drawing calls, so the project owns them outright. Keypoints are the very
coordinates the shapes are drawn from; the face box spans brow to chin and cheek to cheek, like a
Haar face box, because the mapping aligns it with the driver's face box.

    python scripts/make_motion_targets.py [--out resources/motion]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import cv2
import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from hwbench_gui.demos.motion.targets import save_keypoints, target_from_points  # noqa: E402

SIZE = 512
AA = cv2.LINE_AA


def _bgr(hex_rgb: str) -> tuple[int, int, int]:
    r, g, b = (int(hex_rgb[i:i + 2], 16) for i in (1, 3, 5))
    return b, g, r


def _background(top: str, bottom: str, bands: int = 8) -> np.ndarray:
    # Flat bands rather than a smooth gradient: they compress to a few kB in a PNG.
    img = np.zeros((SIZE, SIZE, 3), np.uint8)
    a, b = np.array(_bgr(top), float), np.array(_bgr(bottom), float)
    for i in range(bands):
        y0, y1 = i * SIZE // bands, (i + 1) * SIZE // bands
        img[y0:y1] = np.round(a + (b - a) * i / (bands - 1)).astype(np.uint8)
    return img


def robot() -> tuple[np.ndarray, dict[str, tuple[float, float]], tuple]:
    img = _background("#dbeafe", "#93c5fd")
    body, dark, light = _bgr("#64748b"), _bgr("#1e293b"), _bgr("#cbd5e1")
    cv2.rectangle(img, (196, 420), (316, 512), _bgr("#475569"), -1, AA)  # neck
    cv2.line(img, (256, 110), (256, 60), dark, 6, AA)  # antenna
    cv2.circle(img, (256, 52), 14, _bgr("#ef4444"), -1, AA)
    cv2.rectangle(img, (86, 200), (116, 300), dark, -1, AA)  # ears
    cv2.rectangle(img, (396, 200), (426, 300), dark, -1, AA)
    head = np.array([[130, 110], [382, 110], [410, 138], [410, 400], [382, 428], [130, 428], [102, 400],
                     [102, 138]], np.int32)
    cv2.fillPoly(img, [head], body, AA)
    cv2.polylines(img, [head], True, dark, 5, AA)
    for cx in (190, 322):  # eyes: white, iris, glint
        cv2.circle(img, (cx, 230), 40, light, -1, AA)
        cv2.circle(img, (cx, 230), 40, dark, 4, AA)
        cv2.circle(img, (cx, 234), 18, _bgr("#0ea5e9"), -1, AA)
        cv2.circle(img, (cx + 6, 226), 6, (255, 255, 255), -1, AA)
        cv2.line(img, (cx - 38, 172), (cx + 38, 172), dark, 8, AA)  # brows
    cv2.fillPoly(img, [np.array([[256, 268], [236, 312], [276, 312]], np.int32)], _bgr("#f59e0b"), AA)  # nose
    cv2.rectangle(img, (180, 340), (332, 388), dark, -1, AA)  # mouth and teeth
    for x in range(199, 332, 19):
        cv2.line(img, (x, 342), (x, 386), light, 3, AA)
    cv2.line(img, (182, 364), (330, 364), light, 3, AA)
    for x, y in ((124, 130), (388, 130), (124, 408), (388, 408)):  # bolts
        cv2.circle(img, (x, y), 7, light, -1, AA)
    points = {
        "antenna": (256, 52), "head_top": (256, 110), "brow_left": (190, 172), "brow_right": (322, 172),
        "eye_left": (190, 230), "eye_right": (322, 230), "eye_left_outer": (150, 230),
        "eye_right_outer": (362, 230), "nose": (256, 290), "mouth_left": (180, 364), "mouth_right": (332, 364),
        "lip_upper": (256, 340), "lip_lower": (256, 388), "chin": (256, 428), "jaw_left": (102, 400),
        "jaw_right": (410, 400), "ear_left": (86, 250), "ear_right": (426, 250),
    }
    return img, points, (102, 140, 308, 288)


def cat() -> tuple[np.ndarray, dict[str, tuple[float, float]], tuple]:
    img = _background("#fef3c7", "#fcd34d")
    fur, dark, pink = _bgr("#f97316"), _bgr("#431407"), _bgr("#f9a8d4")
    for side in (-1, 1):  # ears behind the head
        outer = np.array([[256 + side * 70, 150], [256 + side * 175, 40], [256 + side * 185, 200]], np.int32)
        inner = np.array([[256 + side * 100, 150], [256 + side * 168, 75], [256 + side * 170, 175]], np.int32)
        cv2.fillPoly(img, [outer], fur, AA)
        cv2.polylines(img, [outer], True, dark, 4, AA)
        cv2.fillPoly(img, [inner], pink, AA)
    cv2.ellipse(img, (256, 290), (190, 170), 0, 0, 360, fur, -1, AA)
    cv2.ellipse(img, (256, 290), (190, 170), 0, 0, 360, dark, 4, AA)
    cv2.ellipse(img, (256, 370), (110, 80), 0, 0, 360, _bgr("#fff7ed"), -1, AA)  # muzzle
    for i in (-1, 0, 1):  # forehead stripes
        cv2.line(img, (256 + i * 40, 130), (256 + i * 30, 175), dark, 6, AA)
    for cx in (180, 332):
        cv2.ellipse(img, (cx, 265), (38, 30), 0, 0, 360, _bgr("#a3e635"), -1, AA)
        cv2.ellipse(img, (cx, 265), (38, 30), 0, 0, 360, dark, 4, AA)
        cv2.ellipse(img, (cx, 265), (8, 26), 0, 0, 360, dark, -1, AA)
        cv2.circle(img, (cx + 12, 255), 5, (255, 255, 255), -1, AA)
    cv2.fillPoly(img, [np.array([[236, 330], [276, 330], [256, 352]], np.int32)], pink, AA)  # nose
    cv2.line(img, (256, 352), (256, 372), dark, 4, AA)
    cv2.ellipse(img, (232, 372), (24, 18), 0, 0, 180, dark, 4, AA)
    cv2.ellipse(img, (280, 372), (24, 18), 0, 0, 180, dark, 4, AA)
    cv2.ellipse(img, (256, 405), (26, 16), 0, 0, 180, _bgr("#be123c"), -1, AA)  # tongue
    for side in (-1, 1):
        for dy, tilt in ((-12, -14), (6, 0), (24, 14)):
            cv2.line(img, (256 + side * 90, 365 + dy), (256 + side * 200, 365 + dy + tilt), dark, 2, AA)
    points = {
        "ear_left": (81, 40), "ear_right": (431, 40), "forehead": (256, 150), "brow_left": (180, 220),
        "brow_right": (332, 220), "eye_left": (180, 265), "eye_right": (332, 265), "eye_left_outer": (142, 265),
        "eye_right_outer": (370, 265), "nose": (256, 340), "mouth_left": (208, 378), "mouth_right": (304, 378),
        "lip_upper": (256, 372), "lip_lower": (256, 421), "chin": (256, 460), "jaw_left": (90, 370),
        "jaw_right": (422, 370), "cheek_left": (70, 290), "cheek_right": (442, 290),
    }
    return img, points, (96, 170, 320, 300)


CHARACTERS = {"robot": (robot, "a robot head drawn with OpenCV"), "cat": (cat, "a cat face drawn with OpenCV")}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(REPO / "resources" / "motion"))
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name, (draw, description) in CHARACTERS.items():
        img, points, face_box = draw()
        path = out / f"{name}.png"
        cv2.imwrite(str(path), img, [cv2.IMWRITE_PNG_COMPRESSION, 9])
        target = target_from_points(img, list(points.values()), list(points), name=name, source="drawn",
                                    face_box=face_box, path=path)
        target.extra = {"description": description, "made_by": "scripts/make_motion_targets.py"}
        side = save_keypoints(target)
        print(f"{path} ({path.stat().st_size // 1024} kB), {side.name}: {len(points)} keypoints")
    return 0


if __name__ == "__main__":
    sys.exit(main())
