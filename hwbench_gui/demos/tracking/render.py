"""Draw tracks on a frame: a box and label per id (colour fixed per id, labels never overlapping), and
the path it walked.

A *held* track (inside a merged blob: its box is the tracker's prediction, not a detection) is
drawn dashed, in a dimmer shade of its colour, and tagged "held"."""

from __future__ import annotations

import colorsys

import cv2
import numpy as np

from hwbench_gui.demos.tracking.labels import place_labels


def id_color(track_id: int) -> tuple[int, int, int]:
    """A stable, well-spread BGR colour for an id (golden-ratio hue steps)."""
    r, g, b = colorsys.hsv_to_rgb((track_id * 0.618033988749895) % 1.0, 0.85, 1.0)
    return int(b * 255), int(g * 255), int(r * 255)


HELD_DIM = 0.55  # a held box's colour is its id colour times this
DASH_PX = 6


def dashed_rectangle(img: np.ndarray, p1: tuple[int, int], p2: tuple[int, int], color, thickness: int = 2,
                     dash_px: int = DASH_PX) -> None:
    """A rectangle of dashes ``dash_px`` long with gaps as long."""
    (x1, y1), (x2, y2) = p1, p2
    for a, b, fixed, horizontal in ((x1, x2, y1, True), (x1, x2, y2, True), (y1, y2, x1, False), (y1, y2, x2, False)):
        for start in range(a, b, 2 * dash_px):
            end = min(start + dash_px, b)
            q1, q2 = ((start, fixed), (end, fixed)) if horizontal else ((fixed, start), (fixed, end))
            cv2.line(img, q1, q2, color, thickness)


FONT, FONT_SCALE = cv2.FONT_HERSHEY_SIMPLEX, 0.5
LABEL_PAD = 3  # pixels around a label's text


def _label_size(text: str) -> tuple[int, int]:
    (tw, th), baseline = cv2.getTextSize(text, FONT, FONT_SCALE, 1)
    return tw + 2 * LABEL_PAD, th + baseline + 2 * LABEL_PAD


def draw_tracks(frame: np.ndarray, result, class_names: list[str] | None = None,
                show_detections: bool = False, caption: str | None = None) -> np.ndarray:
    """An annotated copy of ``frame`` for a :class:`~.pipeline.FrameResult`: a box per track, the path
    a seen track walked, and labels that never overlap (:func:`~.labels.place_labels`; seen tracks'
    labels are placed before held ones')."""
    out = frame.copy()
    if show_detections:
        for x1, y1, x2, y2 in result.detections.boxes.astype(int):
            cv2.rectangle(out, (x1, y1), (x2, y2), (160, 160, 160), 1)
    tracks = sorted(result.tracks, key=lambda t: bool(getattr(t, "held", False)))
    forms = []
    for t in tracks:
        held = bool(getattr(t, "held", False))
        color = id_color(t.track_id)
        if held:
            color = tuple(int(c * HELD_DIM) for c in color)
        else:  # a held track's trail is where it was last seen, not where it is: drawn, trails cross
            if len(t.trail) > 1:
                pts = np.asarray(t.trail, np.int32).reshape(-1, 1, 2)
                cv2.polylines(out, [pts], False, color, 2, cv2.LINE_AA)
        x1, y1, x2, y2 = (int(round(v)) for v in t.box)
        if held:
            dashed_rectangle(out, (x1, y1), (x2, y2), color, 2)
        else:
            cv2.rectangle(out, (x1, y1), (x2, y2), color, 2)
        short = f"#{t.track_id}"
        full = short
        if class_names and 0 <= t.class_id < len(class_names) and len(class_names) > 1:
            full += f" {class_names[t.class_id]}"
        if held:
            full += " held"
        forms.append([full, short] if full != short else [short])
    places = place_labels([tuple(t.box) for t in tracks], forms, _label_size, (out.shape[1], out.shape[0]))
    for t, place in zip(tracks, places):
        if place is None:
            continue
        held = bool(getattr(t, "held", False))
        color = id_color(t.track_id)
        if held:
            color = tuple(int(c * HELD_DIM) for c in color)
        text, (lx1, ly1, lx2, ly2) = place
        cv2.rectangle(out, (int(lx1), int(ly1)), (int(lx2) - 1, int(ly2) - 1), color, -1)
        (_, th), baseline = cv2.getTextSize(text, FONT, FONT_SCALE, 1)
        text_color = (255, 255, 255) if held else (0, 0, 0)  # white reads better on the dimmed colour
        cv2.putText(out, text, (int(lx1) + LABEL_PAD, int(ly1) + LABEL_PAD + th), FONT, FONT_SCALE, text_color, 1,
                    cv2.LINE_AA)
    if caption:
        cv2.putText(out, caption, (8, 20), cv2.FONT_HERSHEY_SIMPLEX, 0.55, (0, 0, 0), 3, cv2.LINE_AA)
        cv2.putText(out, caption, (8, 20), cv2.FONT_HERSHEY_SIMPLEX, 0.55, (255, 255, 255), 1, cv2.LINE_AA)
    return out
