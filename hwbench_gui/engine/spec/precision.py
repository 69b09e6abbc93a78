"""Precisions, declared once: the parameter value a user types, the label a result carries, and what
it means. TF32 is never called FP32; mixed precision is named as such (FP16-AMP, BF16-AMP)."""

from __future__ import annotations

from dataclasses import dataclass

from hwbench_gui.engine.spec.benchmark import ParamError


@dataclass(frozen=True)
class Precision:
    key: str  # parameter value: "fp32", "bf16-amp"
    label: str  # in results and reports: "FP32", "BF16-AMP"
    meaning: str


#: Every precision hwbench measures, in the order reports list them.
PRECISIONS = (
    Precision("fp64", "FP64", "IEEE double precision"),
    Precision("fp32", "FP32", "IEEE FP32 with TF32 off"),
    Precision("tf32", "TF32", "FP32 tensors multiplied on TF32 tensor cores"),
    Precision("fp16", "FP16", "FP16 inputs and outputs"),
    Precision("fp16-amp", "FP16-AMP", "automatic mixed precision: FP32 weights, FP16 compute, loss scaling"),
    Precision("bf16", "BF16", "BF16 inputs and outputs"),
    Precision("bf16-amp", "BF16-AMP", "automatic mixed precision: FP32 weights, BF16 compute"),
    Precision("fp8", "FP8", "FP8 e4m3 inputs (torch._scaled_mm), BF16 output"),
    Precision("int8", "INT8", "8-bit integers"),
)
_BY_KEY = {p.key: p for p in PRECISIONS}
_BY_LABEL = {p.label: p for p in PRECISIONS}

#: What a result without a precision says.
NOT_APPLICABLE = "n/a"
#: Every label a result may carry.
LABELS = tuple(p.label for p in PRECISIONS) + (NOT_APPLICABLE,)

#: The precisions of the model benchmarks and of the matrix-multiply benchmark.
MODEL_KEYS = ("fp32", "tf32", "fp16-amp", "bf16-amp")
MATMUL_KEYS = ("fp32", "tf32", "fp16", "bf16", "fp8")


def label_of(key: str) -> str:
    """``"bf16-amp"`` -> ``"BF16-AMP"``; ParamError naming the known keys otherwise."""
    try:
        return _BY_KEY[str(key).strip().lower()].label
    except KeyError:
        raise ParamError(f"precision: {key!r} is not one of {', '.join(_BY_KEY)}") from None


def from_label(text: str) -> Precision | None:
    """The precision a label (any case) names, or None."""
    return _BY_LABEL.get(str(text).strip().upper())


def requested_label(value: object) -> str | None:
    """The label of a run's ``precision`` parameter, None for "all"/"auto"/none: a failed run has no
    outcome to name its precision, and still compares with successful runs of the same one."""
    if not isinstance(value, str):
        return None
    precision = _BY_KEY.get(value.strip().lower())
    return precision.label if precision else None
