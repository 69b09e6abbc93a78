"""Packaging: icons, the desktop entry and its installer (fast); the PyInstaller build and its
self-test (slow: several GB and many minutes, so marked ``slow`` and left out of the default run)."""

from __future__ import annotations

import configparser
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import REPO_ROOT

PACKAGING = REPO_ROOT / "packaging"
ICONS = REPO_ROOT / "resources" / "icons"
ICON_PNG_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


def _desktop_entry(path: Path) -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # keys are case-sensitive
    parser.read(path, encoding="utf-8")
    return parser["Desktop Entry"]


def test_icons_are_there_and_small():
    from PIL import Image

    for size in ICON_PNG_SIZES:
        with Image.open(ICONS / f"hwbench-{size}.png") as image:
            assert image.size == (size, size)
            assert image.mode == "RGBA"
    with Image.open(ICONS / "hwbench.ico") as ico:
        assert (256, 256) in ico.info["sizes"] and (16, 16) in ico.info["sizes"]
    with Image.open(ICONS / "hwbench.icns") as icns:
        assert icns.format == "ICNS"
    assert (ICONS / "hwbench.svg").read_text(encoding="utf-8").lstrip().startswith("<svg")
    for path in ICONS.iterdir():
        assert path.stat().st_size < 200_000, f"{path} is {path.stat().st_size} bytes"


def test_icon_script_reproduces_the_committed_svg(tmp_path):
    spec = importlib.util.spec_from_file_location("make_icons", PACKAGING / "make_icons.py")
    make_icons = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_icons)
    written = {p.name for p in make_icons.write_all(tmp_path)}
    assert {"hwbench.svg", "hwbench.ico", "hwbench.icns", "hwbench-16.png", "hwbench-512.png"} <= written
    assert (tmp_path / "hwbench.svg").read_text() == (ICONS / "hwbench.svg").read_text()


def test_desktop_entry_template():
    entry = _desktop_entry(PACKAGING / "hwbench.desktop")
    assert entry["Type"] == "Application"
    assert entry["Icon"] == "hwbench"
    assert entry["Terminal"] == "false"
    assert entry["Exec"] == "hwbench-gui"
    assert entry["Categories"].endswith(";")
    # Qt sets WM_CLASS to ("hwbench-gui", applicationName "hwbench"): docks match the window to the entry.
    assert entry["StartupWMClass"] == "hwbench"


def test_install_desktop_entry_points_at_the_executable(tmp_path):
    folder = tmp_path / "my apps"
    folder.mkdir()
    exe = folder / "hwbench-gui"
    exe.write_text("#!/bin/sh\nexit 0\n")
    exe.chmod(0o755)
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "share"), HOME=str(tmp_path))
    script = PACKAGING / "install-desktop-entry.sh"
    done = subprocess.run(["bash", str(script), str(exe)], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    entry = _desktop_entry(tmp_path / "share" / "applications" / "hwbench.desktop")
    assert entry["Exec"] == f'"{exe}"'  # quoted: the path has a space
    assert entry["TryExec"] == str(exe)
    hicolor = tmp_path / "share" / "icons" / "hicolor"
    assert (hicolor / "scalable" / "apps" / "hwbench.svg").is_file()
    for size in ICON_PNG_SIZES:
        assert (hicolor / f"{size}x{size}" / "apps" / "hwbench.png").is_file()

    done = subprocess.run(["bash", str(script), "--uninstall"], env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "share" / "applications" / "hwbench.desktop").exists()
    assert not (hicolor / "scalable" / "apps" / "hwbench.svg").exists()


def test_install_desktop_entry_refuses_a_missing_executable(tmp_path):
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "share"), HOME=str(tmp_path))
    done = subprocess.run(["bash", str(PACKAGING / "install-desktop-entry.sh"), str(tmp_path / "nope")], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "not an executable" in done.stderr
    assert not (tmp_path / "share" / "applications").exists()


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_frozen_build_passes_its_self_test(tmp_path):
    if importlib.util.find_spec("PyInstaller") is None:
        pytest.skip("PyInstaller is not installed (pip install pyinstaller)")
    env = dict(os.environ, PYTHON=sys.executable, DIST_DIR=str(tmp_path / "dist"),
               WORK_DIR=str(tmp_path / "work"), QT_QPA_PLATFORM="offscreen")
    try:
        build = subprocess.run(["bash", str(PACKAGING / "build.sh")], cwd=REPO_ROOT, env=env, capture_output=True,
                               text=True, timeout=3000)
        assert build.returncode == 0, build.stdout[-4000:] + build.stderr[-4000:]
        folder = "hwbench.app/Contents/MacOS" if sys.platform == "darwin" else "hwbench-gui"
        exe = tmp_path / "dist" / folder / "hwbench-gui"
        assert exe.is_file(), build.stdout[-2000:]
        done = subprocess.run([str(exe), "--self-test"], env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stdout + done.stderr[-4000:]
        assert done.stdout.splitlines()[-1].startswith("self-test passed"), done.stdout
        assert "ok   benchmark cpu.decode" in done.stdout  # multiprocessing spawn inside the frozen worker
    finally:
        # The bundle is several GB: pytest keeps its last temporary folders, so remove it here.
        shutil.rmtree(tmp_path / "dist", ignore_errors=True)
        shutil.rmtree(tmp_path / "work", ignore_errors=True)


def test_a_built_wheel_carries_the_shipped_resources(tmp_path):
    """A plain `pip install .` (not editable) must find the demo targets, cfgs, agent and references."""
    import zipfile
    from importlib.metadata import PackageNotFoundError, version

    # Built without build isolation (no download): the environment must meet pyproject's build-system needs.
    try:
        major, minor = (int(x) for x in version("setuptools").split(".")[:2])
    except (PackageNotFoundError, ValueError):
        pytest.skip("setuptools is not installed here: cannot build a wheel without build isolation")
    if (major, minor) < (77, 0):
        pytest.skip(f"setuptools {version('setuptools')} here is older than the build needs (77: SPDX licence)")
    # From a copy of the source: a build/ folder left in the checkout holds copies of every module, so a
    # package missing from pyproject's list would still reach the wheel.
    source = tmp_path / "src"
    shutil.copytree(REPO_ROOT, source, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", "out", ".whl", ".gl"))
    wheels = tmp_path / "wheels"
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                            "-w", str(wheels), str(source)], capture_output=True, text=True, timeout=300,
                           env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    assert build.returncode == 0, build.stderr[-2000:]
    (wheel,) = wheels.glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = {"hwbench_gui/" + str(p.relative_to(REPO_ROOT)).replace(os.sep, "/")
               for p in (REPO_ROOT / "resources").rglob("*") if p.is_file()}
    shipped |= {str(p.relative_to(REPO_ROOT)).replace(os.sep, "/")
                for p in (REPO_ROOT / "hwbench_gui").rglob("*.py")}  # every module: the package list is complete
    assert shipped and shipped <= names, sorted(shipped - names)[:10]


@pytest.fixture
def bundle_without_tensorflow(monkeypatch):
    """This process as a packaged build sees itself: ``sys.frozen`` set and no TensorFlow to find."""
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *args: None if name.split(".")[0] == "tensorflow" else real_find_spec(name, *args))


def test_a_bundle_greys_the_framework_it_does_not_hold_with_a_reason_for_a_bundle(qtbot, qsettings, tmp_path,
                                                                                 bundle_without_tensorflow):
    from hwbench_gui.engine.run import registry
    from hwbench_gui.engine.run.suites import SuiteRun
    from hwbench_gui.engine.run.queue import RunSkipped
    from hwbench_gui.ui.benchmarks import BenchmarksTab
    from hwbench_gui.ui.context import AppContext

    reason = registry.framework_missing_reason("tf")
    assert "not part of this packaged hwbench" in reason and "pip" not in reason
    assert registry.framework_missing_reason("torch") is None

    tab = BenchmarksTab(AppContext(settings=qsettings, results_dir=tmp_path))
    qtbot.addWidget(tab)
    tab.select("model.resnet50")
    combo = tab.form().editor("framework")
    tf_index = [combo.itemText(i).split()[0] for i in range(combo.count())].index("tf")
    tf_item = combo.model().item(tf_index)
    assert not tf_item.isEnabled() and tf_item.toolTip() == reason and "not available" in tf_item.text()
    assert combo.currentText() == "torch" and tab.form().values()["framework"] == "torch"
    with pytest.raises(RunSkipped, match="not part of this packaged hwbench"):
        tab.catalogue.prepare_suite_run(SuiteRun("model.resnet50", {"framework": "tf", "mode": "train"}))
    tab.shutdown()


def test_installed_from_source_the_missing_framework_keeps_its_pip_advice(monkeypatch):
    from hwbench_gui.engine import frameworks

    monkeypatch.delattr(sys, "frozen", raising=False)
    assert frameworks.missing_reason("TensorFlow", "pip install 'hwbench-gui[tf]'") == (
        "TensorFlow is not installed (pip install 'hwbench-gui[tf]')")
