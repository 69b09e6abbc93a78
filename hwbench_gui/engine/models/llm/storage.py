"""How llm.infer stores a model in each precision: the torch dtype of its tensors, the bytes of its weights
(:class:`.arithmetic.WeightBytes`) and of a KV-cache entry, and whether the blocks' matmul weights are FP8.
No torch."""

from __future__ import annotations

from dataclasses import dataclass

from hwbench_gui.engine.models.llm import arithmetic as ar
from hwbench_gui.engine.spec.precision import BF16, FP8, FP16, FP32, Precision

#: The precisions llm.infer runs a model in.
PRECISIONS = (BF16, FP16, FP32, FP8)


@dataclass(frozen=True)
class Storage:
    """How a precision stores the model: ``dtype`` (torch's name) of every tensor but FP8 block weights,
    ``weights`` their bytes, ``element_bytes`` of a KV-cache entry and an activation, ``fp8_blocks``."""

    dtype: str
    weights: ar.WeightBytes
    element_bytes: int
    fp8_blocks: bool = False


def storage(precision: Precision) -> Storage:
    """FP8 keeps everything but the blocks' matmul weights in BF16 (:mod:`..models.llm.fp8`)."""
    if precision is FP8:
        return Storage("bfloat16", ar.FP8_BLOCKS, 2, fp8_blocks=True)
    size = 4 if precision is FP32 else 2
    return Storage(precision.tensor_dtype, ar.WeightBytes.uniform(size), size)
