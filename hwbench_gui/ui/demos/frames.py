"""Video frames (BGR ``uint8`` arrays) as QImages, for the demo jobs that hand frames to the GUI thread."""

from __future__ import annotations

import numpy as np
from PySide6.QtGui import QImage

#: Frames a demo job sends that the view has not drawn yet; past this the job sends none (it goes on
#: processing every frame), so a view that falls behind shows the newest frames, not a backlog.
MAX_FRAMES_IN_FLIGHT = 2


def to_qimage(bgr: np.ndarray) -> QImage:
    """A QImage that owns a copy of the BGR ``uint8`` array (safe to send to another thread)."""
    bgr = np.ascontiguousarray(bgr)
    h, w = bgr.shape[:2]
    return QImage(bgr.data, w, h, bgr.strides[0], QImage.Format_BGR888).copy()
