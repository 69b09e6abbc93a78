"""Demos → Tracking: a detector plus Deep SORT on a video file, a camera or a generated scene.

Frames are read, tracked and drawn by a :class:`~.job.TrackJob` running on a
:class:`~hwbench_gui.ui.workers.Worker`; it hands finished QImages and per-frame figures to the GUI
thread through the worker's ``yielded`` signal. The sliders write plain floats the job reads
between frames. torch is imported only inside the worker, and only for YOLOv3.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QImage, QPixmap
from PySide6.QtWidgets import (QFileDialog, QFrame, QHBoxLayout, QLabel, QPushButton, QScrollArea, QSizePolicy,
                               QVBoxLayout, QWidget)

from hwbench_gui.ui.context import AppContext
from hwbench_gui.ui.demos.tracking.controls import TrackingControls
from hwbench_gui.ui.demos.tracking.figures import TrackingFigures
from hwbench_gui.ui.demos.tracking.job import TrackJob
from hwbench_gui.ui.workers import Worker, WorkerPool
from hwbench_gui.ui.start_folder import start_path


class TrackingPage(QWidget):
    def __init__(self, context: AppContext | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.context = context
        self._workers = context.workers if context is not None else WorkerPool()
        self.worker: Worker | None = None
        self.job: TrackJob | None = None
        self._last_rows: list[str] = []
        self.last_result_path: Path | None = None  # the demo.track document of the last run, if saved
        self._record_path: str | None = None

        self.controls = TrackingControls()
        self.figures = TrackingFigures(context)
        # The widgets the page's logic reads and writes (and scripts and tests drive).
        c = self.controls
        self.source_edit, self.realtime_check, self.detector_combo = c.source_edit, c.realtime_check, c.detector_combo
        self.conf_slider, self.nms_slider, self.yolo_note = c.conf_slider, c.nms_slider, c.yolo_note
        f = self.figures
        self.fps_label, self.split_label, self.gpu_label = f.fps_label, f.split_label, f.gpu_label
        c.generate_button.clicked.connect(self.use_generated_scene)
        c.conf_slider.valueChanged.connect(self._on_conf)
        c.nms_slider.valueChanged.connect(self._on_nms)
        c.readiness_changed.connect(self._update_start)

        self.start_button = QPushButton("Start")
        self.stop_button = QPushButton("Stop")
        self.record_button = QPushButton("Record…")
        self.record_button.setCheckable(True)
        self.export_button = QPushButton("Export tracks…")
        self.start_button.clicked.connect(self.start)
        self.stop_button.clicked.connect(self.stop)
        self.record_button.toggled.connect(self._on_record)
        self.export_button.clicked.connect(self._export)

        self.view = QLabel("Choose a source and press Start")
        self.view.setAlignment(Qt.AlignCenter)
        self.view.setMinimumSize(480, 360)
        self.view.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Expanding)
        self.view.setStyleSheet("background: #111827; color: #9ca3af;")
        self.status_label = QLabel("")
        self.status_label.setWordWrap(True)

        buttons = QHBoxLayout()
        for b in (self.start_button, self.stop_button, self.record_button, self.export_button):
            buttons.addWidget(b)
        left = QVBoxLayout()
        left.addWidget(self.controls)
        left.addLayout(buttons)
        left.addWidget(self.figures)
        left.addWidget(self.status_label)
        left.addStretch(1)
        left_widget = QWidget()
        left_widget.setLayout(left)
        # On a short screen the column scrolls: squeezed, the detector's note was clipped mid-sentence.
        self.left_area = QScrollArea()
        self.left_area.setWidget(left_widget)
        self.left_area.setWidgetResizable(True)
        self.left_area.setFrameShape(QFrame.NoFrame)
        self.left_area.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.left_area.setMaximumWidth(420)
        layout = QHBoxLayout(self)
        layout.addWidget(self.left_area)
        layout.addWidget(self.view, 1)
        self._update_running(False)

    # -- source ----------------------------------------------------------------------------------
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

    # -- sliders -----------------------------------------------------------------------------------
    def _on_conf(self, value: int) -> None:
        if self.job:
            self.job.conf_threshold = value / 100

    def _on_nms(self, value: int) -> None:
        if self.job:
            self.job.nms_threshold = value / 100

    # -- running ---------------------------------------------------------------------------------
    def start(self) -> None:
        if self.worker is not None:
            return
        s = self.controls.settings()
        if not s["source"]:
            self.status_label.setText("choose a source first (File…, Camera 0 or Generated scene)")
            return
        self.figures.reset()
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
            self.status_label.setText(f"failed: {values[0]}")

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
        self.controls.set_running(running)

    def _update_start(self) -> None:
        self.start_button.setEnabled(self.worker is None and self.controls.start_blocker is None)

    def _on_frame(self, image: QImage, stats: dict) -> None:
        if self.job is not None:
            self.job.frame_shown()
        pix = QPixmap.fromImage(image).scaled(self.view.size(), Qt.KeepAspectRatio, Qt.SmoothTransformation)
        self.view.setPixmap(pix)
        self.figures.show_frame(stats)

    # -- record and export -----------------------------------------------------------------------
    def _on_record(self, checked: bool) -> None:
        if checked:
            path, _ = QFileDialog.getSaveFileName(self, "Record annotated video",
                                                  start_path("tracking.mp4"), "MP4 (*.mp4)")
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
        path, _ = QFileDialog.getSaveFileName(self, "Export tracks (MOTChallenge text)",
                                              start_path("tracks.txt"), "Text (*.txt)")
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
        self.figures.stop()
        self.stop()
