"""Train and evaluate a snake agent; no Qt, progress through plain callbacks.

``train`` runs on whatever thread calls it (the GUI runs it on a worker thread, the CLI on the
main one); it checks ``stop`` and ``pause`` (``threading.Event``) between steps. torch is imported
when training starts, not when this module is imported.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

import numpy as np

from hwbench_gui.demos.snake.game import SnakeBoards, relative_to_absolute
from hwbench_gui.demos.snake.observation import CHANNELS, FEATURES, grid_side, observe


#: Longest training budget: a week. Beyond it the clock arithmetic of the budget loses its meaning
#: (1e300 minutes), and no demo run is meant to last longer.
MAX_MINUTES = 7 * 24 * 60.0


@dataclass
class TrainConfig:
    """Everything a training run depends on (stored with the checkpoint)."""

    height: int = 12
    width: int = 12
    n_boards: int = 64
    minutes: float | None = 10.0  # wall-clock budget, paused time excluded; None: only max_transitions
    max_transitions: int | None = None  # board moves in total (n_boards per step)
    device: str = "cpu"
    seed: int | None = 0
    replay_rows: int = 3000  # capacity = replay_rows × n_boards transitions
    learn_start: int = 20_000  # transitions before the first update
    updates_per_step: int = 1
    eps_start: float = 1.0
    eps_end: float = 0.01
    eps_decay_fraction: float = 0.3  # of the budget (time or transitions, whichever runs out first)
    starve_steps: int | None = None  # see SnakeBoards
    lr: float = 5e-4
    gamma: float = 0.97
    n_step: int = 3
    batch: int = 512
    tau: float = 0.005
    model_kind: str = "mlp"
    hidden: int = 256
    # CPU only; None: torch's default (all cores). One thread, because this net is small enough that
    # thread hand-offs cost more than they give, and on a busy machine far more (measured on a loaded
    # 2-core box: 50 ms per update with 1 thread, 270 ms with 2).
    torch_threads: int | None = 1

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class TrainCallbacks:
    """Plain callables, all optional, called on the training thread.

    ``progress(dict)`` about every ``progress_interval_s``: elapsed_s, transitions, updates,
    episodes, mean_score (last 100 episodes, None before the first), best_score, loss (None before
    learning starts), epsilon, steps_per_s (board moves per second), paused.
    ``episodes(list[(episode_index, score, steps)])`` with every finished episode, batched.
    ``frame(dict)`` with a snapshot of training board 0 (see :func:`board_snapshot`) at most every
    ``frame_interval_s``.
    """

    progress: Callable[[dict], None] | None = None
    episodes: Callable[[list[tuple[int, int, int]]], None] | None = None
    frame: Callable[[dict], None] | None = None
    progress_interval_s: float = 1.0
    frame_interval_s: float = 0.05


@dataclass
class TrainResult:
    agent: Any
    config: TrainConfig
    stats: dict = field(default_factory=dict)
    #: (elapsed_s, score) of every finished training episode, for learning curves.
    history: list[tuple[float, int]] = field(default_factory=list)


def board_snapshot(boards: SnakeBoards, i: int = 0) -> dict:
    """A copy of board ``i`` that another thread may keep: body ages, head, food, score…"""
    return {"height": boards.height, "width": boards.width, "body": boards.body[i].copy(),
            "head": tuple(int(v) for v in boards.head[i]), "food": tuple(int(v) for v in boards.food[i]),
            "direction": int(boards.direction[i]), "score": int(boards.score[i]),
            "steps": int(boards.steps[i]), "finished": bool(boards.finished[i])}


def make_agent(config: TrainConfig):
    from hwbench_gui.demos.snake.agent import AgentConfig, DQNAgent, ModelConfig

    model = ModelConfig(side=grid_side(config.height, config.width), channels=CHANNELS, features=FEATURES,
                        hidden=config.hidden, kind=config.model_kind)
    agent_cfg = AgentConfig(lr=config.lr, gamma=config.gamma, n_step=config.n_step, batch=config.batch,
                            tau=config.tau, model=model)
    return DQNAgent(agent_cfg, device=resolve_device(config.device), seed=config.seed)


def resolve_device(device: str) -> str:
    """``device`` if torch can use it; a clear error for CUDA without a GPU (never a silent fallback)."""
    import torch

    try:
        torch.device(device)
    except (RuntimeError, TypeError):
        raise RuntimeError(f"unknown device {device!r} (use cpu, cuda or cuda:N)") from None
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise RuntimeError(f"device {device!r} requested but torch.cuda.is_available() is False "
                           f"(torch {torch.__version__}, CUDA build {torch.version.cuda})")
    return device


def train(config: TrainConfig, callbacks: TrainCallbacks | None = None, *, stop: threading.Event | None = None,
          pause: threading.Event | None = None, agent=None) -> TrainResult:
    """Train (or keep training ``agent``) until the budget runs out or ``stop`` is set."""
    import torch

    from hwbench_gui.demos.snake.agent import Replay

    if config.minutes is None and config.max_transitions is None and stop is None:
        raise ValueError("no budget: give minutes, max_transitions or a stop event")
    if config.minutes is not None and not 0 < config.minutes <= MAX_MINUTES:
        raise ValueError(f"minutes must be above 0 and at most {MAX_MINUTES:g} (a week), got {config.minutes:g}")
    cb = callbacks or TrainCallbacks()
    if config.torch_threads and not config.device.startswith("cuda"):
        torch.set_num_threads(config.torch_threads)
    agent = agent or make_agent(config)
    boards = SnakeBoards(config.n_boards, config.height, config.width, seed=config.seed,
                         starve_steps=config.starve_steps)
    side = grid_side(config.height, config.width)
    replay = Replay(config.replay_rows, config.n_boards, (CHANNELS, side, side), FEATURES)

    budget_s = None if config.minutes is None else config.minutes * 60.0
    history: list[tuple[float, int]] = []
    recent: deque[int] = deque(maxlen=100)
    best = 0
    transitions = episodes = 0
    losses: list[torch.Tensor] = []
    last_loss: float | None = None
    active_s = 0.0
    tick = time.perf_counter()
    last_progress = last_frame = -1e9
    window_start, window_transitions = 0.0, 0
    epsilon = config.eps_start

    def elapsed_fraction() -> float:
        parts = [0.0]
        if budget_s:
            parts.append(active_s / budget_s)
        if config.max_transitions:
            parts.append(transitions / config.max_transitions)
        return max(parts)

    def report(paused: bool = False) -> None:
        nonlocal last_loss, losses, window_start, window_transitions
        if losses:
            last_loss = float(torch.stack(losses).mean())
            losses = []
        span = active_s - window_start
        rate = (transitions - window_transitions) / span if span > 0 else None
        window_start, window_transitions = active_s, transitions
        if cb.progress:
            cb.progress({"elapsed_s": active_s, "transitions": transitions, "updates": agent.updates,
                         "episodes": episodes, "mean_score": float(np.mean(recent)) if recent else None,
                         "best_score": best, "loss": last_loss, "epsilon": epsilon, "steps_per_s": rate,
                         "paused": paused})

    grid, feats = observe(boards)
    while True:
        if stop is not None and stop.is_set():
            break
        if pause is not None and pause.is_set():
            report(paused=True)
            while pause.is_set() and not (stop is not None and stop.is_set()):
                time.sleep(0.05)
            tick = time.perf_counter()
            continue
        frac = elapsed_fraction()
        if frac >= 1.0:
            break
        epsilon = max(config.eps_end, config.eps_start - (config.eps_start - config.eps_end)
                      * frac / max(config.eps_decay_fraction, 1e-9))
        relative = agent.act(grid, feats, epsilon)
        result = boards.step(relative_to_absolute(boards.direction, relative))
        replay.add(grid, feats, relative, result.reward, result.done)
        grid, feats = observe(boards)
        transitions += config.n_boards
        if transitions >= config.learn_start and replay.size > config.n_step + 1:
            for _ in range(config.updates_per_step):
                losses.append(agent.learn(replay))

        now = time.perf_counter()
        active_s += now - tick
        tick = now
        if result.done.any():
            finished = []
            for i in np.flatnonzero(result.done):
                score = int(result.final_score[i])
                finished.append((episodes, score, int(result.final_steps[i])))
                history.append((active_s, score))
                recent.append(score)
                best = max(best, score)
                episodes += 1
            if cb.episodes:
                cb.episodes(finished)
        if cb.frame and active_s - last_frame >= cb.frame_interval_s:
            last_frame = active_s
            cb.frame(board_snapshot(boards, 0))
        if active_s - last_progress >= cb.progress_interval_s:
            last_progress = active_s
            report()
    report()
    stats = {"elapsed_s": active_s, "transitions": transitions, "updates": agent.updates, "episodes": episodes,
             "mean_score_last_100": float(np.mean(recent)) if recent else None, "best_score": best,
             "device": config.device, "stopped_early": bool(stop is not None and stop.is_set())}
    return TrainResult(agent=agent, config=config, stats=stats, history=history)


def play_greedy(agent, boards: SnakeBoards) -> np.ndarray:
    """One greedy move on every board (absolute directions), for watching and evaluation."""
    grid, feats = observe(boards)
    return relative_to_absolute(boards.direction, agent.act(grid, feats, 0.0))


def evaluate(agent, episodes: int = 100, height: int = 12, width: int = 12, *, seed: int | None = 12345,
             starve_steps: int | None = None) -> dict:
    """Greedy play of ``episodes`` games at once; scores with mean, median, max and mean length."""
    boards = SnakeBoards(episodes, height, width, seed=seed, starve_steps=starve_steps, auto_reset=False)
    scores = np.full(episodes, -1, dtype=np.int64)
    steps = np.zeros(episodes, dtype=np.int64)
    # The starvation limit ends every game; the cap only guards against starve_steps=0.
    for _ in range(boards.cells * boards.cells * 4):
        if boards.finished.all():
            break
        result = boards.step(play_greedy(agent, boards))
        scores = np.where(result.done, result.final_score, scores)
        steps = np.where(result.done, result.final_steps, steps)
    unfinished = ~boards.finished
    scores[unfinished] = boards.score[unfinished]
    steps[unfinished] = boards.steps[unfinished]
    return {"episodes": episodes, "board": [height, width], "mean": float(scores.mean()),
            "median": float(np.median(scores)), "max": int(scores.max()), "min": int(scores.min()),
            "mean_steps": float(steps.mean()), "scores": scores.tolist(), "seed": seed}
