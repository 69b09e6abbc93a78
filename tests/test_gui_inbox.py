"""Other threads reach the GUI thread only through its inbox, never by calling into Qt themselves."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading

from hwbench_gui.ui import inbox as inbox_module
from hwbench_gui.ui.inbox import GuiInbox


def test_items_from_threads_arrive_on_the_gui_thread_in_the_order_posted(qtbot):
    inbox = GuiInbox()
    seen = []

    def poster(start):
        for i in range(start, start + 100):
            inbox.post(lambda i=i: seen.append((i, threading.current_thread() is threading.main_thread())))

    thread = threading.Thread(target=poster, args=(0,))
    thread.start()
    thread.join()
    poster(100)
    assert seen == []  # nothing is called on the posting threads
    qtbot.waitUntil(lambda: len(seen) == 200, timeout=5000)
    assert seen == [(i, True) for i in range(200)]


def test_a_failing_item_does_not_keep_the_others_from_theirs(qtbot, monkeypatch):
    inbox = GuiInbox()
    hooked, seen = [], []
    monkeypatch.setattr(sys, "excepthook", lambda *info: hooked.append(info[1]))

    def broken():
        raise ValueError("slot failed")

    inbox.post(seen.append, 1)
    inbox.post(broken)
    inbox.post(seen.append, 2)
    assert inbox.drain() == 3
    assert seen == [1, 2]
    assert [str(e) for e in hooked] == ["slot failed"]


def test_the_inbox_drains_often_only_while_a_producer_runs(qtbot):
    class Producer:
        running = True

        def is_running(self):
            return self.running

    inbox = GuiInbox()
    producer = Producer()
    inbox.watch(producer)
    inbox.drain()
    assert inbox._timer.interval() == inbox_module.BUSY_MS
    producer.running = False
    inbox.post(lambda: None)
    inbox.drain()  # the producer has ended but an item was waiting at the drain's start
    assert inbox._timer.interval() == inbox_module.IDLE_MS
    inbox.post(lambda: None)
    assert inbox.drain() == 1  # the idle timer still delivers what nobody announced


def test_workers_sending_while_the_gui_thread_builds_widgets_and_lets_ended_workers_go_never_crash(tmp_path):
    """Workers that emitted Python objects from their threads once froze a test window for good (the GUI
    thread building a QSpinBox waited for a Qt lock, a worker for the GIL); in this very script they
    crashed the process (segmentation fault or bus error) within a second."""
    script = textwrap.dedent("""
        import faulthandler, time
        faulthandler.dump_traceback_later(90, exit=True)
        from PySide6.QtCore import QCoreApplication
        from PySide6.QtWidgets import QApplication, QSpinBox, QVBoxLayout, QWidget
        from hwbench_gui.ui.workers import create_worker

        def work(control, n):
            for i in range(n):
                yield [i] * 10

        app = QApplication([])
        got, workers = [0], []
        for _ in range(300):
            for _ in range(4):
                worker = create_worker(work, 50)
                worker.yielded.connect(lambda value: got.__setitem__(0, got[0] + 1))
                worker.start()
                workers.append(worker)
            holder = QWidget()
            layout = QVBoxLayout(holder)
            for _ in range(30):
                layout.addWidget(QSpinBox())
            holder.deleteLater()
            QCoreApplication.processEvents()
            # as the window's WorkerPool does: an ended worker is let go, its last values maybe unsent
            workers = [w for w in workers if not w.is_finished()]
        deadline = time.monotonic() + 60
        while got[0] < 300 * 4 * 50 and time.monotonic() < deadline:
            QCoreApplication.processEvents()
        print("delivered", got[0])
    """)
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["delivered", str(300 * 4 * 50)]


def test_one_drain_stops_at_its_time_budget_and_the_next_goes_on_in_order(qtbot):
    import time

    inbox = GuiInbox()
    seen = []
    for i in range(10):
        inbox.post(lambda i=i: (time.sleep(0.004), seen.append(i)))  # 10 x 4 ms against a 10 ms budget
    first = inbox.drain()
    assert 1 <= first <= 3 and seen == list(range(first))
    while inbox.pending():
        inbox.drain()
    assert seen == list(range(10))
