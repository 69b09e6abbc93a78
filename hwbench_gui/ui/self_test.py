"""``hwbench-gui --self-test``: prove that this install (or frozen build) works, end to end.

Checks, one printed line each: resources are there, the window opens with its icon, every tab
and every demo page builds, the PyTorch probe child runs, small CPU benchmarks run through the
child-process runner (``host.membw``, and ``cpu.decode`` whose worker pool uses multiprocessing
spawn, the part a frozen build most often breaks), and the result document is written and read
back. Results and settings go to a temporary folder: the user's own are not touched.

Without a display on Linux the caller sets ``QT_QPA_PLATFORM=offscreen`` before Qt starts
(:func:`needs_offscreen`). Exit status 0 when every check passed, 1 otherwise.
"""

from __future__ import annotations

import importlib
import os
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Callable

SELF_TEST_FLAG = "--self-test"

#: Folders under ``resources/`` that the app reads at run time.
RESOURCE_FOLDERS = ("icons", "snake", "motion", "tracking", "reference")

#: The benchmarks run, with parameters small enough for a few seconds on two cores. host.membw uses
#: numpy because the torch probe already proves torch imports in a child of this executable.
BENCHMARK_RUNS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("host.membw", {"array_mib": 16, "threads": [1], "engine": "numpy", "repeats": 2}),
    ("cpu.decode", {"count": 4, "image_size": 64, "workers": [1], "repeats": 1, "repeat_s": 0.05}),
)
BENCHMARK_TIMEOUT_S = 180.0
WINDOW_READY_TIMEOUT_S = 60.0


class CheckFailed(Exception):
    """A check's reason for failing (the message is printed as is)."""


@dataclass
class _Check:
    name: str
    ok: bool
    detail: str
    seconds: float


def needs_offscreen(environ: dict[str, str] | None = None) -> bool:
    """True on Linux when there is no X11/Wayland display and no Qt platform was chosen."""
    env = os.environ if environ is None else environ
    return (sys.platform.startswith("linux") and not env.get("QT_QPA_PLATFORM")
            and not env.get("DISPLAY") and not env.get("WAYLAND_DISPLAY"))


class SelfTest:
    """Runs the checks in order; :meth:`run` returns the exit status."""

    def __init__(self, out: IO[str]):
        self.out = out
        self.checks: list[_Check] = []
        self.window = None

    def check(self, name: str, func: Callable[[], str]) -> bool:
        """Run ``func`` (returns a detail line, raises on failure) and print its line."""
        start = time.perf_counter()
        try:
            detail, ok = func(), True
        except CheckFailed as exc:
            detail, ok = str(exc), False
        except Exception as exc:
            detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            detail += "\n" + "".join(traceback.format_tb(exc.__traceback__, limit=-4)).rstrip()
            ok = False
        result = _Check(name, ok, detail, time.perf_counter() - start)
        self.checks.append(result)
        mark = "ok  " if ok else "FAIL"
        first, *rest = detail.splitlines() or [""]
        self.out.write(f"{mark} {name}: {first} ({result.seconds:.1f} s)\n")
        self.out.writelines(f"       {line}\n" for line in rest)
        self.out.flush()
        return ok

    def run(self) -> int:
        from PySide6.QtCore import QSettings

        from hwbench_gui.engine import paths
        from hwbench_gui.ui import app as app_module

        self.out.write(f"hwbench self-test ({'frozen build ' + sys.executable if _frozen() else 'from source'})\n")
        with tempfile.TemporaryDirectory(prefix="hwbench-self-test-") as tmp:
            results = Path(tmp) / "results"
            # The window's context and the runner both read this: nothing lands in the user's results.
            os.environ[paths.RESULTS_ENV] = str(results)
            qt_app = app_module.create_app([sys.argv[0] if sys.argv else "hwbench-gui"])
            self.check("platform", lambda: f"Qt platform {qt_app.platformName()}, Python {sys.version.split()[0]}")
            self.check("resources", self._resources)
            self.check("window icon", lambda: self._window_icon(qt_app))
            settings = QSettings(str(Path(tmp) / "settings.ini"), QSettings.IniFormat)
            if self.check("window", lambda: self._open_window(app_module, settings)):
                self._tabs()
            self.check("torch probe", self._torch_probe)
            for bench_id, params in BENCHMARK_RUNS:
                self.check(f"benchmark {bench_id}", lambda b=bench_id, p=params: self._benchmark(b, p, results))
            self.check("user data folder", self._user_data_dir)
            if self.window is not None:
                self.check("close window", lambda: self._close_window(qt_app))
        return self.summary()

    def summary(self) -> int:
        """Print the closing line; 0 when every check passed (and there was one), else 1."""
        failed = [c for c in self.checks if not c.ok]
        if not self.checks:
            self.out.write("self-test FAILED: no check ran\n")
            return 1
        if failed:
            self.out.write(f"self-test FAILED: {len(failed)} of {len(self.checks)} checks: "
                           + "; ".join(f"{c.name}: {c.detail.splitlines()[0]}" for c in failed) + "\n")
            return 1
        self.out.write(f"self-test passed: {len(self.checks)} checks\n")
        return 0

    # --- checks ------------------------------------------------------------------------------
    def _resources(self) -> str:
        from hwbench_gui.engine.paths import resources_dir

        root = resources_dir()
        missing = [name for name in RESOURCE_FOLDERS if not (root / name).is_dir()]
        if missing:
            raise CheckFailed(f"{root} lacks {', '.join(missing)}")
        count = sum(1 for p in root.rglob("*") if p.is_file())
        return f"{root} ({count} files)"

    def _window_icon(self, qt_app) -> str:
        icon = qt_app.windowIcon()
        if icon.isNull():
            raise CheckFailed("the application has no window icon (resources/icons/hwbench-*.png not found?)")
        sizes = sorted(s.width() for s in icon.availableSizes())
        return f"sizes {', '.join(map(str, sizes))}"

    def _open_window(self, app_module, settings) -> str:
        window = app_module.build_window(settings=settings, start_sampler=True, build_hidden_tabs=False)
        self.window = window
        ready = []
        window.ready.connect(lambda: ready.append(True))
        window.show()
        if not _process_until(lambda: bool(ready), WINDOW_READY_TIMEOUT_S):
            raise CheckFailed(f"the window did not signal ready within {WINDOW_READY_TIMEOUT_S:g} s")
        return f"shown, {window.tabs.count()} tabs"

    def _tabs(self) -> None:
        from hwbench_gui.ui import main_window

        present = [spec.title for spec in main_window.available_tabs()]
        for spec in main_window.TABS:
            self.check(f"tab {spec.title}", lambda s=spec, p=present: self._tab(s, p))
        demos = self.window.tab_widget("Demos") if "Demos" in present else None
        pages = getattr(importlib.import_module("hwbench_gui.ui.demos.tab"), "PAGES", ())
        for title, module_name, class_name in pages:
            self.check(f"demo page {title}", lambda t=title, m=module_name, c=class_name: self._page(demos, t, m, c))

    def _tab(self, spec, present: list[str]) -> str:
        if spec.title not in present:
            raise CheckFailed(f"module {spec.module} is not in this build")
        index = present.index(spec.title)
        self.window.tabs.setCurrentIndex(index)
        widget = self.window.tab_widget(spec.title)
        _process_for(0.2)
        return _expect_class(widget, spec.module, spec.class_name)

    def _page(self, demos, title: str, module_name: str, class_name: str) -> str:
        if demos is None or not hasattr(demos, "page"):
            raise CheckFailed("the Demos tab did not build")
        titles = [demos.tabs.tabText(i) for i in range(demos.tabs.count())]
        if title not in titles:
            raise CheckFailed("the Demos tab has no such page")
        demos.tabs.setCurrentIndex(titles.index(title))  # a page is built when first shown
        _process_for(0.2)
        return _expect_class(demos.page(title), module_name, class_name)

    def _torch_probe(self) -> str:
        from hwbench_gui.engine.inventory import torch_probe

        report = torch_probe.run_probe(timeout_s=120.0)
        if not report.get("torch_version"):
            raise CheckFailed(report.get("reason") or "the probe returned no torch version")
        cuda = (f"{report.get('device_count')} CUDA device(s)" if report.get("cuda_available")
                else f"no CUDA device: {report.get('reason')}")
        return f"torch {report['torch_version']}, {cuda}"

    def _benchmark(self, bench_id: str, params: dict[str, Any], results: Path) -> str:
        from hwbench_gui.engine.results import library, store
        from hwbench_gui.engine.run import registry, runner

        reason = registry.availability(registry.get(bench_id))
        if reason:
            raise CheckFailed(f"not available here: {reason}")
        run = runner.run_benchmark(bench_id, params, timeout_s=BENCHMARK_TIMEOUT_S, results_dir=results)
        if run.status != "ok":
            tail = "\n".join((run.document.get("log_tail") or [])[-8:])
            raise CheckFailed(f"status {run.status}: {run.reason}" + (f"\n{tail}" if tail else ""))
        if run.path is None:
            raise CheckFailed(run.save_error or "the result was not written")
        loaded = store.load_result(run.path)
        if loaded.get("id") != run.document.get("id") or loaded["benchmark"].get("id") != bench_id:
            raise CheckFailed(f"{run.path} read back does not match the document written")
        listed = [d["_path"] for d in library.list_results(results)[0]]
        if str(run.path) not in listed:
            raise CheckFailed(f"{run.path} is not listed by library.list_results")
        figure = _headline(loaded)
        return f"{figure + ', ' if figure else ''}result written and read back"

    def _user_data_dir(self) -> str:
        from hwbench_gui.engine import paths

        folder = paths.user_data_dir()
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".self-test-"):
            pass
        return f"{folder} is writable (results go to {folder / 'results'} unless ${paths.RESULTS_ENV} is set)"

    def _close_window(self, qt_app) -> str:
        self.window.close()
        _process_for(0.2)
        sampler = self.window.context.sampler
        if sampler is not None and getattr(sampler, "running", False):
            raise CheckFailed("the telemetry sampler still runs after the window closed")
        return "closed; tabs and sampler stopped"


def _expect_class(widget, module_name: str, class_name: str) -> str:
    expected = getattr(importlib.import_module(module_name), class_name)
    if not isinstance(widget, expected):
        text = widget.text() if hasattr(widget, "text") else type(widget).__name__
        raise CheckFailed(f"did not build: {text.strip()}")
    return class_name


def _headline(doc: dict[str, Any]) -> str:
    figure = doc.get("figure")
    if isinstance(figure, dict) and isinstance(figure.get("value"), (int, float)):
        return f"{figure.get('name')} {figure['value']:.4g} {figure.get('unit', '')}".rstrip()
    return ""


def _process_until(predicate: Callable[[], bool], timeout_s: float) -> bool:
    from PySide6.QtWidgets import QApplication

    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            return False
        QApplication.processEvents()
        time.sleep(0.01)
    return True


def _process_for(seconds: float) -> None:
    _process_until(lambda: False, seconds)


def _frozen() -> bool:
    return bool(getattr(sys, "frozen", False))


def output_stream() -> IO[str]:
    """stdout, or where a windowed Windows build has none, ``self-test.txt`` in the user data folder."""
    if sys.stdout is not None:
        return sys.stdout
    from hwbench_gui.engine.paths import user_data_dir

    folder = user_data_dir()
    folder.mkdir(parents=True, exist_ok=True)
    return open(folder / "self-test.txt", "w", encoding="utf-8")


def main() -> int:
    """Run the self-test; Qt must not have started yet (the platform is chosen here)."""
    if needs_offscreen():
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    out = output_stream()
    try:
        return SelfTest(out).run()
    except Exception:  # the harness itself broke: still a reason, never a silent crash
        out.write("self-test FAILED: " + traceback.format_exc())
        return 1
    finally:
        out.flush()
