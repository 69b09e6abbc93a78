"""Snake rules on the vectorised boards, checked against a plain one-board reference."""

from __future__ import annotations

from collections import deque

import numpy as np

from hwbench_gui.demos.snake.game import DELTAS, DOWN, LEFT, RIGHT, UP, SnakeBoards, relative_to_absolute
from hwbench_gui.demos.snake.observation import CHANNELS, FEATURES, observe


def _set_snake(boards: SnakeBoards, cells_head_first: list[tuple[int, int]], food: tuple[int, int], i: int = 0):
    """Put a snake (head first) and food on board ``i`` by hand."""
    boards.body[i] = 0
    n = len(cells_head_first)
    for k, (r, c) in enumerate(cells_head_first):
        boards.body[i, r, c] = n - k
    boards.head[i] = cells_head_first[0]
    dr = cells_head_first[0][0] - cells_head_first[1][0]
    dc = cells_head_first[0][1] - cells_head_first[1][1]
    boards.direction[i] = [tuple(d) for d in DELTAS.tolist()].index((dr, dc))
    boards.length[i] = n
    boards.food[i] = food


class ReferenceSnake:
    """The rules written the obvious way (a deque of cells), food drawn like ``SnakeBoards``."""

    def __init__(self, height: int, width: int, seed: int) -> None:
        self.h, self.w = height, width
        self.rng = np.random.default_rng(seed)
        r, c = height // 2 - 1, width // 2
        self.cells = deque([(r, c), (r + 1, c), (r + 2, c)])
        self.direction = UP
        self.dead = False
        self.food = self._food()

    def _food(self):
        draw = self.rng.random(self.h * self.w)
        for r, c in self.cells:
            draw[r * self.w + c] = -1.0
        return divmod(int(np.argmax(draw)), self.w)

    def step(self, direction: int) -> None:
        if direction == (self.direction + 2) % 4:
            direction = self.direction
        self.direction = direction
        dr, dc = DELTAS[direction]
        r, c = self.cells[0][0] + dr, self.cells[0][1] + dc
        eat = (r, c) == self.food
        body = list(self.cells) if eat else list(self.cells)[:-1]
        if not (0 <= r < self.h and 0 <= c < self.w) or (r, c) in body:
            self.dead = True
            return
        self.cells.appendleft((r, c))
        if not eat:
            self.cells.pop()
        else:
            self.food = self._food()


def test_start_state_and_reset():
    b = SnakeBoards(3, 8, 10, seed=1)
    assert (b.length == 3).all() and (b.score == 0).all() and (b.direction == UP).all()
    assert b.snake_cells(0) == [(3, 5), (4, 5), (5, 5)]
    for i in range(3):
        assert b.body[i][tuple(b.food[i])] == 0
    b.step(RIGHT)
    b.reset(np.array([True, False, False]))
    assert b.snake_cells(0) == [(3, 5), (4, 5), (5, 5)] and b.steps[0] == 0
    assert b.snake_cells(1) == [(3, 6), (3, 5), (4, 5)] and b.steps[1] == 1


def test_eating_grows_and_scores():
    b = SnakeBoards(1, 8, 8, seed=0)
    _set_snake(b, [(4, 4), (5, 4), (6, 4)], food=(3, 4))
    res = b.step(UP)
    assert res.ate[0] and res.reward[0] == b.rewards["food"] and not res.done[0]
    assert b.length[0] == 4 and b.score[0] == 1
    assert b.snake_cells(0) == [(3, 4), (4, 4), (5, 4), (6, 4)]
    assert tuple(b.food[0]) not in b.snake_cells(0)
    b.food[0] = (0, 0)
    b.step(UP)
    assert b.snake_cells(0) == [(2, 4), (3, 4), (4, 4), (5, 4)], "no food: the tail follows"


def test_wall_kills():
    b = SnakeBoards(1, 8, 8, seed=0, auto_reset=False)
    b.food[0] = (7, 0)
    for _ in range(3):  # head starts on row 3
        assert not b.step(UP).done[0]
    res = b.step(UP)
    assert res.done[0] and res.reward[0] == b.rewards["death"] and b.finished[0]
    assert res.final_score[0] == 0 and res.final_steps[0] == 4
    assert not b.step(UP).done[0], "a finished board stays finished"


def test_self_collision_kills_but_the_tail_cell_is_free():
    b = SnakeBoards(1, 10, 10, seed=0, auto_reset=False)
    _set_snake(b, [(5, 5), (6, 5), (7, 5), (8, 5), (9, 5)], food=(0, 0))
    b.step(RIGHT)
    b.step(DOWN)
    res = b.step(LEFT)  # into (6, 5): still body after two moves
    assert res.done[0] and res.reward[0] == b.rewards["death"]

    b = SnakeBoards(1, 10, 10, seed=0, auto_reset=False)
    _set_snake(b, [(5, 5), (6, 5), (6, 6), (5, 6)], food=(0, 0))  # a 2×2 loop: the tail is right of the head
    res = b.step(RIGHT)
    assert not res.done[0] and b.snake_cells(0) == [(5, 6), (5, 5), (6, 5), (6, 6)]


def test_reverse_move_is_ignored():
    b = SnakeBoards(1, 8, 8, seed=0)
    b.food[0] = (7, 0)
    b.step(DOWN)  # heading up: going down would be into the neck
    assert b.direction[0] == UP and b.snake_cells(0)[0] == (2, 4)


def test_food_never_on_the_body():
    b = SnakeBoards(32, 6, 6, seed=3)
    rng = np.random.default_rng(0)
    for _ in range(400):
        b.step(relative_to_absolute(b.direction, rng.integers(0, 3, b.n)))
        for i in range(b.n):
            assert b.food[i, 0] >= 0 and b.body[i][tuple(b.food[i])] == 0
    # Only one free cell left: the food must go there.
    b = SnakeBoards(1, 4, 4, seed=0)
    b.body[0] = np.arange(1, 17).reshape(4, 4)
    b.body[0, 2, 1] = 0
    b._place_food(np.array([0]))
    assert tuple(b.food[0]) == (2, 1)


def test_starvation_ends_an_episode():
    b = SnakeBoards(1, 6, 6, seed=0, starve_steps=8, auto_reset=False)
    b.food[0] = (5, 5)
    moves = [RIGHT, DOWN, LEFT, UP] * 2  # circle without eating
    for k, move in enumerate(moves):
        res = b.step(move)
    assert res.done[0] and res.starved[0] and res.reward[0] == b.rewards["starve"]


def test_batch_boards_match_single_boards_and_the_reference():
    n, h, w = 6, 7, 7
    batch = SnakeBoards(n, h, w, seed=11, starve_steps=0, auto_reset=False)
    singles = [SnakeBoards(1, h, w, seeds=[batch.seeds[i]], starve_steps=0, auto_reset=False) for i in range(n)]
    refs = [ReferenceSnake(h, w, batch.seeds[i]) for i in range(n)]
    rng = np.random.default_rng(5)
    for _ in range(150):
        moves = rng.integers(0, 4, n)
        res = batch.step(moves)
        for i in range(n):
            if refs[i].dead:
                continue
            single_res = singles[i].step(moves[i])
            refs[i].step(int(moves[i]))
            assert (singles[i].body[0] == batch.body[i]).all()
            assert (singles[i].food[0] == batch.food[i]).all() and single_res.done[0] == res.done[i]
            assert res.done[i] == refs[i].dead
            if not refs[i].dead:
                assert batch.snake_cells(i) == list(refs[i].cells)
                assert tuple(batch.food[i]) == refs[i].food
    assert batch.finished.any(), "random play should have ended some games"


def test_observation_is_turned_to_the_heading():
    b = SnakeBoards(4, 9, 9, seed=2)
    for i, d in enumerate((UP, RIGHT, DOWN, LEFT)):
        _set_snake(b, [(4, 4), (4 - DELTAS[d][0], 4 - DELTAS[d][1])], food=(0, 0), i=i)
    grid, feats = observe(b)
    assert grid.shape == (4, CHANNELS, 9, 9) and feats.shape == (4, FEATURES)
    for i in range(4):
        head = np.argwhere(grid[i, 0] == 1)
        assert head.tolist() == [[4, 4]]
        assert grid[i, 1, 5, 4] > 0, "the neck is always straight behind the head"
