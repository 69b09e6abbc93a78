"""Result documents for the report tests, built with the real ``build_document``.

Machines here are test data: a hostname, a CPU named after it and a GPU name set on otherwise ordinary
documents, so a comparison "between machines" can be exercised on a machine that has only one (each host is
a machine of its own kind: hosts of one kind are one side).
"""

from __future__ import annotations

import copy
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from hwbench_gui.engine.results.document import build_document
from hwbench_gui.engine.results.store import write_result
from hwbench_gui.engine.run.protocol import outcome_to_json
from hwbench_gui.engine.spec.benchmark import Benchmark, Outcome, Param, Series

T0 = datetime(2026, 12, 1, 10, 0, 0, tzinfo=timezone.utc)


def bench(bench_id: str, title: str | None = None) -> Benchmark:
    return Benchmark(id=bench_id, title=title or bench_id, category="Test", description="test benchmark",
                     params=[Param("size", "int", 1, "n")], run=lambda p, r: None, version="1")


def machine(host: str, gpu: str | None, *, gpus: int = 1) -> dict[str, Any]:
    return {"inventory": {"hostname": host, "gpus": [{"name": gpu}] * gpus if gpu else [],
                          "cpu": {"model": f"Test CPU {host}", "logical_cores": 8},
                          "memory": {"total_bytes": 64 * 2 ** 30}},
            "inventory_reason": None, "software": {"torch": "2.test"}, "software_reason": None}


def make_doc(bench_id: str = "t.throughput", samples=(100.0, 101.0, 99.0, 100.5, 99.5), *, host: str = "alpha",
             gpu: str | None = "Test GPU A", unit: str = "items/s", higher_is_better: bool = True,
             params: dict[str, Any] | None = None, precision: str = "FP32", status: str = "ok",
             figure_name: str = "rate", minutes: int = 0, title: str | None = None, figures=None, series=None,
             telemetry=None, reason: str | None = None, gpus: int = 1) -> dict[str, Any]:
    outcome = None
    if status == "ok":
        outcome = outcome_to_json(Outcome(figure_name=figure_name, unit=unit, samples=list(samples),
                                          higher_is_better=higher_is_better, precision=precision,
                                          method="test method", figures=figures or {}, series=series or []))
    doc = build_document(bench(bench_id, title), params if params is not None else {"size": 1}, status=status,
                         started_at=T0 + timedelta(minutes=minutes), duration_s=1.0, outcome=outcome,
                         reason=reason, telemetry=telemetry, machine=machine(host, gpu, gpus=gpus))
    doc["hostname"] = host
    return doc


def model_doc(model: str, *, framework: str, mode: str, precision: str, value: float, host: str = "alpha",
              gpus: int = 1, batch: int = 128, power_w: float | None = None, minutes: int = 0,
              box_gpus: int = 2) -> dict[str, Any]:
    """A document shaped like the model benchmarks': id ``model.<name>``, images/s, run on
    ``gpus`` of the machine's ``box_gpus``."""
    samples = [value * f for f in (0.99, 1.0, 1.01, 0.995, 1.005)]
    metrics = {}
    if power_w is not None:
        metrics = {f"gpu{i}_power_w": {"mean": power_w, "min": power_w, "max": power_w, "count": 5}
                   for i in range(gpus)}
    telemetry = {"seed": {"gpu_util_percent": {"mean": 90.0 if mode == "train" else 70.0, "max": 99.0},
                          "gpu_vram_used_bytes": {"mean": 20 * 2 ** 30, "max": 24 * 2 ** 30},
                          "cpu_util_percent": {"mean": 35.0, "max": 60.0},
                          "ram_used_bytes": {"mean": 8 * 2 ** 30, "max": 9 * 2 ** 30}},
                 "metrics": metrics}
    doc = make_doc(f"model.{model}", samples, host=host, unit="images/s", title=model.upper(),
                   params={"framework": framework, "mode": mode, "batch": batch, "gpus": gpus},
                   precision=precision, figure_name=f"{mode} throughput", telemetry=telemetry, minutes=minutes,
                   gpus=box_gpus)
    doc["device"] = "cuda:0 (Test GPU A)"  # run on the GPU, as the model benchmarks are where there is one
    return doc


def sweep_series() -> list[Series]:
    return [Series("h2d", [4096.0, 65536.0, 1048576.0], [1.0, 8.0, 20.0], "transfer bytes", "GB/s", True,
                   [(0.9, 1.1), (7.5, 8.4), (19.0, 21.0)])]


def on_other_machine(doc: dict[str, Any], host: str, gpu: str, scale: float = 1.0) -> dict[str, Any]:
    """A copy of ``doc`` relabelled as another machine's (test data), samples scaled by ``scale``."""
    other = copy.deepcopy(doc)
    other["hostname"] = host
    other["inventory"] = {**other["inventory"], "hostname": host, "gpus": [{"name": gpu}],
                          "cpu": {**other["inventory"].get("cpu", {}), "model": f"Test CPU {host}"}}
    other["id"] = other["id"][::-1]
    if other.get("figure"):
        other["samples"] = [s * scale for s in other["samples"]]
        other["figure"]["value"] *= scale
        other["stats"] = {k: (v * scale if k not in ("n",) and v is not None else v) for k, v in other["stats"].items()}
    return other


def write_docs(folder: Path, docs) -> list[Path]:
    return [write_result(d, folder) for d in docs]


def write_bad_files(folder: Path) -> dict[str, Path]:
    """A corrupt file, a foreign JSON file and a newer-schema document."""
    folder.mkdir(parents=True, exist_ok=True)
    corrupt = folder / "corrupt.json"
    corrupt.write_text('{"schema_version": 1, "benchm', encoding="utf-8")
    foreign = folder / "package.json"
    foreign.write_text(json.dumps({"name": "not-a-result", "version": "1.0.0"}), encoding="utf-8")
    newer = folder / "newer.json"
    newer.write_text(json.dumps({"schema_version": 99, "benchmark": {"id": "x"}, "status": "ok"}), encoding="utf-8")
    return {"corrupt": corrupt, "foreign": foreign, "newer": newer}


TF_MISSING = "TensorFlow is not installed\n" + "\n".join(f"  hint line {n}: pip install hwbench[tf]"
                                                         for n in range(9))


def seed_suite_docs(host: str = "alpha") -> list[dict[str, Any]]:
    """What ``hwbench run --suite seed`` leaves on a machine without TensorFlow: 4 models × torch/tf ×
    train/infer × FP32/FP16-AMP, the TensorFlow half failed with a long reason, plus micro-benchmarks."""
    docs = []
    minutes = 0
    for n, model in enumerate(("resnet50", "vgg16", "fasterrcnn", "unet")):
        for framework in ("torch", "tf"):
            for mode in ("train", "infer"):
                for precision in ("FP32", "FP16-AMP"):
                    minutes += 1
                    if framework == "tf":
                        doc = make_doc(f"model.{model}", status="failed", reason=TF_MISSING, host=host,
                                       title=model.upper(), minutes=minutes, gpus=2,
                                       params={"framework": framework, "mode": mode, "batch": 128, "gpus": 1})
                        doc["precision"] = precision
                    else:
                        value = (400 - 80 * n) * (2 if mode == "infer" else 1) * (1.8 if precision != "FP32" else 1)
                        doc = model_doc(model, framework=framework, mode=mode, precision=precision, value=value,
                                        host=host, power_w=250, minutes=minutes)
                    docs.append(doc)
    docs.append(make_doc("gpu.pcie", host=host, unit="GB/s", series=sweep_series(), minutes=minutes + 1, gpus=2))
    docs.append(make_doc("host.membw", [40.0, 41.0, 39.5, 40.5, 40.2], host=host, unit="GB/s", minutes=minutes + 2,
                         gpus=2))
    return docs
