"""Recorded on the H200 box through hwbench's own CLI (see scripts/device_check.sh):
``hwbench inventory --json`` and ``hwbench monitor --csv`` while a BF16 matmul loop ran."""

from __future__ import annotations

import csv
import json

from conftest import FIXTURES


def test_h200_inventory_has_the_datasheet_figures():
    inventory = json.loads((FIXTURES / "inventory_h200.json").read_text())
    gpu = inventory["gpus"][0]
    assert gpu["name"] == "NVIDIA H200"
    assert gpu["sm_count"] == 132
    assert gpu["cuda_cores"] == 16896
    assert (gpu["tensor_cores"], gpu["tensor_core_generation"]) == (528, "4th")
    assert gpu["rt_cores"] == 0
    assert gpu["vram_total_bytes"] == 143771 * 2**20
    assert (gpu["memory_bus_width_bits"], gpu["memory_clock_max_mhz"]) == (6016, 3201)
    assert 4750 < gpu["memory_bandwidth_gb_per_s"] < 4850  # ≈ 4.8 TB/s
    assert (gpu["pcie_gen_max"], gpu["pcie_width_max"]) == (5, 16)
    assert inventory["gpu_system"]["available"] is True


def test_h200_monitor_recording_shows_the_load():
    rows = list(csv.DictReader((FIXTURES / "monitor_h200.csv").open()))
    assert list(rows[0])[0] == "timestamp"
    stamps = [float(r["timestamp"]) for r in rows]
    assert stamps == sorted(stamps) and len(rows) > 40
    util = [float(r["gpu0_util_percent"]) for r in rows]
    power = [float(r["gpu0_power_w"]) for r in rows]
    assert util[0] == 0 and max(util) >= 95  # idle first, then the matmul loop
    assert max(power) > 3 * power[0]
    assert max(float(r["gpu0_sm_clock_mhz"]) for r in rows) > 2 * float(rows[0]["gpu0_sm_clock_mhz"])
