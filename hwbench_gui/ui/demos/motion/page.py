"""Demos → Motion transfer: a webcam or video drives a still character image.

Frames are processed by a :class:`MotionJob` (running
:class:`~hwbench_gui.demos.motion.pipeline.MotionPipeline` on a :class:`~hwbench_gui.ui.workers.Worker`);
it sends finished QImages to the GUI thread through the worker's ``yielded`` signal and records MP4
itself, so the GUI thread never waits on a camera, the warp or the encoder. Commands from the page
(neutral pose, ROI, target, recording) are queued to the job and applied between frames.
"""

from __future__ import annotations

import collections
import threading
import time
import traceback
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QImage, QPainter, QPen
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from hwbench_gui.demos.motion.targets import (
    Target,
    TargetError,
    load_target,
    save_keypoints,
    shipped_targets,
    target_from_points,
)
from hwbench_gui.ui.context import AppContext
from hwbench_gui.ui.workers import Worker, WorkerPool

CAMERA_INDICES = range(4)
VIDEO_ITEM = "Video file…"
LOAD_ITEM = "Load image…"


def to_qimage(bgr: np.ndarray) -> QImage:
    """A QImage that owns a copy of the BGR ``uint8`` array (safe to send to another thread)."""
    bgr = np.ascontiguousarray(bgr)
    h, w = bgr.shape[:2]
    return QImage(bgr.data, w, h, bgr.strides[0], QImage.Format_BGR888).copy()


class ImageView(QWidget):
    """Shows a QImage scaled to fit; in "roi" mode a drag draws a rectangle, in "click" mode clicks add points.

    Coordinates in its signals are image pixels.
    """

    roi_drawn = Signal(tuple)  # (x, y, w, h)
    clicked = Signal(float, float)

    def __init__(self, placeholder: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.image: QImage | None = None
        self.placeholder = placeholder
        self.mode = "view"  # view | roi | click
        self.points: list[tuple[float, float]] = []  # drawn in "click" mode
        self._drag: tuple[QPointF, QPointF] | None = None
        self.setMinimumSize(320, 240)
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Expanding)

    def set_image(self, image: QImage | None) -> None:
        self.image = image
        self.update()

    def _frame(self) -> QRectF:
        if self.image is None:
            return QRectF(self.rect())
        f = min(self.width() / self.image.width(), self.height() / self.image.height())
        w, h = self.image.width() * f, self.image.height() * f
        return QRectF((self.width() - w) / 2, (self.height() - h) / 2, w, h)

    def to_image(self, pos: QPointF) -> tuple[float, float]:
        r = self._frame()
        if self.image is None or r.width() <= 0:
            return 0.0, 0.0
        return ((pos.x() - r.x()) * self.image.width() / r.width(),
                (pos.y() - r.y()) * self.image.height() / r.height())

    def _to_widget(self, x: float, y: float) -> QPointF:
        r = self._frame()
        return QPointF(r.x() + x * r.width() / self.image.width(), r.y() + y * r.height() / self.image.height())

    def paintEvent(self, event) -> None:  # noqa: N802 (Qt name)
        p = QPainter(self)
        p.fillRect(self.rect(), QColor("#111827"))
        if self.image is None:
            p.setPen(QColor("#9ca3af"))
            p.drawText(self.rect(), Qt.AlignCenter | Qt.TextWordWrap, self.placeholder)
            return
        p.setRenderHint(QPainter.SmoothPixmapTransform)
        p.drawImage(self._frame(), self.image)
        if self.mode == "click":
            p.setPen(QPen(QColor("#f43f5e"), 2))
            p.setBrush(QColor("#fda4af"))
            for i, (x, y) in enumerate(self.points):
                c = self._to_widget(x, y)
                p.drawEllipse(c, 4, 4)
                p.drawText(c + QPointF(6, -6), str(i + 1))
        if self._drag is not None:
            p.setPen(QPen(QColor("#facc15"), 2, Qt.DashLine))
            p.setBrush(Qt.NoBrush)
            p.drawRect(QRectF(self._drag[0], self._drag[1]).normalized())

    def mousePressEvent(self, event) -> None:  # noqa: N802
        if self.image is None:
            return
        if self.mode == "roi":
            self._drag = (event.position(), event.position())
        elif self.mode == "click":
            x, y = self.to_image(event.position())
            if 0 <= x < self.image.width() and 0 <= y < self.image.height():
                self.points.append((x, y))
                self.clicked.emit(x, y)
                self.update()

    def mouseMoveEvent(self, event) -> None:  # noqa: N802
        if self._drag is not None:
            self._drag = (self._drag[0], event.position())
            self.update()

    def mouseReleaseEvent(self, event) -> None:  # noqa: N802
        if self._drag is None:
            return
        (x0, y0), (x1, y1) = self.to_image(self._drag[0]), self.to_image(event.position())
        self._drag = None
        self.update()
        x, y, w, h = int(min(x0, x1)), int(min(y0, y1)), int(abs(x1 - x0)), int(abs(y1 - y0))
        if w >= 16 and h >= 16:
            self.roi_drawn.emit((x, y, w, h))


class MotionJob:
    """Runs the pipeline until aborted; :meth:`run` is a worker body.

    It emits ``("frame", driver view, animated target, stats)``, ``("failed", message)``,
    ``("recorded", description)`` and, when it processed frames, ``("document", doc)`` last: the
    run's ``demo.motion`` result document (FPS per 30-frame window, stage times). Every image it
    sends is a copy. A face detector this OpenCV lacks or an unusable target fails with their
    one-line reason; anything else with its type and a short traceback.
    """

    def __init__(self, source_spec, target: Target, roi=None, out_size_px: int = 512) -> None:
        self.source_spec, self.target, self.roi, self.out_size_px = source_spec, target, roi, out_size_px
        self._lock = threading.Lock()
        self._commands: list = []
        self._shown = 0  # frames emitted but not yet painted: more than 2 and we skip sending
        self.pipeline = None

    def command(self, name: str, *args) -> None:
        """Queue ``name`` (set_neutral, set_roi, set_target, record, stop_recording) for the next frame."""
        with self._lock:
            self._commands.append((name, args))

    def frame_shown(self) -> None:
        self._shown = max(0, self._shown - 1)

    def run(self, control) -> None:  # on the worker thread: no widgets here
        from hwbench_gui.demos.motion.keypoints import FaceDetectorUnavailable
        from hwbench_gui.demos.motion.pipeline import MotionPipeline, draw_driver
        from hwbench_gui.demos.video import DEFAULT_FPS, Mp4Writer, Pacer, SourceError, open_source

        emit = control.emit
        try:
            source = open_source(self.source_spec, loop=True)
        except SourceError as exc:
            emit(("failed", str(exc)))
            return
        recorder = None
        started_at, start = datetime.now(timezone.utc), time.perf_counter()
        all_stamps: list[float] = []
        stage_ms: dict[str, list[float]] = collections.defaultdict(list)
        frame_wh: list[int] = []
        try:
            self.pipeline = MotionPipeline(source, self.target, roi=self.roi, out_size_px=self.out_size_px)
            pacer = Pacer(0.0 if source.live else source.fps)
            totals = collections.deque(maxlen=30)
            stamps = collections.deque(maxlen=30)
            while not control.aborted:
                with self._lock:
                    commands, self._commands = self._commands, []
                for name, args in commands:
                    if name == "record":
                        if recorder is not None:
                            recorder.close()
                        w, h = self.pipeline.target.size
                        # a camera's output comes at the processing rate, not the camera's
                        recorder = Mp4Writer(args[0], DEFAULT_FPS if source.live else source.fps, (w, h))
                    elif name == "stop_recording":
                        if recorder is not None:
                            recorder.close()
                            emit(("recorded", f"{recorder.path} ({recorder.frames} frames)"))
                            recorder = None
                    else:
                        getattr(self.pipeline, name)(*args)
                result = self.pipeline.step()
                if result is None:
                    emit(("failed", f"{source.description} delivered no more frames"))
                    break
                if recorder is not None:
                    recorder.write(result.output)
                totals.append(result.timing_ms)
                stamps.append(time.perf_counter())
                all_stamps.append(stamps[-1])
                for k, v in result.timing_ms.items():
                    stage_ms[k].append(float(v))
                frame_wh[:] = [int(result.driver.shape[1]), int(result.driver.shape[0])]
                if self._shown < 2:
                    self._shown += 1
                    stats = {
                        "index": result.index, "status": result.status, "source": source.description,
                        "recording": recorder is not None,
                        "process_ms": {k: float(np.mean([t[k] for t in totals])) for k in result.timing_ms},
                        "fps": (len(stamps) - 1) / (stamps[-1] - stamps[0]) if len(stamps) > 1 else None,
                    }
                    emit(("frame", to_qimage(draw_driver(result)), to_qimage(result.output), stats))
                pacer.wait(control.abort_event)
        except (FaceDetectorUnavailable, TargetError) as exc:  # reasons written for the user: no traceback
            emit(("failed", str(exc).splitlines()[0] if str(exc) else type(exc).__name__))
        except Exception as exc:  # a failing frame must end the worker with a message, not kill the app
            emit(("failed", f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=3)}"))
        finally:
            if recorder is not None:
                recorder.close()
                emit(("recorded", f"{recorder.path} ({recorder.frames} frames)"))
            source.close()
            if all_stamps:
                emit(("document", self._document(source, all_stamps, start, started_at, stage_ms, frame_wh)))

    def _document(self, source, stamps, start, started_at, stage_ms, frame_wh) -> dict:
        """The run's ``demo.motion`` document, with the parameters ``hwbench demo motion`` records."""
        from hwbench_gui.demos.results import demo_document, frame_times_from_stamps

        params = {"keypoints": "lk", "region": "roi" if self.roi else "face", "size": self.out_size_px,
                  "smoothing": True, "frame_wh": frame_wh or None, "device": "cpu"}
        summary = {f"{k}_ms": {"mean": float(np.mean(v)), "median": float(np.median(v)),
                               "p95": float(np.percentile(v, 95))} for k, v in stage_ms.items()}
        return demo_document(
            "motion", params, frame_times_from_stamps(stamps, start), started_at=started_at,
            duration_s=stamps[-1] - start, device="cpu", precision="n/a", stage_ms=summary,
            warnings=[] if source.live else ["paced to the video's frame rate: the FPS is at most the video's"],
            details={"source": source.description, "target": getattr(self.target, "name", None),
                     "from": "GUI Motion page"})


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

        self.source_box = QComboBox()
        self.source_box.addItems([f"Camera {i}" for i in CAMERA_INDICES] + [VIDEO_ITEM])
        self.video_path: str | None = None
        self.start_button = QPushButton("Start")
        self.stop_button = QPushButton("Stop")
        self.target_box = QComboBox()
        self._targets = shipped_targets()
        self.target_box.addItems([p.stem for p in self._targets] + [LOAD_ITEM])
        self.neutral_button = QPushButton("Set neutral pose")
        self.roi_button = QPushButton("Track a region…")
        self.roi_button.setCheckable(True)
        self.face_button = QPushButton("Track the face")
        self.record_button = QPushButton("Record…")
        self.record_button.setCheckable(True)
        self.fps_label = QLabel("– FPS")
        self.fps_label.setMinimumWidth(260)
        self.status = QLabel("Pick a camera or a video file and press Start.")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextSelectableByMouse)
        #: Where the last run's demo.motion document went (or why it did not).
        self.result_label = QLabel("")
        self.result_label.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.last_result_path: Path | None = None
        self.use_clicks_button = QPushButton("Use clicked keypoints")
        self.clear_clicks_button = QPushButton("Clear clicks")

        self.driver_view = ImageView("Driver: the camera or video with its tracked keypoints")
        self.target_view = ImageView("Target")

        self.start_button.clicked.connect(self._start_clicked)
        self.stop_button.clicked.connect(self.stop)
        self.source_box.activated.connect(self._source_chosen)
        self.target_box.activated.connect(self._target_chosen)
        self.neutral_button.clicked.connect(self.set_neutral)
        self.roi_button.toggled.connect(self._roi_mode)
        self.face_button.clicked.connect(lambda: self.set_roi(None))
        self.driver_view.roi_drawn.connect(self.set_roi)
        self.record_button.clicked.connect(self._record_clicked)
        self.use_clicks_button.clicked.connect(self.use_clicked_keypoints)
        self.clear_clicks_button.clicked.connect(self._clear_clicks)

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
        views = QHBoxLayout()
        views.addWidget(self.driver_view, 4)
        views.addWidget(self.target_view, 3)
        layout = QVBoxLayout(self)
        layout.addLayout(row1)
        layout.addLayout(row2)
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
            path, _ = QFileDialog.getOpenFileName(self, "Target image", "", "Images (*.png *.jpg *.jpeg *.bmp)")
            if path:
                self.set_target_path(path)
        else:
            self.set_target_path(self._targets[index])

    # -- source and worker -----------------------------------------------------------------------
    def _source_chosen(self, index: int) -> None:
        if self.source_box.itemText(index) == VIDEO_ITEM:
            path, _ = QFileDialog.getOpenFileName(self, "Driving video", "", "Videos (*.mp4 *.avi *.mov *.mkv *.webm)"
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
        path, _ = QFileDialog.getSaveFileName(self, "Record the animated target", "motion.mp4", "MP4 video (*.mp4)")
        if path:
            self.start_recording(path)
        else:
            self.record_button.setChecked(False)

    def _update_buttons(self) -> None:
        running = self.worker is not None
        self.start_button.setEnabled(not running and self.target is not None)
        self.stop_button.setEnabled(running)
        self.source_box.setEnabled(not running)
        for w in (self.neutral_button, self.record_button):
            w.setEnabled(running)
        clicking = self._pending_image is not None
        self.use_clicks_button.setVisible(clicking)
        self.clear_clicks_button.setVisible(clicking)

    def shutdown(self) -> None:
        """Abort the worker without waiting; the window waits for it (``WorkerPool.shutdown``)."""
        self._end(wait_s=0.0)
