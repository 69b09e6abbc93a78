"""Detections on scenery: a pillar, a door, a sign or a tripod that a people detector takes for a person.

A person moves, if only a little: a detection is kept when enough of its box changed against the frame
``lag_s`` seconds earlier, or when it overlaps a box that did within the last ``remember_s`` seconds (a
person who pauses keeps their box that long). A detection that sits on pixels that stay the same frame
after frame is scenery and is dropped, so no track grows on it. Made for a fixed camera; with a moving
camera everything changes and nothing is dropped.
"""

from __future__ import annotations

from collections import deque

import cv2
import numpy as np

from hwbench_gui.demos.tracking.boxes import iou_matrix


class SceneryFilter:
    """``keep(frame, boxes)`` → bool per box: does it move like a person (see the module's doc)?

    ``scale``: the frame is compared at this scale, in grey; a pixel changed when it differs by more
    than ``min_change`` grey levels; a box moves when at least ``min_moving`` of it changed.
    """

    def __init__(self, fps: float = 25.0, lag_s: float = 0.2, remember_s: float = 1.0, min_moving: float = 0.02,
                 min_change: int = 20, scale: float = 0.25, remember_iou: float = 0.3) -> None:
        if not 0 < scale <= 1 or not 0 <= min_moving <= 1 or lag_s <= 0 or remember_s < 0:
            raise ValueError(f"scenery filter: scale in (0, 1], min_moving in [0, 1], lag_s > 0, remember_s >= 0; "
                             f"got {scale}, {min_moving}, {lag_s}, {remember_s}")
        self.lag_s, self.remember_s, self.min_moving = lag_s, remember_s, min_moving
        self.min_change, self.scale, self.remember_iou = min_change, scale, remember_iou
        self.set_frame_rate(fps)

    def set_frame_rate(self, fps: float) -> None:
        """The source's frames per second: the lag and the memory keep their meaning in seconds."""
        if not fps > 0:
            raise ValueError(f"fps must be > 0, got {fps}")
        self.fps = float(fps)
        self.lag = max(1, round(self.lag_s * fps))
        self.remember = round(self.remember_s * fps)
        self.reset()

    def reset(self) -> None:
        self._frames: deque[np.ndarray] = deque(maxlen=self.lag + 1)
        self._moved: list[tuple[np.ndarray, int]] = []  # (xyxy box, frame index) where a box last moved
        self._index = 0

    def moving_share(self, frame: np.ndarray, boxes: np.ndarray) -> np.ndarray:
        """(N,) share of each box (xyxy, frame pixels) that changed against the frame ``lag`` frames
        ago; 0 while there is no such frame yet. Call once per frame, in order."""
        small = cv2.resize(frame, None, fx=self.scale, fy=self.scale, interpolation=cv2.INTER_AREA)
        grey = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY) if small.ndim == 3 else small
        self._frames.append(grey)
        self._index += 1
        boxes = np.asarray(boxes, np.float64).reshape(-1, 4)
        if len(self._frames) <= self.lag or not len(boxes):
            return np.zeros(len(boxes))
        changed = (cv2.absdiff(grey, self._frames[0]) > self.min_change).astype(np.float64)
        integral = cv2.integral(changed)
        h, w = changed.shape
        b = np.round(boxes * self.scale).astype(int)
        x1, x2 = np.clip(b[:, 0], 0, w), np.clip(b[:, 2], 0, w)
        y1, y2 = np.clip(b[:, 1], 0, h), np.clip(b[:, 3], 0, h)
        total = integral[y2, x2] - integral[y1, x2] - integral[y2, x1] + integral[y1, x1]
        return total / np.maximum((x2 - x1) * (y2 - y1), 1)

    def keep(self, frame: np.ndarray, boxes: np.ndarray) -> np.ndarray:
        """(N,) bool: the boxes that move now or overlap (IoU ``remember_iou``) a box that moved within
        the last ``remember_s`` seconds."""
        boxes = np.asarray(boxes, np.float64).reshape(-1, 4)
        moving = self.moving_share(frame, boxes) >= self.min_moving
        self._moved = [(b, i) for b, i in self._moved if self._index - i <= self.remember]
        keep = moving.copy()
        if self._moved and len(boxes):
            recent = np.array([b for b, _ in self._moved])
            keep |= (iou_matrix(boxes, recent) >= self.remember_iou).any(axis=1)
        self._moved += [(b, self._index) for b in boxes[moving]]
        return keep
