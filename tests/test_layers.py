"""The layering ARCHITECTURE.md promises, checked by import-linter and by real imports."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from support import REPO_ROOT


def test_import_contracts_hold():
    """engine/, demos/, commands and cli never import PySide6, pyqtgraph or the ui layer."""
    lint_imports = Path(sys.executable).parent / "lint-imports"
    proc = subprocess.run([str(lint_imports), str(REPO_ROOT / "pyproject.toml")], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "KEPT" in proc.stdout and "BROKEN" not in proc.stdout


def test_suites_and_the_run_queue_import_one_way():
    """The queue runs suites; the suite definitions never reach back into the queue (not even lazily)."""
    import grimp

    graph = grimp.build_graph("hwbench_gui")
    assert graph.direct_import_exists(importer="hwbench_gui.engine.run.queue", imported="hwbench_gui.engine.run.suites")
    assert graph.find_shortest_chain(importer="hwbench_gui.engine.run.suites",
                                     imported="hwbench_gui.engine.run.queue") is None


def _run_isolated(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=120, env={**__import__("os").environ, "QT_QPA_PLATFORM": "offscreen"})


def test_cli_path_never_loads_qt():
    proc = _run_isolated("""
        import sys
        from hwbench_gui import cli
        cli.build_parser()
        import hwbench_gui.engine.nvml, hwbench_gui.engine.paths, hwbench_gui.engine.spec.benchmark
        bad = sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'pyqtgraph', 'shiboken6'))
        print(bad)
        assert not bad, bad
    """)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_gui_start_does_not_import_frameworks():
    """Showing the window (first tab built, sampler running) loads neither torch nor TensorFlow."""
    proc = _run_isolated("""
        import sys, tempfile, os
        os.environ["HWBENCH_DATA_DIR"] = tempfile.mkdtemp()
        from PySide6.QtCore import QSettings, QTimer
        from hwbench_gui.ui.app import create_app, build_window
        app = create_app([])
        settings = QSettings(os.path.join(tempfile.mkdtemp(), "s.ini"), QSettings.IniFormat)
        window = build_window(settings)
        window.ready.connect(lambda: QTimer.singleShot(300, window.close))
        window.show()
        app.exec()
        heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'tensorflow', 'keras', 'jax'))
        print("heavy:", heavy[:5])
        assert not heavy, heavy
    """)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "heavy: []" in proc.stdout


def test_building_every_tab_while_idle_does_not_import_frameworks():
    """The tabs the window builds ahead, while idle, load neither torch nor TensorFlow either (the GUI
    process stays small: frameworks live in the benchmarks' and demos' child processes)."""
    proc = _run_isolated("""
        import sys, tempfile, os, gc
        os.environ["HWBENCH_DATA_DIR"] = tempfile.mkdtemp()
        from PySide6.QtCore import QSettings, QTimer
        from hwbench_gui.ui.app import create_app, build_window
        app = create_app([])
        settings = QSettings(os.path.join(tempfile.mkdtemp(), "s.ini"), QSettings.IniFormat)
        window = build_window(settings, start_sampler=False)
        def check():
            if gc.get_freeze_count() and all(h.widget is not None for h in window._lazy):
                window.close()
        poll = QTimer(); poll.timeout.connect(check); poll.start(100)
        QTimer.singleShot(60000, window.close)
        window.show()
        app.exec()
        print("built:", sum(h.widget is not None for h in window._lazy), "of", len(window._lazy))
        heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'tensorflow', 'keras', 'jax'))
        print("heavy:", heavy[:5])
        assert not heavy, heavy
    """)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "heavy: []" in proc.stdout and "built: 5 of 5" in proc.stdout


def test_the_lazy_import_check_can_fail():
    """The check above really sees torch when something imports it (so a pass means something)."""
    proc = _run_isolated("""
        import sys, importlib.util
        if importlib.util.find_spec("torch") is None:
            print("no torch"); raise SystemExit(0)
        import torch
        assert any(m.split('.')[0] == 'torch' for m in sys.modules)
        print("seen")
    """)
    assert proc.returncode == 0, proc.stderr


def test_entry_dispatches_every_flag(monkeypatch):
    """One dispatch in ``__main__``: each flag reaches its mode, anything else is the window."""
    from hwbench_gui import __main__ as entry
    from hwbench_gui import cli
    from hwbench_gui.engine.child import CLI_WORD, SELF_TEST_FLAG, TORCH_PROBE_FLAG, WORKER_FLAG
    from hwbench_gui.engine.inventory import torch_probe
    from hwbench_gui.engine.run import worker
    from hwbench_gui.ui import self_test

    monkeypatch.setattr(worker, "main", lambda args: ("worker", args))
    monkeypatch.setattr(torch_probe, "main", lambda: "probe")
    monkeypatch.setattr(cli, "main", lambda args: ("cli", args))
    monkeypatch.setattr(self_test, "main", lambda: "self-test")
    assert entry.dispatch([WORKER_FLAG, "{}"]) == ("worker", ["{}"])
    assert entry.dispatch([TORCH_PROBE_FLAG]) == "probe"
    assert entry.dispatch([CLI_WORD, "list"]) == ("cli", ["list"])
    assert entry.dispatch([SELF_TEST_FLAG]) == "self-test"
    assert entry.dispatch([]) is None


def test_about_does_not_import_the_app_module():
    """Help → About reads the log path from engine/paths: about → app → main_window → about was a loop."""
    proc = _run_isolated("""
        import sys
        from PySide6.QtWidgets import QApplication
        app = QApplication([])
        from hwbench_gui.ui.about import AboutDialog
        dialog = AboutDialog()
        loaded = sorted(m for m in ("hwbench_gui.ui.app", "hwbench_gui.ui.main_window") if m in sys.modules)
        print("loaded:", loaded)
        assert not loaded, loaded
        assert "hwbench-gui.log" in dialog.log_label.text()
    """)
    assert proc.returncode == 0, proc.stdout + proc.stderr
