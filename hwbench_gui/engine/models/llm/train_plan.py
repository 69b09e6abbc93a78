"""What an llm.train run will need before it starts, from the arithmetic of :mod:`.training_arithmetic` (no
torch): its memory estimate, its FLOPs per token, the least time its steps can take at a measured rate, and the
one-line refusals when either does not fit."""

from __future__ import annotations

from typing import Any

from hwbench_gui.engine.measure.room import Room
from hwbench_gui.engine.models.common import GIB, GPU_WINDOW_MIN_STEPS
from hwbench_gui.engine.models.llm import training_arithmetic as ta
from hwbench_gui.engine.models.llm.what_fits import FIT_FRACTION
from hwbench_gui.engine.spec.device import CPU, CUDA
from hwbench_gui.engine.spec.precision import FP8


def compiles_on_gpu(params: dict[str, Any]) -> bool:
    """Whether a run of ``params`` on a GPU compiles its blocks (``compile`` resolved to a bool, or the
    declared choice: auto compiles on a GPU)."""
    return params["compile"] in (True, "true", "auto")


def estimate(arch: Any, params: dict[str, Any], micro_batch: int, sharding: str = "none",
             world: int = 1, device_type: str = CUDA) -> ta.TrainingMemory:
    """The memory estimate of ``params`` at ``micro_batch`` on a GPU, or the CPU with ``device_type`` "cpu" (the
    arithmetic, no torch), its blocks compiled or eager as the run will build them (compile=auto compiles on a
    GPU, not on the CPU)."""
    compiled = compiles_on_gpu(params) if device_type == CUDA else params["compile"] in (True, "true")
    dims = ta.dims_of(arch, params["method"], params["lora_rank"], device_type=device_type, compiled=compiled,
                      fp8=is_fp8(params))
    lora_params = sum(params["lora_rank"] * (i + o) for i, o in dims.adapted)
    return ta.training_memory(dims, method=params["method"], micro_batch=micro_batch, seq=params["seq"],
                              checkpointing=params["checkpointing"], chunk_tokens=ta.chunk_tokens(arch.vocab),
                              lora_params=lora_params, sharding=sharding, world=world, fp8=is_fp8(params),
                              grad_accum=params.get("grad_accum", 1))


def is_fp8(params: dict[str, Any]) -> bool:
    return params.get("precision") == FP8.key



def flops_per_token(arch: Any, params: dict[str, Any]) -> int:
    dims = ta.dims_of(arch, params["method"])
    return ta.flops_per_token(dims, params["seq"], params["method"], params["lora_rank"])


def fp8_flops_per_token(arch: Any, params: dict[str, Any]) -> int:
    """Of :func:`flops_per_token`, those an FP8 run multiplies in FP8 (0 otherwise)."""
    return ta.fp8_flops_per_token(ta.dims_of(arch, params["method"])) if is_fp8(params) else 0


def least_steps(params: dict[str, Any], on_gpu: bool) -> int:
    """The fewest optimizer steps the run takes: the warm-up, then on the CPU ``steps`` per timed window; on a GPU
    the sizing window and at least :data:`GPU_WINDOW_MIN_STEPS` per timed window (more where ``min_time_s`` asks:
    :func:`least_seconds` counts that)."""
    if on_gpu:
        return params["warmup"] + params["steps"] + params["repeats"] * GPU_WINDOW_MIN_STEPS
    return params["warmup"] + params["steps"] * params["repeats"]


def step_flops(arch: Any, params: dict[str, Any], micro_batch: int) -> float:
    """Model FLOPs of one rank's optimizer step: FLOPs per token × micro_batch × grad_accum × seq."""
    return float(flops_per_token(arch, params)) * micro_batch * params["grad_accum"] * params["seq"]


def least_seconds(arch: Any, params: dict[str, Any], micro_batch: int, world: int, on_gpu: bool,
                  rate_tflops: float) -> float:
    """The least time the run's steps can take at ``rate_tflops``: every step's model FLOPs (recomputation not
    counted) at that rate; the CPU's ranks share one processor (world × the FLOPs at its rate), a GPU's run in
    parallel; a GPU run's timed windows last at least ``min_time_s``."""
    step_s = step_flops(arch, params, micro_batch) * (1 if on_gpu else world) / (rate_tflops * 1e12)
    seconds = step_s * least_steps(params, on_gpu)
    if on_gpu:
        seconds = max(seconds, step_s * (params["warmup"] + params["steps"]) + params["min_time_s"])
    return seconds


def memory_refusal(arch: Any, params: dict[str, Any], micro_batch: int, world: int, device_type: str,
                   room: Room, rank_bytes: int = 0, sharding: str = "none") -> str | None:
    """The one-line refusal when ``params`` at ``micro_batch`` does not fit :data:`FIT_FRACTION` of ``room`` (the
    allocator's rounding and what the estimate does not name take the rest, on the CPU as on a GPU; on the CPU
    every rank's estimate and ``rank_bytes`` of its own process beside it, as the ranks share the host's memory),
    or None."""
    memory = estimate(arch, params, micro_batch, sharding, world, device_type)
    ranks = world if device_type == CPU else 1
    need = ranks * (memory.total + (rank_bytes if ranks > 1 else 0))
    if need <= room.bytes * FIT_FRACTION:
        return None
    per = (f"{ranks} ranks × ({memory.total / GIB:,.1f} GiB + {rank_bytes / GIB:.1f} GiB a rank's process) = "
           f"{need / GIB:,.1f} GiB" if ranks > 1 else f"{need / GIB:,.1f} GiB")
    return (f"{arch.name} {params['method']} at micro-batch {micro_batch} × {params['seq']} tokens × grad_accum "
            f"{params['grad_accum']} needs about {per} ({'; '.join(memory.lines()[:-1])}), more than "
            f"{FIT_FRACTION:.0%} of the {room.what}: try a smaller micro_batch or grad_accum, checkpointing=true, "
            + ("" if params["method"] == "lora" else "method=lora, ") + "or a smaller model")


def time_refusal(arch: Any, params: dict[str, Any], micro_batch: int, world: int, on_gpu: bool,
                 rate_tflops: float, rate_what: str, allowed_s: float, allowed: str) -> str | None:
    """The one-line refusal when the run's least time at ``rate_tflops`` (measured: ``rate_what``) exceeds
    ``allowed_s`` (``allowed`` in words), or None."""
    seconds = least_seconds(arch, params, micro_batch, world, on_gpu, rate_tflops)
    if seconds <= allowed_s:
        return None
    ranks = f" × {world} ranks sharing the CPU" if world > 1 and not on_gpu else ""
    return (f"{arch.name} {params['method']} at micro-batch {micro_batch} × {params['seq']} tokens × grad_accum "
            f"{params['grad_accum']} here would take at least {seconds / 60:,.1f} minutes: "
            f"{least_steps(params, on_gpu)} steps × {step_flops(arch, params, micro_batch):.3g} FLOPs{ranks} at "
            f"{rate_tflops:.3g} TFLOP/s ({rate_what}), more than the {allowed} a run may spend at it: choose a "
            "smaller model, micro_batch or grad_accum, a shorter seq, fewer steps, or a GPU")


