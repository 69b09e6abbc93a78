"""The DQN agent: a dueling Q-network, Double DQN targets over n-step returns, replay, a target net.

Imports torch at module level: only code that trains or loads a model imports this module.
Actions are relative to the snake's heading (0 straight, 1 left, 2 right), see ``observation``.
"""

from __future__ import annotations

import copy
from dataclasses import asdict, dataclass, field

import numpy as np
import torch
from torch import nn

ACTIONS = 3


@dataclass
class ModelConfig:
    """Shape of the Q-network; stored in checkpoints so a model is rebuilt without guessing."""

    side: int = 12
    channels: int = 4
    features: int = 12
    hidden: int = 256
    kind: str = "mlp"  # "mlp": the grid flattened; "cnn": two small convolutions first

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "ModelConfig":
        known = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        return cls(**known)


class QNet(nn.Module):
    """Grid + features → trunk → dueling head: Q = V + A − mean(A)."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        if cfg.kind == "cnn":
            self.grid = nn.Sequential(
                nn.Conv2d(cfg.channels, 16, 3, padding=1), nn.ReLU(),
                nn.Conv2d(16, 32, 3, padding=1, stride=2), nn.ReLU(), nn.Flatten())
            grid_out = 32 * ((cfg.side + 1) // 2) ** 2
        elif cfg.kind == "mlp":
            self.grid = nn.Flatten()
            grid_out = cfg.channels * cfg.side * cfg.side
        else:
            raise ValueError(f"unknown model kind {cfg.kind!r} (mlp or cnn)")
        self.trunk = nn.Sequential(nn.Linear(grid_out + cfg.features, cfg.hidden), nn.ReLU(),
                                   nn.Linear(cfg.hidden, cfg.hidden), nn.ReLU())
        self.value = nn.Linear(cfg.hidden, 1)
        self.advantage = nn.Linear(cfg.hidden, ACTIONS)

    def forward(self, grid: torch.Tensor, feats: torch.Tensor) -> torch.Tensor:
        h = self.trunk(torch.cat([self.grid(grid), feats], dim=1))
        adv = self.advantage(h)
        return self.value(h) + adv - adv.mean(dim=1, keepdim=True)


class Replay:
    """Time-major ring of transitions from ``n_boards`` boards stepped together.

    Row ``t`` holds, for every board, the observation before the move, the move, its reward and
    whether the episode ended. n-step returns are built at sampling time by looking ``n`` rows
    ahead and stopping at the first ``done`` (a finished board restarts in the next row).
    """

    def __init__(self, rows: int, n_boards: int, grid_shape: tuple, n_features: int) -> None:
        self.rows, self.n_boards = rows, n_boards
        self.grid = np.zeros((rows, n_boards, *grid_shape), dtype=np.float16)
        self.feats = np.zeros((rows, n_boards, n_features), dtype=np.float16)
        self.action = np.zeros((rows, n_boards), dtype=np.int64)
        self.reward = np.zeros((rows, n_boards), dtype=np.float32)
        self.done = np.zeros((rows, n_boards), dtype=bool)
        self.pos = 0
        self.size = 0

    def add(self, grid, feats, action, reward, done) -> None:
        p = self.pos
        self.grid[p], self.feats[p], self.action[p] = grid, feats, action
        self.reward[p], self.done[p] = reward, done
        self.pos = (p + 1) % self.rows
        self.size = min(self.size + 1, self.rows)

    def __len__(self) -> int:
        return max(self.size - 1, 0) * self.n_boards

    def sample(self, batch: int, n_step: int, gamma: float, rng: np.random.Generator):
        """``(grid, feats, action, n-step return, bootstrap discount, next grid, next feats)`` arrays."""
        usable = self.size - n_step
        if usable <= 0:
            raise ValueError("replay holds fewer rows than n_step")
        offset = rng.integers(0, usable, batch)
        board = rng.integers(0, self.n_boards, batch)
        t = (self.pos - self.size + offset) % self.rows
        ret = np.zeros(batch, dtype=np.float32)
        alive = np.ones(batch, dtype=np.float32)
        for k in range(n_step):
            row = (t + k) % self.rows
            ret += alive * (gamma ** k) * self.reward[row, board]
            alive *= 1.0 - self.done[row, board]
        nxt = (t + n_step) % self.rows
        return (self.grid[t, board], self.feats[t, board], self.action[t, board], ret,
                alive * gamma ** n_step, self.grid[nxt, board], self.feats[nxt, board])


@dataclass
class AgentConfig:
    lr: float = 5e-4
    gamma: float = 0.97
    n_step: int = 3
    batch: int = 512
    tau: float = 0.005  # Polyak factor of the target network per update
    grad_clip: float = 10.0
    model: ModelConfig = field(default_factory=ModelConfig)


class DQNAgent:
    def __init__(self, cfg: AgentConfig, device: str = "cpu", seed: int | None = None) -> None:
        self.cfg = cfg
        self.device = torch.device(device)
        if seed is not None:
            torch.manual_seed(seed)
        self.rng = np.random.default_rng(seed)
        self.online = QNet(cfg.model).to(self.device)
        self.target = copy.deepcopy(self.online).requires_grad_(False)
        self.optim = torch.optim.Adam(self.online.parameters(), lr=cfg.lr)
        self.updates = 0

    def _tensor(self, array: np.ndarray, dtype=torch.float32) -> torch.Tensor:
        return torch.as_tensor(array).to(self.device, dtype=dtype, non_blocking=True)

    @torch.no_grad()
    def q_values(self, grid: np.ndarray, feats: np.ndarray) -> np.ndarray:
        return self.online(self._tensor(grid), self._tensor(feats)).float().cpu().numpy()

    def act(self, grid: np.ndarray, feats: np.ndarray, epsilon: float | np.ndarray = 0.0) -> np.ndarray:
        """Relative moves for each board: greedy, or random with probability ``epsilon``."""
        greedy = self.q_values(grid, feats).argmax(axis=1)
        n = greedy.shape[0]
        explore = self.rng.random(n) < epsilon
        return np.where(explore, self.rng.integers(0, ACTIONS, n), greedy)

    def learn(self, replay: Replay) -> torch.Tensor:
        """One gradient step on a replay batch; returns the Huber loss as a 0-d tensor.

        Read it rarely (``float(loss)`` waits for the GPU to finish).
        """
        cfg = self.cfg
        g, f, a, ret, disc, g2, f2 = replay.sample(cfg.batch, cfg.n_step, cfg.gamma, self.rng)
        g, f, g2, f2 = (self._tensor(x) for x in (g, f, g2, f2))
        a = self._tensor(a, torch.int64)
        ret, disc = self._tensor(ret), self._tensor(disc)
        with torch.no_grad():
            # Double DQN: the online net picks the next move, the target net values it.
            best = self.online(g2, f2).argmax(dim=1, keepdim=True)
            target = ret + disc * self.target(g2, f2).gather(1, best).squeeze(1)
        q = self.online(g, f).gather(1, a.unsqueeze(1)).squeeze(1)
        loss = nn.functional.smooth_l1_loss(q, target)
        self.optim.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(self.online.parameters(), cfg.grad_clip)
        self.optim.step()
        with torch.no_grad():
            online, target_p = list(self.online.parameters()), list(self.target.parameters())
            torch._foreach_lerp_(target_p, online, cfg.tau)
        self.updates += 1
        return loss.detach()
