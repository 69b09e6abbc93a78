"""A self-consistent forgery: a CPU-only machine's document (device the CPU, figures CPU-sized, no GPU in its
telemetry, a driver that saw none) whose inventory claims eight H200s. Its figures are below every limit, so
only the rest of the document can give it away: it is flagged, and the genuine documents are not."""

from __future__ import annotations

import copy
import csv
import json
from pathlib import Path

from support import no_traceback, run_cli

from hwbench_gui.engine.reports import flags
from hwbench_gui.engine.results.store import write_result

ROOT = Path(__file__).resolve().parents[1]
MEMBW = ROOT / "resources" / "reference" / "h200" / "2026-12-03T08-28-08_host.membw_8dfb21b2.json"
TRAIN = ROOT / "resources" / "reference" / "h200" / "llm-2026-12-05" / "2026-12-05T15-51-43_llm.train_2a96a4cb.json"
CPU_ONLY = json.loads((ROOT / "tests" / "fixtures" / "inventory_cpu_only.json").read_text(encoding="utf-8"))
H200S = [{"name": "NVIDIA H200", "uuid": f"GPU-{i}", "index": i} for i in range(8)]


def _cpu_only_host(doc: dict) -> dict:
    """``doc`` as a CPU-only machine would have written it: no GPU, a driver that saw none, no GPU telemetry."""
    doc = copy.deepcopy(doc)
    doc["inventory"]["gpus"] = []
    doc["inventory"]["gpu_system"] = copy.deepcopy(CPU_ONLY["gpu_system"])
    for key in ("telemetry", "telemetry_whole_run"):
        seed = doc[key]["seed"]
        doc[key]["seed"] = {k: v for k, v in seed.items() if not k.startswith("gpu_")}
    return doc


def _forged(doc: dict) -> dict:
    forged = copy.deepcopy(doc)
    forged["id"] = forged["id"][::-1]
    forged["inventory"]["gpus"] = copy.deepcopy(H200S)
    return forged


def test_eight_h200s_in_a_cpu_only_hosts_document_are_flagged():
    genuine = _cpu_only_host(json.loads(MEMBW.read_text(encoding="utf-8")))
    assert flags.consistency_problems(genuine) == []
    assert flags.consistency_problems(json.loads(MEMBW.read_text(encoding="utf-8"))) == []  # the real H200 one
    problems = flags.consistency_problems(_forged(genuine))
    assert "its inventory lists 8 GPU(s) but its driver saw none (NVML could not start: NVML Shared Library Not " \
           "Found (NVMLError_LibraryNotFound))" in problems
    assert "its inventory lists 8 GPU(s) but its telemetry sampled no GPU during the run" in problems


def test_a_run_told_to_take_a_gpu_that_ran_on_the_cpu_beside_eight_listed_is_flagged():
    train = json.loads(TRAIN.read_text(encoding="utf-8"))
    assert train["params"]["device"] == "auto" and flags.consistency_problems(train) == []
    cpu = copy.deepcopy(train)
    cpu["device"] = "cpu (16 CPUs)"
    cpu["inventory"]["gpus"] = copy.deepcopy(H200S)
    cpu["inventory"]["gpu_system"]["device_count"] = 8
    assert "its inventory lists 8 GPU(s) but it ran on the CPU with device=auto (which takes the first GPU " \
           "PyTorch sees)" in flags.consistency_problems(cpu)
    cpu["inventory"]["gpu_system"]["torch_probe"] = {"cuda_available": False}  # a CPU build of PyTorch: it could not
    assert not any("device=auto" in p for p in flags.consistency_problems(cpu))


def test_the_forgery_is_flagged_in_the_csv_and_the_genuine_one_is_not(tmp_path, cli_env):
    genuine = _cpu_only_host(json.loads(MEMBW.read_text(encoding="utf-8")))
    forged = _forged(genuine)
    forged["hostname"] = forged["inventory"]["hostname"] = "forged"
    write_result(genuine, tmp_path)
    write_result(forged, tmp_path)
    proc = run_cli(["report", str(tmp_path), "--by", "run", "--csv", str(tmp_path / "r.csv")], cli_env)
    no_traceback(proc)
    rows = {r["hostname"]: r for r in csv.DictReader(open(tmp_path / "r.csv", encoding="utf-8"))}
    assert "its driver saw none" in rows["forged"]["inconsistent"]
    assert rows[genuine["hostname"]]["inconsistent"] == ""
