"""Train a DQN snake from scratch for a fixed wall-clock budget, then evaluate greedy play.

Goal on 12×12 (the seed report: 4 h, best score 8): mean score ≥ 16 over 100 greedy games after at
most 15 minutes on 2 CPU cores. Prints the learning curve (mean training score per minute, with
exploration), the machine's load, and the final greedy figures; saves the checkpoint.

    python scripts/snake_train_eval.py [--minutes 15] [--device cpu|cuda] [--board 12]
                                       [--episodes 100] [--out snake_trained.pt] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hwbench_gui.demos.snake.checkpoint import load_checkpoint, save_checkpoint  # noqa: E402
from hwbench_gui.demos.snake.train import TrainCallbacks, TrainConfig, evaluate, train  # noqa: E402


def learning_curve(history: list[tuple[float, int]]) -> list[dict]:
    """Mean training score of the episodes that ended in each minute."""
    buckets: dict[int, list[int]] = {}
    for elapsed_s, score in history:
        buckets.setdefault(int(elapsed_s // 60), []).append(score)
    return [{"minute": m + 1, "episodes": len(s), "mean_score": sum(s) / len(s)} for m, s in sorted(buckets.items())]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=15.0)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--board", type=int, default=12)
    parser.add_argument("--boards", type=int, default=64, help="boards stepped together")
    parser.add_argument("--episodes", type=int, default=100, help="greedy evaluation games")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="snake_trained.pt")
    parser.add_argument("--json", help="also write the figures to this JSON file")
    args = parser.parse_args(argv)

    load_before = os.getloadavg()
    print(f"cpus: {os.cpu_count()}  load average (1/5/15 min) before: {load_before[0]:.2f} "
          f"{load_before[1]:.2f} {load_before[2]:.2f}")
    config = TrainConfig(height=args.board, width=args.board, n_boards=args.boards, minutes=args.minutes,
                         device=args.device, seed=args.seed)
    loads: list[float] = []
    next_print_s = [0.0]

    def progress(p: dict) -> None:
        if p["elapsed_s"] >= next_print_s[0]:
            next_print_s[0] += 30.0
            loads.append(os.getloadavg()[0])
            mean = "-" if p["mean_score"] is None else f"{p['mean_score']:.1f}"
            loss = "-" if p["loss"] is None else f"{p['loss']:.4f}"
            rate = "-" if p["steps_per_s"] is None else f"{p['steps_per_s']:.0f}"
            print(f"  {p['elapsed_s']:6.0f} s  episodes {p['episodes']:6d}  mean100 {mean:>5}  "
                  f"best {p['best_score']:3d}"
                  f"  loss {loss}  eps {p['epsilon']:.3f}  moves/s {rate}", flush=True)

    started = time.perf_counter()
    result = train(config, TrainCallbacks(progress=progress))
    wall_s = time.perf_counter() - started
    path = save_checkpoint(args.out, result.agent, height=args.board, width=args.board,
                           train_config=config.to_dict(), stats=result.stats)
    curve = learning_curve(result.history)
    print("\nlearning curve (training episodes, with exploration):")
    for row in curve:
        print(f"  minute {row['minute']:3d}: mean score {row['mean_score']:6.2f}  ({row['episodes']} episodes)")

    # Evaluate the saved file, not the object in memory: that is what ships.
    loaded = load_checkpoint(path)
    figures = evaluate(loaded.agent, args.episodes, args.board, args.board)
    load_after = os.getloadavg()
    print(f"\ntrained {result.stats['elapsed_s']:.0f} s ({wall_s:.0f} s wall), {result.stats['transitions']} moves, "
          f"{result.stats['updates']} updates, {result.stats['episodes']} episodes on {args.device}")
    print(f"greedy evaluation, {args.episodes} games on {args.board}x{args.board}: mean {figures['mean']:.2f}  "
          f"median {figures['median']:.1f}  max {figures['max']}  min {figures['min']}  "
          f"mean length {figures['mean_steps']:.0f} moves")
    print(f"goal mean >= 16: {'MET' if figures['mean'] >= 16 else 'NOT met'}")
    print(f"load average during training (1 min, sampled every 30 s): "
          f"min {min(loads, default=float('nan')):.2f} max {max(loads, default=float('nan')):.2f}; "
          f"after: {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}")
    print(f"checkpoint: {path} ({path.stat().st_size / 1e6:.2f} MB)")
    if args.json:
        Path(args.json).write_text(json.dumps({"config": config.to_dict(), "stats": result.stats, "curve": curve,
                                               "evaluation": figures, "load_before": load_before,
                                               "load_samples": loads, "load_after": load_after}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
