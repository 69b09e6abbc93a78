"""The Monitor tab renders live samples and recorded CSV files (offscreen)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QSettings
from PySide6.QtGui import QColor, QPalette

from hwbench_gui.engine.telemetry import Sampler
from hwbench_gui.engine.telemetry.csv_export import write_history_csv
from hwbench_gui.ui.context import AppContext
from hwbench_gui.ui.monitor import MonitorTab

FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture
def sampler():
    s = Sampler(interval_s=0.1, history_s=120)
    s.start()
    yield s
    s.stop()


@pytest.fixture
def tab(qtbot, tmp_path, sampler):
    context = AppContext(settings=QSettings(str(tmp_path / "s.ini"), QSettings.IniFormat), results_dir=tmp_path,
                         sampler=sampler)
    widget = MonitorTab(context)
    qtbot.addWidget(widget)
    widget.resize(1200, 900)
    widget.show()
    yield widget
    widget.shutdown()


def test_live_samples_are_drawn(qtbot, tab, sampler):
    qtbot.waitUntil(lambda: tab.redraw_count >= 3, timeout=10000)
    x, y = tab.curve_data("cpu_percent")
    assert len(x) >= 2 and np.all(np.diff(x) > 0)
    x, y = tab.curve_data("ram_used_bytes")
    assert np.nanmax(y) > 0.01  # GiB
    assert "CPU total" in tab.readout_at(float(x[-1]), "cpu")
    if sampler.gpu_count == 0:
        assert "gpu_util" not in tab.plots()
        from hwbench_gui.engine.nvml import plain_reason

        assert plain_reason(sampler.gpu_unavailable_reason) in tab._banner.text()
        assert tab._banner.toolTip() == sampler.gpu_unavailable_reason
    assert not tab.grab().isNull()


def test_interval_pause_and_export(qtbot, tab, sampler, tmp_path):
    box = tab._interval_box
    box.setCurrentIndex(box.findData(0.2))
    assert sampler.interval_s == 0.2
    tab._pause_button.setChecked(True)
    count = tab.redraw_count
    qtbot.wait(400)
    assert tab.redraw_count == count  # paused: no redraw while samples keep coming
    tab._pause_button.setChecked(False)
    qtbot.waitUntil(lambda: tab.redraw_count > count, timeout=5000)
    path = tab.export_csv(tmp_path / "export.csv")
    assert path.read_text().startswith("timestamp,cpu_percent,")


def test_recorded_csv_with_gpus_renders(qtbot, tab, tmp_path):
    # Synthetic two-GPU recording made here in the test, only to exercise the GPU plots offline.
    t = 1.7e9 + np.arange(50) * 0.5
    values = {"cpu_percent": np.linspace(0, 100, 50), "cpu0_percent": np.full(50, 30.0),
              "ram_used_bytes": np.full(50, 2.0**33)}
    for i in range(2):
        values[f"gpu{i}_util_percent"] = np.linspace(0, 90, 50)
        values[f"gpu{i}_temp_c"] = np.full(50, 60.0)
        values[f"gpu{i}_pcie_rx_bytes_per_s"] = np.where(np.arange(50) % 7 == 0, np.nan, 12e9)
    path = write_history_csv(tmp_path / "rec.csv", t, values)
    tab.load_csv(path)
    assert tab.showing_recording
    x, y = tab.curve_data("gpu1_util_percent")
    assert len(x) == 50 and y[-1] == pytest.approx(90)
    x, y = tab.curve_data("gpu0_pcie_rx_bytes_per_s")
    assert np.nanmax(y) == pytest.approx(12.0)  # GB/s
    assert tab.plots()["gpu_util"].isEnabled()
    assert not tab.plots()["disk"].isEnabled()  # no disk columns in this recording
    assert "GPU0 util 45" in tab.readout_at(t[25], "gpu_util")
    assert not tab.grab().isNull()
    tab.show_live()
    assert not tab.showing_recording
    qtbot.waitUntil(lambda: len(tab.curve_data("cpu_percent")[0]) > 0, timeout=5000)


def test_dark_palette_recolours_the_plots(tab):
    dark = QPalette()
    dark.setColor(QPalette.ColorRole.Base, QColor("#1e1e1e"))
    dark.setColor(QPalette.ColorRole.Text, QColor("#e0e0e0"))
    tab.setPalette(dark)
    assert tab._layout_widget.backgroundBrush().color().name() == "#1e1e1e"
    assert tab.plots()["cpu"].getAxis("left").textPen().color().name() == "#e0e0e0"


@pytest.mark.skipif(not (FIXTURES / "monitor_h200.csv").exists(), reason="the recorded H200 CSV is not in the tree yet")
def test_recorded_h200_csv_renders(qtbot, tab):
    tab.load_csv(FIXTURES / "monitor_h200.csv")
    x, y = tab.curve_data("gpu0_util_percent")
    assert len(x) > 0 and np.isfinite(y).any()
    assert tab.plots()["gpu_util"].isEnabled()
    assert not tab.grab().isNull()


def test_without_a_gpu_the_gpu_plots_are_left_out_and_one_line_says_why(tab, sampler):
    """With no GPU, one line gives the NVML reason instead of five empty GPU plots repeating it."""
    tab._pause_button.setChecked(True)  # the sampler here has no gpu0 column to redraw from
    tab._build_plots(sampler.metric_names() + ["gpu0_util_percent"], "NVML Shared Library Not Found")
    assert not any(p.spec.gpu for p in tab._plots)
    assert {"cpu", "ram", "disk"} <= set(tab.plots())
    assert tab._banner.isVisible() and tab._banner.text().count("NVML Shared Library Not Found") == 1
    assert not tab._gpu_box.isVisible()
    tab._build_plots(sampler.metric_names() + ["gpu0_util_percent"], None)
    assert "gpu_util" in tab.plots() and tab._gpu_box.isVisible() and not tab._banner.isVisible()
    tab._build_plots(sampler.metric_names(), sampler.gpu_unavailable_reason)


def test_legends_show_the_current_values(tab, tmp_path):
    t = 1_700_000_000 + np.arange(20) * 0.5
    values = {"cpu_percent": np.linspace(10, 55, 20), "gpu0_util_percent": np.full(20, 90.0),
              "ram_used_bytes": np.full(20, 4 * 2**30)}
    path = write_history_csv(tmp_path / "rec.csv", t, values)
    tab.load_csv(path)
    legends = {p.spec.key: p.legend_text for p in tab._plots}
    assert "GPU0 util 90 %" in legends["gpu_util"]
    assert "CPU total 55 %" in legends["cpu"]
    assert "RAM used 4 GiB" in legends["ram"]
    assert "cpu0" not in legends["cpu"]  # per-core lines stay out of the legend
    assert "GPU0 util 90 %" in tab.plots()["gpu_util"].titleLabel.text


def test_host_process_table_lists_busy_processes(qtbot, tab):
    tab.host_table.setRowCount(0)
    tab.update_host_processes()
    assert tab.processes._scan is not None  # the scan runs off the GUI thread
    qtbot.waitUntil(lambda: tab.host_table.rowCount() > 0, timeout=10000)
    pids = {int(tab.host_table.item(r, 0).text()) for r in range(tab.host_table.rowCount())}
    assert pids and all(pid > 0 for pid in pids)


def test_the_plots_fit_a_narrow_window_and_their_legends_wrap(qtbot, tab, tmp_path):
    """At 1024 px the host plots' legends (three curves with values) once set their columns' minimum
    widths and pushed the third plot off the right edge; they wrap under the title instead."""
    t = 1_700_000_000 + np.arange(20) * 0.5
    values = {"cpu_percent": np.linspace(10, 55, 20), "ram_used_bytes": np.full(20, 123.456 * 2**30),
              "swap_used_bytes": np.full(20, 12.345 * 2**30), "proc_rss_bytes": np.full(20, 2.5 * 2**30),
              "disk_read_bytes_per_s": np.full(20, 1234.5e6),
              "disk_write_bytes_per_s": np.full(20, 987.6e6)}
    tab.load_csv(write_history_csv(tmp_path / "rec.csv", t, values))
    view = tab._layout_widget
    legend_lines = {}
    narrowest = tab.minimumSizeHint().width()  # the control bar's
    for width in (1000, narrowest, 1400):
        tab.resize(width, 660)
        qtbot.wait(100)  # the layout, then the legends' rewrap  # the layout and the legends' rewrap
        items = tab.plots()
        assert {"cpu", "ram", "disk"} <= set(items)
        right = max(item.mapRectToScene(item.boundingRect()).right() for item in items.values())
        assert right <= view.viewport().width() + 1, (width, right, view.viewport().width())
        widths = [items[key].width() for key in ("cpu", "ram", "disk")]
        assert max(widths) - min(widths) <= 2, widths  # the columns share the width
        for item in items.values():  # each legend fits its plot
            assert item.titleLabel.item.boundingRect().width() <= item.width() + 1
        legend_lines[width] = items["ram"].titleLabel.text.count("<br>")
    assert legend_lines[narrowest] > legend_lines[1400]
    assert "RAM used 123 GiB" in next(p for p in tab._plots if p.spec.key == "ram").legend_text
