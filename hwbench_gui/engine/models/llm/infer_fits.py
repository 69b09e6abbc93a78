"""What llm.infer can hold on this machine: the memory free on its device and the others, and which built-in
model fits it in each precision (the memory plan of :mod:`.arithmetic`)."""

from __future__ import annotations

from typing import Any

from hwbench_gui.engine import nvml
from hwbench_gui.engine.measure.room import host_room
from hwbench_gui.engine.measure.timing import nvml_handle_for
from hwbench_gui.engine.models.llm import arithmetic as ar
from hwbench_gui.engine.models.llm.architectures import BUILT_IN
from hwbench_gui.engine.models.llm.storage import PRECISIONS, storage


def free_bytes(torch: Any, kind: str, index: int) -> int:
    """Bytes the run may allocate on its device: CUDA's free memory, or the RAM available (less where an
    address-space limit leaves less: :func:`..measure.room.host_room`)."""
    if kind == "cuda":
        return int(torch.cuda.mem_get_info(index)[0])
    return host_room().bytes


def what_fits(free: list[int], positions: int, chunk_tokens: int) -> list[dict[str, Any]]:
    """Every built-in model in each precision at batch 1 with ``positions`` cached: its memory plan, whether
    it fits the first device's free memory, and whether it would fit all of them together (split by layers;
    llm.infer itself runs on one device)."""
    rows = []
    for name, arch in BUILT_IN.items():
        for precision in PRECISIONS:
            held = storage(precision)
            plan = ar.memory_plan(arch, held.element_bytes, 1, min(positions, arch.max_positions), chunk_tokens,
                                  held.weights)
            rows.append({"model": name, "precision": precision.label, "positions": min(positions, arch.max_positions),
                         "total_bytes": plan.total_bytes, "fits_one": plan.total_bytes <= free[0],
                         "fits_all": plan.total_bytes <= sum(free)})
    return rows


def free_all(torch: Any, kind: str, index: int) -> list[int]:
    """Free bytes of the run's device first (CUDA's own count), then of every other GPU as NVML reports it
    (asking CUDA would open a context, and take its memory, on each of them); a GPU NVML cannot read is left out."""
    if kind != "cuda":
        return [free_bytes(torch, kind, index)]
    free = [free_bytes(torch, kind, index)]
    for other in range(torch.cuda.device_count()):
        if other != index:
            handle = nvml_handle_for(other)
            info = nvml.query("nvmlDeviceGetMemoryInfo", handle) if handle is not None else None
            if info is not None:
                free.append(int(info.free))
    return free



#: The "what runs here" table: its contexts (capped at each model's own), the prompt size its workspace is sized
#: for (llm.infer's default pp), and the cards beside this machine's.
FIT_CONTEXTS = (4096, 32768, 131072)
FIT_PROMPT = 512
FIT_CHUNK = 2048  # positions of a prompt processed at once on a GPU (infer_timing.FILL_CHUNK["cuda"])
#: What the CUDA context and the driver take from a card before a model gets any of it (about 0.3-0.6 GiB).
CUDA_CONTEXT_BYTES = 512 << 20
#: A "24 GB" and a "48 GB" board as a user has them: the memory NVML reports on a GeForce RTX 4090 (24,564 MiB)
#: and an RTX 6000 Ada (49,140 MiB), less the CUDA context. A nominal 24 or 48 GiB would call a model that
#: needs 47.8 GiB one that fits a 48 GB card.
CARDS = (("24 GB card", (24_564 << 20) - CUDA_CONTEXT_BYTES), ("48 GB card", (49_140 << 20) - CUDA_CONTEXT_BYTES))
GIB = 1 << 30


def fit_plan(arch: Any, weights: str, context: int) -> ar.MemoryPlan:
    """The memory llm.infer's plan gives ``arch`` with ``weights`` (bf16 or a weight-only kind; BF16 activations
    and KV cache) at batch 1 with ``context`` cached positions and a :data:`FIT_PROMPT`-token prompt pass."""
    from hwbench_gui.engine.spec.precision import BF16

    held = storage(BF16, weights)
    return ar.memory_plan(arch, held.element_bytes, 1, context, FIT_CHUNK, held.weights,
                          attention=(FIT_PROMPT, context), rope_positions=context)


def tensor_parallel_bytes(arch: Any, plan: ar.MemoryPlan, gpus: int) -> int:
    """Bytes each of ``gpus`` GPUs holds when ``plan`` is split tensor-parallel (Megatron-style, as vLLM and
    SGLang split): the weights divided evenly, the KV cache by key/value heads (a GPU holds ceil(kv_heads / gpus)
    of them: heads are replicated past kv_heads GPUs), the activations, mask and margin on every GPU (counted
    whole: an upper bound)."""
    kv_share = -(-arch.kv_heads // gpus) / arch.kv_heads
    return int(plan.weights_bytes / gpus + plan.kv_cache_bytes * kv_share + plan.activation_bytes
               + plan.attention_bytes + plan.margin_bytes)


def fit_table(memory: list[tuple[str, int]], gpus: int, gpu_bytes: int | None,
              models: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """For each built-in model (or ``models``) × weights (bf16, fp8, int8, int4) × context (:data:`FIT_CONTEXTS`
    up to the model's own): weights, KV cache and workspace bytes, and whether it fits each of ``memory`` ((name,
    bytes) of one device: this GPU, the 24 and 48 GB cards) and, with ``gpus`` > 1 of ``gpu_bytes`` each, all of
    them tensor-parallel (``per_gpu_bytes``)."""
    from hwbench_gui.engine.models.llm.storage import WEIGHT_KINDS

    rows = []
    for name in models or tuple(n for n in BUILT_IN if n != "tiny"):
        arch = BUILT_IN[name]
        for weights in WEIGHT_KINDS:
            for context in sorted({min(c, arch.max_positions) for c in FIT_CONTEXTS}):
                plan = fit_plan(arch, weights, context)
                row = {"model": name, "weights": weights, "context": context,
                       "weights_bytes": plan.weights_bytes, "kv_cache_bytes": plan.kv_cache_bytes,
                       "workspace_bytes": plan.activation_bytes + plan.attention_bytes + plan.margin_bytes,
                       "total_bytes": plan.total_bytes,
                       "fits": {where: plan.total_bytes <= size for where, size in memory}}
                if gpus > 1 and gpu_bytes:
                    row["per_gpu_bytes"] = tensor_parallel_bytes(arch, plan, gpus)
                    row["fits"][f"{gpus} GPUs, tensor-parallel"] = row["per_gpu_bytes"] <= gpu_bytes
                rows.append(row)
    return rows


def machine_memory(free: list[int] | None = None) -> tuple[list[tuple[str, int]], int, int | None, str]:
    """What the table is held against: (name, bytes) of this machine's first GPU (``free`` bytes of each GPU where
    the caller measured them, else NVML's total) and of the two cards, the GPU count, the smallest GPU's bytes, and
    what was read in words."""
    if free:
        sizes, what = [int(f) for f in free], "free memory now"
    else:
        sizes, what = _nvml_totals(), "total memory"
    cards = [(name, size) for name, size in CARDS]
    if not sizes:
        return cards, 0, None, "a 24 GB and a 48 GB card (no NVIDIA GPU found here)"
    return ([("this GPU", sizes[0])] + cards, len(sizes), min(sizes),
            f"this machine's GPUs ({what}: " + ", ".join(f"{size / GIB:.1f}" for size in sizes)
            + " GiB), a 24 GB and a 48 GB card")


def fit_table_here() -> tuple[str, list[str], list[list[str]]]:
    """The table for this machine before any run, as (title, column names, rows of text): every built-in model
    against its GPUs' total memory as NVML reads it, and the two cards."""
    memory, gpus, gpu_bytes, what = machine_memory()
    headers, rows = fit_cells(fit_table(memory, gpus, gpu_bytes))
    return (f"What runs here for inference: batch 1, weights + KV cache + workspace as llm.infer plans them, a "
            f"{FIT_PROMPT}-token prompt pass; against {what}", headers, rows)


def _nvml_totals() -> list[int]:
    if nvml.device_count() == 0:
        return []
    totals = []
    for index in range(nvml.device_count()):
        info = nvml.query("nvmlDeviceGetMemoryInfo", nvml.handle(index))
        if getattr(info, "total", None):
            totals.append(int(info.total))
    return totals


def fit_lines(rows: list[dict[str, Any]], what: str) -> list[str]:
    """The table as text, a line per model × weights: its bytes at each context and where it fits."""
    out = [f"What runs here for inference (batch 1; weights + KV cache + workspace against {what}; "
           "tensor-parallel: weights and KV heads split, workspace on every GPU):"]
    by_model: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in rows:
        by_model.setdefault((row["model"], row["weights"]), []).append(row)
    for (model, weights), group in by_model.items():
        cells = []
        for row in group:
            where = [name for name, ok in row["fits"].items() if ok]
            need = f"{row['total_bytes'] / GIB:.1f} GiB" + (
                f" ({row['per_gpu_bytes'] / GIB:.1f} GiB a GPU split)" if "per_gpu_bytes" in row else "")
            cells.append(f"{row['context'] // 1024}k: {need} → {', '.join(where) if where else 'fits none'}")
        out.append(f"  {model} {weights}: weights {group[0]['weights_bytes'] / GIB:.1f} GiB; " + "; ".join(cells))
    return out


def fit_cells(rows: list[dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
    """The table as text cells for a page: (column names, a row per model × weights × context); each place is a
    column saying whether it fits (with the bytes a GPU holds when split tensor-parallel)."""
    places = list(dict.fromkeys(name for row in rows for name in (row.get("fits") or {})))
    headers = ["Model", "Weights", "Context", "Weights (GiB)", "KV cache (GiB)", "Workspace (GiB)", "Total (GiB)"]
    out = []
    for row in rows:
        cells = [str(row["model"]), str(row["weights"]), f"{row['context']:,}"] + [
            f"{row[key] / GIB:.1f}" for key in ("weights_bytes", "kv_cache_bytes", "workspace_bytes", "total_bytes")]
        for place in places:
            fits = (row.get("fits") or {}).get(place)
            cell = "fits" if fits else "does not fit" if fits is False else "—"
            if "tensor-parallel" in place and "per_gpu_bytes" in row:
                cell += f" ({row['per_gpu_bytes'] / GIB:.1f} GiB a GPU)"
            cells.append(cell)
        out.append(cells)
    return headers + places, out
