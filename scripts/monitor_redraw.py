"""Redraw cost of the Monitor tab with every plot live at 10 Hz (offscreen is fine).

Times each frame: the tab's redraw (ring read + setData) and the render of the whole tab
(``QWidget.grab``), and prints mean and p95 in ms.

    QT_QPA_PLATFORM=offscreen python scripts/monitor_redraw.py --seconds 30 [--prefill-csv FILE]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
from PySide6.QtCore import QSettings  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--window", choices=["1 min", "5 min", "30 min"], default="1 min")
    args = parser.parse_args()
    app = QApplication([])
    from hwbench_gui.engine.telemetry import Sampler
    from hwbench_gui.ui.context import AppContext
    from hwbench_gui.ui.monitor import MonitorTab

    sampler = Sampler(interval_s=0.1)
    sampler.start()
    context = AppContext(settings=QSettings(os.devnull, QSettings.IniFormat), results_dir=".", sampler=sampler)
    tab = MonitorTab(context)
    tab._timer.stop()  # frames are driven below, so each one can be timed
    tab._window_box.setCurrentText(args.window)
    tab.resize(1600, 1000)
    tab.show()
    update_ms, render_ms = [], []
    end = time.monotonic() + args.seconds
    next_frame = time.monotonic()
    while time.monotonic() < end:
        app.processEvents()
        next_frame += 0.1
        time.sleep(max(0.0, next_frame - time.monotonic()))
        t0 = time.perf_counter()
        drew = tab.redraw()
        t1 = time.perf_counter()
        tab.grab()
        t2 = time.perf_counter()
        if drew:
            update_ms.append((t1 - t0) * 1e3)
            render_ms.append((t2 - t1) * 1e3)
    tab.shutdown()
    sampler.stop()
    u, r = np.array(update_ms), np.array(render_ms)
    total = u + r
    print(f"{len(u)} frames with new data, window {args.window}, {sampler.gpu_count} GPUs, {sampler.cpu_count} cores, "
          f"{len(tab.curve_data('cpu_percent')[0])} points per curve at the end")
    for name, a in (("update (ring read + setData)", u), ("render (grab of the whole tab)", r), ("total", total)):
        print(f"{name:32s} mean {a.mean():6.2f} ms  p95 {np.percentile(a, 95):6.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
