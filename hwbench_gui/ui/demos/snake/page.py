"""Demos → Snake: train a DQN snake live, watch a trained one, or play yourself.

Training runs :func:`hwbench_gui.demos.snake.train.train` on a :class:`~hwbench_gui.ui.workers.Worker`
(:func:`.training.train_job`); its plain callbacks send ``(kind, value)`` through the worker's
``yielded`` signal to the GUI thread. The page imports no torch until the user trains, loads, saves
or watches a model.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import numpy as np
from PySide6.QtCore import QEvent, Qt, QTimer
from PySide6.QtWidgets import QFileDialog, QMessageBox, QSplitter, QVBoxLayout, QWidget

from hwbench_gui.demos.snake.game import SnakeBoards
from hwbench_gui.ui.context import AppContext
from hwbench_gui.ui.demos.snake.board import KEYS, BoardView
from hwbench_gui.ui.demos.snake.controls import GameControls, TrainingControls
from hwbench_gui.ui.demos.snake.plots import TrainingPlots
from hwbench_gui.ui.demos.snake.training import describe_stats, finished_line, progress_line, train_job
from hwbench_gui.ui.workers import Worker, WorkerPool
from hwbench_gui.ui.start_folder import start_path

log = logging.getLogger(__name__)


class SnakePage(QWidget):
    def __init__(self, context: AppContext | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.context = context
        self.agent = None  # DQNAgent once trained or loaded
        self.agent_board: tuple[int, int] | None = None
        self.agent_info: dict = {}
        self.mode = "idle"  # idle | train | watch | play
        self.game: SnakeBoards | None = None
        self._pending_direction: int | None = None
        self._finished_ticks = 0
        self._workers = context.workers if context is not None else WorkerPool()
        self._worker: Worker | None = None
        self._pause = threading.Event()
        self._closing = threading.Event()  # set by shutdown(): a training ending then skips its evaluation
        #: Greedy games played when a training ends; their demo.snake document goes to the results folder.
        self.eval_episodes = 100
        self.last_result_path: Path | None = None
        self._result_line = ""
        self._scores: list[int] = []
        self._loss: tuple[list[float], list[float]] = ([], [])
        self._epsilon: tuple[list[float], list[float]] = ([], [])
        self._dirty = False

        self.board = BoardView()
        self.board.installEventFilter(self)
        self.game_controls = GameControls()
        self.training_controls = TrainingControls()
        self.plots = TrainingPlots()
        # The widgets the page's logic reads and writes (and scripts and tests drive).
        tc = self.training_controls
        self.board_size, self.minutes, self.device, self.cuda_reason = tc.board_size, tc.minutes, tc.device, \
            tc.cuda_reason
        self.train_button, self.pause_button, self.save_button = tc.train_button, tc.pause_button, tc.save_button
        self.status = tc.status
        self.score_plot, self.loss_plot, self.eps_plot = self.plots.plots()

        self.game_controls.watch_button.clicked.connect(self.watch_agent)
        self.game_controls.play_button.clicked.connect(self.play_yourself)
        self.game_controls.end_button.clicked.connect(self.end_game)
        self.game_controls.speed.valueChanged.connect(self._on_speed)
        tc.train_button.clicked.connect(self.start_training)
        tc.pause_button.clicked.connect(self.toggle_pause)
        tc.stop_button.clicked.connect(self.stop_training)
        tc.load_button.clicked.connect(self._ask_load)
        tc.save_button.clicked.connect(self._ask_save)

        self._timer = QTimer(self)
        self._timer.timeout.connect(self.tick)
        self._plot_timer = QTimer(self)
        self._plot_timer.setInterval(100)
        self._plot_timer.timeout.connect(self._redraw_plots)

        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.addWidget(self.board, 1)
        left_layout.addWidget(self.game_controls)
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.addWidget(self.training_controls)
        right_layout.addWidget(self.plots, 1)
        splitter = QSplitter(Qt.Horizontal)
        splitter.addWidget(left)
        splitter.addWidget(right)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([520, 680])
        layout = QVBoxLayout(self)
        layout.addWidget(splitter)
        self._on_speed(self.game_controls.speed.value())
        self._update_buttons()

    # -- model -----------------------------------------------------------------------------------
    def load_model(self, path: str | Path) -> bool:
        """Load a checkpoint as the current agent; shows the reason and returns False on failure."""
        from hwbench_gui.demos.snake.checkpoint import CheckpointError, load_checkpoint

        try:
            loaded = load_checkpoint(path)
        except (CheckpointError, RuntimeError) as exc:
            QMessageBox.warning(self, "Load model", str(exc))
            return False
        self.agent, self.agent_board = loaded.agent, (loaded.height, loaded.width)
        self.agent_info = {"train_config": loaded.train_config, "stats": loaded.stats}
        self.status.setText(f"Loaded {Path(path).name}: {loaded.height}×{loaded.width} board, "
                            f"{describe_stats(loaded.stats)}")
        self._update_buttons()
        return True

    def _ask_load(self) -> None:
        from hwbench_gui.demos.snake.checkpoint import shipped_checkpoint

        path, _ = QFileDialog.getOpenFileName(self, "Load snake model", str(shipped_checkpoint().parent),
                                              "Snake checkpoints (*.pt);;All files (*)")
        if path:
            self.end_game()
            self.load_model(path)

    def save_model(self, path: str | Path) -> None:
        from hwbench_gui.demos.snake.checkpoint import save_checkpoint

        h, w = self.agent_board
        save_checkpoint(path, self.agent, height=h, width=w, train_config=self.agent_info.get("train_config"),
                        stats=self.agent_info.get("stats"))

    def _ask_save(self) -> None:
        if self.agent is None:
            return
        path, _ = QFileDialog.getSaveFileName(self, "Save snake model",
                                              start_path("snake.pt"), "Snake checkpoints (*.pt)")
        if path:
            try:
                self.save_model(path)
            except OSError as exc:
                QMessageBox.warning(self, "Save model", f"{path}: {exc.strerror or exc}")
                return
            self.status.setText(f"Saved {path}")

    # -- games -----------------------------------------------------------------------------------
    def watch_agent(self) -> None:
        """Animate greedy play of the current agent (the shipped one if none is loaded)."""
        if self.mode == "train":
            return
        if self.agent is None:
            from hwbench_gui.demos.snake.checkpoint import shipped_checkpoint

            if not self.load_model(shipped_checkpoint()):
                return
        self._new_game("watch", *self.agent_board)

    def play_yourself(self) -> None:
        if self.mode == "train":
            return
        side = self.board_size.value()
        self._new_game("play", side, side)
        self.board.setFocus()

    def _new_game(self, mode: str, height: int, width: int) -> None:
        self.mode = mode
        self.game = SnakeBoards(1, height, width, seed=None, auto_reset=False,
                                starve_steps=None if mode == "watch" else 0)
        self._pending_direction = None
        self._show_game()
        self._timer.start()
        self._update_buttons()

    def end_game(self) -> None:
        if self.mode in ("watch", "play"):
            self._timer.stop()
            self.mode = "idle"
            self._update_buttons()

    def tick(self) -> None:
        """One move of the game being watched or played (the timer calls it at the chosen speed)."""
        game = self.game
        if self.mode not in ("watch", "play") or game is None:
            return
        if game.finished[0]:
            if self.mode == "watch":  # a finished game stays on screen for a moment, then a new one starts
                self._finished_ticks += 1
                if self._finished_ticks > max(self.game_controls.speed.value(), 3):
                    self._finished_ticks = 0
                    self._new_game("watch", game.height, game.width)
            return
        if self.mode == "watch":
            from hwbench_gui.demos.snake.train import play_greedy

            direction = play_greedy(self.agent, game)
        else:
            direction = game.direction[0] if self._pending_direction is None else self._pending_direction
            self._pending_direction = None
        game.step(direction)
        self._show_game()

    def _show_game(self) -> None:
        from hwbench_gui.demos.snake.train import board_snapshot

        caption = "agent (greedy)" if self.mode == "watch" else "you: arrow keys"
        self.board.show_snapshot(board_snapshot(self.game, 0), caption)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 (Qt name)
        """Arrow keys (or WASD) on the board steer the snake in play mode."""
        if watched is self.board and event.type() == QEvent.KeyPress and self.mode == "play":
            direction = KEYS.get(event.key())
            if direction is not None:
                self._pending_direction = direction
                return True
        return super().eventFilter(watched, event)

    def _on_speed(self, moves_per_s: int) -> None:
        self._timer.setInterval(int(1000 / moves_per_s))

    # -- training --------------------------------------------------------------------------------
    def start_training(self) -> None:
        if self._worker is not None:
            return
        self.end_game()
        from hwbench_gui.demos.snake.train import TrainConfig

        side = self.board_size.value()
        config = TrainConfig(height=side, width=side, minutes=self.minutes.value(),
                             device=self.training_controls.device_name(), seed=None)
        self._pause.clear()
        self._scores.clear()
        for series in (*self._loss, *self._epsilon):
            series.clear()
        self.mode = "train"
        self.status.setText("Starting training (loading torch)…")
        self._result_line = ""
        worker = Worker(train_job, (config, self._pause, self.eval_episodes if self.context is not None else 0,
                                    self._closing), name="snake-train")
        worker.yielded.connect(self._on_train_message)
        worker.returned.connect(self._on_finished)
        worker.errored.connect(self._on_errored)
        self._worker = worker
        self._workers.start(worker)
        self._plot_timer.start()
        self._update_buttons()

    def toggle_pause(self) -> None:
        if self._worker is None:
            return
        if self._pause.is_set():
            self._pause.clear()
        else:
            self._pause.set()
        self._update_buttons()

    def stop_training(self) -> None:
        if self._worker is not None:
            self._worker.abort()
        self._pause.clear()

    def _on_train_message(self, message: tuple) -> None:
        kind, value = message
        {"progress": self._on_progress, "episodes": self._on_episodes, "frame": self._on_frame,
         "document": self._save_document}[kind](value)

    def _save_document(self, doc: dict) -> None:
        """Into the app's results folder; the outcome (or why it failed) ends the status line."""
        from hwbench_gui.demos.results import save_run_document

        self.last_result_path, line = save_run_document(doc, self.context.results_dir)
        self._result_line = f" {greedy_play_line(doc)}; {line}." if doc.get("figure") else f" {line}."

    def _on_progress(self, p: dict) -> None:
        self._loss[0].append(p["elapsed_s"])
        self._loss[1].append(np.nan if p["loss"] is None else p["loss"])
        self._epsilon[0].append(p["elapsed_s"])
        self._epsilon[1].append(p["epsilon"])
        self.status.setText(progress_line(p))
        self._dirty = True

    def _on_episodes(self, finished: list) -> None:
        self._scores.extend(score for _, score, _ in finished)
        self._dirty = True

    def _on_frame(self, snapshot: dict) -> None:
        if self.mode == "train":
            self.board.show_snapshot(snapshot, "training board 1 (exploring)")

    def _on_finished(self, result) -> None:
        h, w = result.config.height, result.config.width
        self.agent, self.agent_board = result.agent, (h, w)
        self.agent_info = {"train_config": result.config.to_dict(), "stats": result.stats}
        self._join_worker()
        self.status.setText(finished_line(result.stats) + self._result_line)
        self._redraw_plots()

    def _on_errored(self, exc: BaseException) -> None:
        # The user reads what went wrong; the traceback goes to the log file (Help → About says where).
        log.error("snake training failed", exc_info=(type(exc), exc, exc.__traceback__))
        message = str(exc) if isinstance(exc, RuntimeError) and str(exc) else f"{type(exc).__name__}: {exc}"
        self._on_failed(message)

    def _on_failed(self, message: str) -> None:
        self._join_worker()
        self.status.setText(f"Training failed: {message.splitlines()[0]}")
        QMessageBox.warning(self, "Training failed", message)

    def _join_worker(self) -> None:
        self._worker = None  # it has returned or raised: its thread is ending
        self._plot_timer.stop()
        self.mode = "idle"
        self._update_buttons()

    def _redraw_plots(self) -> None:
        if not self._dirty:
            return
        self._dirty = False
        self.plots.draw(self._scores, self._loss, self._epsilon)

    def _update_buttons(self) -> None:
        training = self._worker is not None
        self.training_controls.show_state(training, self._pause.is_set(), self.agent is not None and not training)
        self.game_controls.show_state(training, self.mode in ("watch", "play"))

    def shutdown(self) -> None:
        """Stop the game timers and abort training; the window waits for the worker."""
        self._closing.set()
        self._timer.stop()
        self._plot_timer.stop()
        self.stop_training()


def greedy_play_line(doc: dict) -> str:
    """The evaluation's scores with each statistic named: the median is the result's figure (what reports
    and comparisons show), the mean is beside it (a few long games lift it)."""
    median = (doc.get("figure") or {}).get("value")
    mean = (doc.get("figures") or {}).get("mean score", {}).get("value")
    games = (doc.get("details") or {}).get("episodes")
    text = f"Greedy play over {games} games: median score {median:g} (the result's figure)"
    return text + (f", mean {mean:.2f}" if mean is not None else "")
