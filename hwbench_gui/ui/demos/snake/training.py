"""The Snake page's training run: its worker body (no widgets: it runs on the worker's thread) and the
status lines it leads to."""

from __future__ import annotations

import threading
import time
from datetime import datetime, timezone


def train_job(control, config, pause: threading.Event, eval_episodes: int = 0,
              skip_eval: threading.Event | None = None):
    """Worker body: trains until done or aborted (Stop), then plays ``eval_episodes`` greedy games
    and emits ``("document", doc)``: the run's ``demo.snake`` result document (skipped when
    ``skip_eval`` is set: the window is closing). Progress goes out as ``("progress" | "episodes" |
    "frame", value)``. Returns the TrainResult."""
    from hwbench_gui.demos.snake.train import TrainCallbacks, evaluate, train

    def send(kind):
        return lambda value: control.emit((kind, value))

    callbacks = TrainCallbacks(progress=send("progress"), episodes=send("episodes"), frame=send("frame"),
                               progress_interval_s=0.5, frame_interval_s=0.05)
    result = train(config, callbacks, stop=control.abort_event, pause=pause)
    if eval_episodes > 0 and not (skip_eval is not None and skip_eval.is_set()):
        from hwbench_gui.demos.machine_watch import MachineWatch
        from hwbench_gui.demos.results import snake_eval_document

        watch = MachineWatch()
        started_at, start = datetime.now(timezone.utc), time.perf_counter()
        figures = evaluate(result.agent, eval_episodes, config.height, config.width)
        eval_s = time.perf_counter() - start
        telemetry = watch.finish()
        params = {"board": f"{config.height}x{config.width}", "episodes": eval_episodes, "device": config.device}
        control.emit(("document", snake_eval_document(
            figures, params, started_at=started_at, eval_s=eval_s, device=config.device,
            training={**result.stats, "from": "GUI Snake page"}, telemetry=telemetry)))
    return result


def describe_stats(stats: dict) -> str:
    """A checkpoint's training statistics in a few words."""
    parts = []
    if stats.get("elapsed_s") is not None:
        parts.append(f"trained {stats['elapsed_s'] / 60:.1f} min on {stats.get('device', '?')}")
    if stats.get("mean_score_last_100") is not None:
        parts.append(f"training mean score {stats['mean_score_last_100']:.1f}")
    return ", ".join(parts) or "no training statistics"


def progress_line(p: dict) -> str:
    """The status line of a running training, from one ``("progress", p)`` message."""
    mean = "–" if p["mean_score"] is None else f"{p['mean_score']:.1f}"
    rate = "–" if p["steps_per_s"] is None else f"{p['steps_per_s']:.0f}"
    state = "paused" if p["paused"] else "training"
    return (f"{state}: {p['elapsed_s']:.0f} s, {p['episodes']} episodes, mean score (last 100) "
            f"{mean}, best {p['best_score']}, epsilon {p['epsilon']:.3f}, {rate} moves/s")


def finished_line(stats: dict) -> str:
    """The status line once a training has returned (done, or stopped early)."""
    mean = stats.get("mean_score_last_100")
    return (f"Training {'stopped' if stats.get('stopped_early') else 'done'}: "
            f"{stats['episodes']} episodes in {stats['elapsed_s']:.0f} s, mean score "
            f"(last 100) {'–' if mean is None else f'{mean:.1f}'}. Watch agent plays it; Save… keeps it.")
