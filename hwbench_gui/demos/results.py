"""A demo run as a result document, so Reports compare demo speed across machines and CPU vs GPU.

The document is the one benchmarks produce (``hwbench_gui.engine.results``), built from what a
demo measured: the figure is end-to-end frames per second (higher is better), its samples the
frame rate of each window of ``window`` frames (so the document has a spread); ``params`` hold what
changes the speed (detector, precision, sizes) and what the device was; ``details`` the per-stage
milliseconds and, for tracking with ground truth, MOTA / IDF1 / ID switches. The snake demo's
document (:func:`snake_eval_document`) is its greedy evaluation: the figure is the score per game,
its samples every game's score, and the moves per second of the evaluation beside it. Qt-free: the
CLI and the demo pages build the same documents.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any, Sequence

import numpy as np


@dataclass(frozen=True)
class DemoBenchmark:
    """What a result document names of the run's benchmark (the fields of a benchmark declaration
    that ``build_document`` reads)."""

    id: str
    title: str
    category: str = "demo"
    version: str = "1"
    deciding_params: tuple[str, ...] = ()

    def comparability_params(self) -> list[str]:
        """The parameters two runs must agree on to be compared (all but where it ran)."""
        return list(self.deciding_params)


DEMOS = {
    "track": DemoBenchmark("demo.track", "Tracking demo: detector + Deep SORT, end to end"),
    "motion": DemoBenchmark("demo.motion", "Motion transfer demo: keypoints + warp, end to end"),
    "snake": DemoBenchmark("demo.snake", "Snake DQN demo"),
}

FIGURE_NAME = "end-to-end FPS"
#: Parameters that say where a demo ran, not what it measured: CPU and GPU runs compare.
WHERE_PARAMS = frozenset({"device"})
#: Tracking metrics copied into ``figures`` (all higher is better except ID switches).
METRIC_FIGURES = {"MOTA": True, "IDF1": True, "HOTA": True, "IDSW": False}


def window_fps(frame_times_s: Sequence[float], window: int = 30) -> list[float]:
    """Frames per second of each run of ``window`` consecutive frames (``frame_times_s``: what each
    frame cost end to end, in seconds). A last window shorter than half of ``window`` is dropped;
    fewer frames than that give one window of all of them."""
    t = np.asarray(frame_times_s, np.float64)
    if t.size == 0:
        return []
    chunks = [t[i:i + window] for i in range(0, t.size, window)]
    if len(chunks) > 1 and chunks[-1].size < window / 2:
        chunks = chunks[:-1]
    return [float(c.size / c.sum()) for c in chunks if c.sum() > 0]


def frame_times_from_stamps(stamps_s: Sequence[float], start_s: float) -> list[float]:
    """Per-frame end-to-end times from the moments each frame was done (``perf_counter``), the
    first measured from ``start_s``."""
    return list(np.diff(np.concatenate([[start_s], np.asarray(stamps_s, np.float64)])))


def demo_document(demo: str, params: dict[str, Any], frame_times_s: Sequence[float], *, started_at: datetime,
                  duration_s: float, device: str, precision: str = "n/a", stage_ms: dict[str, Any] | None = None,
                  metrics: dict[str, Any] | None = None, details: dict[str, Any] | None = None,
                  method: str = "", warnings: Sequence[str] = (), window: int = 30,
                  status: str = "ok", reason: str | None = None,
                  telemetry: dict[str, Any] | None = None) -> dict[str, Any]:
    """The result document of one demo run (``demo``: a key of :data:`DEMOS`).

    ``params`` should name the device (``device``, which comparisons ignore, so CPU and GPU runs of
    the same settings line up) and everything that changes the speed. A run with no frames is
    "failed" (build_document's rule: no valid samples). ``telemetry`` is the run's summary
    (:class:`~hwbench_gui.demos.machine_watch.MachineWatch`): a busy machine's run carries the warning a
    benchmark's does.
    """
    from hwbench_gui.engine.results import build_document

    if demo not in DEMOS:
        raise ValueError(f"unknown demo {demo!r}; choose from {', '.join(DEMOS)}")
    samples = window_fps(frame_times_s, window)
    figures = {}
    for name, higher in METRIC_FIGURES.items():
        if metrics and metrics.get(name) is not None:
            figures[name] = {"value": float(metrics[name]), "unit": "" if name != "IDSW" else "switches",
                             "higher_is_better": higher}
    n = len(frame_times_s)
    outcome = {
        "figure_name": FIGURE_NAME, "unit": "frames/s", "samples": samples, "higher_is_better": True,
        "precision": precision, "device": device, "figures": figures,
        "method": method or (f"{n} frames; each sample is the frame rate of {window} consecutive frames "
                             "(the whole frame: read, process, draw, write); the figure is their median"),
        "details": {"frames": n, "window_frames": window, "stage_ms": stage_ms or {}, "metrics": metrics,
                    **(details or {})},
        "warnings": _with_busy(warnings, telemetry),
    }
    bench = replace(DEMOS[demo], deciding_params=tuple(k for k in params if k not in WHERE_PARAMS))
    return build_document(bench, params, status=status, reason=reason, started_at=started_at,
                          duration_s=duration_s, outcome=outcome, **_telemetry(telemetry))


def _with_busy(warnings: Sequence[str], telemetry: dict[str, Any] | None) -> list[str]:
    from hwbench_gui.engine.telemetry.summary import busy_warning

    busy = busy_warning(telemetry)
    return list(warnings) + ([busy] if busy else [])


def _telemetry(telemetry: dict[str, Any] | None) -> dict[str, Any]:
    if telemetry is None:
        return {"telemetry_reason": "the machine was not sampled during this demo run"}
    return {"telemetry": telemetry, "telemetry_reason": "sampled beside the demo, which runs in this process"}


SNAKE_FIGURE_NAME = "score per greedy game"


def snake_eval_document(figures: dict[str, Any], params: dict[str, Any], *, started_at: datetime, eval_s: float,
                        device: str, training: dict[str, Any] | None = None,
                        warnings: Sequence[str] = (), telemetry: dict[str, Any] | None = None) -> dict[str, Any]:
    """The result document of a snake evaluation (``figures``: what ``snake.train.evaluate`` returns).

    The headline is the score per game (samples: each game's score, so the document's value is
    their median and comparisons test the games); ``figures`` hold the mean score and the moves
    per second of the evaluation (all games' moves over ``eval_s``, the games stepped together).
    ``params`` should name the board and the device; ``training``: the checkpoint's training stats.
    """
    from hwbench_gui.engine.results import build_document
    from hwbench_gui.engine.spec.precision import FP32

    scores = [int(s) for s in figures.get("scores") or []]
    moves = float(figures.get("mean_steps", 0.0)) * len(scores)
    extra = {"mean score": {"value": float(figures["mean"]), "unit": "points", "higher_is_better": True}} \
        if scores else {}
    if scores and eval_s > 0:
        extra["moves/s"] = {"value": moves / eval_s, "unit": "moves/s", "higher_is_better": True}
    outcome = {
        "figure_name": SNAKE_FIGURE_NAME, "unit": "points", "samples": scores, "higher_is_better": True,
        "precision": FP32.label, "device": device, "figures": extra,
        "method": (f"greedy play of {len(scores)} games at once (food seed {figures.get('seed')}); each sample is "
                   "one game's score, the figure their median; moves/s: all games' moves over the evaluation's "
                   "wall time"),
        "details": {"board": figures.get("board"), "episodes": len(scores), "mean": figures.get("mean"),
                    "max": figures.get("max"), "mean_steps": figures.get("mean_steps"), "eval_s": eval_s,
                    "training": training},
        "warnings": _with_busy(warnings, telemetry),
    }
    bench = replace(DEMOS["snake"], deciding_params=tuple(k for k in params if k not in WHERE_PARAMS))
    return build_document(bench, params, status="ok", started_at=started_at, duration_s=eval_s, outcome=outcome,
                          **_telemetry(telemetry))


def save_demo_document(doc: dict[str, Any], directory: str | os.PathLike | None = None) -> Path:
    """Write ``doc`` atomically into ``directory`` (else $HWBENCH_RESULTS_DIR, else the user data folder)."""
    from hwbench_gui.engine.results import write_result

    return write_result(doc, directory)


def save_run_document(doc: dict[str, Any], directory: str | os.PathLike | None) -> tuple[Path | None, str]:
    """For the demo pages: write ``doc`` like :func:`save_demo_document` and say so in one line.

    Returns (path, "result saved: …") or, when it cannot be written, (None, "result not saved: why"):
    a page shows the line; a full disk or a read-only folder must not end the app.
    """
    try:
        path = save_demo_document(doc, directory)
    except (OSError, ValueError, TypeError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return None, f"result not saved: {reason}"
    return path, f"result saved: {path}"


def device_text(device) -> str:
    """``cpu`` or ``cuda:0 (NVIDIA H200)``."""
    text = str(device)
    if text.startswith("cuda"):
        try:
            import torch

            return f"{text} ({torch.cuda.get_device_name(torch.device(text))})"
        except Exception:  # a name is nice to have; the device string is what matters
            return text
    return text
