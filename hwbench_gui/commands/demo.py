"""``hwbench demo <name> …``: the demos, headless.

Each demo adds its own sub-command through one function in :data:`DEMOS` (snake now; motion and
track later). torch is imported only when a command runs, never while the parser is built.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import datetime, timezone
from typing import Callable

from hwbench_gui.commands import demo_motion, demo_track
from hwbench_gui.commands.argtypes import at_least, int_between, output_file, positive_at_most, positive_number
from hwbench_gui.demos.snake.game import MAX_SIDE, MIN_SIDE
from hwbench_gui.demos.snake.train import MAX_MINUTES


def _snake_train(args: argparse.Namespace) -> int:
    from hwbench_gui.demos.snake.checkpoint import save_checkpoint
    from hwbench_gui.demos.snake.train import TrainCallbacks, TrainConfig, evaluate, resolve_device, train

    try:
        resolve_device(args.device)
    except RuntimeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.eval_episodes > 0 and (problem := demo_track.result_folder_problem(args)):
        print(f"error: {problem}", file=sys.stderr)
        return 2
    config = TrainConfig(height=args.board, width=args.board, n_boards=args.boards, minutes=args.minutes,
                         device=args.device, seed=args.seed)
    next_print_s = [0.0]

    def progress(p: dict) -> None:
        if p["elapsed_s"] < next_print_s[0]:
            return
        next_print_s[0] += args.print_every_s
        mean = "-" if p["mean_score"] is None else f"{p['mean_score']:.1f}"
        loss = "-" if p["loss"] is None else f"{p['loss']:.4f}"
        rate = "-" if p["steps_per_s"] is None else f"{p['steps_per_s']:.0f}"
        print(f"{p['elapsed_s']:6.0f} s  episodes {p['episodes']:6d}  mean score (last 100) {mean:>5}  "
              f"best {p['best_score']:3d}  loss {loss}  epsilon {p['epsilon']:.3f}  moves/s {rate}", flush=True)

    result = train(config, TrainCallbacks(progress=progress))
    try:
        path = save_checkpoint(args.out, result.agent, height=args.board, width=args.board,
                               train_config=config.to_dict(), stats=result.stats)
    except OSError as exc:  # checked before training; the disk may still fill or the folder go away
        print(f"error: the checkpoint could not be written to {args.out}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(f"saved {path}: {result.stats['transitions']} moves, {result.stats['updates']} updates, "
          f"{result.stats['episodes']} episodes in {result.stats['elapsed_s']:.0f} s on {args.device}")
    if args.eval_episodes > 0:
        figures, eval_s, started_at = _timed_evaluate(evaluate, result.agent, args.eval_episodes, args.board,
                                                      args.board)
        _print_figures(figures, path)
        return _save_snake_result(args, figures, eval_s, started_at, path, result.stats)
    return 0


def _timed_evaluate(evaluate, agent, *args, **kwargs):
    """The evaluation's figures, wall time and start; ``figures["telemetry"]``: how busy the machine was."""
    from hwbench_gui.demos.machine_watch import MachineWatch

    watch = MachineWatch()
    started_at, start = datetime.now(timezone.utc), time.perf_counter()
    figures = evaluate(agent, *args, **kwargs)
    eval_s = time.perf_counter() - start
    return {**figures, "telemetry": watch.finish()}, eval_s, started_at


def _save_snake_result(args, figures: dict, eval_s: float, started_at, checkpoint, training: dict | None,
                       quiet: bool = False) -> int:
    """Write the evaluation's result document (unless --no-result); 2 when it cannot be written."""
    if args.no_result:
        return 0
    from hwbench_gui.demos.results import save_demo_document, snake_eval_document

    h, w = figures["board"]
    params = {"board": f"{h}x{w}", "episodes": figures["episodes"], "device": args.device}
    doc = snake_eval_document(figures, params, started_at=started_at, eval_s=eval_s, device=args.device,
                              training={"checkpoint": str(checkpoint), **(training or {})},
                              telemetry=figures.get("telemetry"))
    try:
        path = save_demo_document(doc, args.results_dir)
    except OSError as exc:
        print(f"error: cannot write the result document: {exc}", file=sys.stderr)
        return 2
    print(f"result → {path}", file=sys.stderr if quiet else sys.stdout)
    return 0


def _print_figures(figures: dict, path) -> None:
    h, w = figures["board"]
    print(f"greedy play, {figures['episodes']} games on {h}x{w} ({path}): mean {figures['mean']:.2f}  "
          f"median {figures['median']:.1f}  max {figures['max']}  (mean length {figures['mean_steps']:.0f} moves)")


def _snake_eval(args: argparse.Namespace) -> int:
    from hwbench_gui.demos.snake.checkpoint import CheckpointError, load_checkpoint, shipped_checkpoint
    from hwbench_gui.demos.snake.train import evaluate

    try:
        loaded = load_checkpoint(args.file or shipped_checkpoint(), device=args.device)
    except (CheckpointError, RuntimeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if problem := demo_track.result_folder_problem(args):
        print(f"error: {problem}", file=sys.stderr)
        return 2
    figures, eval_s, started_at = _timed_evaluate(evaluate, loaded.agent, args.episodes, loaded.height, loaded.width,
                                                  seed=args.seed)
    if args.json:
        json.dump({"checkpoint": loaded.path, "device": args.device, "training": loaded.stats, "eval_s": eval_s,
                   **figures}, sys.stdout, indent=2)
        print()
    else:
        _print_figures(figures, loaded.path)
    return _save_snake_result(args, figures, eval_s, started_at, loaded.path, loaded.stats, quiet=args.json)


def _add_snake(demos: argparse._SubParsersAction) -> None:
    snake = demos.add_parser("snake", help="DQN snake: train a model, evaluate greedy play")
    actions = snake.add_subparsers(dest="snake_command", metavar="ACTION")
    snake.set_defaults(handler=lambda args: (snake.print_help(), 2)[1])

    train = actions.add_parser("train", help="train from scratch for a wall-clock budget and save a checkpoint")
    train.add_argument("--minutes", type=positive_at_most(MAX_MINUTES), default=10.0,
                       help=f"training time, paused time excluded (default 10, at most {MAX_MINUTES:g})")
    train.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N (default cpu)")
    train.add_argument("--board", type=int_between(MIN_SIDE, MAX_SIDE), default=12,
                       help=f"board side in cells, {MIN_SIDE} to {MAX_SIDE} (default 12)")
    train.add_argument("--boards", type=int_between(1, 4096), default=64, help="boards stepped together (default 64)")
    train.add_argument("--seed", type=int, default=0)
    train.add_argument("--out", required=True, type=output_file, help="checkpoint file to write")
    train.add_argument("--eval-episodes", type=at_least(0), default=100, help="greedy games after training (0: none)")
    train.add_argument("--print-every-s", type=positive_number, default=10.0, help=argparse.SUPPRESS)
    demo_track.add_result_arguments(train)
    train.set_defaults(handler=_snake_train)

    ev = actions.add_parser("eval", help="play greedy games with a checkpoint: mean, median and max score")
    ev.add_argument("file", nargs="?", help="checkpoint (default: the one shipped in resources/snake/)")
    ev.add_argument("--episodes", type=at_least(1), default=100, help="greedy games to play (default 100)")
    ev.add_argument("--device", default="cpu")
    ev.add_argument("--seed", type=int, default=12345, help="seed of the games' food")
    ev.add_argument("--json", action="store_true", help="print the figures and every score as JSON")
    demo_track.add_result_arguments(ev)
    ev.set_defaults(handler=_snake_eval)


#: One entry per demo: name → function adding its sub-command to ``hwbench demo``.
DEMOS: dict[str, Callable[[argparse._SubParsersAction], None]] = {
    "snake": _add_snake,
    "motion": demo_motion.add_parser,
    "track": demo_track.add_parser,
}


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("demo", help="run the demos headless (snake, motion, track)")
    demos = parser.add_subparsers(dest="demo", metavar="DEMO")
    parser.set_defaults(handler=lambda args: (parser.print_help(), 2)[1])
    for add in DEMOS.values():
        add(demos)
