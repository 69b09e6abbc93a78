"""Demos → Snake: train a DQN snake live, watch a trained one, or play yourself.

Training runs :func:`hwbench_gui.demos.snake.train.train` on a :class:`~hwbench_gui.ui.workers.Worker`;
its plain callbacks send ``(kind, value)`` through the worker's ``yielded`` signal to the GUI thread.
The page imports no torch until the user trains, loads, saves or watches a model.
"""

from __future__ import annotations

import logging
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QRectF, Qt, QTimer
from PySide6.QtGui import QColor, QFont, QPainter
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPushButton,
    QSlider,
    QSpinBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from hwbench_gui.demos.snake.game import DOWN, LEFT, RIGHT, UP, SnakeBoards
from hwbench_gui.ui.context import AppContext
from hwbench_gui.ui.theme import on_theme_changed, plot_colors
from hwbench_gui.ui.workers import Worker, WorkerPool

log = logging.getLogger(__name__)

_KEYS = {Qt.Key_Up: UP, Qt.Key_Right: RIGHT, Qt.Key_Down: DOWN, Qt.Key_Left: LEFT,
         Qt.Key_W: UP, Qt.Key_D: RIGHT, Qt.Key_S: DOWN, Qt.Key_A: LEFT}
_MEAN_WINDOW = 100


class BoardView(QWidget):
    """Draws one board snapshot (see ``train.board_snapshot``) with QPainter."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.snapshot: dict | None = None
        self.caption = ""
        self.setMinimumSize(240, 240)
        self.setFocusPolicy(Qt.StrongFocus)

    def show_snapshot(self, snapshot: dict | None, caption: str = "") -> None:
        self.snapshot, self.caption = snapshot, caption
        self.update()

    def paintEvent(self, event) -> None:  # noqa: N802 (Qt name)
        p = QPainter(self)
        p.fillRect(self.rect(), QColor("#111827"))
        snap = self.snapshot
        if snap is None:
            p.setPen(QColor("#9ca3af"))
            p.drawText(self.rect(), Qt.AlignCenter, self.caption or "Train, Watch agent or Play yourself")
            return
        h, w = snap["height"], snap["width"]
        header = 24  # the caption line sits above the board, never over the snake
        cell = min(self.width() / w, (self.height() - header) / h)
        x0, y0 = (self.width() - cell * w) / 2, header + (self.height() - header - cell * h) / 2
        p.fillRect(QRectF(x0, y0, cell * w, cell * h), QColor("#1f2937"))
        body = snap["body"]
        length = max(int(body.max()), 1)
        pad = max(cell * 0.06, 0.5)
        p.setPen(Qt.NoPen)
        for r, c in zip(*np.nonzero(body)):
            # Older segments fade: the tail, which frees first, is the darkest.
            t = body[r, c] / length
            p.setBrush(QColor.fromHsvF(0.36, 0.75, 0.35 + 0.55 * t))
            p.drawRoundedRect(QRectF(x0 + c * cell + pad, y0 + r * cell + pad, cell - 2 * pad, cell - 2 * pad),
                              cell * 0.2, cell * 0.2)
        hr, hc = snap["head"]
        if body[hr, hc]:
            p.setBrush(QColor("#bef264"))
            p.drawRoundedRect(QRectF(x0 + hc * cell + pad, y0 + hr * cell + pad, cell - 2 * pad, cell - 2 * pad),
                              cell * 0.3, cell * 0.3)
        fr, fc = snap["food"]
        if fr >= 0:
            p.setBrush(QColor("#ef4444"))
            p.drawEllipse(QRectF(x0 + fc * cell + cell * 0.2, y0 + fr * cell + cell * 0.2, cell * 0.6, cell * 0.6))
        p.setPen(QColor("#f9fafb"))
        font = QFont(self.font())
        font.setPointSizeF(max(9.0, font.pointSizeF()))
        p.setFont(font)
        text = f"score {snap['score']}   moves {snap['steps']}"
        if self.caption:
            text = f"{self.caption}   {text}"
        p.drawText(QRectF(x0, y0 - header, cell * w, header), Qt.AlignLeft | Qt.AlignVCenter, text)
        if snap.get("finished"):
            p.drawText(QRectF(x0, y0, cell * w, cell * h), Qt.AlignCenter, f"game over — score {snap['score']}")


def _train(control, config, pause: threading.Event, eval_episodes: int = 0,
           skip_eval: threading.Event | None = None):
    """Worker body: trains until done or aborted (Stop), then plays ``eval_episodes`` greedy games
    and emits ``("document", doc)``: the run's ``demo.snake`` result document (skipped when
    ``skip_eval`` is set: the window is closing). Returns the TrainResult."""
    from hwbench_gui.demos.snake.train import TrainCallbacks, evaluate, train

    def send(kind):
        return lambda value: control.emit((kind, value))

    callbacks = TrainCallbacks(progress=send("progress"), episodes=send("episodes"), frame=send("frame"),
                               progress_interval_s=0.5, frame_interval_s=0.05)
    result = train(config, callbacks, stop=control.abort_event, pause=pause)
    if eval_episodes > 0 and not (skip_eval is not None and skip_eval.is_set()):
        from hwbench_gui.demos.results import snake_eval_document

        started_at, start = datetime.now(timezone.utc), time.perf_counter()
        figures = evaluate(result.agent, eval_episodes, config.height, config.width)
        eval_s = time.perf_counter() - start
        params = {"board": f"{config.height}x{config.width}", "episodes": eval_episodes, "device": config.device}
        control.emit(("document", snake_eval_document(
            figures, params, started_at=started_at, eval_s=eval_s, device=config.device,
            training={**result.stats, "from": "GUI Snake page"})))
    return result


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
        self.speed = QSlider(Qt.Horizontal)
        self.speed.setRange(1, 60)
        self.speed.setValue(12)
        self.speed_label = QLabel()
        self.speed.valueChanged.connect(self._on_speed)
        self.watch_button = QPushButton("Watch agent")
        self.play_button = QPushButton("Play yourself")
        self.end_button = QPushButton("Stop game")
        self.watch_button.clicked.connect(self.watch_agent)
        self.play_button.clicked.connect(self.play_yourself)
        self.end_button.clicked.connect(self.end_game)

        self.board_size = QSpinBox()
        self.board_size.setRange(6, 20)
        self.board_size.setValue(12)
        self.minutes = QDoubleSpinBox()
        self.minutes.setRange(0.1, 240.0)
        self.minutes.setValue(5.0)
        self.minutes.setSuffix(" min")
        self.device = QComboBox()
        self.device.addItems(["cpu", "cuda"])
        self.cuda_reason = self._cuda_unavailable_reason()
        if self.cuda_reason is not None:  # offered, greyed, with the reason: never a traceback later
            cuda = self.device.model().item(1)
            cuda.setEnabled(False)
            cuda.setText(f"cuda (unavailable: {self.cuda_reason})")
            cuda.setToolTip(self.cuda_reason)
        self.train_button = QPushButton("Train")
        self.pause_button = QPushButton("Pause")
        self.stop_button = QPushButton("Stop")
        self.load_button = QPushButton("Load…")
        self.save_button = QPushButton("Save…")
        self.train_button.clicked.connect(self.start_training)
        self.pause_button.clicked.connect(self.toggle_pause)
        self.stop_button.clicked.connect(self.stop_training)
        self.load_button.clicked.connect(self._ask_load)
        self.save_button.clicked.connect(self._ask_save)
        self.status = QLabel("No model loaded: Watch agent plays the shipped one.")
        self.status.setWordWrap(True)

        self._timer = QTimer(self)
        self._timer.timeout.connect(self.tick)
        self._plot_timer = QTimer(self)
        self._plot_timer.setInterval(100)
        self._plot_timer.timeout.connect(self._redraw_plots)

        left = QVBoxLayout()
        left.addWidget(self.board, 1)
        speed_row = QHBoxLayout()
        speed_row.addWidget(QLabel("Speed"))
        speed_row.addWidget(self.speed, 1)
        speed_row.addWidget(self.speed_label)
        left.addLayout(speed_row)
        game_row = QHBoxLayout()
        for b in (self.watch_button, self.play_button, self.end_button):
            game_row.addWidget(b)
        left.addLayout(game_row)
        left_w = QWidget()
        left_w.setLayout(left)

        train_box = QGroupBox("Training")
        form = QFormLayout(train_box)
        form.addRow("Board side", self.board_size)
        form.addRow("Budget", self.minutes)
        form.addRow("Device", self.device)
        buttons = QHBoxLayout()
        for b in (self.train_button, self.pause_button, self.stop_button, self.load_button, self.save_button):
            buttons.addWidget(b)
        form.addRow(buttons)
        form.addRow(self.status)

        self.score_plot = pg.PlotWidget(title="Score per episode")
        self.score_plot.setLabel("bottom", "episode")
        self.score_curve = self.score_plot.plot(pen=pg.mkPen("#60a5fa", width=1))
        self.mean_curve = self.score_plot.plot(pen=pg.mkPen("#f59e0b", width=2), name=f"mean of {_MEAN_WINDOW}")
        self.loss_plot = pg.PlotWidget(title="Loss (Huber)")
        self.loss_curve = self.loss_plot.plot(pen=pg.mkPen("#f87171", width=1))
        self.eps_plot = pg.PlotWidget(title="Epsilon")
        self.eps_curve = self.eps_plot.plot(pen=pg.mkPen("#a78bfa", width=1))
        for plot in (self.loss_plot, self.eps_plot):
            plot.setLabel("bottom", "training time", units="s")
        for plot in (self.score_plot, self.loss_plot, self.eps_plot):
            plot.setDownsampling(mode="peak")
            plot.setClipToView(True)
            plot.showGrid(x=True, y=True, alpha=0.2)
        self._apply_plot_colors()
        on_theme_changed(self, self._apply_plot_colors)

        right = QVBoxLayout()
        right.addWidget(train_box)
        right.addWidget(self.score_plot, 3)
        small_plots = QHBoxLayout()  # side by side: stacked, each is too flat to read on a laptop
        small_plots.addWidget(self.loss_plot)
        small_plots.addWidget(self.eps_plot)
        right.addLayout(small_plots, 2)
        right_w = QWidget()
        right_w.setLayout(right)
        splitter = QSplitter(Qt.Horizontal)
        splitter.addWidget(left_w)
        splitter.addWidget(right_w)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([520, 680])
        layout = QVBoxLayout(self)
        layout.addWidget(splitter)
        self._on_speed(self.speed.value())
        self._update_buttons()

    @staticmethod
    def _cuda_unavailable_reason() -> str | None:
        """Why "cuda" cannot train here (NVML sees no GPU), without importing torch."""
        from hwbench_gui.engine import nvml

        reason = nvml.unavailable_reason()
        if reason is None and nvml.device_count() == 0:
            reason = "no NVIDIA GPU"
        return reason

    def _apply_plot_colors(self, _palette=None) -> None:
        """Plots take the theme's base and text colours (pyqtgraph's default is black)."""
        from PySide6.QtWidgets import QApplication

        background, foreground = plot_colors(QApplication.instance().palette())
        for plot in (self.score_plot, self.loss_plot, self.eps_plot):
            plot.setBackground(background)
            for side in ("left", "bottom"):
                plot.getAxis(side).setPen(foreground)
                plot.getAxis(side).setTextPen(foreground)
            title = plot.getPlotItem().titleLabel
            title.setAttr("color", foreground)
            title.setText(title.text)

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
                            f"{self._describe_stats(loaded.stats)}")
        self._update_buttons()
        return True

    @staticmethod
    def _describe_stats(stats: dict) -> str:
        parts = []
        if stats.get("elapsed_s") is not None:
            parts.append(f"trained {stats['elapsed_s'] / 60:.1f} min on {stats.get('device', '?')}")
        if stats.get("mean_score_last_100") is not None:
            parts.append(f"training mean score {stats['mean_score_last_100']:.1f}")
        return ", ".join(parts) or "no training statistics"

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
        path, _ = QFileDialog.getSaveFileName(self, "Save snake model", "snake.pt", "Snake checkpoints (*.pt)")
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
                if self._finished_ticks > max(self.speed.value(), 3):
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
            direction = _KEYS.get(event.key())
            if direction is not None:
                self._pending_direction = direction
                return True
        return super().eventFilter(watched, event)

    def _on_speed(self, moves_per_s: int) -> None:
        self.speed_label.setText(f"{moves_per_s} moves/s")
        self._timer.setInterval(int(1000 / moves_per_s))

    # -- training --------------------------------------------------------------------------------
    def start_training(self) -> None:
        if self._worker is not None:
            return
        self.end_game()
        from hwbench_gui.demos.snake.train import TrainConfig

        side = self.board_size.value()
        config = TrainConfig(height=side, width=side, minutes=self.minutes.value(),
                             device=self.device.currentText().split()[0], seed=None)
        self._pause.clear()
        self._scores.clear()
        for series in (*self._loss, *self._epsilon):
            series.clear()
        self.mode = "train"
        self.status.setText("Starting training (loading torch)…")
        self._result_line = ""
        worker = Worker(_train, (config, self._pause, self.eval_episodes if self.context is not None else 0,
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
        mean = doc["figures"].get("mean score", {}).get("value")
        games = doc["details"]["episodes"]
        self._result_line = f" Greedy play: mean score {mean:.2f} over {games} games; {line}." \
            if mean is not None else f" {line}."

    def _on_progress(self, p: dict) -> None:
        self._loss[0].append(p["elapsed_s"])
        self._loss[1].append(np.nan if p["loss"] is None else p["loss"])
        self._epsilon[0].append(p["elapsed_s"])
        self._epsilon[1].append(p["epsilon"])
        mean = "–" if p["mean_score"] is None else f"{p['mean_score']:.1f}"
        rate = "–" if p["steps_per_s"] is None else f"{p['steps_per_s']:.0f}"
        state = "paused" if p["paused"] else "training"
        self.status.setText(f"{state}: {p['elapsed_s']:.0f} s, {p['episodes']} episodes, mean score (last 100) "
                            f"{mean}, best {p['best_score']}, epsilon {p['epsilon']:.3f}, {rate} moves/s")
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
        mean = result.stats.get("mean_score_last_100")
        self.status.setText(f"Training {'stopped' if result.stats.get('stopped_early') else 'done'}: "
                            f"{result.stats['episodes']} episodes in {result.stats['elapsed_s']:.0f} s, mean score "
                            f"(last 100) {'–' if mean is None else f'{mean:.1f}'}. Watch agent plays it; Save… keeps it."
                            + self._result_line)
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
        scores = np.asarray(self._scores, dtype=float)
        if scores.size:
            x = np.arange(1, scores.size + 1, dtype=float)
            self.score_curve.setData(x, scores, skipFiniteCheck=True)
            csum = np.cumsum(np.insert(scores, 0, 0.0))
            window = np.minimum(np.arange(1, scores.size + 1), _MEAN_WINDOW)
            mean = (csum[1:] - csum[np.arange(1, scores.size + 1) - window]) / window
            self.mean_curve.setData(x, mean, skipFiniteCheck=True)
        if self._loss[0]:
            self.loss_curve.setData(np.asarray(self._loss[0]), np.asarray(self._loss[1]), connect="finite")
            self.eps_curve.setData(np.asarray(self._epsilon[0]), np.asarray(self._epsilon[1]))

    def _update_buttons(self) -> None:
        training = self._worker is not None
        self.train_button.setEnabled(not training)
        self.pause_button.setEnabled(training)
        self.pause_button.setText("Resume" if self._pause.is_set() else "Pause")
        self.stop_button.setEnabled(training)
        for w in (self.board_size, self.minutes, self.device, self.load_button, self.watch_button,
                  self.play_button):
            w.setEnabled(not training)
        self.save_button.setEnabled(self.agent is not None and not training)
        self.end_button.setEnabled(self.mode in ("watch", "play"))

    def shutdown(self) -> None:
        """Stop the game timers and abort training; the window waits for the worker."""
        self._closing.set()
        self._timer.stop()
        self._plot_timer.stop()
        self.stop_training()
