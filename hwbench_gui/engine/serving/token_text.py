"""Text ↔ token ids for ``hwbench serve``. Its models are random-initialised (or a user's weights without their
tokenizer), so there is no vocabulary to read text with: a word that is a number below the vocabulary's size is
that token id, any other word a hash of it (CRC-32) modulo the vocabulary, and a token id is shown as " <id>".
Text the server streams therefore reads back as the same ids; the words mean nothing."""

from __future__ import annotations

import zlib


def encode(text: str, vocab: int) -> list[int]:
    """One token per whitespace-separated word."""
    ids = []
    for word in text.split():
        if word.isdigit() and int(word) < vocab:
            ids.append(int(word))
        else:
            ids.append(zlib.crc32(word.encode("utf-8", "surrogatepass")) % vocab)
    return ids


def decode(token: int) -> str:
    return f" {token}"
