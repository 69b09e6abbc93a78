"""Which parameters of each registered benchmark decide whether two of its results are compared.

The table is the declaration as it stands: a parameter moved from one side to the other changes
which results a comparison pairs, so it must show up here. Documents are built with the real
benchmark declarations and compared with the real comparison.
"""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from hwbench_gui.engine.reports import compare
from hwbench_gui.engine.results.document import build_document
from hwbench_gui.engine.run import registry
from hwbench_gui.engine.run.protocol import outcome_to_json
from hwbench_gui.engine.spec.benchmark import Outcome

_MODEL_DECIDING = {"framework", "mode", "precision", "batch", "image_size", "gpus", "nnodes", "rdzv_endpoint",
                   "channels_last", "compile", "data", "workers"}
_MODEL_OTHER = {"steps", "repeats", "min_time_s", "warmup", "device"}

#: benchmark id -> (parameters that decide comparability, parameters that do not)
TABLE = {
    "disk.read": ({"file_size_mib", "random_reads"}, {"folder", "repeats"}),
    "cpu.decode": ({"count", "image_size", "quality"}, {"folder", "workers", "repeats", "repeat_s"}),
    "host.membw": ({"array_mib", "engine"}, {"threads", "repeats"}),
    "gpu.pcie": ({"min_bytes", "max_bytes", "size_factor"}, {"device", "repeats"}),
    "gpu.d2d": ({"size_mib", "min_size_mib"}, {"device", "repeats"}),
    "gpu.p2p": ({"size_mib", "latency_copies"}, {"devices", "repeats"}),
    "gpu.matmul": ({"precision", "sizes", "mode"}, {"device", "repeats"}),
    "model.resnet50": (_MODEL_DECIDING, _MODEL_OTHER),
    "model.vgg16": (_MODEL_DECIDING, _MODEL_OTHER),
    "model.fasterrcnn": (_MODEL_DECIDING, _MODEL_OTHER),
    "model.unet": (_MODEL_DECIDING, _MODEL_OTHER),
    "llm.infer": ({"model", "precision", "weights", "int4_kernel", "pp", "tg", "depths", "batch", "step", "serve",
                   "concurrency", "serve_prompt", "serve_output", "tpot_target_ms", "ttft_target_s"},
                  {"device", "threads", "repeats", "serve_repeats"}),
    "llm.train": ({"model", "method", "precision", "seq", "micro_batch", "grad_accum", "checkpointing", "lora_rank",
                   "lora_alpha", "compile", "gpus", "sharding"},
                  {"steps", "repeats", "min_time_s", "warmup", "device", "single_gpu_result"}),
    "llm.endpoint": ({"model", "api", "concurrency", "prompt_tokens", "output_tokens", "preset", "rate",
                      "poisson_requests", "search", "search_limit", "ignore_eos"},
                     {"url", "repeats", "timeout_s", "seed"}),
    "llm.llamacpp": (set(), {"file", "gguf", "measure", "bandwidth_gbps"}),
    "llm.ollama": ({"model", "prompt_words", "output_tokens"},
                   {"url", "gguf", "repeats", "bandwidth_gbps", "timeout_s", "seed"}),
    "datapath.analyze": ({"dataset", "width", "height", "count", "quality", "dataset_disk", "model", "image_size",
                          "precision", "batch", "workers", "channels_last", "read_delay_ms", "stage_s"},
                         {"epoch_images", "budget_s", "device", "steps", "warmup", "repeats"}),
    "health.burnin": ({"precision", "matrix_size", "gpu_memory_mib", "check"}, {"minutes", "host", "ram_share"}),
    "diffusion.infer": ({"model", "size", "steps", "precision", "batch", "compile"}, {"device", "repeats"}),
    "speech.transcribe": ({"model", "precision", "batches", "tokens", "step"}, {"device", "threads", "repeats"}),
}

T0 = datetime(2026, 12, 1, 10, 0, 0, tzinfo=timezone.utc)
MACHINE = {"inventory": {"hostname": "alpha", "gpus": [{"name": "GPU A"}], "cpu": {"model": "CPU"}},
           "inventory_reason": None, "software": {}, "software_reason": None}


def test_every_registered_benchmark_is_in_the_table():
    assert not registry.module_errors()
    assert {b.id for b in registry.all_benchmarks()} == set(TABLE)


@pytest.mark.parametrize("bench_id", sorted(TABLE))
def test_declared_deciding_parameters(bench_id):
    bench = registry.get(bench_id)
    deciding, other = TABLE[bench_id]
    assert set(bench.comparability_params()) == deciding
    assert {p.name for p in bench.params} == deciding | other


def _other_value(param, value):
    """A valid-looking value of the parameter's type that differs from ``value``."""
    if param.kind == "bool":
        return not value
    if param.kind == "choice":
        return next(c for c in param.choices if c != value)
    if param.kind in ("int", "float"):
        return value + 1
    if param.kind == "int_list":
        return list(value) + [(value[-1] if value else 1) * 2]
    if param.kind == "device":
        return "cuda:1" if value != "cuda:1" else "cuda:0"
    return f"{value}-other"


def _doc(bench, params, samples, minutes=0):
    outcome = outcome_to_json(Outcome(figure_name="rate", unit="items/s", samples=samples, precision="FP32"))
    machine = {**MACHINE, "inventory": {**MACHINE["inventory"], "hostname": f"host{minutes}"}}
    doc = build_document(bench, params, status="ok", started_at=T0, duration_s=1.0, outcome=outcome,
                         machine=machine)
    doc["hostname"] = f"host{minutes}"
    return doc


@pytest.mark.parametrize("bench_id", sorted(TABLE))
def test_documents_differing_in_one_parameter(bench_id):
    bench = registry.get(bench_id)
    defaults = dict(bench.resolve_params())
    base = _doc(bench, defaults, [100.0, 101.0, 102.0, 103.0, 104.0])
    assert set(base["benchmark"]["comparability_params"]) == TABLE[bench_id][0]
    for param in bench.params:
        changed = {**defaults, param.name: _other_value(param, defaults[param.name])}
        other = _doc(bench, changed, [110.0, 111.0, 112.0, 113.0, 114.0], minutes=1)
        result = compare.compare(compare.sides_by_machine([base, other], by_host=True), baseline=0)
        cells = [row.cells[1] for row in result.rows if row.cells[1].metric is not None]
        assert len(cells) == 1
        cell = cells[0]
        if param.decides_comparability:
            assert cell.mark == compare.MARK_NOT_COMPARABLE, (bench_id, param.name, cell.mark)
            assert param.name in cell.note
        else:
            assert len(result.rows) == 1, (bench_id, param.name)
            assert cell.mark == compare.MARK_BETTER, (bench_id, param.name, cell.mark, cell.note)
            assert cell.ratio == pytest.approx(112.0 / 102.0)
