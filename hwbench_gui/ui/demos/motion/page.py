"""Demos → Motion transfer: a webcam or video drives a still character image.

Frames are processed by a :class:`~.job.MotionJob` (running
:class:`~hwbench_gui.demos.motion.pipeline.MotionPipeline` on a :class:`~hwbench_gui.ui.workers.Worker`);
it sends finished QImages to the GUI thread through the worker's ``yielded`` signal and records MP4
itself, so the GUI thread never waits on a camera, the warp or the encoder. Commands from the page
(neutral pose, ROI, target, recording) are queued to the job and applied between frames.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QFileDialog, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from hwbench_gui.demos.motion.targets import (
    Target,
    TargetError,
    load_target,
    save_keypoints,
    shipped_targets,
    target_from_points,
)
from hwbench_gui.ui.context import AppContext
from hwbench_gui.ui.demos.frames import to_qimage
from hwbench_gui.ui.demos.motion.controls import LOAD_ITEM, VIDEO_ITEM, MotionControls
from hwbench_gui.ui.demos.motion.image_view import ImageView
from hwbench_gui.ui.demos.motion.job import MotionJob
from hwbench_gui.ui.workers import Worker, WorkerPool
from hwbench_gui.ui.start_folder import start_path


class MotionPage(QWidget):
    def __init__(self, context: AppContext | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.context = context
        self._workers = context.workers if context is not None else WorkerPool()
        self.worker: Worker | None = None
        self.job: MotionJob | None = None
        self.target: Target | None = None
        self._pending_image = None  # a user image waiting for clicked keypoints
        self.roi: tuple[int, int, int, int] | None = None
        self.frames_shown = 0
        self.recorded: str | None = None  # the last recording of this run, kept in the status line
        self.video_path: str | None = None
        self._targets = shipped_targets()

        self.controls = MotionControls([p.stem for p in self._targets])
        # The widgets the page's logic reads and writes (and scripts and tests drive).
        c = self.controls
        self.source_box, self.target_box, self.start_button = c.source_box, c.target_box, c.start_button
        self.roi_button, self.record_button, self.fps_label = c.roi_button, c.record_button, c.fps_label
        self.status = QLabel("Pick a camera or a video file and press Start.")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextSelectableByMouse)
        #: Where the last run's demo.motion document went (or why it did not).
        self.result_label = QLabel("")
        self.result_label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.last_result_path: Path | None = None
        self.driver_view = ImageView("Driver: the camera or video with its tracked keypoints")
        self.target_view = ImageView("Target")

        c.start_button.clicked.connect(self._start_clicked)
        c.stop_button.clicked.connect(self.stop)
        c.source_box.activated.connect(self._source_chosen)
        c.target_box.activated.connect(self._target_chosen)
        c.neutral_button.clicked.connect(self.set_neutral)
        c.roi_button.toggled.connect(self._roi_mode)
        c.face_button.clicked.connect(lambda: self.set_roi(None))
        self.driver_view.roi_drawn.connect(self.set_roi)
        c.record_button.clicked.connect(self._record_clicked)
        c.use_clicks_button.clicked.connect(self.use_clicked_keypoints)
        c.clear_clicks_button.clicked.connect(self._clear_clicks)

        views = QHBoxLayout()
        views.addWidget(self.driver_view, 4)
        views.addWidget(self.target_view, 3)
        layout = QVBoxLayout(self)
        layout.addWidget(self.controls)
        layout.addLayout(views, 1)
        layout.addWidget(self.status)
        layout.addWidget(self.result_label)
        if self._targets:
            self.set_target_path(self._targets[0])
        self._update_buttons()

    # -- target ----------------------------------------------------------------------------------
    def set_target_path(self, path: str | Path) -> bool:
        """Load a target image; without keypoints the target view asks for clicks. True when usable."""
        try:
            target = load_target(path)
        except TargetError as exc:
            from hwbench_gui.demos.motion.targets import read_image

            try:
                self._pending_image = (read_image(path), Path(path))
            except TargetError:
                self._pending_image = None
                self._show_error(str(exc))
                return False
            self.target_view.points = []
            self.target_view.mode = "click"
            self.target_view.set_image(to_qimage(self._pending_image[0]))
            self._show_error(str(exc))
            self._update_buttons()
            return False
        self._apply_target(target)
        return True

    def _apply_target(self, target: Target) -> None:
        self.target = target
        self._pending_image = None
        self.target_view.mode = "view"
        self.target_view.set_image(to_qimage(target.resized(512).image))
        if self.job is not None:
            self.job.command("set_target", target)
        self.status.setStyleSheet("")
        self.status.setText(f"Target {target.name}: {len(target.keypoints)} keypoints ({target.source}).")
        self._update_buttons()

    def use_clicked_keypoints(self) -> None:
        """Make a target of the pending image and the points clicked on it; saves them beside the image."""
        if self._pending_image is None:
            return
        image, path = self._pending_image
        try:
            target = target_from_points(image, self.target_view.points, name=path.stem, path=path)
        except TargetError as exc:
            self._show_error(str(exc))
            return
        try:
            saved = save_keypoints(target)
            note = f"keypoints saved to {saved}"
        except OSError as exc:
            note = f"keypoints not saved ({exc.strerror or exc})"
        self._apply_target(target)
        self.status.setText(self.status.text() + " " + note)

    def _clear_clicks(self) -> None:
        self.target_view.points = []
        self.target_view.update()

    def _target_chosen(self, index: int) -> None:
        if self.target_box.itemText(index) == LOAD_ITEM:
            path, _ = QFileDialog.getOpenFileName(self, "Target image",
                                                  start_path(), "Images (*.png *.jpg *.jpeg *.bmp)")
            if path:
                self.set_target_path(path)
        else:
            self.set_target_path(self._targets[index])

    # -- source and worker -----------------------------------------------------------------------
    def _source_chosen(self, index: int) -> None:
        if self.source_box.itemText(index) == VIDEO_ITEM:
            path, _ = QFileDialog.getOpenFileName(self, "Driving video",
                                                  start_path(), "Videos (*.mp4 *.avi *.mov *.mkv *.webm)"
                                                  ";;All files (*)")
            self.video_path = path or self.video_path

    def _start_clicked(self) -> None:
        text = self.source_box.currentText()
        if text == VIDEO_ITEM:
            if not self.video_path:
                self._source_chosen(self.source_box.currentIndex())
            if self.video_path:
                self.start(self.video_path)
        else:
            self.start(int(text.split()[-1]))

    def start(self, source_spec) -> None:
        """Run the demo on a camera index or a video file; a failure shows in the status line."""
        if self.target is None:
            self._show_error("Choose a target with keypoints first.")
            return
        self.stop()
        self.frames_shown = 0
        self.recorded = None
        if isinstance(source_spec, int):
            self.source_box.setCurrentText(f"Camera {source_spec}")
        else:
            self.video_path = str(source_spec)
            self.source_box.setCurrentText(VIDEO_ITEM)
        self.job = MotionJob(source_spec, self.target, roi=self.roi)
        self.worker = Worker(self.job.run, name="motion")
        self.worker.yielded.connect(self._on_job_message)
        self.worker.finished.connect(self._on_worker_finished)
        self.status.setStyleSheet("")
        self.status.setText(f"Opening {source_spec if isinstance(source_spec, str) else f'camera {source_spec}'}…")
        self._workers.start(self.worker)
        self._update_buttons()

    def stop(self) -> None:
        """Stop the worker and wait for it (a few seconds at most), so its camera is free again."""
        self._end(wait_s=5.0)

    def _end(self, wait_s: float) -> None:
        worker, self.worker, self.job = self.worker, None, None
        if worker is not None:
            worker.abort()
            worker.wait(wait_s)
        self.record_button.setChecked(False)
        self._update_buttons()

    def _on_job_message(self, message: tuple) -> None:
        kind, *values = message
        if kind == "frame":
            self._on_frame(*values)
        elif kind == "failed":
            self._on_failed(values[0])
        elif kind == "recorded":
            self.recorded = values[0]
            self.status.setText(f"Recorded {values[0]}")
        elif kind == "document":
            self._save_document(values[0])

    def _save_document(self, doc: dict) -> None:
        """Into the app's results folder; a failure is a line under the status, never an exception."""
        if self.context is None:
            return
        from hwbench_gui.demos.results import save_run_document

        self.last_result_path, line = save_run_document(doc, self.context.results_dir)
        self.result_label.setText(line)

    def _on_worker_finished(self) -> None:
        if self.worker is not None and self.worker.is_finished():
            self.worker, self.job = None, None
            self.record_button.setChecked(False)
            self._update_buttons()

    def _on_frame(self, driver: QImage, output: QImage, stats: dict) -> None:
        if self.job is not None:
            self.job.frame_shown()
        self.frames_shown += 1
        self.driver_view.set_image(driver)
        if self.target_view.mode == "view":
            self.target_view.set_image(output)
        ms = stats["process_ms"]
        fps = "–" if stats["fps"] is None else f"{stats['fps']:.0f}"
        self.fps_label.setText(f"{fps} FPS · processing {1000 / max(ms['total'], 1e-3):.0f} FPS "
                               f"({ms['total']:.1f} ms: keypoints {ms['keypoints']:.1f}, warp {ms['warp']:.1f})")
        if not self.status.styleSheet():
            # the next frame must not wipe out where the last recording went
            rec = (" · recording" if stats["recording"] else
                   f" · Recorded {self.recorded}" if self.recorded else "")
            self.status.setText(f"{stats['source']}: {stats['status']}{rec}")

    def _on_failed(self, message: str) -> None:
        self._show_error(message)

    def _show_error(self, message: str) -> None:
        self.status.setStyleSheet("color: #dc2626;")
        self.status.setText(message)

    # -- commands --------------------------------------------------------------------------------
    def set_neutral(self) -> None:
        if self.job is not None:
            self.job.command("set_neutral")

    def set_roi(self, roi) -> None:
        """Track ``roi`` (x, y, w, h in driver pixels); None tracks the face again."""
        self.roi = tuple(roi) if roi else None
        self.roi_button.setChecked(False)
        if self.job is not None:
            self.job.command("set_roi", self.roi)
        self.status.setStyleSheet("")
        self.status.setText(f"Tracking the region {self.roi}" if self.roi else "Tracking the face")

    def _roi_mode(self, on: bool) -> None:
        self.driver_view.mode = "roi" if on else "view"
        if on:
            self.status.setText("Drag a rectangle on the driver view around what should drive the target.")

    def start_recording(self, path: str | Path) -> None:
        if self.job is not None:
            self.job.command("record", str(path))
            self.record_button.setChecked(True)

    def stop_recording(self) -> None:
        if self.job is not None:
            self.job.command("stop_recording")
        self.record_button.setChecked(False)

    def _record_clicked(self, checked: bool) -> None:
        if not checked:
            self.stop_recording()
            return
        path, _ = QFileDialog.getSaveFileName(self, "Record the animated target",
                                              start_path("motion.mp4"), "MP4 video (*.mp4)")
        if path:
            self.start_recording(path)
        else:
            self.record_button.setChecked(False)

    def _update_buttons(self) -> None:
        self.controls.show_state(self.worker is not None, self.target is not None, self._pending_image is not None)

    def shutdown(self) -> None:
        """Abort the worker without waiting; the window waits for it (``WorkerPool.shutdown``)."""
        self._end(wait_s=0.0)
