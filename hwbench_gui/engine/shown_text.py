"""Text from a file shown to a person: characters that change what the reader sees written out.

A result document from another machine can hold a NUL, a terminal escape, a zero-width space (two
hosts that look identical) or a right-to-left override (a name shown reversed). :func:`escape` writes
each such character as its escape (``\\x00``, ``\\x1b``, ``\\u200b``, ``\\u202e``) so that the
terminal, the GUI, the HTML and the CSV all show what is really there. Tabs and line breaks stay.
"""

from __future__ import annotations

import unicodedata
from typing import Any

#: Kept as they are: a tab and a newline are layout, not a trick.
_KEPT = frozenset("\t\n")
#: Unicode categories escaped: controls (C0, DEL, C1), format characters (zero-width, bidi
#: overrides and isolates, the BOM, soft hyphen), line and paragraph separators, unassigned.
_ESCAPED_CATEGORIES = frozenset(("Cc", "Cf", "Zl", "Zp", "Co", "Cn"))


def _shown(char: str) -> str:
    if char in _KEPT or unicodedata.category(char) not in _ESCAPED_CATEGORIES:
        return char
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def escape(text: str) -> str:
    """``text`` with every control, zero-width, bidirectional and other invisible character written
    as its escape; anything else unchanged."""
    if text.isprintable():  # the common case, at C speed (tabs and newlines are not "printable")
        return text
    return "".join(map(_shown, text))


def escape_all(value: Any) -> Any:
    """``value`` (JSON data) with :func:`escape` applied to every string in it, keys included."""
    if isinstance(value, str):
        return escape(value)
    if isinstance(value, dict):
        return {escape(k) if isinstance(k, str) else k: escape_all(v) for k, v in value.items()}
    if isinstance(value, list):
        return [escape_all(v) for v in value]
    return value
