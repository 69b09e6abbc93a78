"""The Tracking page's settings box: source, detector (and YOLOv3's files and device), the
confidence and NMS sliders, appearance features. :meth:`TrackingControls.settings` is what a job runs with."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSlider,
    QWidget,
)

from hwbench_gui.demos.tracking.detector_notes import DETECTOR_SUMMARIES
from hwbench_gui.ui.start_folder import start_path

_DETECTOR_LABELS = {"motion": "Moving blobs (MOG2, no weights)", "hog": "People (OpenCV HOG, no weights)",
                    "yolov3": "YOLOv3 (Darknet cfg + weights)"}
_DEFAULT_CONF = {"motion": 0.25, "hog": 0.6, "yolov3": 0.5}
_DEFAULT_NMS = {"motion": 0.5, "hog": 0.2, "yolov3": 0.45}
_CONF_TIPS = {"motion": "fraction of the box that is foreground", "hog": "SVM margin (×1)",
              "yolov3": "objectness × class probability"}


class TrackingControls(QGroupBox):
    #: :attr:`start_blocker` may have changed (detector or weights changed).
    readiness_changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Tracking: detector + Deep SORT", parent)
        #: Why Start cannot run these settings (YOLOv3 without usable weights), or None.
        self.start_blocker: str | None = None
        self.source_edit = QLineEdit()
        self.source_edit.setPlaceholderText("video file, or camera index (0)")
        self.file_button = QPushButton("File…")
        self.camera_button = QPushButton("Camera 0")
        self.generate_button = QPushButton("Generated scene")
        self.file_button.clicked.connect(self._choose_file)
        self.camera_button.clicked.connect(lambda: self.source_edit.setText("0"))
        self.realtime_check = QCheckBox("Play files at their frame rate")
        self.realtime_check.setChecked(True)

        self.detector_combo = QComboBox()
        for key, label in _DETECTOR_LABELS.items():
            self.detector_combo.addItem(label, key)
        self.detector_combo.currentIndexChanged.connect(self._on_detector)
        self.detector_note = QLabel()  # which detector runs and what it is good for
        self.detector_note.setWordWrap(True)
        self.cfg_edit = QLineEdit()
        self.cfg_edit.setPlaceholderText("default: shipped yolov3.cfg")
        self.cfg_button = QPushButton("…")
        self.cfg_button.clicked.connect(lambda: self._choose_into(self.cfg_edit, "Darknet cfg (*.cfg)"))
        self.weights_edit = QLineEdit()
        self.weights_edit.setPlaceholderText("yolov3.weights / yolov3-tiny.weights (Darknet project)")
        self.weights_button = QPushButton("…")
        self.weights_button.clicked.connect(lambda: self._choose_into(self.weights_edit, "Darknet weights (*.weights)"))
        self.weights_edit.textChanged.connect(self._update_yolo_note)
        self.device_combo = QComboBox()
        self.device_combo.addItems(["cpu", "cuda"])
        self.yolo_note = QLabel()
        self.yolo_note.setWordWrap(True)
        self.appearance_check = QCheckBox("Appearance features")
        self.appearance_check.setToolTip("Deep SORT's appearance cue: here a colour histogram + HOG descriptor "
                                         "(hand-crafted, no re-identification CNN)")
        self.appearance_check.setChecked(True)
        self.conf_slider, self.conf_label = _slider()
        self.nms_slider, self.nms_label = _slider()

        form = QFormLayout(self)
        src_row = QHBoxLayout()
        src_row.addWidget(self.source_edit, 1)
        src_row.addWidget(self.file_button)
        src_buttons = QHBoxLayout()
        src_buttons.addWidget(self.camera_button)
        src_buttons.addWidget(self.generate_button)
        form.addRow("Source", src_row)
        form.addRow("", src_buttons)
        form.addRow("", self.realtime_check)
        form.addRow("Detector", self.detector_combo)
        form.addRow("", self.detector_note)
        cfg_row = QHBoxLayout()
        cfg_row.addWidget(self.cfg_edit, 1)
        cfg_row.addWidget(self.cfg_button)
        weights_row = QHBoxLayout()
        weights_row.addWidget(self.weights_edit, 1)
        weights_row.addWidget(self.weights_button)
        form.addRow("YOLO cfg", cfg_row)
        form.addRow("YOLO weights", weights_row)
        form.addRow("YOLO device", self.device_combo)
        form.addRow("", self.yolo_note)
        form.addRow("Confidence", _pair(self.conf_slider, self.conf_label))
        form.addRow("NMS IoU", _pair(self.nms_slider, self.nms_label))
        form.addRow("", self.appearance_check)
        self._on_detector()

    def _choose_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Video file",
                                              start_path(), "Videos (*.mp4 *.avi *.mov *.mkv);;All files (*)")
        if path:
            self.source_edit.setText(path)

    def _choose_into(self, edit: QLineEdit, filt: str) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Choose file", start_path(), f"{filt};;All files (*)")
        if path:
            edit.setText(path)

    def detector_name(self) -> str:
        return self.detector_combo.currentData()

    def _on_detector(self) -> None:
        name = self.detector_name()
        self._enable_yolo_fields(name == "yolov3")
        self.conf_slider.setValue(round(_DEFAULT_CONF[name] * 100))
        self.nms_slider.setValue(round(_DEFAULT_NMS[name] * 100))
        self.conf_slider.setToolTip(f"Confidence: {_CONF_TIPS[name]}")
        self.detector_note.setText(f"{name}: {DETECTOR_SUMMARIES[name]}")
        self._update_yolo_note()

    def _enable_yolo_fields(self, on: bool) -> None:
        for w in (self.cfg_edit, self.cfg_button, self.weights_edit, self.weights_button, self.device_combo):
            w.setEnabled(on)

    def _update_yolo_note(self) -> None:
        from hwbench_gui.demos.tracking.detectors import yolo_unavailable_reason

        if self.detector_name() != "yolov3":
            self.yolo_note.setText("")
            self.start_blocker = None
        else:
            reason = yolo_unavailable_reason(self.weights_edit.text().strip() or None)
            self.yolo_note.setText(reason or "weights chosen: size is checked against the cfg when you press Start")
            self.start_blocker = reason
        self.readiness_changed.emit()

    def set_running(self, running: bool) -> None:
        """Source and detector are fixed while a job runs; after it, YOLOv3's weights are checked again."""
        for w in (self.detector_combo, self.source_edit, self.file_button, self.camera_button, self.generate_button):
            w.setEnabled(not running)
        if not running:
            is_yolo = self.detector_name() == "yolov3"
            self._enable_yolo_fields(is_yolo)
            if is_yolo:
                self._update_yolo_note()

    def settings(self) -> dict:
        """The settings a :class:`~.job.TrackJob` runs with."""
        return {"source": self.source_edit.text().strip(), "detector": self.detector_name(),
                "cfg": self.cfg_edit.text().strip(), "weights": self.weights_edit.text().strip(),
                "device": self.device_combo.currentText(), "conf": self.conf_slider.value() / 100,
                "nms": self.nms_slider.value() / 100, "appearance": self.appearance_check.isChecked(),
                "realtime": self.realtime_check.isChecked()}


def _slider() -> tuple[QSlider, QLabel]:
    """A 0–100 slider and the label that shows its value as a fraction."""
    slider = QSlider(Qt.Horizontal)
    slider.setRange(0, 100)
    label = QLabel()
    label.setMinimumWidth(36)
    slider.valueChanged.connect(lambda value: label.setText(f"{value / 100:.2f}"))
    return slider, label


def _pair(a: QWidget, b: QWidget) -> QWidget:
    w = QWidget()
    row = QHBoxLayout(w)
    row.setContentsMargins(0, 0, 0, 0)
    row.addWidget(a, 1)
    row.addWidget(b)
    return w
