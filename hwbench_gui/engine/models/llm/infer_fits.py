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

