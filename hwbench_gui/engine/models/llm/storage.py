"""How llm.infer stores a model in each precision and weight format: the torch dtype of its tensors, the bytes of
its weights (:class:`.arithmetic.WeightBytes`) and of a KV-cache entry, and what the blocks' matmul weights are
(BF16/FP16/FP32 as the precision; FP8 with activations quantised too, :mod:`.fp8`; or weight-only quantized,
:mod:`.weight_only`). No torch."""

from __future__ import annotations

from dataclasses import dataclass

from hwbench_gui.engine.models.llm import arithmetic as ar
from hwbench_gui.engine.models.llm.architectures import Architecture
from hwbench_gui.engine.spec.precision import BF16, FP8, FP16, FP32, Precision

#: The precisions llm.infer runs a model in.
PRECISIONS = (BF16, FP16, FP32, FP8)
#: llm.infer's ``weights`` choices: bf16 = not quantized (every weight in the run's precision); the others
#: weight-only quantized block matmul and output projection weights (:mod:`.weight_only`), BF16 activations.
WEIGHT_KINDS = ("bf16", "fp8", "int8", "int4")
#: llm.infer's ``int4_kernel`` routes besides "auto" (:data:`.weight_only.INT4_ROUTES` says what each is).
INT4_ROUTE_NAMES = ("packed", "compiled")
INT4_KERNEL_HELP = (
    "weights=int4 only: packed = PyTorch's packed int4 layout and its _weight_int4pack_mm at every row count (a "
    "prompt too: that layout cannot be turned back into BF16 cheaply without holding a second copy, and the kernel "
    "is made for a few rows); compiled = plain nibbles, one token multiplied by an expression torch.compile fuses "
    "into one reduction reading each byte once, a prompt dequantised to BF16 layer by layer for cuBLAS; auto = "
    "packed (on an H100 it generates 2.8 times as fast as compiled, its prompt a third as fast), compiled where "
    "PyTorch has no packed kernel for the device.")
#: Bytes of a block matmul weight under each weight-only kind: (per weight, per output channel of BF16 scales,
#: per weight of group-wise BF16 scales and zeros: int4 keeps 2 + 2 bytes for each group of 128).
INT4_GROUP = 128
WEIGHT_ONLY_BYTES = {"fp8": (1.0, 2.0, 0.0), "int8": (1.0, 2.0, 0.0), "int4": (0.5, 0.0, 4.0 / INT4_GROUP)}

#: ``details.precision["block_matmul_weights"]`` of a weight-only kind.
WEIGHT_ONLY_DETAILS = {
    "fp8": "FP8 e4m3 (float8_e4m3fn) weight-only, one BF16 scale per output channel",
    "int8": "int8 weight-only, one BF16 scale per output channel",
    "int4": f"int4 weight-only, groups of {INT4_GROUP} along the input with a BF16 scale and zero each",
}


@dataclass(frozen=True)
class Storage:
    """How a run stores the model: ``dtype`` (torch's name) of every tensor but quantized block weights,
    ``weights`` their bytes, ``element_bytes`` of a KV-cache entry and an activation, ``fp8_blocks`` (FP8 weights
    and activations, ``precision=fp8``), ``weight_only`` (a :data:`WEIGHT_KINDS` kind other than bf16, or None)."""

    dtype: str
    weights: ar.WeightBytes
    element_bytes: int
    fp8_blocks: bool = False
    weight_only: str | None = None

    @property
    def weights_key(self) -> str:
        """The ``weights`` parameter this storage answers to."""
        return self.weight_only or "bf16"


def storage(precision: Precision, weights: str = "bf16") -> Storage:
    """FP8 keeps everything but the blocks' matmul weights in BF16 (:mod:`..models.llm.fp8`); so does a weight-only
    kind (``weights`` other than bf16, which needs ``precision`` BF16: ValueError otherwise)."""
    if weights != "bf16":
        if precision is not BF16:
            raise ValueError(f"weights={weights} runs with precision=bf16 (BF16 activations), not "
                             f"{precision.key}")
        per_weight, per_channel, per_group = WEIGHT_ONLY_BYTES[weights]
        return Storage("bfloat16", ar.WeightBytes(per_weight, 2, per_channel, per_group, quantized_head=True), 2,
                       weight_only=weights)
    if precision is FP8:
        return Storage("bfloat16", ar.FP8_BLOCKS, 2, fp8_blocks=True)
    size = 4 if precision is FP32 else 2
    return Storage(precision.tensor_dtype, ar.WeightBytes.uniform(size), size)


#: The packed int4 layout's tiles along the input (gpt-fast's default): an input size must be a multiple of 16 × it.
INT4_INNER_K_TILES = 8


def int4_misfit(arch: Architecture) -> str | None:
    """Why ``weights=int4`` cannot hold ``arch``'s block matrices, or None: its groups and packed tiles need every
    input size a multiple of 128 and every output size a multiple of 8."""
    up = (2 if arch.mlp == "swiglu" else 1) * arch.intermediate
    shapes = {"qkv": (arch.hidden, arch.q_size + 2 * arch.kv_size), "out": (arch.q_size, arch.hidden),
              "up": (arch.hidden, up), "down": (arch.intermediate, arch.hidden)}
    step = max(INT4_GROUP, 16 * INT4_INNER_K_TILES)
    bad = [f"{name} {k}→{n}" for name, (k, n) in shapes.items() if k % step or n % 8]
    return (f"weights=int4 needs every block matmul's input size a multiple of {step} and output size a multiple "
            f"of 8, and {arch.name} has {', '.join(bad)}: choose weights=int8 or fp8") if bad else None
