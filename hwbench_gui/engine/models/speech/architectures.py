"""Whisper's encoder-decoder shapes, declared once, and a user's Hugging Face ``config.json`` read into the same type.

The built-in configurations are the public ``config.json`` values of OpenAI's checkpoints (openai/whisper-large-v3,
openai/whisper-large-v3-turbo, openai/whisper-tiny). Weights are never downloaded: a built-in model is
random-initialised, a user's folder is read by :mod:`.weights`. Nothing here imports torch.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from hwbench_gui.engine.models.llm.architectures import CONFIG_MAX_BYTES, read_json_file
from hwbench_gui.engine.shown_text import shown_path
from hwbench_gui.engine.spec.benchmark import ParamError

#: Audio of one window: Whisper reads 30 s at 16 kHz as 3000 log-mel frames (a hop of 160 samples), which its two
#: convolutions (the second of stride 2) turn into 1500 encoder positions.
WINDOW_S = 30.0
SAMPLE_RATE = 16_000
HOP = 160
N_FFT = 400
FRAMES = int(WINDOW_S * SAMPLE_RATE) // HOP


@dataclass(frozen=True)
class WhisperArch:
    """One Whisper's shape; every layer is a pre-LayerNorm transformer block with GELU MLPs and biased
    projections but the keys'; the output projection is the token embedding (tied)."""

    name: str
    vocab: int
    mels: int
    d_model: int
    encoder_layers: int
    decoder_layers: int
    encoder_heads: int
    decoder_heads: int
    encoder_ffn: int
    decoder_ffn: int
    source_positions: int = 1500
    target_positions: int = 448
    source: str = ""

    @property
    def frames(self) -> int:
        """Log-mel frames one window holds: two per encoder position (the second convolution's stride)."""
        return 2 * self.source_positions


BUILT_IN: dict[str, WhisperArch] = {
    "large-v3": WhisperArch("whisper-large-v3", vocab=51866, mels=128, d_model=1280, encoder_layers=32,
                            decoder_layers=32, encoder_heads=20, decoder_heads=20, encoder_ffn=5120, decoder_ffn=5120,
                            source="openai/whisper-large-v3 config.json"),
    "large-v3-turbo": WhisperArch("whisper-large-v3-turbo", vocab=51866, mels=128, d_model=1280, encoder_layers=32,
                                  decoder_layers=4, encoder_heads=20, decoder_heads=20, encoder_ffn=5120,
                                  decoder_ffn=5120, source="openai/whisper-large-v3-turbo config.json"),
    "tiny": WhisperArch("whisper-tiny", vocab=51865, mels=80, d_model=384, encoder_layers=4, decoder_layers=4,
                        encoder_heads=6, decoder_heads=6, encoder_ffn=1536, decoder_ffn=1536,
                        source="openai/whisper-tiny config.json"),
}

#: The largest value of each size a configuration may give, far above any published Whisper's (checked before any
#: arithmetic, so a forged config.json cannot reach the memory estimate with 10^12 layers).
SIZE_LIMITS = {"vocab_size": 1 << 20, "num_mel_bins": 512, "d_model": 1 << 14, "encoder_layers": 256,
               "decoder_layers": 256, "encoder_attention_heads": 256, "decoder_attention_heads": 256,
               "encoder_ffn_dim": 1 << 16, "decoder_ffn_dim": 1 << 16, "max_source_positions": 1 << 14,
               "max_target_positions": 1 << 14}


def from_hf_config(config: Any, name: str, where: str = "config.json") -> WhisperArch:
    """A Hugging Face Whisper ``config.json`` (parsed) as a :class:`WhisperArch`; ParamError naming ``where`` and
    the field that is missing, out of range or unsupported."""
    if not isinstance(config, dict):
        raise ParamError(f"{where}: not a JSON object")
    if config.get("model_type") != "whisper":
        raise ParamError(f"{where}: model_type {str(config.get('model_type'))[:40]!r} is not 'whisper'")
    sizes = {}
    for key, limit in SIZE_LIMITS.items():
        value = config.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= limit:
            raise ParamError(f"{where}: {key} is {str(value)[:40]}, not a whole number from 1 to {limit}")
        sizes[key] = value
    for key in ("activation_function",):
        if config.get(key, "gelu") != "gelu":
            raise ParamError(f"{where}: {key} {str(config.get(key))[:40]!r} is not supported (gelu only)")
    if config.get("scale_embedding", False):
        raise ParamError(f"{where}: scale_embedding true is not supported")
    for heads in ("encoder_attention_heads", "decoder_attention_heads"):
        if sizes["d_model"] % sizes[heads]:
            raise ParamError(f"{where}: d_model {sizes['d_model']} is not a multiple of {heads} {sizes[heads]}")
    return WhisperArch(name, vocab=sizes["vocab_size"], mels=sizes["num_mel_bins"], d_model=sizes["d_model"],
                       encoder_layers=sizes["encoder_layers"], decoder_layers=sizes["decoder_layers"],
                       encoder_heads=sizes["encoder_attention_heads"], decoder_heads=sizes["decoder_attention_heads"],
                       encoder_ffn=sizes["encoder_ffn_dim"], decoder_ffn=sizes["decoder_ffn_dim"],
                       source_positions=sizes["max_source_positions"],
                       target_positions=sizes["max_target_positions"], source=where)


def to_hf_config(arch: WhisperArch) -> dict[str, Any]:
    """The ``config.json`` of ``arch`` that :func:`from_hf_config` and transformers' ``WhisperConfig`` read back."""
    return {"model_type": "whisper", "vocab_size": arch.vocab, "num_mel_bins": arch.mels, "d_model": arch.d_model,
            "encoder_layers": arch.encoder_layers, "decoder_layers": arch.decoder_layers,
            "encoder_attention_heads": arch.encoder_heads, "decoder_attention_heads": arch.decoder_heads,
            "encoder_ffn_dim": arch.encoder_ffn, "decoder_ffn_dim": arch.decoder_ffn,
            "max_source_positions": arch.source_positions, "max_target_positions": arch.target_positions,
            "activation_function": "gelu", "scale_embedding": False, "tie_word_embeddings": True}


def resolve(model: str) -> WhisperArch:
    """``-p model=``'s value: a built-in name, or a folder holding a Hugging Face Whisper ``config.json``."""
    text = str(model).strip()
    if text.lower() in BUILT_IN:
        return BUILT_IN[text.lower()]
    if os.sep in text or text.startswith(".") or os.path.isdir(text):
        if not os.path.isdir(text):
            raise ParamError(f"model: {shown_path(text)} is not a folder")
        path = os.path.join(text, "config.json")
        return from_hf_config(read_json_file(path, CONFIG_MAX_BYTES, "a config.json"),
                              shown_path(os.path.abspath(text)), shown_path(path))
    raise ParamError(f"model: {text[:60]!r} is neither a built-in Whisper ({', '.join(BUILT_IN)}) nor a folder")
