"""Whisper's arithmetic: parameters, the encoder's FLOPs per window, the decoder's bytes per token, and the memory a
run needs, from the shape alone (pure: no torch). Known-shape tests pin each formula, and the encoder's FLOPs
against torch.utils.flop_counter on the model itself.

FLOPs count 2 per multiply-add of every matmul and convolution and 4 × queries × keys × width for an attention
(QKᵀ and the weighted sum of V); norms, GELUs and softmax are left out (a few per element, not matmul work).
"""

from __future__ import annotations

from dataclasses import dataclass

from hwbench_gui.engine.models.speech.architectures import WhisperArch

#: Tokens every window starts with before the first transcribed one: <|startoftranscript|>, the language,
#: <|transcribe|>, <|notimestamps|> (what transformers' generate forces for Whisper).
PROMPT_TOKENS = 4


def _linear(n_in: int, n_out: int) -> int:
    return n_in * n_out + n_out


def encoder_params(a: WhisperArch) -> int:
    """As transformers counts them (the key projections have no bias; the position table included)."""
    d = a.d_model
    convs = d * a.mels * 3 + d + d * d * 3 + d
    layer = 4 * d * d + 3 * d + _linear(d, a.encoder_ffn) + _linear(a.encoder_ffn, d) + 4 * d
    return convs + a.source_positions * d + a.encoder_layers * layer + 2 * d


def decoder_params(a: WhisperArch) -> int:
    """As transformers counts them (the output projection is the token embedding: counted once)."""
    d = a.d_model
    layer = 2 * (4 * d * d + 3 * d) + _linear(d, a.decoder_ffn) + _linear(a.decoder_ffn, d) + 6 * d
    return a.vocab * d + a.target_positions * d + a.decoder_layers * layer + 2 * d


def total_params(a: WhisperArch) -> int:
    return encoder_params(a) + decoder_params(a)


def encoder_flops(a: WhisperArch, batch: int = 1) -> int:
    """FLOPs of the encoder on ``batch`` windows: the two convolutions, every layer's projections, attention
    (every position to every position) and MLP."""
    d, p = a.d_model, a.source_positions
    convs = 2 * a.frames * a.mels * 3 * d + 2 * p * d * 3 * d
    layer = 2 * p * d * (4 * d + 2 * a.encoder_ffn) + 4 * p * p * d
    return batch * (convs + a.encoder_layers * layer)


def cross_flops(a: WhisperArch, batch: int = 1) -> int:
    """FLOPs of the cross-attention's keys and values of every decoder layer (once per window)."""
    return batch * a.decoder_layers * 2 * a.source_positions * a.d_model * 2 * a.d_model


def token_flops(a: WhisperArch, position: int) -> int:
    """FLOPs of one decoder token at ``position`` (it attends ``position`` + 1 positions and every encoder one),
    with its logits over the vocabulary."""
    d = a.d_model
    layer = 2 * d * (6 * d + 2 * a.decoder_ffn) + 4 * d * (position + 1) + 4 * d * a.source_positions
    return a.decoder_layers * layer + 2 * d * a.vocab


def prompt_flops(a: WhisperArch, batch: int = 1, tokens: int = PROMPT_TOKENS) -> int:
    """FLOPs of a window's decoder start: the cross keys/values and the ``tokens`` forced tokens in one pass."""
    return cross_flops(a, batch) + batch * sum(token_flops(a, i) for i in range(tokens))


def weights_read_per_step(a: WhisperArch, element_bytes: int) -> int:
    """Bytes of weights one decoding step reads: every decoder layer's but the cross keys/values' projection (applied
    once per window), the final norm and the output projection (the token embedding). The step's embedding rows are
    left out (one row per sequence)."""
    d = a.d_model
    layer = (_linear(d, 3 * d) + 3 * _linear(d, d) + _linear(d, a.decoder_ffn) + _linear(a.decoder_ffn, d) + 6 * d)
    return element_bytes * (a.decoder_layers * layer + 2 * d + a.vocab * d)


def kv_bytes_per_step(a: WhisperArch, element_bytes: int, position: int) -> int:
    """Bytes of caches one sequence's step at ``position`` moves: the self-attention's keys and values of the
    ``position`` + 1 positions it attends plus the one it writes, and the cross-attention's of every encoder
    position."""
    per_position = 2 * a.decoder_layers * a.d_model * element_bytes
    return per_position * (position + 2) + per_position * a.source_positions


def step_bytes(a: WhisperArch, element_bytes: int, position: int, batch: int) -> int:
    """Bytes a decoding step of ``batch`` sequences at ``position`` moves at least: the weights once, the caches per
    sequence."""
    return weights_read_per_step(a, element_bytes) + batch * kv_bytes_per_step(a, element_bytes, position)


def steps_bytes(a: WhisperArch, element_bytes: int, batch: int, tokens: int) -> int:
    """Bytes of a window's one-token steps: the first transcribed token comes from the prompt's pass, each of the
    other ``tokens`` - 1 from a step at positions :data:`PROMPT_TOKENS` onwards."""
    return sum(step_bytes(a, element_bytes, PROMPT_TOKENS + i, batch) for i in range(tokens - 1))


#: A window's self-attention cache is allocated in whole blocks of this many positions: an attention mask whose
#: rows are not a multiple of 16 elements is copied into a padded one by PyTorch's memory-efficient kernel at every
#: step.
CACHE_BLOCK = 16


def cache_positions(tokens: int) -> int:
    """Decoder positions a window's cache holds: the prompt and every transcribed token but the last (never fed),
    rounded up to :data:`CACHE_BLOCK` (the positions beyond are masked, never attended)."""
    needed = PROMPT_TOKENS + tokens - 1
    return -(-needed // CACHE_BLOCK) * CACHE_BLOCK


@dataclass(frozen=True)
class MemoryPlan:
    """Bytes a run needs on its device, by part."""

    weights_bytes: int
    self_cache_bytes: int
    cross_cache_bytes: int
    activation_bytes: int

    @property
    def total_bytes(self) -> int:
        return self.weights_bytes + self.self_cache_bytes + self.cross_cache_bytes + self.activation_bytes

    def text(self) -> str:
        gib = 1 << 30
        return (f"{self.total_bytes / gib:.2f} GiB (weights {self.weights_bytes / gib:.2f} + self-attention cache "
                f"{self.self_cache_bytes / gib:.2f} + cross-attention cache {self.cross_cache_bytes / gib:.2f} + "
                f"encoder activations and logits {self.activation_bytes / gib:.2f})")

    def to_json(self) -> dict[str, int]:
        return {"weights_bytes": self.weights_bytes, "self_cache_bytes": self.self_cache_bytes,
                "cross_cache_bytes": self.cross_cache_bytes, "activation_bytes": self.activation_bytes,
                "total_bytes": self.total_bytes}


def memory_plan(a: WhisperArch, element_bytes: int, batch: int, tokens: int) -> MemoryPlan:
    """What ``batch`` windows of ``tokens`` transcribed tokens need: the weights (with the zero key biases this
    model stores), both caches, and the encoder's largest live set (the log-mel input, the first convolution's
    output and its GELU, a layer's input, MLP hidden and its GELU, and an attention's full score matrix, as a
    kernel without flash attention holds it), plus the logits."""
    d, p, e = a.d_model, a.source_positions, element_bytes
    weights = (total_params(a) + a.encoder_layers * d + 2 * a.decoder_layers * d) * e
    per_position = 2 * a.decoder_layers * batch * d * e
    encoder = batch * e * (a.mels * a.frames + 2 * d * a.frames + p * (2 * d + 2 * a.encoder_ffn)
                           + a.encoder_heads * p * p)
    logits = batch * PROMPT_TOKENS * a.vocab * 4
    return MemoryPlan(weights, per_position * cache_positions(tokens), per_position * p, encoder + logits)
