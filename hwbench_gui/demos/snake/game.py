"""Snake on many boards at once, stepped with numpy (no drawing, no torch).

A board is an ``int16`` grid of body *ages*: 0 is empty, the tail holds 1 and the head holds the
snake's length. Moving decrements every body cell (the tail vanishes) and writes the new head with
the length, so "body ordered by age" is the grid itself and growing is "do not decrement".

Directions are absolute: 0 up, 1 right, 2 down, 3 left (rows grow downwards). A move straight back
into the neck is ignored (the snake keeps going), as in the classic game.

Each board owns a ``numpy.random.Generator`` for its food, so board ``i`` of a batch plays exactly
like a single board made with the same seed and fed the same moves.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

UP, RIGHT, DOWN, LEFT = 0, 1, 2, 3
#: (d_row, d_col) for each absolute direction.
DELTAS = np.array([(-1, 0), (0, 1), (1, 0), (0, -1)], dtype=np.int64)
START_LENGTH = 3

#: Reward for each outcome; the small step cost discourages wandering, death costs more than food gives.
DEFAULT_REWARDS = {"food": 1.0, "death": -1.0, "step": -0.01, "starve": -1.0}


@dataclass(frozen=True)
class StepResult:
    """What one call to :meth:`SnakeBoards.step` did, one entry per board.

    ``done`` boards were reset already; their finished episode's score and length are in
    ``final_score`` / ``final_steps`` (``-1`` for boards still playing). ``starved`` marks episodes
    ended by the starvation limit rather than a collision.
    """

    reward: np.ndarray
    done: np.ndarray
    ate: np.ndarray
    starved: np.ndarray
    final_score: np.ndarray
    final_steps: np.ndarray


#: Board sides in cells: a snake needs room to turn; past 64 the observation grid (side² cells per
#: board and channel, in every replay row) outgrows any memory a demo should take.
MIN_SIDE, MAX_SIDE = 4, 64


class SnakeBoards:
    """``n`` independent snake games of ``height`` × ``width`` cells stepped together.

    ``starve_steps``: an episode ends when the snake has gone this many steps without eating
    (``None``: ``2 × cells``; ``0``: never) — it stops a policy that circles forever.
    ``seeds``: one seed per board (overrides ``seed``) so single boards can replay batch boards.
    ``auto_reset``: finished boards restart at once (training); off, they stay finished (watching).
    """

    def __init__(self, n: int = 1, height: int = 12, width: int = 12, *, seed: int | None = None,
                 seeds: list[int] | None = None, starve_steps: int | None = None,
                 rewards: dict[str, float] | None = None, auto_reset: bool = True) -> None:
        if not (MIN_SIDE <= height <= MAX_SIDE and MIN_SIDE <= width <= MAX_SIDE):
            raise ValueError(f"board must be {MIN_SIDE}×{MIN_SIDE} to {MAX_SIDE}×{MAX_SIDE} cells, "
                             f"got {height}×{width}")
        self.n, self.height, self.width = int(n), int(height), int(width)
        self.cells = self.height * self.width
        self.starve_steps = 2 * self.cells if starve_steps is None else int(starve_steps)
        self.rewards = {**DEFAULT_REWARDS, **(rewards or {})}
        self.auto_reset = auto_reset
        if seeds is None:
            seeds = [int(s.generate_state(1)[0]) for s in np.random.SeedSequence(seed).spawn(self.n)]
        if len(seeds) != self.n:
            raise ValueError(f"{len(seeds)} seeds for {self.n} boards")
        self.seeds = [int(s) for s in seeds]
        self.rngs = [np.random.default_rng(s) for s in self.seeds]
        self.body = np.zeros((self.n, self.height, self.width), dtype=np.int16)
        self.head = np.zeros((self.n, 2), dtype=np.int64)
        self.food = np.zeros((self.n, 2), dtype=np.int64)
        self.direction = np.zeros(self.n, dtype=np.int64)
        self.length = np.zeros(self.n, dtype=np.int64)
        self.steps = np.zeros(self.n, dtype=np.int64)
        self.hunger = np.zeros(self.n, dtype=np.int64)
        self.finished = np.zeros(self.n, dtype=bool)
        self.reset()

    # -- state ---------------------------------------------------------------------------------
    @property
    def score(self) -> np.ndarray:
        """Food eaten so far on each board."""
        return self.length - START_LENGTH

    def reset(self, mask: np.ndarray | None = None) -> None:
        """Restart the boards in ``mask`` (all by default): length 3 in the middle heading up."""
        idx = np.arange(self.n) if mask is None else np.flatnonzero(mask)
        if idx.size == 0:
            return
        row, col = self.height // 2 - 1, self.width // 2
        self.body[idx] = 0
        for age, d_row in zip(range(START_LENGTH, 0, -1), range(START_LENGTH)):
            self.body[idx, row + d_row, col] = age
        self.head[idx] = (row, col)
        self.direction[idx] = UP
        self.length[idx] = START_LENGTH
        self.steps[idx] = 0
        self.hunger[idx] = 0
        self.finished[idx] = False
        self._place_food(idx)

    def _place_food(self, idx: np.ndarray) -> None:
        for i in idx:
            free = (self.body[i] == 0).ravel()
            # A uniform draw per cell, best free cell wins: uniform over free cells, one draw per board.
            draw = self.rngs[i].random(self.cells)
            draw[~free] = -1.0
            cell = int(np.argmax(draw))
            if not free[cell]:  # the snake fills the board: nothing left to eat
                self.food[i] = (-1, -1)
            else:
                self.food[i] = divmod(cell, self.width)

    def snake_cells(self, i: int = 0) -> list[tuple[int, int]]:
        """Board ``i``'s snake as (row, col) cells from head to tail."""
        rows, cols = np.nonzero(self.body[i])
        order = np.argsort(-self.body[i, rows, cols], kind="stable")
        return [(int(rows[k]), int(cols[k])) for k in order]

    # -- rules ---------------------------------------------------------------------------------
    def step(self, direction: np.ndarray | list[int] | int) -> StepResult:
        """Move every unfinished board one cell in its absolute ``direction`` (0 up … 3 left)."""
        want = np.broadcast_to(np.asarray(direction, dtype=np.int64), (self.n,))
        reverse = want == (self.direction + 2) % 4
        direction = np.where(reverse, self.direction, want) % 4
        active = ~self.finished
        n = self.n
        reward = np.zeros(n, dtype=np.float32)
        done = np.zeros(n, dtype=bool)
        ate = np.zeros(n, dtype=bool)
        starved = np.zeros(n, dtype=bool)

        new_head = self.head + DELTAS[direction]
        wall = ((new_head[:, 0] < 0) | (new_head[:, 0] >= self.height)
                | (new_head[:, 1] < 0) | (new_head[:, 1] >= self.width)) & active
        row = np.clip(new_head[:, 0], 0, self.height - 1)
        col = np.clip(new_head[:, 1], 0, self.width - 1)
        ate = active & ~wall & (row == self.food[:, 0]) & (col == self.food[:, 1])
        target_age = self.body[np.arange(n), row, col]
        # Without food the tail (age 1) leaves this very step, so moving into it is safe.
        self_hit = active & ~wall & (target_age > np.where(ate, 0, 1))
        dead = wall | self_hit
        moving = active & ~dead

        shrink = moving & ~ate
        self.body[shrink] = np.maximum(self.body[shrink] - 1, 0)
        self.length[ate] += 1
        mv = np.flatnonzero(moving)
        self.body[mv, row[mv], col[mv]] = self.length[mv]
        self.head[mv] = np.stack([row[mv], col[mv]], axis=1)
        self.direction[moving] = direction[moving]
        self.steps[active] += 1
        self.hunger[moving] = np.where(ate[moving], 0, self.hunger[moving] + 1)
        if self.starve_steps > 0:
            starved = moving & (self.hunger >= self.starve_steps)
        full = moving & ate & (self.length >= self.cells)

        r = self.rewards
        reward[moving] = r["step"]
        reward[ate] = r["food"]
        reward[dead] = r["death"]
        reward[starved] = r["starve"]
        done = dead | starved | full
        final_score = np.where(done, self.score, -1)
        final_steps = np.where(done, self.steps, -1)
        self.finished |= done
        eaten = np.flatnonzero(ate & ~full)
        if eaten.size:
            self._place_food(eaten)
        if self.auto_reset:
            self.reset(done)
        return StepResult(reward, done, ate, starved, final_score, final_steps)


def relative_to_absolute(direction: np.ndarray, relative: np.ndarray) -> np.ndarray:
    """Turn relative moves (0 straight, 1 left, 2 right) into absolute directions."""
    turn = np.array([0, -1, 1], dtype=np.int64)[np.asarray(relative, dtype=np.int64)]
    return (np.asarray(direction, dtype=np.int64) + turn) % 4
