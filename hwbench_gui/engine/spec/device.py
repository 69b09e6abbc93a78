"""Where a benchmark runs, in one grammar: ``auto``, ``cpu``, ``cuda``, ``cuda:N`` or a bare index ``N``
(= ``cuda:N``). Parameters of kind ``device`` store the canonical text; code asks :func:`parse`."""

from __future__ import annotations

from dataclasses import dataclass

from hwbench_gui.engine.spec.benchmark import Param, ParamError

AUTO = "auto"
CPU = "cpu"
CUDA = "cuda"


@dataclass(frozen=True)
class Device:
    kind: str  # "auto", "cpu" or "cuda"
    index: int = 0  # the CUDA index (0 for cpu/auto)

    def __str__(self) -> str:
        return f"cuda:{self.index}" if self.kind == CUDA else self.kind


def parse(value: object, *, allow: tuple[str, ...] = (AUTO, CPU, CUDA)) -> Device:
    """The device ``value`` names; ParamError when it is none or its kind is not in ``allow``."""
    text = str(value).strip().lower()
    device: Device | None = None
    if text in (AUTO, CPU):
        device = Device(text)
    elif text.isdigit():
        device = Device(CUDA, int(text))
    elif text == CUDA or text.startswith(CUDA + ":"):
        index = text.partition(":")[2]
        if index == "" or index.isdigit():
            device = Device(CUDA, int(index or 0))
    if device is None:
        raise ParamError(f"device: {value!r} is not {_grammar(allow)}")
    if device.kind not in allow:
        raise ParamError(f"device: {value!r} is not allowed here; use {_grammar(allow)}")
    return device


def resolve_auto(device: Device) -> Device:
    """``auto`` -> the first CUDA GPU PyTorch sees, else the CPU (imports torch); others unchanged."""
    if device.kind != AUTO:
        return device
    import torch

    return Device(CUDA, 0) if torch.cuda.is_available() else Device(CPU)


def _grammar(allow: tuple[str, ...]) -> str:
    words = {AUTO: "'auto'", CPU: "'cpu'", CUDA: "'cuda', 'cuda:N' or a GPU index N"}
    return ", ".join(words[k] for k in allow)


def split_device(value: object, *, allow: tuple[str, ...] = (CPU, CUDA)) -> tuple[str, int]:
    """``"cuda:1"`` -> ``("cuda", 1)``, ``"cpu"`` -> ``("cpu", 0)``: for code that branches on the kind."""
    device = parse(value, allow=allow)
    return device.kind, device.index


#: The ``device`` parameter of a benchmark that measures one GPU.
GPU_PARAM = Param("device", "device", "cuda:0", "GPU: 'cuda:N' or its index N (as PyTorch numbers them).",
                  choices=(CUDA,), decides_comparability=False)
