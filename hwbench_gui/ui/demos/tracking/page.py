"""Demos → Tracking: a detector plus Deep SORT on a video file, a camera or a generated scene.

Frames are read, tracked and drawn by a :class:`TrackJob` running on a
:class:`~hwbench_gui.ui.workers.Worker`; it hands finished QImages and per-frame figures to the GUI
thread through the worker's ``yielded`` signal. The sliders write plain floats the job reads
between frames. torch is imported only inside the worker, and only for YOLOv3.
"""

from __future__ import annotations

import threading
import time
import traceback
from datetime import datetime, timezone
from pathlib import Path

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QImage, QPixmap
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
    QSizePolicy,
    QSlider,
    QVBoxLayout,
    QWidget,
)

from hwbench_gui.ui.context import AppContext
from hwbench_gui.ui.workers import Worker, WorkerPool

_DETECTOR_LABELS = {"motion": "Moving blobs (MOG2, no weights)", "hog": "People (OpenCV HOG, no weights)",
                    "yolov3": "YOLOv3 (Darknet cfg + weights)"}
_DEFAULT_CONF = {"motion": 0.25, "hog": 0.3, "yolov3": 0.5}
_DEFAULT_NMS = {"motion": 0.5, "hog": 0.4, "yolov3": 0.45}


class TrackJob:
    """Runs detector → appearance → Deep SORT over a source until the end, an error or an abort.

    ``settings``: detector name and options, source, pacing. :meth:`run` is a worker body; it emits
    ``("frame", QImage, figures)`` (the image already copied, safe to keep), ``("status", text)``
    and ``("failed", message)``. When frames were tracked, :attr:`document` is the run's
    ``demo.track`` result document once :meth:`run` returns (FPS per 30-frame window, stage times).
    """

    def __init__(self, settings: dict) -> None:
        self.settings = dict(settings)
        self.conf_threshold = float(settings["conf"])
        self.nms_threshold = float(settings["nms"])
        self._lock = threading.Lock()
        self._record_path: str | None = None
        self._rows: list[str] = []
        self.frames_done = 0
        self.document: dict | None = None
        self._emit = None
        self._stop: threading.Event | None = None

    def set_recording(self, path: str | None) -> None:
        with self._lock:
            self._record_path = path

    def track_rows(self) -> list[str]:
        """MOTChallenge lines of every track so far (a copy)."""
        with self._lock:
            return list(self._rows)

    def run(self, control) -> None:  # on the worker thread: no widgets here
        from hwbench_gui.demos.video import SourceError

        self._emit, self._stop = control.emit, control.abort_event
        try:
            self._run()
        except SourceError as exc:
            self._emit(("failed", str(exc)))
        except Exception as exc:  # the job must report, never die silently
            self._emit(("failed", f"{type(exc).__name__}: {exc}\n\n{traceback.format_exc(limit=3)}"))

    def _build_detector(self):
        from hwbench_gui.demos.tracking.detectors import make_detector

        s = self.settings
        name = s["detector"]
        options = {"conf_threshold": self.conf_threshold, "nms_threshold": self.nms_threshold}
        if name == "yolov3":
            self._emit(("status", "loading YOLOv3…"))
            options.update(cfg=s.get("cfg") or None, weights=s.get("weights") or None, device=s.get("device", "cpu"),
                           size=int(s.get("size", 416)))
        return make_detector(name, **options)

    def _run(self) -> None:
        from hwbench_gui.demos.tracking.io import mot_line
        from hwbench_gui.demos.tracking.pipeline import TrackingPipeline
        from hwbench_gui.demos.tracking.render import draw_tracks
        from hwbench_gui.demos.video import Mp4Writer, Pacer, open_source

        try:
            detector = self._build_detector()
        except Exception as exc:
            self._emit(("failed", str(exc)))
            return
        pipeline = TrackingPipeline(detector, use_appearance=self.settings.get("appearance", True))
        names = getattr(detector, "class_names", None)
        writer, writer_path = None, None
        started_at, start = datetime.now(timezone.utc), time.perf_counter()
        stamps: list[float] = []
        frame_wh: list[int] = []
        try:
            with open_source(self.settings["source"], camera_size_wh=None) as src:
                pacer = Pacer(0.0 if (src.live or not self.settings.get("realtime", True)) else src.fps)
                self._emit(("status", f"running {detector.name} on {self.settings['source']}"))

                def frames():
                    # Read one frame ahead of the tracker (the next frame's detection overlaps this one's
                    # tracking), so slider changes reach the detector with the frame read after them.
                    while not self._stop.is_set():
                        frame = src.read()
                        if frame is None:
                            return
                        detector.conf_threshold = self.conf_threshold
                        detector.nms_threshold = self.nms_threshold
                        yield frame

                for result in pipeline.run(frames()):
                    frame = result.frame
                    annotated = draw_tracks(frame, result, names)
                    with self._lock:
                        self._rows += [mot_line(result.index, t.track_id, t.box, t.score) for t in result.tracks]
                        record_path = self._record_path
                    if record_path != writer_path:
                        if writer:
                            writer.close()
                        writer = Mp4Writer(record_path, src.fps, (frame.shape[1], frame.shape[0])) \
                            if record_path else None
                        writer_path = record_path
                    if writer:
                        writer.write(annotated)
                    h, w = annotated.shape[:2]
                    image = QImage(annotated.data, w, h, annotated.strides[0], QImage.Format_BGR888).copy()
                    self.frames_done = result.index
                    stamps.append(time.perf_counter())
                    frame_wh[:] = [w, h]
                    self._emit(("frame", image, {
                        "index": result.index, "tracks": len(result.tracks), "detections": len(result.detections),
                        **{k.replace("_s", "_ms"): v * 1e3 for k, v in result.timing_s.items()}}))
                    pacer.wait(self._stop)
        finally:
            if writer:
                writer.close()
            if stamps:
                self.document = self._document(detector, pipeline, stamps, start, started_at, frame_wh)
        self._emit(("status", f"stopped after {self.frames_done} frames"))

    def _document(self, detector, pipeline, stamps, start, started_at, frame_wh) -> dict:
        """The run's ``demo.track`` document, with the parameters ``hwbench demo track`` records."""
        from hwbench_gui.commands.demo_track import device_text
        from hwbench_gui.demos.results import demo_document, frame_times_from_stamps

        s = self.settings
        timing = pipeline.stats.summary()
        precision = getattr(detector, "precision", None) or "n/a"
        params = {"detector": s["detector"], "device": str(getattr(detector, "device", "cpu")), "precision": precision,
                  "size": int(s.get("size", 416)) if s["detector"] == "yolov3" else None,
                  "frame_wh": frame_wh or None, "appearance": bool(s.get("appearance", True)), "overlap": True,
                  "random_weights": bool(getattr(detector, "random_weights", False)),
                  "realtime": bool(s.get("realtime", True))}
        warnings = ["paced to the video's frame rate (Real time on): the FPS is at most the video's"] \
            if s.get("realtime", True) else []
        return demo_document(
            "track", params, frame_times_from_stamps(stamps, start), started_at=started_at,
            duration_s=stamps[-1] - start, device=device_text(getattr(detector, "device", "cpu")),
            precision=precision,
            stage_ms={k: timing[k] for k in ("detect_ms", "embed_ms", "associate_ms", "frame_ms") if k in timing},
            warnings=warnings, details={"source": str(s["source"]), "from": "GUI Tracking page"})


class TrackingPage(QWidget):
    def __init__(self, context: AppContext | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.context = context
        self._workers = context.workers if context is not None else WorkerPool()
        self.worker: Worker | None = None
        self.job: TrackJob | None = None
        self._frame_times: list[float] = []
        self._last_stats: dict = {}
        self._last_rows: list[str] = []
        self.last_result_path: Path | None = None  # the demo.track document of the last run, if saved
        self._record_path: str | None = None

        # -- source
        self.source_edit = QLineEdit()
        self.source_edit.setPlaceholderText("video file, or camera index (0)")
        self.file_button = QPushButton("File…")
        self.camera_button = QPushButton("Camera 0")
        self.generate_button = QPushButton("Generated scene")
        self.file_button.clicked.connect(self._choose_file)
        self.camera_button.clicked.connect(lambda: self.source_edit.setText("0"))
        self.generate_button.clicked.connect(self.use_generated_scene)
        self.realtime_check = QCheckBox("Play files at their frame rate")
        self.realtime_check.setChecked(True)

        # -- detector
        self.detector_combo = QComboBox()
        for key, label in _DETECTOR_LABELS.items():
            self.detector_combo.addItem(label, key)
        self.detector_combo.currentIndexChanged.connect(self._on_detector)
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

        self.conf_slider, self.conf_label = self._slider(self._on_conf)
        self.nms_slider, self.nms_label = self._slider(self._on_nms)

        # -- actions
        self.start_button = QPushButton("Start")
        self.stop_button = QPushButton("Stop")
        self.record_button = QPushButton("Record…")
        self.record_button.setCheckable(True)
        self.export_button = QPushButton("Export tracks…")
        self.start_button.clicked.connect(self.start)
        self.stop_button.clicked.connect(self.stop)
        self.record_button.toggled.connect(self._on_record)
        self.export_button.clicked.connect(self._export)

        # -- view and figures
        self.view = QLabel("Choose a source and press Start")
        self.view.setAlignment(Qt.AlignCenter)
        self.view.setMinimumSize(480, 360)
        self.view.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Expanding)
        self.view.setStyleSheet("background: #111827; color: #9ca3af;")
        self.fps_label = QLabel("FPS: –")
        self.split_label = QLabel("per frame: –")
        self.gpu_label = QLabel("GPU: –")
        self.status_label = QLabel("")
        for label in (self.fps_label, self.split_label, self.gpu_label, self.status_label):
            label.setWordWrap(True)

        form = QFormLayout()
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
        form.addRow("Confidence", self._pair(self.conf_slider, self.conf_label))
        form.addRow("NMS IoU", self._pair(self.nms_slider, self.nms_label))
        form.addRow("", self.appearance_check)
        controls = QGroupBox("Tracking: detector + Deep SORT")
        controls.setLayout(form)
        buttons = QHBoxLayout()
        for b in (self.start_button, self.stop_button, self.record_button, self.export_button):
            buttons.addWidget(b)
        left = QVBoxLayout()
        left.addWidget(controls)
        left.addLayout(buttons)
        for lab in (self.fps_label, self.split_label, self.gpu_label, self.status_label):
            left.addWidget(lab)
        left.addStretch(1)
        left_widget = QWidget()
        left_widget.setLayout(left)
        left_widget.setMaximumWidth(420)
        layout = QHBoxLayout(self)
        layout.addWidget(left_widget)
        layout.addWidget(self.view, 1)

        self._gpu_timer = QTimer(self)
        self._gpu_timer.setInterval(1000)
        self._gpu_timer.timeout.connect(self._update_gpu)
        self._gpu_timer.start()
        self._on_detector()
        self._update_running(False)
        self._update_gpu()

    # -- small builders ---------------------------------------------------------------------------
    def _slider(self, slot) -> tuple[QSlider, QLabel]:
        slider = QSlider(Qt.Horizontal)
        slider.setRange(0, 100)
        label = QLabel()
        label.setMinimumWidth(36)
        slider.valueChanged.connect(slot)
        return slider, label

    @staticmethod
    def _pair(a: QWidget, b: QWidget) -> QWidget:
        w = QWidget()
        row = QHBoxLayout(w)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(a, 1)
        row.addWidget(b)
        return w

    # -- source -------------------------------------------------------------------------------------
    def _choose_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Video file", "", "Videos (*.mp4 *.avi *.mov *.mkv);;All files (*)")
        if path:
            self.source_edit.setText(path)

    def _choose_into(self, edit: QLineEdit, filt: str) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Choose file", "", f"{filt};;All files (*)")
        if path:
            edit.setText(path)

    def use_generated_scene(self, path: str | None = None, n_frames: int = 300) -> str:
        """Write a generated scene (figures crossing, a pillar) to an MP4 and select it as the source."""
        from hwbench_gui.demos.tracking import synthetic
        from hwbench_gui.engine.paths import user_data_dir

        target = Path(path) if path else user_data_dir() / "tracking" / "generated_scene.mp4"
        target.parent.mkdir(parents=True, exist_ok=True)
        if path or not target.exists():
            self.status_label.setText("writing a generated scene…")
            synthetic.write_sequence(synthetic.random_spec(n_frames=n_frames, seed=0), target)
        self.source_edit.setText(str(target))
        self.status_label.setText(f"generated scene: {target}")
        return str(target)

    # -- detector and sliders ----------------------------------------------------------------------
    def detector_name(self) -> str:
        return self.detector_combo.currentData()

    def _on_detector(self) -> None:
        name = self.detector_name()
        is_yolo = name == "yolov3"
        for w in (self.cfg_edit, self.cfg_button, self.weights_edit, self.weights_button, self.device_combo):
            w.setEnabled(is_yolo)
        self.conf_slider.setValue(round(_DEFAULT_CONF[name] * 100))
        self.nms_slider.setValue(round(_DEFAULT_NMS[name] * 100))
        tips = {"motion": "fraction of the box that is foreground", "hog": "SVM margin (×1)",
                "yolov3": "objectness × class probability"}
        self.conf_slider.setToolTip(f"Confidence: {tips[name]}")
        self._update_yolo_note()

    def _update_yolo_note(self) -> None:
        from hwbench_gui.demos.tracking.detectors import yolo_unavailable_reason

        if self.detector_name() != "yolov3":
            self.yolo_note.setText("")
            self.start_button.setEnabled(self.worker is None)
            return
        reason = yolo_unavailable_reason(self.weights_edit.text().strip() or None)
        self.yolo_note.setText(reason or "weights chosen: size is checked against the cfg when you press Start")
        self.start_button.setEnabled(self.worker is None and reason is None)

    def _on_conf(self, value: int) -> None:
        self.conf_label.setText(f"{value / 100:.2f}")
        if self.job:
            self.job.conf_threshold = value / 100

    def _on_nms(self, value: int) -> None:
        self.nms_label.setText(f"{value / 100:.2f}")
        if self.job:
            self.job.nms_threshold = value / 100

    # -- running ---------------------------------------------------------------------------------------
    def settings(self) -> dict:
        return {"source": self.source_edit.text().strip(), "detector": self.detector_name(),
                "cfg": self.cfg_edit.text().strip(), "weights": self.weights_edit.text().strip(),
                "device": self.device_combo.currentText(), "conf": self.conf_slider.value() / 100,
                "nms": self.nms_slider.value() / 100, "appearance": self.appearance_check.isChecked(),
                "realtime": self.realtime_check.isChecked()}

    def start(self) -> None:
        if self.worker is not None:
            return
        s = self.settings()
        if not s["source"]:
            self.status_label.setText("choose a source first (File…, Camera 0 or Generated scene)")
            return
        self._frame_times.clear()
        job = TrackJob(s)
        worker = Worker(job.run, name="tracking")
        worker.yielded.connect(self._on_job_message)
        worker.finished.connect(self._on_finished)
        self.worker, self.job = worker, job
        if self.record_button.isChecked():
            job.set_recording(self._record_path)
        self._update_running(True)
        self._workers.start(worker)

    def stop(self) -> None:
        if self.worker is not None:
            self.worker.abort()

    def _on_job_message(self, message: tuple) -> None:
        kind, *values = message
        if kind == "frame":
            self._on_frame(*values)
        elif kind == "status":
            self.status_label.setText(values[0])
        elif kind == "failed":
            self._on_failed(values[0])

    def _on_finished(self) -> None:
        if self.worker is None or not self.worker.is_finished():
            return
        job = self.job
        self.worker, self.job = None, None
        if job is not None:
            self._last_rows = job.track_rows()
            if job.document is not None and self.context is not None:
                from hwbench_gui.demos.results import save_run_document

                self.last_result_path, line = save_run_document(job.document, self.context.results_dir)
                self.status_label.setText(f"{self.status_label.text()} · {line}")
        self._update_running(False)

    def _update_running(self, running: bool) -> None:
        self.start_button.setEnabled(not running)
        self.stop_button.setEnabled(running)
        for w in (self.detector_combo, self.source_edit, self.file_button, self.camera_button, self.generate_button):
            w.setEnabled(not running)
        if not running:
            self._on_detector_enable_only()

    def _on_detector_enable_only(self) -> None:
        is_yolo = self.detector_name() == "yolov3"
        for w in (self.cfg_edit, self.cfg_button, self.weights_edit, self.weights_button, self.device_combo):
            w.setEnabled(is_yolo)
        if is_yolo:
            self._update_yolo_note()

    def _on_frame(self, image: QImage, stats: dict) -> None:
        now = time.perf_counter()
        self._frame_times.append(now)
        self._frame_times = [t for t in self._frame_times if now - t <= 2.0]
        self._last_stats = stats
        pix = QPixmap.fromImage(image).scaled(self.view.size(), Qt.KeepAspectRatio, Qt.SmoothTransformation)
        self.view.setPixmap(pix)
        # The next frame's detection runs while this one is tracked: the slower of the two sets the pace.
        total = max(stats["detect_ms"], stats["embed_ms"] + stats["associate_ms"])
        shown = (len(self._frame_times) - 1) / (self._frame_times[-1] - self._frame_times[0]) \
            if len(self._frame_times) > 2 else None
        self.fps_label.setText(f"FPS: {1e3 / total:.0f} processing capacity" if total > 0 else "FPS: –")
        if shown is not None:
            self.fps_label.setText(self.fps_label.text() + f", {shown:.0f} shown")
        self.split_label.setText(f"frame {stats['index']}: detect {stats['detect_ms']:.1f} ms · embed "
                                 f"{stats['embed_ms']:.1f} ms · associate {stats['associate_ms']:.1f} ms · "
                                 f"{stats['detections']} detections, {stats['tracks']} tracks")

    def _on_failed(self, message: str) -> None:
        self.status_label.setText(f"failed: {message}")

    # -- GPU ----------------------------------------------------------------------------------------------
    def _update_gpu(self) -> None:
        sampler = getattr(self.context, "sampler", None) if self.context else None
        if sampler is None:
            from hwbench_gui.engine import nvml

            reason = nvml.unavailable_reason()
            self.gpu_label.setText(f"no GPU: {reason}" if reason else "GPU: telemetry sampler not running")
            return
        if not sampler.gpu_count:
            self.gpu_label.setText(f"no GPU: {sampler.gpu_unavailable_reason or 'none found'}")
            return
        sample = sampler.latest() or {}
        parts = []
        for i in range(sampler.gpu_count):
            util = sample.get(f"gpu{i}_util_percent")
            parts.append(f"GPU{i} {'–' if util is None else f'{util:.0f} %'}")
        self.gpu_label.setText("GPU utilisation: " + ", ".join(parts))

    # -- record and export ------------------------------------------------------------------------------
    def _on_record(self, checked: bool) -> None:
        if checked:
            path, _ = QFileDialog.getSaveFileName(self, "Record annotated video", "tracking.mp4", "MP4 (*.mp4)")
            if not path:
                self.record_button.setChecked(False)
                return
            self.start_recording(path)
        else:
            self.stop_recording()

    def start_recording(self, path: str) -> None:
        self._record_path = path
        self.record_button.blockSignals(True)
        self.record_button.setChecked(True)
        self.record_button.blockSignals(False)
        if self.job:
            self.job.set_recording(path)
        self.status_label.setText(f"recording to {path}")

    def stop_recording(self) -> None:
        self._record_path = None
        self.record_button.blockSignals(True)
        self.record_button.setChecked(False)
        self.record_button.blockSignals(False)
        if self.job:
            self.job.set_recording(None)

    def _export(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export tracks (MOTChallenge text)", "tracks.txt", "Text (*.txt)")
        if path:
            self.export_tracks(path)

    def export_tracks(self, path: str) -> int:
        """Write every track line so far (running or last run) to ``path``; returns the line count."""
        rows = self.job.track_rows() if self.job else self._last_rows
        Path(path).write_text("".join(r + "\n" for r in rows), encoding="ascii")
        self.status_label.setText(f"exported {len(rows)} track boxes to {path}")
        return len(rows)

    def shutdown(self) -> None:
        """Stop the GPU timer and abort the job; the window waits for its worker."""
        self._gpu_timer.stop()
        self.stop()
