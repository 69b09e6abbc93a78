"""Precisions, declared once: the parameter value a user types, the label a result carries, what it
means, and what it asks of each framework (torch autocast dtype, Keras policy, TF32 switch). TF32 is
never called FP32; mixed precision is named as such (FP16-AMP, BF16-AMP).

:func:`apply_torch` and :func:`apply_keras` are the one place a precision reaches a framework; a
result document stores its precision once, as the label in ``precision``, read back by
:func:`of_document`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hwbench_gui.engine.spec.benchmark import Param, ParamError


@dataclass(frozen=True)
class Precision:
    """``tf32``: whether FP32 matmuls and convolutions may run on TF32 tensor cores; None leaves the
    framework's defaults (mixed precision: autocast decides what runs in FP32).
    ``tensor_dtype``: torch dtype (by name) of the tensors a benchmark makes itself, where one applies.
    ``autocast_dtype``: torch dtype (by name) under ``torch.autocast``; None runs without autocast.
    ``keras_policy``: the Keras mixed-precision policy name. ``loss_scaling``: training scales the loss
    (FP16's narrow range would flush small gradients to zero)."""

    key: str  # parameter value: "fp32", "bf16-amp"
    label: str  # in results and reports: "FP32", "BF16-AMP"
    meaning: str
    tf32: bool | None = False
    tensor_dtype: str | None = None
    autocast_dtype: str | None = None
    keras_policy: str = "float32"
    loss_scaling: bool = False

    def __str__(self) -> str:
        return self.label

    @property
    def uses_tensor_cores(self) -> bool:
        """FP32 tensors on TF32 tensor cores, or autocast to FP16/BF16 (what NHWC convolutions speed up)."""
        return bool(self.tf32) or self.autocast_dtype is not None


FP64 = Precision("fp64", "FP64", "IEEE double precision", tensor_dtype="float64", keras_policy="float64")
FP32 = Precision("fp32", "FP32", "IEEE FP32 with TF32 off", tensor_dtype="float32")
TF32 = Precision("tf32", "TF32", "FP32 tensors multiplied on TF32 tensor cores", tf32=True, tensor_dtype="float32")
FP16 = Precision("fp16", "FP16", "FP16 inputs and outputs", tensor_dtype="float16", keras_policy="float16")
FP16_AMP = Precision("fp16-amp", "FP16-AMP", "automatic mixed precision: FP32 weights, FP16 compute, loss scaling",
                     tf32=None, autocast_dtype="float16", keras_policy="mixed_float16", loss_scaling=True)
BF16 = Precision("bf16", "BF16", "BF16 inputs and outputs", tensor_dtype="bfloat16", keras_policy="bfloat16")
BF16_AMP = Precision("bf16-amp", "BF16-AMP", "automatic mixed precision: FP32 weights, BF16 compute",
                     tf32=None, autocast_dtype="bfloat16", keras_policy="mixed_bfloat16")
FP8 = Precision("fp8", "FP8", "FP8 e4m3 inputs (torch._scaled_mm), BF16 output", tensor_dtype="float8_e4m3fn")
INT8 = Precision("int8", "INT8", "8-bit integers", tensor_dtype="int8")

#: Every precision hwbench measures, in the order reports list them.
PRECISIONS = (FP64, FP32, TF32, FP16, FP16_AMP, BF16, BF16_AMP, FP8, INT8)
_BY_KEY = {p.key: p for p in PRECISIONS}
_BY_LABEL = {p.label: p for p in PRECISIONS}

#: What a result without a precision says.
NOT_APPLICABLE = "n/a"
#: Every label a result may carry.
LABELS = tuple(p.label for p in PRECISIONS) + (NOT_APPLICABLE,)

#: The precisions of the model benchmarks and of the matrix-multiply benchmark.
MODEL_KEYS = tuple(p.key for p in (FP32, TF32, FP16_AMP, BF16_AMP))
MATMUL_KEYS = tuple(p.key for p in (FP32, TF32, FP16, BF16, FP8))
#: Parameter value -> the label in results, for the model benchmarks. FP32 means TF32 off.
MODEL_LABELS = {key: _BY_KEY[key].label for key in MODEL_KEYS}


def model_param() -> Param:
    """The model benchmarks' ``precision`` parameter. A run's document names the precision of that
    parameter (``precision``); a benchmark names another only when it measured several (gpu.matmul)."""
    return Param("precision", "choice", FP32.key,
                 "fp32 = IEEE FP32 with TF32 off; tf32 = FP32 tensors on TF32 tensor cores; fp16-amp / bf16-amp = "
                 "automatic mixed precision (FP32 weights, FP16/BF16 compute; FP16 with loss scaling).",
                 choices=MODEL_KEYS)


def from_key(key: str) -> Precision:
    """``"bf16-amp"`` -> :data:`BF16_AMP`; ParamError naming the known keys otherwise."""
    try:
        return _BY_KEY[str(key).strip().lower()]
    except KeyError:
        raise ParamError(f"precision: {key!r} is not one of {', '.join(_BY_KEY)}") from None


def label_of(key: str) -> str:
    """``"bf16-amp"`` -> ``"BF16-AMP"``; ParamError naming the known keys otherwise."""
    return from_key(key).label


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


def of_document(doc: Any) -> str:
    """The precision a result document stores, in its one place ``precision``: the label
    (``"BF16-AMP"``, ``"n/a"``) in its declared spelling whatever the case it was written in, or ``""``
    when the document names none. Documents of every schema so far (the shipped references too) keep
    it there; ``params.precision`` is what the run asked for ("all", "auto"), not what it measured."""
    value = doc.get("precision") if isinstance(doc, dict) else None
    if not isinstance(value, str):
        return ""
    known = from_label(value)
    return known.label if known else value.strip()


@dataclass(frozen=True)
class TorchPrecision:
    """``precision`` applied to torch for ``device_type``: :meth:`autocast` gives the context each step
    runs in; ``settings`` are torch's switches in force afterwards, for the document."""

    precision: Precision
    device_type: str
    settings: dict[str, Any]

    def autocast(self) -> Any:
        import torch

        dtype = getattr(torch, self.precision.autocast_dtype) if self.precision.autocast_dtype else None
        return torch.autocast(self.device_type, dtype=dtype, enabled=dtype is not None)


def apply_torch(precision: Precision, device_type: str = "cuda") -> TorchPrecision:
    """Set torch's process-wide TF32 switches as ``precision`` declares (FP32: off for matmuls and
    cuDNN, float32 matmul precision "highest"; TF32: on, "high"); mixed precision keeps torch's
    defaults for the ops autocast leaves in FP32."""
    import torch

    if precision.tf32 is not None:
        torch.backends.cuda.matmul.allow_tf32 = precision.tf32
        torch.backends.cudnn.allow_tf32 = precision.tf32
        torch.set_float32_matmul_precision("high" if precision.tf32 else "highest")
    settings = {"cuda.matmul.allow_tf32": torch.backends.cuda.matmul.allow_tf32,
                "cudnn.allow_tf32": torch.backends.cudnn.allow_tf32,
                "float32_matmul_precision": torch.get_float32_matmul_precision()}
    return TorchPrecision(precision, device_type, settings)


def apply_keras(precision: Precision) -> str:
    """Set TensorFlow's TF32 switch and the Keras global policy for ``precision``; returns the policy.

    TensorFlow runs FP32 convolutions and matmuls as TF32 by default on Ampere and newer, so only an
    explicit FP32 turns it off. Call after ``keras.backend.clear_session()``, which resets the policy."""
    import keras
    import tensorflow as tf

    tf.config.experimental.enable_tensor_float_32_execution(precision.tf32 is not False)
    keras.mixed_precision.set_global_policy(precision.keras_policy)
    return precision.keras_policy
