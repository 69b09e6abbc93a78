"""The Inventory tab renders recorded inventories and collects new ones off the GUI thread."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QSettings  # noqa: E402
from PySide6.QtGui import QGuiApplication  # noqa: E402
from PySide6.QtWidgets import QGroupBox, QLabel, QTableWidget  # noqa: E402

from hwbench_gui.engine.inventory import render_text, text  # noqa: E402
from hwbench_gui.ui.context import AppContext  # noqa: E402
from hwbench_gui.ui.inventory import InventoryTab  # noqa: E402

FIXTURES = Path(__file__).resolve().parent / "fixtures"
FIXTURE_FILES = sorted(FIXTURES.glob("inventory_*.json"))


@pytest.fixture
def tab(qtbot, tmp_path):
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat)
    messages = []
    context = AppContext(settings=settings, results_dir=tmp_path / "results",
                         show_status=lambda message, timeout_ms=0: messages.append(message))
    widget = InventoryTab(context)
    widget.messages = messages
    qtbot.addWidget(widget)
    yield widget
    widget.shutdown()
    context.workers.shutdown(timeout_s=10)


def shown_text(widget) -> str:
    parts = [label.text() for label in widget.findChildren(QLabel)]
    parts += [box.title() for box in widget.findChildren(QGroupBox)]
    for table in widget.findChildren(QTableWidget):
        parts += [table.item(r, c).text() for r in range(table.rowCount()) for c in range(table.columnCount())]
    return "\n".join(parts)


def test_fixtures_exist():
    assert FIXTURE_FILES, "tests/fixtures/inventory_*.json missing"


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.stem)
def test_renders_fixture(tab, path):
    inv = json.loads(path.read_text())
    tab.set_inventory(inv)
    shown = shown_text(tab)
    assert inv["hostname"] in shown
    cpu = inv["cpu"]
    if cpu.get("model"):
        assert cpu["model"] in shown
    assert "Logical cores:" in shown and str(cpu["logical_cores"]) in shown
    assert text.fmt_size(inv["memory"]["total_bytes"]) in shown
    for disk in inv["disks"]["devices"]:
        assert text.disk_title(disk) in shown
    if inv["software"].get("torch"):
        assert inv["software"]["torch"] in shown

    gpus = inv["gpus"]
    if not gpus:
        assert text.no_gpu_text(inv["gpu_system"]["reason"])[0] in shown
        assert "Peak FP32" not in shown  # GPU-only fields are omitted
    for gpu in gpus:
        assert text.gpu_title(gpu) in shown
        for key in ("sm_count", "cuda_cores", "tensor_cores", "memory_bus_width_bits", "memory_clock_max_mhz"):
            if gpu.get(key) is not None:
                assert str(gpu[key]) in shown, key
        if gpu.get("vram_total_bytes") is not None:
            assert text.fmt_mib(gpu["vram_total_bytes"]) in shown
        if gpu.get("memory_bandwidth_gb_per_s") is not None:
            assert text.fmt_gb_per_s(gpu["memory_bandwidth_gb_per_s"]) in shown
        if gpu.get("pcie_gen_current") is not None:
            assert f"Gen {gpu['pcie_gen_current']} x{gpu['pcie_width_current']}" in shown
        peaks = gpu.get("peaks") or {}
        if peaks.get("fp32_tflops") is not None:
            assert text.fmt_tflops(peaks["fp32_tflops"]) in shown
        for warning in gpu.get("warnings") or []:
            assert warning in shown
    if len(gpus) > 1 and inv["gpu_system"].get("topology"):
        assert len(tab.findChildren(QTableWidget)) >= 1


@pytest.mark.parametrize("path", FIXTURE_FILES[:1], ids=lambda p: p.stem)
def test_copy_and_save(tab, path, tmp_path):
    inv = json.loads(path.read_text())
    assert not tab.copy_button.isEnabled()
    tab.set_inventory(inv)
    assert tab.copy_button.isEnabled() and tab.save_button.isEnabled()
    tab.copy_as_text()
    assert QGuiApplication.clipboard().text() == render_text(inv)
    written = tab.save_json(tmp_path / "out" / "inv.json")
    assert json.loads(written.read_text()) == inv


def test_refresh_collects_off_the_gui_thread(tab, qtbot, monkeypatch):
    import hwbench_gui.engine.inventory as engine

    real_collect = engine.collect
    threads = []

    def collect(use_torch_probe=True, cancel=None, **kwargs):
        threads.append(threading.current_thread())
        return real_collect(use_torch_probe=False, cancel=cancel)

    monkeypatch.setattr(engine, "collect", collect)
    with qtbot.waitSignal(tab.inventory_changed, timeout=60000):
        tab.refresh()
        assert tab.busy.isVisibleTo(tab) and not tab.refresh_button.isEnabled()
    qtbot.waitUntil(lambda: not tab.is_busy(), timeout=10000)
    assert threads and threads[0] is not threading.main_thread()
    assert not tab.busy.isVisibleTo(tab) and tab.refresh_button.isEnabled()
    assert tab.inventory["cpu"]["logical_cores"] == os.cpu_count()
    assert "Inventory collected" in tab.messages


def test_shutdown_cancels_a_running_collection(tab, qtbot, monkeypatch):
    import hwbench_gui.engine.inventory as engine

    started = threading.Event()

    def collect(use_torch_probe=True, cancel=None, **kwargs):
        started.set()
        cancel.wait(30)
        return {"error": "cancelled"}

    monkeypatch.setattr(engine, "collect", collect)
    tab.refresh()
    assert started.wait(5)
    tab.shutdown()
    assert not tab.is_busy()


@pytest.mark.parametrize("path", FIXTURE_FILES[:1], ids=lambda p: p.stem)
def test_set_inventory_wins_over_a_running_collection(tab, qtbot, monkeypatch, path):
    import hwbench_gui.engine.inventory as engine

    started = threading.Event()

    def collect(use_torch_probe=True, cancel=None, **kwargs):
        started.set()
        cancel.wait(30)
        return {"schema_version": 1, "hostname": "should-not-appear", "gpus": [], "gpu_system": {}}

    monkeypatch.setattr(engine, "collect", collect)
    tab.refresh()
    assert started.wait(5)
    recorded = json.loads(path.read_text())
    tab.set_inventory(recorded)
    qtbot.waitUntil(lambda: not tab.is_busy(), timeout=10000)
    qtbot.wait(50)
    assert tab.inventory is recorded
    assert "should-not-appear" not in shown_text(tab)


def test_collecting_replaces_the_placeholder(tab, qtbot, monkeypatch):
    import hwbench_gui.engine.inventory as engine

    release = threading.Event()

    def collect(use_torch_probe=True, cancel=None, **kwargs):
        release.wait(10)
        return {"error": "stopped by the test"}

    monkeypatch.setattr(engine, "collect", collect)
    assert "starts when this tab is first shown" in tab.scroll.widget().text()
    tab.refresh()
    assert "Collecting the inventory" in tab.scroll.widget().text()
    release.set()
    qtbot.waitUntil(lambda: not tab.is_busy(), timeout=10000)
    assert "stopped by the test" in tab.scroll.widget().text()


def test_time_is_local_with_its_zone(tab, monkeypatch):
    import time

    from hwbench_gui.ui.inventory.tab import local_time

    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    try:
        assert local_time("2026-12-02T12:52:44+00:00") == "2026-12-02 21:52:44 JST"
        inv = json.loads((FIXTURES / "inventory_cpu_only.json").read_text())
        tab.set_inventory(inv)
        assert "collected 2026-12-02 21:52:44 JST" in tab.status.text()
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


def test_the_nvml_error_is_shown_once(tab):
    inv = json.loads((FIXTURES / "inventory_cpu_only.json").read_text())
    reason = inv["gpu_system"]["reason"]
    tab.set_inventory(inv)
    shown = [label.text() for label in tab.findChildren(QLabel)]
    assert sum(reason in text for text in shown) == 1  # the detail line
    assert sum("No NVIDIA GPU or driver found" in text for text in shown) == 1
    assert any("see GPUs above" in text for text in shown)  # the driver rows point there


def test_tensorflow_without_a_gpu_is_explained(tab):
    inv = json.loads((FIXTURES / "inventory_cpu_only.json").read_text())
    inv["software"]["tensorflow"] = "2.21.0"
    tab.set_inventory(inv)
    assert "TensorFlow will see no GPU: no NVIDIA GPU here" in shown_text(tab)
