"""What the agent sees: the whole board as image channels, turned so the snake always heads up.

Turning the board to the snake's heading (with moves relative to it: straight, left, right) means
a situation learnt heading east is the same input heading north, which is most of why the agent
learns in minutes rather than hours.

Grid channels (``CHANNELS``), padded to a square of the board's longer side:
  head, body (age / length: the neck is near 1, the tail near 0, so the agent sees which cells
  free up first), food, outside (cells beyond the board, non-zero only on non-square boards).
Feature vector (``FEATURES``), in the snake's frame:
  danger straight/left/right; food ahead/behind/left/right; free space reachable after moving
  straight/left/right (fraction of free cells, from a flood fill); length and hunger fractions.
"""

from __future__ import annotations

import numpy as np

from hwbench_gui.demos.snake.game import DELTAS, SnakeBoards

CHANNELS = 4
FEATURES = 12


def grid_side(height: int, width: int) -> int:
    return max(height, width)


def _turned(grid: np.ndarray, direction: np.ndarray) -> np.ndarray:
    """Rotate each board's (…, S, S) planes counter-clockwise by its direction: the heading points up."""
    out = np.empty_like(grid)
    for k in range(4):
        sel = direction == k
        if sel.any():
            out[sel] = np.rot90(grid[sel], k, axes=(-2, -1))
    return out


def _reachable_fraction(boards: SnakeBoards, cells: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """For each board and each candidate cell (n, 3, 2): free cells reachable from it / free cells."""
    try:
        from scipy import ndimage
    except ImportError as exc:
        raise ImportError("the snake demo needs scipy (pip install 'hwbench-gui[demos]')") from exc

    n = boards.n
    # The tail's cell frees up on the next move, so it counts as free, like the collision rule.
    free = boards.body <= 1
    structure = np.zeros((3, 3, 3), dtype=bool)
    structure[1] = [[0, 1, 0], [1, 1, 1], [0, 1, 0]]  # 4-connected within a board, never across boards
    labels, _ = ndimage.label(free, structure=structure)
    sizes = np.bincount(labels.ravel())
    sizes[0] = 0
    rows = np.clip(cells[..., 0], 0, boards.height - 1)
    cols = np.clip(cells[..., 1], 0, boards.width - 1)
    lab = labels[np.arange(n)[:, None], rows, cols]
    total = np.maximum(free.reshape(n, -1).sum(axis=1), 1)[:, None]
    return np.where(ok, sizes[lab] / total, 0.0)


def observe(boards: SnakeBoards) -> tuple[np.ndarray, np.ndarray]:
    """``(grid float32 (n, CHANNELS, S, S), features float32 (n, FEATURES))`` for every board."""
    n, h, w = boards.n, boards.height, boards.width
    side = grid_side(h, w)
    idx = np.arange(n)
    grid = np.zeros((n, CHANNELS, side, side), dtype=np.float32)
    grid[idx, 0, boards.head[:, 0], boards.head[:, 1]] = 1.0
    grid[:, 1, :h, :w] = boards.body / np.maximum(boards.length, 1)[:, None, None]
    grid[idx, 1, boards.head[:, 0], boards.head[:, 1]] = 0.0
    has_food = boards.food[:, 0] >= 0
    fi = idx[has_food]
    grid[fi, 2, boards.food[fi, 0], boards.food[fi, 1]] = 1.0
    grid[:, 3] = 1.0
    grid[:, 3, :h, :w] = 0.0
    grid = _turned(grid, boards.direction)

    feats = np.zeros((n, FEATURES), dtype=np.float32)
    dirs = (boards.direction[:, None] + np.array([0, -1, 1])) % 4  # straight, left, right
    cells = boards.head[:, None, :] + DELTAS[dirs]
    inside = (cells[..., 0] >= 0) & (cells[..., 0] < h) & (cells[..., 1] >= 0) & (cells[..., 1] < w)
    rows, cols = np.clip(cells[..., 0], 0, h - 1), np.clip(cells[..., 1], 0, w - 1)
    ages = boards.body[idx[:, None], rows, cols]
    ok = inside & (ages <= 1)
    feats[:, 0:3] = ~ok
    # Food offset in the snake's frame: "ahead" is along the heading, "right" 90° clockwise of it.
    offset = boards.food - boards.head
    fwd = DELTAS[boards.direction]
    right = DELTAS[(boards.direction + 1) % 4]
    ahead = (offset * fwd).sum(axis=1)
    side_off = (offset * right).sum(axis=1)
    feats[:, 3] = (ahead > 0) & has_food
    feats[:, 4] = (ahead < 0) & has_food
    feats[:, 5] = (side_off < 0) & has_food
    feats[:, 6] = (side_off > 0) & has_food
    feats[:, 7:10] = _reachable_fraction(boards, cells, ok)
    feats[:, 10] = boards.length / boards.cells
    feats[:, 11] = boards.hunger / max(boards.starve_steps, 1) if boards.starve_steps else 0.0
    return grid, feats
