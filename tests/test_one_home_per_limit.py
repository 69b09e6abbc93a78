"""Every hardware limit is declared once: the PCIe rates, FP8's range and the capability it needs live with the
inventory's tables, and the floor (normal for its kind) and the ceiling (an impossible figure) read a figure's
limit from the one function that gives it, so one document never gets two limits."""

from __future__ import annotations

import ast
import copy
import json
from pathlib import Path

import pytest

from hwbench_gui.engine import limits
from hwbench_gui.engine.health import normal
from hwbench_gui.engine.inventory import gpu_arch
from hwbench_gui.engine.reports.physical_limits import impossible_figures
from hwbench_gui.engine.results.formatting import format_value

PACKAGE = Path(__file__).resolve().parents[1] / "hwbench_gui"
REFERENCE = PACKAGE.parent / "resources" / "reference" / "h200"
HOME = PACKAGE / "engine" / "inventory" / "gpu_arch.py"
D2D, PCIE, MATMUL, MEMBW = ("2026-12-03T08-27-27_gpu.d2d_52e98a7a.json", "2026-12-03T08-26-59_gpu.pcie_bac6fd02.json",
                            "2026-12-03T08-27-35_gpu.matmul_fafcfce5.json",
                            "2026-12-03T08-28-08_host.membw_8dfb21b2.json")


def _constants(tree: ast.AST) -> list[object]:
    return [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant)]


def _declared_in() -> dict[str, list[str]]:
    """For each limit, the modules whose code (not their comments or docstrings' words) writes it out."""
    found: dict[str, list[str]] = {"pcie line code 128/130": [], "fp8 range 448": [], "fp8 capability (8, 9)": [],
                                   "pcie gen 5 GT/s 32.0": []}
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        where = str(path.relative_to(PACKAGE))
        for node in ast.walk(tree):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) \
                    and _constants(node.left) == [128] and _constants(node.right) == [130]:
                found["pcie line code 128/130"].append(where)
            if isinstance(node, ast.Dict) and 5 in _constants(ast.Tuple(elts=node.keys)) \
                    and any(isinstance(v, ast.Constant) and v.value == 32.0 for v in node.values):
                found["pcie gen 5 GT/s 32.0"].append(where)
            if isinstance(node, ast.Compare) and any(
                    isinstance(c, ast.Tuple) and _constants(c) == [8, 9] for c in [node.left, *node.comparators]):
                found["fp8 capability (8, 9)"].append(where)
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Tuple) and _constants(node.value) == [8, 9]:
                found["fp8 capability (8, 9)"].append(where)
        # Whisper's decoder holds 448 positions: a sequence length that happens to equal FP8's range is not it
        lengths = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.AnnAssign)
                   and isinstance(n.target, ast.Name) and n.target.id.endswith("positions")}
        found["fp8 range 448"] += [where for node in ast.walk(tree)
                                   if isinstance(node, ast.Constant) and id(node) not in lengths
                                   and isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
                                   and node.value == 448]
    return found


def test_each_published_limit_is_written_once_with_the_inventorys_tables():
    home = str(HOME.relative_to(PACKAGE))
    for limit, places in _declared_in().items():
        assert sorted(set(places)) == [home], f"{limit} is declared in {sorted(set(places))}, not once in {home}"
    assert gpu_arch.pcie_theoretical_gbps(3, 16) == pytest.approx(15.75, abs=0.01)
    assert gpu_arch.pcie_bandwidth_gb_per_s(6, 16).value == pytest.approx(64 * 242 / 256 * 2)  # gen 6 is known
    assert gpu_arch.fp8_capability_reason(8, 9, "L4") is None
    assert "needs compute capability 8.9" in gpu_arch.fp8_capability_reason(8, 6, "RTX 3090")


def _doc(name: str) -> dict:
    return json.loads((REFERENCE / name).read_text())


def _times(doc: dict, factor: float) -> dict:
    doc = copy.deepcopy(doc)
    for figure in [doc.get("figure"), *(doc.get("figures") or {}).values()]:
        if isinstance(figure, dict) and isinstance(figure.get("value"), (int, float)):
            figure["value"] *= factor
    return doc


def _with_ram(**memory) -> dict:
    doc = _doc(MEMBW)
    doc["inventory"]["memory"].update(memory)
    return doc


@pytest.mark.parametrize("doc", [_doc(D2D), _doc(PCIE), _doc(MATMUL), _doc(MEMBW),
                                 _with_ram(speed_mts=5600, configured_speed_mts=4800, channels=8, dimm_type="DDR5"),
                                 _with_ram(speed_mts=4800, dimms_populated=4, dimm_type="DDR5")],
                         ids=["gpu.d2d", "gpu.pcie", "gpu.matmul", "host.membw unknown RAM", "host.membw slower clock",
                              "host.membw DIMMs for channels"])
def test_the_floor_and_the_ceiling_take_a_figures_limit_from_the_one_function(doc):
    findings = normal.judge(doc)
    assert findings
    for finding in findings:
        name = finding["figure"].removeprefix("PCIe ").removeprefix("host memory ").removesuffix(" matmul")
        limit = limits.limit_of(doc, name)
        assert (finding["limit"], finding["limit_source"]) == (limit.value, limit.source), finding["figure"]
        assert finding["limit_text"] == limit.what
    forged = impossible_figures(_times(doc, 10))
    held = [limits.limit_of(doc, name) for name in [str(doc["figure"]["name"]), *(doc.get("figures") or {})]]
    stated = [limit for limit in held if limit is not None and limit.most is not None]
    assert bool(forged) == bool(stated)
    if stated:
        assert stated[0].most_what in forged[0] and format_value(stated[0].most) in forged[0]


def test_one_document_gets_one_ram_peak_floor_and_ceiling_alike():
    """The RAM's peak is the faster of its rated and configured speeds × 8 bytes × channels (DIMMs where the
    channels are unknown), for the floor as for the ceiling."""
    slower_clock = _with_ram(speed_mts=5600, configured_speed_mts=4800, channels=8, dimm_type="DDR5")
    (finding,) = normal.judge(slower_clock)
    assert finding["limit"] == pytest.approx(358.4)  # 8 × 5600 MT/s × 8 bytes
    forged = impossible_figures(_times(slower_clock, 10))
    assert forged[0].startswith("triad, largest thread count 835.1 GB/s is above the 358.4 GB/s theoretical peak of "
                                "its documented RAM (DDR5 at 5600 MT/s × 8 bytes × 8 channels)")
    (finding,) = normal.judge(_with_ram(speed_mts=4800, dimms_populated=4, dimm_type="DDR5"))
    assert finding["limit"] == pytest.approx(153.6) and "4 DIMMs" in finding["limit_text"]
