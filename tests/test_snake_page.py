"""Demos tab → Snake page, offscreen: watch the shipped agent, play with the arrow keys, train and stop."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from hwbench_gui.demos.snake.checkpoint import shipped_checkpoint
from hwbench_gui.demos.snake.game import RIGHT, UP


@pytest.fixture
def page(demos_tab):
    return demos_tab.pages["Snake"]


def test_watch_the_shipped_agent(page):
    assert page.load_model(shipped_checkpoint())
    page.watch_agent()
    assert page.mode == "watch"
    for _ in range(10):
        page.tick()
    snap = page.board.snapshot
    assert snap["steps"] == 10 and not snap["finished"], "the shipped agent survives 10 moves"
    page.board.grab()  # paints without error
    page.end_game()
    assert page.mode == "idle"


def test_arrow_keys_steer_in_play_mode(page, qtbot):
    page.play_yourself()
    start = page.game.snake_cells(0)[0]
    page.tick()
    assert page.game.snake_cells(0)[0] == (start[0] - 1, start[1]), "keeps going up without a key"
    qtbot.keyClick(page.board, Qt.Key_Right)
    page.tick()
    head = page.game.snake_cells(0)[0]
    assert head == (start[0] - 1, start[1] + 1) and page.game.direction[0] == RIGHT
    qtbot.keyClick(page.board, Qt.Key_Up)
    page.tick()
    assert page.game.direction[0] == UP


def test_train_shows_progress_and_stops(page, qtbot):
    page.board_size.setValue(6)
    page.minutes.setValue(2.0)
    page.start_training()
    assert page.mode == "train" and not page.train_button.isEnabled()
    qtbot.waitUntil(lambda: page.board.snapshot is not None and bool(page._loss[0]), timeout=30_000)
    page.toggle_pause()
    assert page.pause_button.text() == "Resume"
    page.toggle_pause()
    page.stop_training()
    qtbot.waitUntil(lambda: page._worker is None, timeout=30_000)
    assert page.agent is not None and page.save_button.isEnabled() and page.mode == "idle"
