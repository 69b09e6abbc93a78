"""What a GGUF file (llama.cpp's and Ollama's model format) makes a decoding step read, from the file itself:
every tensor's bytes by quantization type (as stored: blocks, scales and all), the architecture's layers and
key/value heads for the KV cache, and the file's quantization name (Q4_K_M, Q8_0...).

Read with the ``gguf`` package (llama.cpp's own reader, a memory map: no tensor is loaded). The file is foreign
input: a regular file of bounded size with GGUF's magic, checked through :mod:`...foreign` before the reader opens
it; anything the reader cannot parse is a :class:`ForeignFileError` naming the file.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hwbench_gui.engine import foreign

#: Larger than any model file (a 671B model at 8 bits is about 700 GB).
MAX_GGUF_BYTES = 2 << 40
MAGIC = b"GGUF"
#: The KV cache's element bytes by llama.cpp's cache type (-ctk/-ctv; f16 its default). q8_0: 34 bytes per 32.
KV_TYPE_BYTES = {"f32": 4.0, "f16": 2.0, "bf16": 2.0, "q8_0": 34 / 32, "q4_0": 18 / 32, "q4_1": 20 / 32,
                 "q5_0": 22 / 32, "q5_1": 24 / 32, "iq4_nl": 18 / 32}


@dataclass(frozen=True)
class GgufModel:
    """A GGUF file's weights as a decoding step reads them. ``bytes_by_type``: tensor bytes per quantization type
    (GGML's names: Q4_K, Q6_K, F32...); ``embedding_bytes``: the token table's (a step reads one row of it, unless
    the output projection is tied to it and reads it whole)."""

    path: str
    architecture: str
    file_type: str | None
    bytes_by_type: dict[str, int]
    embedding_bytes: int
    tied_output: bool
    vocab: int
    layers: int
    kv_heads: int
    key_length: int
    value_length: int

    @property
    def tensor_bytes(self) -> int:
        return sum(self.bytes_by_type.values())

    @property
    def weights_read_per_token(self) -> int:
        """Every tensor once, but of the token table one row (the whole table when it is the output projection)."""
        if self.tied_output:
            return self.tensor_bytes
        return self.tensor_bytes - self.embedding_bytes + self.embedding_bytes // max(1, self.vocab)

    def kv_bytes_per_position(self, element_bytes: float) -> float:
        """Keys and values of every layer's key/value heads at one position."""
        return self.layers * self.kv_heads * (self.key_length + self.value_length) * element_bytes

    def window_bytes(self, depth: int, tokens: int, kv_element_bytes: float) -> float:
        """Bytes ``tokens`` one-token steps after ``depth`` cached positions read: the weights each step, and the
        KV cache of the positions it attends (the new one included), as ``llm.infer`` counts its own."""
        attended = tokens * depth + tokens * (tokens + 1) // 2
        return tokens * self.weights_read_per_token + self.kv_bytes_per_position(kv_element_bytes) * attended

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "architecture": self.architecture, "file_type": self.file_type,
                "bytes_by_type": dict(self.bytes_by_type), "tensor_bytes": self.tensor_bytes,
                "embedding_bytes": self.embedding_bytes, "tied_output": self.tied_output, "vocab": self.vocab,
                "weights_read_per_token_bytes": self.weights_read_per_token, "layers": self.layers,
                "kv_heads": self.kv_heads, "key_length": self.key_length, "value_length": self.value_length}


def file_type_name(value: int) -> str | None:
    """llama.cpp's name of ``general.file_type`` (15 -> "Q4_K_M"), None for a value it does not know."""
    from gguf import LlamaFileType

    try:
        name = LlamaFileType(value).name
    except ValueError:
        return None
    return name.removeprefix("MOSTLY_").removeprefix("ALL_")


def _field(reader: Any, key: str, path: str, default: int | None = None) -> Any:
    field = reader.fields.get(key)
    if field is None:
        if default is not None:
            return default
        raise foreign.ForeignFileError(path, f"a GGUF file without {key!r}")
    return field.contents()


def _count(reader: Any, key: str, path: str, default: int | None = None) -> int:
    value = _field(reader, key, path, default)
    if isinstance(value, list):  # per-layer head counts: the largest
        value = max(value) if value else None
    if not isinstance(value, int) or isinstance(value, bool) or not 0 < value < 1 << 24:
        raise foreign.ForeignFileError(path, f"{key} = {value!r} in a GGUF file: not a count")
    return value


def read(path: str) -> GgufModel:
    """The GGUF file at ``path`` (see the module); ForeignFileError naming it when it is not one."""
    with foreign.open_regular(path, MAX_GGUF_BYTES, "a GGUF file") as handle:
        if handle.read(4) != MAGIC:
            raise foreign.ForeignFileError(path, "not a GGUF file (no GGUF magic at its start)")
    from gguf import GGUFReader

    try:
        reader = GGUFReader(path)
    except (ValueError, KeyError, IndexError, TypeError, OSError, OverflowError) as exc:
        raise foreign.ForeignFileError(path, f"a GGUF file the gguf package cannot read "
                                             f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})"
                                       ) from None
    architecture = str(_field(reader, "general.architecture", path))
    by_type: dict[str, int] = {}
    names = set()
    embedding = 0
    for tensor in reader.tensors:
        kind = getattr(tensor.tensor_type, "name", str(tensor.tensor_type))
        by_type[kind] = by_type.get(kind, 0) + int(tensor.n_bytes)
        names.add(tensor.name)
        if tensor.name == "token_embd.weight":
            embedding = int(tensor.n_bytes)
    if not by_type:
        raise foreign.ForeignFileError(path, "a GGUF file without tensors")
    file_type = reader.fields.get("general.file_type")
    heads = _count(reader, f"{architecture}.attention.head_count", path)
    hidden = _count(reader, f"{architecture}.embedding_length", path)
    key_length = _count(reader, f"{architecture}.attention.key_length", path, default=max(1, hidden // heads))
    tokens = reader.fields.get("tokenizer.ggml.tokens")
    vocab = len(tokens.data) if tokens is not None else _count(reader, f"{architecture}.vocab_size", path, 1)
    return GgufModel(
        path=str(path), architecture=architecture,
        file_type=file_type_name(int(file_type.contents())) if file_type is not None else None,
        bytes_by_type=dict(sorted(by_type.items(), key=lambda kv: -kv[1])), embedding_bytes=embedding,
        tied_output="output.weight" not in names, vocab=vocab,
        layers=_count(reader, f"{architecture}.block_count", path),
        kv_heads=_count(reader, f"{architecture}.attention.head_count_kv", path, default=heads),
        key_length=key_length,
        value_length=_count(reader, f"{architecture}.attention.value_length", path, default=key_length))
