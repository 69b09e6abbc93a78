"""The model ``hwbench serve`` serves: a built-in architecture with random weights or a user's Hugging Face folder
(safetensors), on the CPU or a GPU, and the engine that generates with it."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable

from hwbench_gui.engine.models.llm.architectures import BUILT_IN, resolve
from hwbench_gui.engine.models.llm.generate import STEP_MODES
from hwbench_gui.engine.serving.batcher import Engine, Event
from hwbench_gui.engine.serving.server import Served
from hwbench_gui.engine.spec.benchmark import ParamError
from hwbench_gui.engine.spec.device import CPU, resolve_auto
from hwbench_gui.engine.spec.device import parse as parse_device
from hwbench_gui.engine.spec.precision import BF16, FP16, FP32, from_key

PRECISIONS = ("auto", BF16.key, FP16.key, FP32.key)


@dataclass(frozen=True)
class Options:
    """What ``hwbench serve`` was asked: ``precision`` auto = BF16 on a GPU, FP32 on the CPU; ``context``: the
    positions one request may fill (prompt + output), at most the architecture's; ``step`` the one-token step as
    llm.infer's (auto = fused on a GPU with Triton, graph without, eager on the CPU)."""

    model: str = "tiny"
    device: str = "auto"
    precision: str = "auto"
    context: int = 4096
    max_batch: int = 256
    gather_ms: float = 20.0
    step: str = "auto"


def prepare(options: Options) -> tuple[Served, Callable[[Callable[[list[Event]], None]], Engine]]:
    """What is served and how its engine is made; ParamError (one line) for a model, device or precision that
    cannot be used, ForeignFileError for a folder's file, before any weight is read."""
    arch = resolve(options.model)
    builtin = options.model.strip().lower() in BUILT_IN
    if not builtin:
        from hwbench_gui.engine.models.llm import weights

        weights.check_folder(options.model, arch)
    where = resolve_auto(parse_device(options.device))
    kind = "cpu" if where.kind == CPU else "cuda"
    if options.precision not in PRECISIONS:
        raise ParamError(f"precision: {options.precision!r} is not one of {', '.join(PRECISIONS)}")
    precision = from_key(options.precision if options.precision != "auto" else
                         (BF16.key if kind == "cuda" else FP32.key))
    context = min(options.context, arch.max_positions)
    step = options.step
    if step not in STEP_MODES:
        raise ParamError(f"step: {step!r} is not one of {', '.join(STEP_MODES)}")
    if step == "auto":
        step = "eager" if kind == "cpu" else "fused" if _has_triton() else "graph"
    if step == "graph" and kind == "cpu":
        raise ParamError("step=graph needs a CUDA GPU (CUDA graphs); use step=eager or compile on the CPU")
    model_id = arch.name if builtin else os.path.basename(os.path.normpath(options.model))
    device = "cpu" if kind == "cpu" else f"cuda:{where.index}"
    served = Served(model_id, arch, context,
                    f"{arch.name} with {'random weights' if builtin else 'weights from ' + options.model} in "
                    f"{precision.label} on {device}, context {context}, batches of up to {options.max_batch}, "
                    f"step={step}")

    def build() -> tuple[Any, Any, str]:
        import torch

        from hwbench_gui.engine.models.llm.generate import build_model

        if kind == "cuda":
            from hwbench_gui.engine.measure.timing import cuda_device

            torch.cuda.set_device(cuda_device(where.index))
        dtype = getattr(torch, precision.tensor_dtype)
        with torch.no_grad():
            return torch, build_model(torch, options.model, arch, dtype, device, context), kind

    def make_engine(post: Callable[[list[Event]], None]) -> Engine:
        return Engine(build, post, options.max_batch, options.gather_ms / 1e3, step)

    return served, make_engine


def _has_triton() -> bool:
    from torch.utils._triton import has_triton

    return bool(has_triton())
