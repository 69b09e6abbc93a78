"""Target images and their keypoints.

A target is an image plus keypoints (with labels) and the box of its face, which the mapping aligns
with the driver's face box. Keypoints live in a JSON sidecar next to the image, ``NAME.keypoints.json``.
An image without a sidecar gets template keypoints when a Haar face is found in it; otherwise loading
fails with :class:`TargetError` asking for keypoints to be clicked.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from hwbench_gui.engine.foreign import MAX_IMAGE_FILE_BYTES, ForeignFileError, image_size, read_regular

SCHEMA_VERSION = 1
SIDECAR_SUFFIX = ".keypoints.json"
MIN_KEYPOINTS = 3
#: Keypoints a sidecar may hold: a face's landmarks are a few hundred at most (MediaPipe: 478).
MAX_KEYPOINTS = 1000
#: A bigger sidecar is not one (the shipped ones are about 2 kB; 1000 labelled points, about 60 kB).
MAX_SIDECAR_BYTES = 1 << 20

#: Where template keypoints go inside a detected face box (fractions of its width and height).
FACE_TEMPLATE: tuple[tuple[str, float, float], ...] = (
    ("forehead", 0.50, 0.12), ("brow_left", 0.30, 0.30), ("brow_right", 0.70, 0.30),
    ("eye_left", 0.32, 0.40), ("eye_right", 0.68, 0.40), ("nose", 0.50, 0.58),
    ("mouth_left", 0.36, 0.75), ("mouth_right", 0.64, 0.75), ("lip_upper", 0.50, 0.71),
    ("lip_lower", 0.50, 0.80), ("chin", 0.50, 0.95), ("jaw_left", 0.12, 0.62), ("jaw_right", 0.88, 0.62),
)


class TargetError(ValueError):
    """The target image cannot be used; the message says what to do."""


@dataclass
class Target:
    image: np.ndarray  # BGR uint8
    keypoints: np.ndarray  # (K, 2) float64, pixels of ``image``
    labels: list[str]
    face_box: tuple[float, float, float, float]  # x, y, w, h
    name: str = ""
    source: str = ""  # "sidecar", "face template", "clicked"
    path: Path | None = None
    extra: dict = field(default_factory=dict)

    @property
    def size(self) -> tuple[int, int]:
        """Width, height in pixels."""
        return self.image.shape[1], self.image.shape[0]

    def resized(self, max_side_px: int) -> "Target":
        """A copy whose longer side is ``max_side_px``, keypoints and box scaled with it."""
        w, h = self.size
        f = max_side_px / max(w, h)
        if abs(f - 1.0) < 1e-9:
            return self
        size = (max(1, round(w * f)), max(1, round(h * f)))
        image = cv2.resize(self.image, size, interpolation=cv2.INTER_AREA if f < 1 else cv2.INTER_LINEAR)
        fx, fy = size[0] / w, size[1] / h
        x, y, bw, bh = self.face_box
        return Target(image, self.keypoints * [fx, fy], list(self.labels), (x * fx, y * fy, bw * fx, bh * fy),
                      self.name, self.source, self.path, dict(self.extra))


def sidecar_path(image_path: str | os.PathLike) -> Path:
    p = Path(image_path)
    return p.with_name(p.stem + SIDECAR_SUFFIX)


def box_around(points: np.ndarray, pad: float = 0.15) -> tuple[float, float, float, float]:
    """The points' bounding box grown by ``pad`` of its size on each side."""
    lo, hi = points.min(axis=0), points.max(axis=0)
    size = np.maximum(hi - lo, 1.0)
    lo, size = lo - pad * size, size * (1 + 2 * pad)
    return float(lo[0]), float(lo[1]), float(size[0]), float(size[1])


def read_image(path: str | os.PathLike) -> np.ndarray:
    """The image at ``path`` as BGR pixels: read as every foreign file is (a regular file of at most
    :data:`MAX_IMAGE_FILE_BYTES`), its header's size checked against the pixel limit before decoding
    (a 600-byte JPEG may claim 20000×20000, 1.2 GB decoded). :class:`TargetError` otherwise."""
    p = Path(path)
    try:
        data = read_regular(p, MAX_IMAGE_FILE_BYTES, "a target image")
        image_size(data, p)
    except ForeignFileError as exc:
        raise TargetError(f"target image {exc}") from None
    # imdecode instead of imread: imread cannot open non-ASCII paths on Windows.
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    if image is None:
        raise TargetError(f"target image {p}: OpenCV cannot decode it (use PNG or JPEG)")
    return image


def target_from_points(image: np.ndarray, points, labels=None, *, name="", source="clicked",
                       face_box=None, path=None) -> Target:
    """A target from keypoints given by hand (clicked in the GUI). Needs at least 3 points."""
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    if len(pts) < MIN_KEYPOINTS:
        raise TargetError(f"a target needs at least {MIN_KEYPOINTS} keypoints, got {len(pts)}")
    labels = list(labels) if labels else [f"p{i}" for i in range(len(pts))]
    return Target(image, pts, labels, tuple(map(float, face_box)) if face_box else box_around(pts), name, source,
                  Path(path) if path else None)


def load_target(path: str | os.PathLike, *, detect_face: bool = True) -> Target:
    """The image at ``path`` with the keypoints of its sidecar, or template keypoints in a detected face.

    Raises :class:`TargetError` when the image cannot be read, the sidecar is broken, or there are no
    keypoints (then the message asks the user to click some).
    """
    p = Path(path)
    image = read_image(p)
    side = sidecar_path(p)
    if side.exists() or side.is_symlink():
        doc, pts, labels, box = _read_sidecar(side)
        w0, h0 = doc.get("size") or (image.shape[1], image.shape[0])
        # The image may have been resized after its keypoints were marked.
        f = np.array([image.shape[1] / w0, image.shape[0] / h0])
        pts = pts * f
        if box:
            box = (box[0] * f[0], box[1] * f[1], box[2] * f[0], box[3] * f[1])
        target = target_from_points(image, pts, labels, name=p.stem, source="sidecar", face_box=box, path=p)
        target.extra = {k: v for k, v in doc.items() if k in ("description", "made_by")}
        return target
    if detect_face:
        from hwbench_gui.demos.motion.keypoints import FaceDetector, FaceDetectorUnavailable

        try:
            face = FaceDetector(detect_width=640).detect(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY))
        except FaceDetectorUnavailable as exc:
            raise TargetError(f"{p.name} has no keypoints: there is no {side.name} beside it, and {exc}. Click "
                              f"at least {MIN_KEYPOINTS} keypoints on the image in the Motion page, which saves "
                              "them to that file, or write the file.") from None
        if face is not None:
            x, y, w, h = face
            pts = [(x + fx * w, y + fy * h) for _, fx, fy in FACE_TEMPLATE]
            return target_from_points(image, pts, [n for n, _, _ in FACE_TEMPLATE], name=p.stem,
                                      source="face template", face_box=face, path=p)
    raise TargetError(f"{p.name} has no keypoints: there is no {side.name} beside it and no face was found "
                      f"in it. Click at least {MIN_KEYPOINTS} keypoints on the image (eyes, mouth corners, "
                      "chin, outline) in the Motion page, which saves them to that file, or write the file.")


def _read_sidecar(side: Path) -> tuple[dict, np.ndarray, list[str], list[float] | None]:
    """(document, keypoints, labels, face box) of a keypoints sidecar, every field checked before use;
    :class:`TargetError` naming the file and what is wrong."""
    try:
        doc = json.loads(read_regular(side, MAX_SIDECAR_BYTES, "a keypoints file").decode("utf-8"))
    except ForeignFileError as exc:
        raise TargetError(f"keypoints file {exc}") from None
    except (ValueError, RecursionError) as exc:  # invalid UTF-8 or JSON, or nested past the parser's stack
        raise TargetError(f"keypoints file {side} is not readable: {type(exc).__name__}: {str(exc)[:200]}") from None

    def number(value: object) -> bool:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and np.isfinite(value)

    kps = doc.get("keypoints") if isinstance(doc, dict) else None
    if not isinstance(kps, list) or not all(isinstance(k, dict) and number(k.get("x")) and number(k.get("y"))
                                            for k in kps):
        raise TargetError(f"keypoints file {side}: 'keypoints' is not a list of points with numbers x and y")
    if len(kps) > MAX_KEYPOINTS:
        raise TargetError(f"keypoints file {side}: {len(kps)} keypoints (at most {MAX_KEYPOINTS})")
    size, box = doc.get("size"), doc.get("face_box")
    if size is not None and not (isinstance(size, list) and len(size) == 2 and all(number(v) and v > 0 for v in size)):
        raise TargetError(f"keypoints file {side}: 'size' is not a positive width and height")
    if box is not None and not (isinstance(box, list) and len(box) == 4 and all(number(v) for v in box)):
        raise TargetError(f"keypoints file {side}: 'face_box' is not four numbers (x, y, w, h)")
    pts = np.array([[k["x"], k["y"]] for k in kps], dtype=np.float64).reshape(-1, 2)
    labels = [str(k.get("label", f"p{i}"))[:100] for i, k in enumerate(kps)]
    return doc, pts, labels, box


def save_keypoints(target: Target, path: str | os.PathLike | None = None) -> Path:
    """Write the target's keypoints sidecar (atomically); returns its path."""
    if path is None:
        if target.path is None:
            raise TargetError("the target has no image path: say where to save its keypoints")
        path = sidecar_path(target.path)
    path = Path(path)
    doc = {
        "schema_version": SCHEMA_VERSION,
        "image": target.path.name if target.path else None,
        "size": list(target.size),
        "face_box": [round(v, 2) for v in target.face_box],
        "keypoints": [{"label": lab, "x": round(float(x), 2), "y": round(float(y), 2)}
                      for lab, (x, y) in zip(target.labels, target.keypoints)],
        **target.extra,
    }
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def shipped_targets() -> list[Path]:
    """The target images in ``resources/motion/`` (made by ``scripts/make_motion_targets.py``)."""
    from hwbench_gui.engine.paths import resources_dir

    folder = resources_dir() / "motion"
    return sorted(p for p in folder.glob("*.png") if sidecar_path(p).is_file())
