"""The Tracking page's figures: FPS (processing capacity and shown), per-frame stage times, GPU use."""

from __future__ import annotations

import time

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from hwbench_gui.ui.context import AppContext


class TrackingFigures(QWidget):
    """Three lines of figures; the GPU line follows the window's telemetry sampler once a second."""

    def __init__(self, context: AppContext | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.context = context
        self._frame_times: list[float] = []
        self.fps_label = QLabel("FPS: –")
        self.split_label = QLabel("per frame: –")
        self.gpu_label = QLabel("GPU: –")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for label in (self.fps_label, self.split_label, self.gpu_label):
            label.setWordWrap(True)
            layout.addWidget(label)
        self._gpu_timer = QTimer(self)
        self._gpu_timer.setInterval(1000)
        self._gpu_timer.timeout.connect(self.update_gpu)
        self._gpu_timer.start()
        self.update_gpu()

    def reset(self) -> None:
        """A new run: the shown FPS counts its frames only."""
        self._frame_times.clear()

    def show_frame(self, stats: dict) -> None:
        """``stats`` of one tracked frame, as a :class:`~.job.TrackJob` sends them."""
        now = time.perf_counter()
        self._frame_times.append(now)
        self._frame_times = [t for t in self._frame_times if now - t <= 2.0]
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

    def update_gpu(self) -> None:
        sampler = getattr(self.context, "sampler", None) if self.context else None
        if sampler is None:
            from hwbench_gui.engine import nvml

            reason = nvml.unavailable_reason()
            self.gpu_label.setText(f"no GPU: {nvml.plain_reason(reason)}" if reason
                                   else "GPU: telemetry sampler not running")
            self.gpu_label.setToolTip(reason or "")
            return
        if not sampler.gpu_count:
            from hwbench_gui.engine.nvml import plain_reason

            reason = sampler.gpu_unavailable_reason
            self.gpu_label.setText(f"no GPU: {plain_reason(reason) if reason else 'none found'}")
            self.gpu_label.setToolTip(reason or "")
            return
        sample = sampler.latest() or {}
        parts = []
        for i in range(sampler.gpu_count):
            util = sample.get(f"gpu{i}_util_percent")
            parts.append(f"GPU{i} {'–' if util is None else f'{util:.0f} %'}")
        self.gpu_label.setText("GPU utilisation: " + ", ".join(parts))

    def stop(self) -> None:
        self._gpu_timer.stop()
