"""An engine's generation speed held against this machine's limit: bound = bandwidth ÷ bytes a token reads (the
GGUF's weights as stored, and the KV cache it attends), as ``llm.infer`` holds its own. The bandwidth is measured
here (a copy on the device, as ``llm.infer`` measures it: bytes read + written) where the engine's device is this
machine's, else the GPU's datasheet, else given by the user (``bandwidth_gbps``, e.g. gpu.d2d's figure there);
without any, the figure has no bound and says why, in one line."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hwbench_gui.engine.inventory import datasheets
from hwbench_gui.engine.measure.stats import median
from hwbench_gui.engine.measure.timing import GB

COPY_BYTES = {"cuda": 1 << 30, "cpu": 256 << 20}  # as llm.infer measures its bound
REPEATS = 5


@dataclass(frozen=True)
class Bandwidth:
    """The bandwidth a bound divides (None: none known, ``what`` says why), in words and with its samples."""

    gbps: float | None
    what: str
    samples: tuple[float, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"gbps": self.gbps, "what": self.what, "samples": list(self.samples)}


def measured(device: str) -> Bandwidth:
    """A copy of :data:`COPY_BYTES` on ``device`` ("cuda:N" or "cpu"), median of :data:`REPEATS`."""
    import torch

    from hwbench_gui.engine.measure.bandwidth import copy_rates_gbps

    kind = "cuda" if device.startswith("cuda") else "cpu"
    n = COPY_BYTES[kind]
    src = torch.randint(0, 256, (n,), dtype=torch.uint8, device=device)
    dst = torch.empty_like(src)
    rates = copy_rates_gbps(src, dst, n, REPEATS, cuda=kind == "cuda")
    name = f"{device} ({torch.cuda.get_device_name(device)})" if kind == "cuda" else "the CPU"
    return Bandwidth(median(rates), f"measured on {name} in this run: a copy of {n >> 20} MiB, bytes read + written, "
                                    f"median of {REPEATS}", tuple(rates))


def datasheet(gpu_name: str) -> Bandwidth:
    sheet = datasheets.lookup(gpu_name) if gpu_name else None
    if sheet is None:
        return Bandwidth(None, datasheets.unknown_reason(gpu_name) if gpu_name else "the run names no GPU")
    return Bandwidth(float(sheet.memory_gb_per_s), f"the {sheet.model} datasheet's memory bandwidth ({sheet.source})")


def bound_tokens_per_s(tokens: int, window_bytes: float, bandwidth_gbps: float) -> float:
    """The most tokens/s ``tokens`` steps reading ``window_bytes`` in all allow at ``bandwidth_gbps``."""
    return tokens * bandwidth_gbps * GB / window_bytes


def held(value: float, bound: float | None, why_none: str) -> tuple[float | None, str | None]:
    """``value``'s share of ``bound``, or (None, why): no bound, or a figure above it (the limit is then wrong,
    and no share above 100 % is shown)."""
    if bound is None:
        return None, why_none
    if value > bound:
        return None, (f"{value:,.1f} tokens/s is above the {bound:,.1f} tokens/s bound: the bandwidth it divides is "
                      "not this engine's limit (measured on another device, or low)")
    return value / bound, None


def headline(engine: str, quant: str | None, value: float, fraction: float | None, reason: str | None,
             whose: str) -> str:
    """"llama.cpp Q4_K_M: 142 tokens/s = 0.58 of this GPU's bound", or the reason it has no share."""
    head = f"{engine} {quant or 'unknown quantization'}: {value:,.0f} tokens/s"
    return f"{head} = {fraction:.2f} of {whose} bound" if fraction is not None else f"{head}; no share of a bound: " \
        f"{reason}"
