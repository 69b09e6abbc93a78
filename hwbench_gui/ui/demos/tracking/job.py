"""The Tracking page's job: detector → appearance → Deep SORT over a source on a worker thread; it
records MP4, keeps MOTChallenge rows and leaves the run's ``demo.track`` document."""

from __future__ import annotations

import threading
import time
import traceback
from datetime import datetime, timezone

from hwbench_gui.ui.demos.frames import MAX_FRAMES_IN_FLIGHT, to_qimage


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
        self._in_flight = 0  # frames sent to the view and not yet shown (see MAX_FRAMES_IN_FLIGHT)
        self.document: dict | None = None
        self._emit = None
        self._stop: threading.Event | None = None

    def set_recording(self, path: str | None) -> None:
        with self._lock:
            self._record_path = path

    def frame_shown(self) -> None:
        """The view has drawn a frame this job sent (GUI thread)."""
        with self._lock:
            self._in_flight = max(0, self._in_flight - 1)

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
            device = s.get("device", "cpu")
            options.update(cfg=s.get("cfg") or None, weights=s.get("weights") or None, device=device,
                           size=int(s.get("size", 416)))
            if device.startswith("cuda"):
                # what a careful engineer serves a detector with on a GPU: half precision, the network replayed as
                # one CUDA graph (an H100 tracks 83 frames/s so, 53 in FP32 launching each layer)
                options.update(precision="fp16", cuda_graph=True)
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
        from hwbench_gui.demos.machine_watch import MachineWatch

        watch = MachineWatch()  # how busy the machine is beside the run, for its document
        started_at, start = datetime.now(timezone.utc), time.perf_counter()
        stamps: list[float] = []
        frame_wh: list[int] = []
        try:
            with open_source(self.settings["source"], camera_size_wh=None) as src:
                pipeline.set_frame_rate(src.fps)
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
                    self.frames_done = result.index
                    stamps.append(time.perf_counter())
                    frame_wh[:] = [w, h]
                    with self._lock:  # a view that falls behind skips frames; they are tracked and counted all the same
                        send = self._in_flight < MAX_FRAMES_IN_FLIGHT
                        self._in_flight += send
                    if send:
                        self._emit(("frame", to_qimage(annotated), {
                            "index": result.index, "tracks": len(result.tracks), "detections": len(result.detections),
                            **{k.replace("_s", "_ms"): v * 1e3 for k, v in result.timing_s.items()}}))
                    pacer.wait(self._stop)
        finally:
            if writer:
                writer.close()
            telemetry = watch.finish()
            if stamps:
                self.document = self._document(detector, pipeline, stamps, start, started_at, frame_wh, telemetry)
        self._emit(("status", f"stopped after {self.frames_done} frames"))

    def _document(self, detector, pipeline, stamps, start, started_at, frame_wh, telemetry=None) -> dict:
        """The run's ``demo.track`` document, with the parameters ``hwbench demo track`` records."""
        from hwbench_gui.demos.results import demo_document, device_text, frame_times_from_stamps

        s = self.settings
        timing = pipeline.stats.summary()
        precision = getattr(detector, "precision", None) or "n/a"
        params = {"detector": s["detector"], "device": str(getattr(detector, "device", "cpu")), "precision": precision,
                  "size": int(s.get("size", 416)) if s["detector"] == "yolov3" else None,
                  "frame_wh": frame_wh or None, "appearance": bool(s.get("appearance", True)), "overlap": True,
                  "random_weights": bool(getattr(detector, "random_weights", False)),
                  "realtime": bool(s.get("realtime", True)),
                  **(detector.run_params() if hasattr(detector, "run_params") else {})}
        warnings = ["paced to the video's frame rate (Real time on): the FPS is at most the video's"] \
            if s.get("realtime", True) else []
        return demo_document(
            "track", params, frame_times_from_stamps(stamps, start), started_at=started_at,
            duration_s=stamps[-1] - start, device=device_text(getattr(detector, "device", "cpu")),
            precision=precision,
            stage_ms={k: timing[k] for k in ("detect_ms", "embed_ms", "associate_ms", "frame_ms") if k in timing},
            warnings=warnings, details={"source": str(s["source"]), "from": "GUI Tracking page"}, telemetry=telemetry)

