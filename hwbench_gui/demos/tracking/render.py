"""Draw tracks on a frame: a box and label per id (colour fixed per id), and the path it walked."""

from __future__ import annotations

import colorsys

import cv2
import numpy as np


def id_color(track_id: int) -> tuple[int, int, int]:
    """A stable, well-spread BGR colour for an id (golden-ratio hue steps)."""
    r, g, b = colorsys.hsv_to_rgb((track_id * 0.618033988749895) % 1.0, 0.85, 1.0)
    return int(b * 255), int(g * 255), int(r * 255)


def draw_tracks(frame: np.ndarray, result, class_names: list[str] | None = None,
                show_detections: bool = False, caption: str | None = None) -> np.ndarray:
    """An annotated copy of ``frame`` for a :class:`~.pipeline.FrameResult`."""
    out = frame.copy()
    if show_detections:
        for x1, y1, x2, y2 in result.detections.boxes.astype(int):
            cv2.rectangle(out, (x1, y1), (x2, y2), (160, 160, 160), 1)
    for t in result.tracks:
        color = id_color(t.track_id)
        if len(t.trail) > 1:
            pts = np.asarray(t.trail, np.int32).reshape(-1, 1, 2)
            cv2.polylines(out, [pts], False, color, 2, cv2.LINE_AA)
        x1, y1, x2, y2 = (int(round(v)) for v in t.box)
        cv2.rectangle(out, (x1, y1), (x2, y2), color, 2)
        label = f"#{t.track_id}"
        if class_names and 0 <= t.class_id < len(class_names) and len(class_names) > 1:
            label += f" {class_names[t.class_id]}"
        (tw, th), _ = cv2.getTextSize(label, cv2.FONT_HERSHEY_SIMPLEX, 0.5, 1)
        cv2.rectangle(out, (x1, max(0, y1 - th - 6)), (x1 + tw + 4, max(th + 6, y1)), color, -1)
        cv2.putText(out, label, (x1 + 2, max(th + 2, y1 - 4)), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (0, 0, 0), 1,
                    cv2.LINE_AA)
    if caption:
        cv2.putText(out, caption, (8, 20), cv2.FONT_HERSHEY_SIMPLEX, 0.55, (0, 0, 0), 3, cv2.LINE_AA)
        cv2.putText(out, caption, (8, 20), cv2.FONT_HERSHEY_SIMPLEX, 0.55, (255, 255, 255), 1, cv2.LINE_AA)
    return out
