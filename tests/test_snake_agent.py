"""DQN snake: a short run learns, checkpoints round-trip, bad files fail clearly, stop is honoured."""

from __future__ import annotations

import threading

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from hwbench_gui.demos.snake.checkpoint import CheckpointError, load_checkpoint, save_checkpoint  # noqa: E402
from hwbench_gui.demos.snake.game import SnakeBoards  # noqa: E402
from hwbench_gui.demos.snake.observation import observe  # noqa: E402
from hwbench_gui.demos.snake.train import TrainCallbacks, TrainConfig, evaluate, make_agent, train  # noqa: E402


def _small_config(**overrides) -> TrainConfig:
    base = dict(height=6, width=6, n_boards=32, minutes=None, max_transitions=40_000, learn_start=1_000, batch=128,
                hidden=64, replay_rows=1_000, eps_decay_fraction=0.5, lr=1e-3, seed=0)
    return TrainConfig(**{**base, **overrides})


class RandomPolicy:
    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, grid, feats, epsilon=0.0):
        return self.rng.integers(0, 3, grid.shape[0])


def test_short_training_beats_random_play():
    episodes = []
    progress = []
    result = train(_small_config(), TrainCallbacks(progress=progress.append, episodes=episodes.extend,
                                                   progress_interval_s=0.5))
    assert result.stats["transitions"] == 40_000 and result.stats["updates"] > 0
    assert episodes and progress and progress[-1]["loss"] is not None
    trained = evaluate(result.agent, 100, 6, 6, seed=7)
    random = evaluate(RandomPolicy(0), 100, 6, 6, seed=7)
    print(f"6x6, 100 games: trained mean {trained['mean']:.2f} ({trained['mean_steps']:.0f} moves), "
          f"random mean {random['mean']:.2f} ({random['mean_steps']:.0f} moves)")
    assert trained["mean"] >= random["mean"] + 2.0
    assert trained["mean_steps"] > random["mean_steps"]


def test_stop_event_ends_training_early():
    stop = threading.Event()

    def on_progress(p):
        if p["transitions"] > 0:
            stop.set()

    result = train(_small_config(max_transitions=10_000_000), TrainCallbacks(progress=on_progress,
                                                                            progress_interval_s=0.0), stop=stop)
    assert result.stats["stopped_early"] and result.stats["transitions"] < 10_000_000


def test_checkpoint_round_trip_gives_the_same_moves(tmp_path):
    config = _small_config()
    agent = make_agent(config)
    path = save_checkpoint(tmp_path / "a.pt", agent, height=6, width=6, train_config=config.to_dict(),
                           stats={"episodes": 3, "mean_score_last_100": np.float64(1.5)})
    loaded = load_checkpoint(path)
    assert (loaded.height, loaded.width) == (6, 6)
    assert loaded.stats["mean_score_last_100"] == 1.5 and loaded.train_config["n_boards"] == 32
    boards = SnakeBoards(16, 6, 6, seed=4)
    for _ in range(5):
        boards.step(np.random.default_rng(1).integers(0, 4, 16))
    grid, feats = observe(boards)
    np.testing.assert_allclose(loaded.agent.q_values(grid, feats), agent.q_values(grid, feats), rtol=1e-6)
    assert (loaded.agent.act(grid, feats) == agent.act(grid, feats)).all()


def test_bad_files_raise_checkpoint_error(tmp_path):
    agent = make_agent(_small_config())
    good = save_checkpoint(tmp_path / "good.pt", agent, height=6, width=6)
    truncated = tmp_path / "truncated.pt"
    truncated.write_bytes(good.read_bytes()[:2000])
    text = tmp_path / "notes.pt"
    text.write_text("hello")
    other = tmp_path / "other.pt"
    torch.save({"weights": torch.zeros(3)}, other)
    pickled = tmp_path / "pickled.pt"
    torch.save({"format": "hwbench-snake", "obj": threading.Lock}, pickled)
    newer = tmp_path / "newer.pt"
    payload = torch.load(good, weights_only=True)
    torch.save({**payload, "format_version": 99}, newer)
    misfit = tmp_path / "misfit.pt"
    torch.save({**payload, "model_config": {**payload["model_config"], "hidden": 32}}, misfit)

    cases = {tmp_path / "missing.pt": "No such file", truncated: "not a readable", text: "not a readable",
             other: "not a hwbench snake checkpoint", pickled: "not a readable", newer: "format version 99",
             misfit: "do not fit"}
    for path, reason in cases.items():
        with pytest.raises(CheckpointError) as info:
            load_checkpoint(path)
        assert str(path) in str(info.value) and reason in info.value.reason, (path, info.value)
