"""Demos tab → Snake page, offscreen: watch the shipped agent, play with the arrow keys, train and stop."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from hwbench_gui.demos.snake.checkpoint import shipped_checkpoint
from hwbench_gui.demos.snake.game import RIGHT, UP


@pytest.fixture
def page(demos_tab):
    return demos_tab.page("Snake")


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


def test_a_finished_training_is_evaluated_into_a_demo_snake_document(page, qtbot):
    from hwbench_gui.engine.results import list_results

    page.board_size.setValue(6)
    page.eval_episodes = 7
    page.start_training()
    page.stop_training()  # Stop ends a training too: it is evaluated all the same
    qtbot.waitUntil(lambda: page._worker is None, timeout=30_000)
    docs, errors = list_results(page.context.results_dir)
    assert not errors and [d["benchmark"]["id"] for d in docs] == ["demo.snake"]
    doc = docs[0]
    assert len(doc["samples"]) == 7 and doc["params"]["board"] == "6x6" and doc["params"]["device"] == "cpu"
    assert doc["figures"]["moves/s"]["value"] > 0
    assert page.last_result_path.parent == page.context.results_dir
    median = doc["figure"]["value"]
    assert f"Greedy play over 7 games: median score {median:g} (the result's figure), mean " in page.status.text()
    assert "result saved" in page.status.text()


def test_the_greedy_play_line_names_the_median_the_reports_show_and_the_mean_beside_it():
    from hwbench_gui.ui.demos.snake.page import greedy_play_line

    doc = {"figure": {"value": 18.0}, "figures": {"mean score": {"value": 16.41}}, "details": {"episodes": 100}}
    assert greedy_play_line(doc) == "Greedy play over 100 games: median score 18 (the result's figure), mean 16.41"


def test_a_snake_result_that_cannot_be_saved_is_reported(page, qtbot, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    page.context.results_dir = blocker / "results"
    page.board_size.setValue(6)
    page.eval_episodes = 3
    page.start_training()
    page.stop_training()
    qtbot.waitUntil(lambda: page._worker is None, timeout=30_000)
    assert "result not saved:" in page.status.text() and page.train_button.isEnabled()


def test_cuda_is_greyed_with_the_reason_when_there_is_no_gpu(qtbot, monkeypatch):
    from hwbench_gui.engine import nvml
    from hwbench_gui.ui.demos.snake.page import SnakePage

    monkeypatch.setattr(nvml, "unavailable_reason", lambda: "NVML Shared Library Not Found")
    page = SnakePage()
    qtbot.addWidget(page)
    cuda = page.device.model().item(1)
    assert not cuda.isEnabled()
    assert "NVML Shared Library Not Found" in cuda.text()
    assert page.device.currentText() == "cpu"
    page.shutdown()


def test_a_training_error_is_one_readable_message_not_a_traceback(page, monkeypatch):
    import hwbench_gui.ui.demos.snake.page as module

    shown = []
    monkeypatch.setattr(module.QMessageBox, "warning", lambda parent, title, text: shown.append(text))
    try:
        raise RuntimeError("device 'cuda' requested but torch.cuda.is_available() is False")
    except RuntimeError as exc:
        page._on_errored(exc)
    assert shown == ["device 'cuda' requested but torch.cuda.is_available() is False"]
    assert "Traceback" not in page.status.text() and "torch.cuda.is_available" in page.status.text()


def test_plots_follow_the_theme(page):
    from PySide6.QtWidgets import QApplication

    from hwbench_gui.ui.theme import apply_theme, plot_colors

    app = QApplication.instance()
    try:
        for name in ("light", "dark"):
            apply_theme(app, name)
            background, _ = plot_colors(app.palette())
            for plot in (page.score_plot, page.loss_plot, page.eps_plot):
                assert plot.backgroundBrush().color().name() == background, name
    finally:
        apply_theme(app, "system")
