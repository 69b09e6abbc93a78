"""The garbage collector in the window: collections on the GUI thread only, at CPython's own thresholds."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import textwrap

import pytest

from hwbench_gui.ui.heap import due_generation


@pytest.mark.parametrize("counts, generation", [
    ((700, 0, 0), None),     # the youngest count must pass its threshold, not reach it
    ((701, 0, 0), 0),
    ((701, 10, 0), 0),
    ((701, 11, 0), 1),       # ten young collections since the last of generation 1
    ((701, 11, 10), 1),
    ((701, 11, 11), 2),
    ((701, 3, 50), 0),       # an old count alone does not reach past a young one under its threshold
    ((5, 50, 50), None),
])
def test_the_generation_due_follows_cpythons_thresholds(counts, generation):
    assert due_generation(counts, (700, 10, 10)) == generation


def test_a_first_threshold_of_zero_means_collection_is_off():
    assert due_generation((10**6, 10**6, 10**6), (0, 10, 10)) is None


def test_workers_allocating_while_the_gui_thread_drops_qt_objects_in_cycles_never_collect_off_the_gui_thread():
    """CI's window froze for good with the GUI thread in QWidget.setToolTip and a worker thread in json.loads: the
    worker's allocation ran a collection, which destroyed a closed page's Qt objects (in a reference cycle) on
    the worker's thread. Here workers allocate cycles of their own while the GUI thread builds and drops widgets
    that only the collector can free; every collection must run on the GUI thread, and they must run."""
    script = textwrap.dedent("""
        import faulthandler, gc, threading, time
        faulthandler.dump_traceback_later(90, exit=True)
        from PySide6.QtCore import QCoreApplication
        from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget
        from hwbench_gui.ui.app import create_app
        from hwbench_gui.ui.workers import create_worker

        threads = []
        gc.callbacks.append(lambda phase, info: phase == "start" and threads.append(threading.get_ident()))

        def work(control, n):
            for i in range(n):
                junk = [[] for _ in range(200)]
                for item in junk:
                    item.append(junk)  # a cycle for the collector
                yield i

        app = create_app([])
        workers = []
        for _ in range(60):
            for _ in range(3):
                worker = create_worker(work, 40)
                worker.start()
                workers.append(worker)
            holder = QWidget()
            holder.me = holder  # freed by the collector only
            layout = QVBoxLayout(holder)
            for i in range(20):
                label = QLabel(str(i))
                label.setToolTip("a tip")
                layout.addWidget(label)
            del holder
            QCoreApplication.processEvents()
            workers = [w for w in workers if not w.is_finished()]
        deadline = time.monotonic() + 60
        while workers and time.monotonic() < deadline:
            QCoreApplication.processEvents()
            time.sleep(0.01)
            workers = [w for w in workers if not w.is_finished()]
        for _ in range(3):
            time.sleep(0.15)
            QCoreApplication.processEvents()
        main = threading.main_thread().ident
        print("enabled", gc.isenabled(), "collections", len(threads), "off-gui", sum(t != main for t in threads))
    """)
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    words = done.stdout.split()
    assert words[:2] == ["enabled", "False"], done.stdout
    assert int(words[3]) > 0, done.stdout  # the timer collected
    assert words[4:] == ["off-gui", "0"], done.stdout


def test_the_window_collects_on_its_timer_once_a_collection_is_due(qtbot):
    import threading

    from hwbench_gui.ui.app import create_app

    create_app([])
    assert not gc.isenabled()
    seen = []

    def record(phase, info):
        if phase == "start":
            seen.append((threading.get_ident(), info["generation"]))

    gc.collect()  # the counts start from nothing
    gc.callbacks.append(record)
    try:
        alive = [[] for _ in range(2000)]  # young objects that live: what makes a collection due
        qtbot.waitUntil(lambda: bool(seen), timeout=5000)
    finally:
        gc.callbacks.remove(record)
    assert seen[0] == (threading.main_thread().ident, 0)
    assert len(alive) == 2000
