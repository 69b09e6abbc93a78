"""The torch probe on a loaded machine: its budget is the child's CPU time, so a probe that waits longer than its
budget in wall-clock time (as importing torch does on a busy box) still reports; one that uses up its CPU budget
times out with a reason that says how busy the machine was and how to retry, and the Inventory tab offers Retry."""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path

from hwbench_gui.engine.inventory import torch_probe

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def test_a_probe_slower_than_its_budget_in_wall_time_still_reports(tmp_path):
    go = tmp_path / "go"
    # The child waits (no CPU) until the test says go, which it does once more than the budget has passed.
    child = (f"import os, time\nwhile not os.path.exists({str(go)!r}): time.sleep(0.02)\n"
             "print('{\"ok\": true, \"devices\": []}')")
    budget_s = 1.0
    began = time.monotonic()
    opener = threading.Thread(target=lambda: (time.sleep(1.5 * budget_s), go.write_text("")))
    opener.start()
    report = torch_probe.run_probe([sys.executable, "-c", child], timeout_s=budget_s)
    opener.join()
    assert report["ok"] is True, report
    assert time.monotonic() - began > budget_s  # it did outlast its budget in wall-clock time


def test_a_probe_that_uses_its_cpu_budget_times_out_and_says_how_to_retry():
    report = torch_probe.run_probe([sys.executable, "-c", "while True: pass"], timeout_s=0.5)
    assert report["ok"] is False and report["timed_out"] is True
    reason = report["reason"]
    assert reason.startswith("torch probe timed out after") and "s of CPU" in reason and "cores" in reason
    assert "Retry in the Inventory tab" in reason


def test_the_inventory_tab_offers_retry_after_a_timed_out_probe(qtbot, qsettings, tmp_path, monkeypatch):
    import hwbench_gui.engine.inventory as engine
    from hwbench_gui.ui.context import AppContext
    from hwbench_gui.ui.inventory import InventoryTab

    context = AppContext(settings=qsettings, results_dir=tmp_path / "results")
    tab = InventoryTab(context)
    qtbot.addWidget(tab)
    inv = json.loads(sorted(FIXTURES.glob("inventory_*.json"))[0].read_text())
    reason = torch_probe.timeout_reason(61.0, 20.4)
    inv["gpu_system"]["torch_probe"] = {"ok": False, "timed_out": True, "reason": reason}
    tab.set_inventory(inv)
    assert tab.retry_button.isVisibleTo(tab) and tab.retry_button.toolTip() == reason
    assert "torch probe timed out" in tab.status.text() and tab.status.toolTip() == reason
    assert tab.minimumSizeHint().width() < 1000  # the long reason does not widen the window
    collected = []

    def collect(use_torch_probe=True, cancel=None, **kwargs):
        collected.append(use_torch_probe)
        return {**inv, "gpu_system": {**inv["gpu_system"], "torch_probe": {"ok": True, "devices": []}}}

    monkeypatch.setattr(engine, "collect", collect)
    with qtbot.waitSignal(tab.inventory_changed, timeout=60000):
        tab.retry_button.click()
    assert collected == [True]
    assert not tab.retry_button.isVisibleTo(tab)  # the probe reported: nothing to retry
    qtbot.waitUntil(lambda: not tab.is_busy(), timeout=10000)
    tab.shutdown()
    context.workers.shutdown(timeout_s=10)
