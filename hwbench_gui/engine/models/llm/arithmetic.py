"""What a decoder-only model costs, from its :class:`~.architectures.Architecture` alone (no torch):
parameters, bytes read per generated token, KV-cache bytes, FLOPs, and the memory a run needs.

The bounds a language-model figure is held against are built from these: generating a token reads every
weight it uses and the KV cache of the positions it attends, so its time is at least bytes ÷ memory
bandwidth; processing a prompt is dominated by matmuls, so its time is at least FLOPs ÷ matmul rate.
"""

from __future__ import annotations

from dataclasses import dataclass

from hwbench_gui.engine.models.llm.architectures import Architecture


def norm_params(arch: Architecture) -> int:
    """One normalisation layer: a scale per feature, and a shift for LayerNorm."""
    return arch.hidden * (2 if arch.norm == "layernorm" else 1)


def layer_matmul_params(arch: Architecture) -> int:
    """The weights of one block's matrix multiplies (q, k, v, output projection, MLP), biases excluded."""
    attention = arch.hidden * (arch.q_size + 2 * arch.kv_size) + arch.q_size * arch.hidden
    mlp = (2 if arch.mlp == "gelu" else 3) * arch.hidden * arch.intermediate
    return attention + mlp


def layer_other_params(arch: Architecture) -> int:
    """One block's biases and its two normalisations."""
    bias = (arch.q_size + 2 * arch.kv_size) if arch.qkv_bias else 0
    if arch.other_bias:
        bias += arch.hidden + arch.intermediate + arch.hidden
    return bias + 2 * norm_params(arch)


def embedding_params(arch: Architecture) -> int:
    """The token table, plus the learned position table where there is one."""
    return arch.vocab * arch.hidden + (arch.max_positions * arch.hidden if arch.positional == "learned" else 0)


def head_params(arch: Architecture) -> int:
    """The output projection's weights (the token table itself when tied)."""
    return arch.vocab * arch.hidden


def total_params(arch: Architecture) -> int:
    """Every parameter stored, the output projection counted once when tied to the token table."""
    head = 0 if arch.tied_embeddings else head_params(arch)
    return (embedding_params(arch) + arch.layers * (layer_matmul_params(arch) + layer_other_params(arch))
            + norm_params(arch) + head)


def matmul_params(arch: Architecture) -> int:
    """Weights that take part in a matrix multiply per token: every block's and the output projection."""
    return arch.layers * layer_matmul_params(arch) + head_params(arch)


def weight_params_read_per_step(arch: Architecture) -> int:
    """Parameters one decoding step reads: every block, the final norm, the output projection, and a row
    of the token (and position) table per sequence (counted once: a row is negligible)."""
    rows = arch.hidden * (2 if arch.positional == "learned" else 1)
    return arch.layers * (layer_matmul_params(arch) + layer_other_params(arch)) + norm_params(arch) \
        + head_params(arch) + rows


def layer_matmul_channels(arch: Architecture) -> int:
    """Output channels of one block's matmuls (q/k/v, output projection, MLP up and down): an FP8 weight's
    scales, one per channel."""
    up = (2 if arch.mlp == "swiglu" else 1) * arch.intermediate
    return (arch.q_size + 2 * arch.kv_size) + arch.hidden + up + arch.hidden


@dataclass(frozen=True)
class WeightBytes:
    """Bytes a stored weight takes: ``block_matmul`` for the blocks' matmul weights, ``other`` for everything
    else (embeddings, norms, biases, the output projection), and ``scale_per_channel`` for each output channel
    of a block matmul (FP8's FP32 scales; 0 without)."""

    block_matmul: float
    other: float
    scale_per_channel: float = 0.0
    #: Group-wise scales and zeros beside each block matmul weight (int4: 4 bytes per group of 128 = 1/32).
    group_per_weight: float = 0.0
    #: The output projection (where it is not the token table) stored as the block matmuls are (weight-only
    #: quantization, as gpt-fast quantizes every linear layer).
    quantized_head: bool = False

    @classmethod
    def uniform(cls, bytes_per_param: float) -> WeightBytes:
        return cls(bytes_per_param, bytes_per_param)

    def _quantized(self, arch: Architecture) -> tuple[int, int]:
        """(weights, output channels) stored in ``block_matmul`` bytes: every block's matmuls, and the output
        projection with ``quantized_head``."""
        head = self.quantized_head and not arch.tied_embeddings
        return (arch.layers * layer_matmul_params(arch) + (head_params(arch) if head else 0),
                arch.layers * layer_matmul_channels(arch) + (arch.vocab if head else 0))

    def prompt_copy_bytes(self, arch: Architecture) -> int:
        """Bytes of the transient BF16 copy of the largest matrix a weight-only layer dequantises for a prompt's
        product (one layer at a time, :mod:`.weight_only`); 0 for weights that are not weight-only quantized
        (those with an unquantized output projection)."""
        if not self.quantized_head:
            return 0
        up = (2 if arch.mlp == "swiglu" else 1) * arch.intermediate
        largest = max(arch.hidden * (arch.q_size + 2 * arch.kv_size), arch.q_size * arch.hidden, arch.hidden * up,
                      0 if arch.tied_embeddings else head_params(arch))
        return 2 * largest

    def _blocks(self, arch: Architecture) -> float:
        weights, channels = self._quantized(arch)
        return weights * (self.block_matmul + self.group_per_weight) + channels * self.scale_per_channel

    def stored(self, arch: Architecture) -> int:
        """Bytes of every stored weight."""
        return int(self._blocks(arch) + (total_params(arch) - self._quantized(arch)[0]) * self.other)

    def read_per_step(self, arch: Architecture) -> int:
        """Bytes of the weights one decoding step reads (:func:`weight_params_read_per_step`'s parameters)."""
        return int(self._blocks(arch) + (weight_params_read_per_step(arch) - self._quantized(arch)[0]) * self.other)

    def parts(self, arch: Architecture) -> dict[str, int]:
        """Bytes of the weights one decoding step reads, by what they are: the quantized weights (the blocks'
        matmuls, and the output projection with ``quantized_head``), their scales (and zeros), and everything else
        read (norms, biases, an embedding row, an unquantized output projection)."""
        weights, channels = self._quantized(arch)
        return {"quantized_weights": int(weights * self.block_matmul),
                "scales_and_zeros": int(weights * self.group_per_weight + channels * self.scale_per_channel),
                "other_weights": int((weight_params_read_per_step(arch) - weights) * self.other)}


#: precision=fp8 (:mod:`.fp8`): a byte per block matmul weight and an FP32 scale per output channel; every other
#: weight in BF16.
FP8_BLOCKS = WeightBytes(block_matmul=1, other=2, scale_per_channel=4)


def kv_bytes_per_token(arch: Architecture, bytes_per_element: float) -> float:
    """KV-cache bytes one position holds: keys and values of every layer's key/value heads."""
    return 2 * arch.layers * arch.kv_heads * arch.head_dim * bytes_per_element


def bytes_per_step(arch: Architecture, weight_bytes_per_param: float | WeightBytes, kv_bytes_per_element: float,
                   context: int, batch: int = 1) -> float:
    """Bytes one decoding step of ``batch`` sequences moves: the weights once (a number: bytes of every
    parameter; or :class:`WeightBytes`), and per sequence the KV cache of the ``context`` positions it attends
    (the new one included) read plus the new position written."""
    weights = weight_bytes_per_param if isinstance(weight_bytes_per_param, WeightBytes) \
        else WeightBytes.uniform(weight_bytes_per_param)
    return weights.read_per_step(arch) + batch * kv_bytes_per_token(arch, kv_bytes_per_element) * (context + 1)


def attention_flops(arch: Architecture, queries: int, depth: int) -> float:
    """Multiply-add FLOPs of scores and weighted values for ``queries`` consecutive positions after
    ``depth`` cached ones, causal: query i attends depth + i + 1 keys; 2 FLOPs × head_dim for QKᵀ and
    again for AV, per head and layer. Masked-out pairs are not counted."""
    keys = queries * depth + queries * (queries + 1) // 2
    return 4.0 * arch.layers * arch.heads * arch.head_dim * keys


def block_matmul_flops(arch: Architecture, tokens: int) -> float:
    """FLOPs of the blocks' matmuls for ``tokens`` positions: 2 × block matmul weights per token."""
    return 2.0 * arch.layers * layer_matmul_params(arch) * tokens


def forward_flops(arch: Architecture, tokens: int, depth: int = 0, logit_tokens: int | None = None) -> float:
    """FLOPs of processing ``tokens`` positions after ``depth`` cached ones (one sequence): 2 × block
    matmul weights per token, attention, and the output projection for ``logit_tokens`` positions (all
    of them when None; a prompt run computes the last one only)."""
    logit_tokens = tokens if logit_tokens is None else logit_tokens
    return (block_matmul_flops(arch, tokens) + attention_flops(arch, tokens, depth)
            + 2.0 * head_params(arch) * logit_tokens)


def flops_per_token(arch: Architecture, context: int) -> float:
    """FLOPs of one generated token attending ``context`` positions (itself included): 2 × matmul
    weights (output projection included) + 4 × layers × heads × head_dim × context."""
    return 2.0 * matmul_params(arch) + 4.0 * arch.layers * arch.heads * arch.head_dim * context


#: A KV cache holds a whole number of these positions: generation reads it in blocks of this many (one
#: matmul per block, summed after), so that a long context spreads over the whole GPU.
ATTENTION_BLOCK = 256


def allocated_positions(positions: int) -> int:
    """Positions a KV cache of ``positions`` allocates: rounded up to whole :data:`ATTENTION_BLOCK` blocks."""
    return -(-positions // ATTENTION_BLOCK) * ATTENTION_BLOCK


#: cuBLAS workspaces, the allocator's rounding and CUDA graph pools: a margin no formula gives.
WORKSPACE_MARGIN_BYTES = 512 << 20


@dataclass(frozen=True)
class MemoryPlan:
    """What a run needs on its device: weights, KV cache and the activations of the largest step."""

    weights_bytes: int
    kv_cache_bytes: int
    activation_bytes: int
    margin_bytes: int
    #: A prompt pass's attention mask and SDPA's copy of it (:func:`attention_mask_bytes`), and the RoPE tables.
    attention_bytes: int = 0

    @property
    def total_bytes(self) -> int:
        return (self.weights_bytes + self.kv_cache_bytes + self.activation_bytes + self.attention_bytes
                + self.margin_bytes)

    def to_json(self) -> dict[str, int]:
        return {"weights_bytes": self.weights_bytes, "kv_cache_bytes": self.kv_cache_bytes,
                "activation_bytes": self.activation_bytes, "attention_bytes": self.attention_bytes,
                "margin_bytes": self.margin_bytes, "total_bytes": self.total_bytes}

    def text(self) -> str:
        gib = 1 << 30
        mask = f"attention mask and position tables {self.attention_bytes / gib:.2f} GiB + " \
            if self.attention_bytes else ""
        return (f"weights {self.weights_bytes / gib:.2f} GiB + KV cache {self.kv_cache_bytes / gib:.2f} GiB + "
                f"activations {self.activation_bytes / gib:.2f} GiB + {mask}margin {self.margin_bytes / gib:.2f} GiB"
                f" = {self.total_bytes / gib:.2f} GiB")


def attention_mask_bytes(arch: Architecture, queries: int, keys: int, bytes_per_element: int) -> int:
    """Bytes of a prompt pass's causal mask for ``queries`` positions against ``keys`` (shared by every sequence,
    :meth:`..model.Decoder.forward`): the comparison (a byte a pair), its copy for each query head of a key/value
    head (``heads / kv_heads`` bytes a pair), and SDPA's additive copy of that in the run's dtype (measured on
    PyTorch 2.14's CPU flash attention: 1.5 bytes a grouped pair in BF16; counted as 2)."""
    groups = max(1, arch.heads // max(1, arch.kv_heads))
    return queries * keys * (1 + groups * (1 + bytes_per_element))


def rope_table_bytes(arch: Architecture, positions: int) -> int:
    """RoPE's FP32 cos and (-sin, sin) rows for ``positions`` and the angles they are made from."""
    return int(positions * arch.head_dim * 4 * 2.5) if arch.positional == "rope" else 0


def memory_plan(arch: Architecture, bytes_per_param: int, batch: int, cache_positions: int,
                chunk_tokens: int, weight_bytes: WeightBytes | None = None, attention: tuple[int, int] = (0, 0),
                rope_positions: int = 0) -> MemoryPlan:
    """Memory of ``batch`` sequences of up to ``cache_positions`` cached positions, prompts processed
    ``chunk_tokens`` positions (over all sequences) at a time, logits of one position per sequence in FP32.
    ``bytes_per_param`` sizes the KV cache and activations, and the weights unless ``weight_bytes`` says
    otherwise (FP8 block weights beside BF16 for the rest).

    Activations: the widest live tensors of one block at ``chunk_tokens`` (residual, normed input, q/k/v,
    attention output, the MLP's gate, up and product) plus the logits, and with weight-only quantized weights the
    BF16 copy of the largest matrix a prompt's product dequantises (:meth:`WeightBytes.prompt_copy_bytes`).
    ``attention``: (queries, keys) of the
    largest prompt pass, whose mask :func:`attention_mask_bytes` counts; ``rope_positions``: the RoPE tables'
    rows. Every size is a Python int: a large but valid configuration is counted, never allocated."""
    weights = (weight_bytes or WeightBytes.uniform(bytes_per_param)).stored(arch)
    kv = int(kv_bytes_per_token(arch, bytes_per_param)) * batch * allocated_positions(cache_positions)
    widths = 3 * arch.hidden + arch.q_size + 2 * arch.kv_size + arch.q_size + 3 * arch.intermediate
    activations = chunk_tokens * widths * bytes_per_param + batch * arch.vocab * (4 + bytes_per_param) \
        + (weight_bytes.prompt_copy_bytes(arch) if weight_bytes else 0)
    mask = attention_mask_bytes(arch, attention[0], attention[1], bytes_per_param) if attention[0] else 0
    return MemoryPlan(weights, kv, activations, WORKSPACE_MARGIN_BYTES,
                      mask + rope_table_bytes(arch, rope_positions))
