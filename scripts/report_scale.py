"""How the reports scale: N result documents, then the wall time and peak memory of
``hwbench compare``, ``hwbench report --by run --html`` and the GUI library's build (offscreen).

    .venv/bin/python scripts/report_scale.py [--docs 2000] [--keep DIR]

Documents are ordinary ones (``build_document``): a handful of benchmarks in a few
configurations, on two machines, each with ten samples and the timed phase's telemetry summary.
Each measurement runs in a fresh process; its peak RSS is the kernel's (``wait4``).
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

BENCHMARKS = (("host.membw", "GB/s", 40.0), ("cpu.decode", "images/s", 3000.0), ("gpu.pcie", "GB/s", 25.0),
              ("gpu.matmul", "TFLOP/s", 300.0), ("disk.read", "MB/s", 1500.0), ("model.resnet50", "images/s", 1000.0),
              ("model.vgg16", "images/s", 500.0), ("model.unet", "images/s", 120.0))


def generate(folder: Path, count: int) -> None:
    from hwbench_gui.engine.results.document import build_document
    from hwbench_gui.engine.results.store import write_result
    from hwbench_gui.engine.run.protocol import outcome_to_json
    from hwbench_gui.engine.spec.benchmark import Benchmark, Outcome, Param

    rng = random.Random(7)
    start = datetime(2026, 11, 1, tzinfo=timezone.utc)
    for i in range(count):
        bench_id, unit, base = BENCHMARKS[i % len(BENCHMARKS)]
        host, scale = (("alpha", 1.0), ("beta", 1.7))[(i // len(BENCHMARKS)) % 2]
        bench = Benchmark(id=bench_id, title=bench_id, category="Scale", description="scale test",
                          params=[Param("batch", "int", 128, "batch", decides_comparability=True)],
                          run=lambda p, r: None, version="1")
        samples = [base * scale * rng.uniform(0.97, 1.03) for _ in range(10)]
        outcome = outcome_to_json(Outcome(figure_name="rate", unit=unit, samples=samples, higher_is_better=True,
                                          precision="FP32", method="scale test"))
        telemetry = {"seed": {"gpu_util_percent": {"mean": 80.0, "max": 99.0},
                              "gpu_vram_used_bytes": {"mean": 2.0e10, "max": 2.4e10}},
                     "noise": {"busy": i % 50 == 0, "reasons": ["other processes"] if i % 50 == 0 else []}}
        machine = {"inventory": {"hostname": host, "gpus": [{"name": f"GPU {host}"}],
                                 "cpu": {"model": "CPU", "logical_cores": 16}},
                   "inventory_reason": None, "software": {"torch": "2.x", "python": "3.12"}, "software_reason": None}
        doc = build_document(bench, {"batch": 128 * (1 + i % 3)}, status="ok",
                             started_at=start + timedelta(minutes=i), duration_s=1.0, outcome=outcome,
                             telemetry=telemetry, machine=machine)
        doc["hostname"] = host
        write_result(doc, folder)


def measure(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, peak RSS in MB) of one command."""
    began = time.perf_counter()
    proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - began
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(args)} failed: {proc.stderr.read().decode()[-2000:]}")
    return wall, usage.ru_maxrss / 1024


GUI_BUILD = """
import sys, time
from PySide6.QtWidgets import QApplication
from PySide6.QtCore import QSettings
app = QApplication([])
from hwbench_gui.ui.context import AppContext
from hwbench_gui.ui.reports import ReportsTab
settings = QSettings(sys.argv[2], QSettings.IniFormat)
began = time.perf_counter()
tab = ReportsTab(AppContext(settings=settings, results_dir=sys.argv[1]))
constructed = time.perf_counter() - began
tab.resize(1366, 768)
tab.show()
assert tab.wait_loaded(60)
app.processEvents()
print(f"{time.perf_counter() - began:.3f} {constructed:.3f} {tab.model.rowCount()}")
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=2000)
    parser.add_argument("--keep", metavar="DIR", help="generate into DIR and keep it")
    args = parser.parse_args()
    env = dict(os.environ, PYTHONPATH=str(REPO), QT_QPA_PLATFORM="offscreen")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.keep) if args.keep else Path(tmp) / "results"
        began = time.perf_counter()
        existing = len(list(folder.glob("*.json"))) if folder.is_dir() else 0
        if existing != args.docs:
            if existing:
                raise SystemExit(f"{folder} holds {existing} documents, not {args.docs}: give an empty folder")
            generate(folder, args.docs)
            print(f"generated {args.docs} documents in {time.perf_counter() - began:.1f} s into {folder}")
        else:
            print(f"reusing the {existing} documents in {folder}")
        cli = [sys.executable, "-m", "hwbench_gui.cli"]
        html = Path(tmp) / "by-run.html"
        for name, command in (("compare", cli + ["compare", str(folder)]),
                              ("compare --by run", cli + ["compare", str(folder), "--by", "run"]),
                              ("report --html --pdf", cli + ["report", str(folder), "--html", str(html),
                                                             "--pdf", str(Path(tmp) / "r.pdf")]),
                              ("report --by run --html", cli + ["report", str(folder), "--by", "run", "--html",
                                                                str(html)])):
            wall, rss = measure(command, env)
            extra = f", HTML {html.stat().st_size / 1e6:.2f} MB" if "--html" in command else ""
            html.unlink(missing_ok=True)
            print(f"{name:<24} {wall:6.2f} s  peak RSS {rss:6.0f} MB{extra}")
        began = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", GUI_BUILD, str(folder), str(Path(tmp) / "s.ini")], env=env,
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(proc.stderr[-2000:])
        built, blocked, rows = proc.stdout.split()
        print(f"{'GUI library build':<24} {float(built):6.2f} s  ({rows} rows shown; the tab's constructor "
              f"returned after {float(blocked):.2f} s, the listing ran on a worker thread; process with Qt start "
              f"{time.perf_counter() - began:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
