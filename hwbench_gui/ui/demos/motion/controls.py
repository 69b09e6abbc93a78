"""The Motion page's two rows of controls: source, start/stop and target; pose, region, recording and
clicked keypoints; the FPS figure. The page connects them and says which are enabled."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

CAMERA_INDICES = range(4)
VIDEO_ITEM = "Video file…"
LOAD_ITEM = "Load image…"


class MotionControls(QWidget):
    def __init__(self, target_names: list[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.source_box = QComboBox()
        self.source_box.addItems([f"Camera {i}" for i in CAMERA_INDICES] + [VIDEO_ITEM])
        self.start_button = QPushButton("Start")
        self.stop_button = QPushButton("Stop")
        self.target_box = QComboBox()
        self.target_box.addItems(list(target_names) + [LOAD_ITEM])
        self.neutral_button = QPushButton("Set neutral pose")
        self.roi_button = QPushButton("Track a region…")
        self.roi_button.setCheckable(True)
        self.face_button = QPushButton("Track the face")
        self.record_button = QPushButton("Record…")
        self.record_button.setCheckable(True)
        self.fps_label = QLabel("– FPS")
        self.fps_label.setMinimumWidth(260)
        self.use_clicks_button = QPushButton("Use clicked keypoints")
        self.clear_clicks_button = QPushButton("Clear clicks")

        row1 = QHBoxLayout()
        for w in (QLabel("Source"), self.source_box, self.start_button, self.stop_button, QLabel("Target"),
                  self.target_box):
            row1.addWidget(w)
        row1.addStretch(1)
        row1.addWidget(self.fps_label)
        row2 = QHBoxLayout()
        for w in (self.neutral_button, self.roi_button, self.face_button, self.record_button,
                  self.use_clicks_button, self.clear_clicks_button):
            row2.addWidget(w)
        row2.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row1)
        layout.addLayout(row2)

    def show_state(self, running: bool, has_target: bool, clicking: bool) -> None:
        """``clicking``: an image without keypoints waits for clicked points."""
        self.start_button.setEnabled(not running and has_target)
        self.stop_button.setEnabled(running)
        self.source_box.setEnabled(not running)
        for w in (self.neutral_button, self.record_button):
            w.setEnabled(running)
        self.use_clicks_button.setVisible(clicking)
        self.clear_clicks_button.setVisible(clicking)
