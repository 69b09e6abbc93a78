"""What trains on one GPU, by the memory estimate (:mod:`training_arithmetic`), before anything runs: the
largest built-in model of each family, and a table of micro-batches per model, method and sequence length.
llm.train stores the same in its documents; the Benchmarks tab shows it before a run. No torch."""

from __future__ import annotations

from typing import Any

from hwbench_gui.engine.models.common import GIB
from hwbench_gui.engine.models.llm import training_arithmetic as ta
from hwbench_gui.engine.spec.precision import BF16, FP8

#: Share of a GPU's memory the pre-run estimate may fill before the run is refused (the CUDA context,
#: cuBLAS workspaces and the allocator's rounding take the rest).
FIT_FRACTION = 0.92
#: The built-in models by family, smallest first: "the largest model of each family that trains here".
FAMILIES = {"GPT-2": ("gpt2-124m",), "Llama 3": ("llama-3.2-1b", "llama-3.1-8b"), "Qwen2.5": ("qwen2.5-7b",)}
#: The sequence lengths of the pre-run "what trains here" table.
FIT_SEQS = (1024, 2048, 4096)


def _builtin_archs() -> list[Any]:
    from hwbench_gui.engine.models.llm import architectures

    return [architectures.builtin(name) for models in FAMILIES.values() for name in models]


def what_fits(memory_bytes: float | None, seq: int, lora_rank: int, compiled: bool, fp8: bool) -> dict[str, Any]:
    """What trains on one GPU of ``memory_bytes`` at ``seq``, by the estimate: a row per built-in model and method,
    the largest of each family, and summary lines (the CLI prints them); {} without a memory size."""
    if not memory_bytes:
        return {}
    fits = ta.what_fits(_builtin_archs(), memory_bytes, seq, lora_rank, FIT_FRACTION, compiled=compiled, fp8=fp8)
    largest = ta.largest_trainable(fits, FAMILIES)
    gib = memory_bytes / GIB
    picked = "; ".join(f"{family}: full {picks['full'] or 'none'}, LoRA {picks['lora'] or 'none'}"
                       for family, picks in largest.items())
    how = f"estimate; full training with {FP8.label} block matmuls, LoRA in {BF16.label}" if fp8 else "estimate"
    lines = [f"largest that trains on one {gib:.0f} GiB GPU at seq {seq} ({how}): {picked}"]
    rows = [{"model": f.model, "method": f.method, "params": f.params, "peak_gib_micro_batch_1": f.peak_bytes / GIB,
             "peak_gib_checkpointed": f.peak_checkpointed_bytes / GIB if f.peak_checkpointed_bytes else None,
             "largest_micro_batch": f.largest_micro_batch, "verdict": f.verdict} for f in fits]
    return {"what_fits": {"memory_gib": gib, "seq": seq, "usable_fraction": FIT_FRACTION, "rows": rows,
                          "largest_trainable": largest, "fp8_full_training": fp8}, "summary": lines}


def largest_summary(memory_bytes: float, seq: int = 2048, lora_rank: int = 16) -> str:
    """Before a run: the largest built-in model of each family that trains fully and with LoRA on one GPU of
    ``memory_bytes`` at ``seq`` (compiled blocks, a GPU run's default), by the estimate."""
    return what_fits(memory_bytes, seq, lora_rank, compiled=True, fp8=False)["summary"][0]


def this_gpu_memory() -> tuple[float | None, str]:
    """(total bytes of GPU 0, its name) from NVML, without torch; (None, why) without a GPU."""
    from hwbench_gui.engine import nvml

    if nvml.device_count() == 0:
        reason = nvml.unavailable_reason()
        return None, nvml.plain_reason(reason) if reason else "no NVIDIA GPU found"
    device = nvml.handle(0)
    info = nvml.query("nvmlDeviceGetMemoryInfo", device)
    name = nvml.query("nvmlDeviceGetName", device) or "GPU 0"
    total = getattr(info, "total", None)
    return (float(total), str(name)) if total else (None, f"NVML gave no memory size for {name}")


def fit_table(memory_bytes: float, lora_rank: int = 16) -> list[dict[str, Any]]:
    """Before a run: for each built-in model and method, the largest micro-batch the estimate fits on one GPU of
    ``memory_bytes`` at each of :data:`FIT_SEQS` (0 with ``checkpointing`` True: it fits only checkpointed;
    0 without: it does not fit)."""
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for seq in FIT_SEQS:
        for fit in ta.what_fits(_builtin_archs(), memory_bytes, seq, lora_rank, FIT_FRACTION):
            row = rows.setdefault((fit.model, fit.method), {"model": fit.model, "method": fit.method,
                                                           "params": fit.params, "by_seq": {}})
            row["by_seq"][seq] = {"largest_micro_batch": fit.largest_micro_batch,
                                  "checkpointing": not fit.largest_micro_batch and bool(fit.peak_checkpointed_bytes)}
    return list(rows.values())
