"""The Motion page's job: runs the motion-transfer pipeline on a worker thread, records MP4 and
leaves the run's ``demo.motion`` document."""

from __future__ import annotations

import collections
import threading
import time
import traceback
from datetime import datetime, timezone

import numpy as np

from hwbench_gui.demos.motion.targets import Target, TargetError
from hwbench_gui.ui.demos.frames import MAX_FRAMES_IN_FLIGHT, to_qimage


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
        self._shown = 0  # frames emitted but not yet painted (see MAX_FRAMES_IN_FLIGHT)
        self.pipeline = None

    def command(self, name: str, *args) -> None:
        """Queue ``name`` (set_neutral, set_roi, set_target, record, stop_recording) for the next frame."""
        with self._lock:
            self._commands.append((name, args))

    def frame_shown(self) -> None:
        with self._lock:
            self._shown = max(0, self._shown - 1)

    def run(self, control) -> None:  # on the worker thread: no widgets here
        from hwbench_gui.demos.motion.keypoints import FaceDetectorUnavailable
        from hwbench_gui.demos.motion.pipeline import ContinuityCounts, MotionPipeline, draw_driver
        from hwbench_gui.demos.video import DEFAULT_FPS, Mp4Writer, Pacer, SourceError, open_source

        emit = control.emit
        try:
            source = open_source(self.source_spec, loop=True)
        except SourceError as exc:
            emit(("failed", str(exc)))
            return
        recorder = None
        from hwbench_gui.demos.machine_watch import MachineWatch

        watch = MachineWatch()  # how busy the machine is beside the run, for its document
        started_at, start = datetime.now(timezone.utc), time.perf_counter()
        all_stamps: list[float] = []
        stage_ms: dict[str, list[float]] = collections.defaultdict(list)
        frame_wh: list[int] = []
        continuity = ContinuityCounts()
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
                continuity.add_result(result)
                stamps.append(time.perf_counter())
                all_stamps.append(stamps[-1])
                for k, v in result.timing_ms.items():
                    stage_ms[k].append(float(v))
                frame_wh[:] = [int(result.driver.shape[1]), int(result.driver.shape[0])]
                with self._lock:  # frame_shown() counts down on the GUI thread
                    send = self._shown < MAX_FRAMES_IN_FLIGHT
                    self._shown += send
                if send:
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
            telemetry = watch.finish()
            if all_stamps:
                emit(("document", self._document(source, all_stamps, start, started_at, stage_ms, frame_wh,
                                                 continuity.as_dict(), telemetry)))

    def _document(self, source, stamps, start, started_at, stage_ms, frame_wh, continuity: dict,
                  telemetry: dict | None = None) -> dict:
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
                     "from": "GUI Motion page", "continuity": continuity}, telemetry=telemetry)

