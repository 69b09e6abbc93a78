"""Text from a file shown to a person: characters that change what the reader sees written out.

A result document from another machine can hold a NUL, a terminal escape, a zero-width space (two
hosts that look identical) or a right-to-left override (a name shown reversed). :func:`escape` writes
each such character as its escape (``\\x00``, ``\\x1b``, ``\\u200b``, ``\\u202e``) so that the
terminal, the GUI, the HTML and the CSV all show what is really there. Tabs and line breaks stay.

A file name that is not UTF-8 reaches Python as ``os.fsdecode`` gives it: each undecodable byte a lone
surrogate (``b"\\xff"`` -> ``"\\udcff"``). Such text cannot be written as UTF-8; :func:`escape` shows
each surrogate as its escape too, and :func:`shown_path` makes a file name one printable line.
"""

from __future__ import annotations

import os
import re
import unicodedata
from typing import Any

#: Kept as they are: a tab and a newline are layout, not a trick.
_KEPT = frozenset("\t\n")
#: Unicode categories escaped: controls (C0, DEL, C1), format characters (zero-width, bidi
#: overrides and isolates, the BOM, soft hyphen), line and paragraph separators, private use,
#: surrogates (a file name's undecodable bytes), unassigned.
_ESCAPED_CATEGORIES = frozenset(("Cc", "Cf", "Zl", "Zp", "Co", "Cs", "Cn"))


def _shown(char: str) -> str:
    if char in _KEPT or unicodedata.category(char) not in _ESCAPED_CATEGORIES:
        return char
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


#: Removes what is kept anyway, so the C-speed test below also passes text with tabs and line breaks.
_WITHOUT_KEPT = str.maketrans("", "", "\t\n")


def escape(text: str) -> str:
    """``text`` with every control, zero-width, bidirectional and other invisible character written
    as its escape; anything else unchanged."""
    if text.isprintable() or text.translate(_WITHOUT_KEPT).isprintable():  # the common cases, at C speed
        return text
    return "".join(map(_shown, text))


def shown_path(path: str | bytes | os.PathLike) -> str:
    """A file name for a one-line message: :func:`escape`, and tabs and line breaks escaped too (a file
    may be named ``"a\\nb"``); text that can always be written as UTF-8."""
    text = os.fsdecode(path)
    if text.isprintable():
        return text
    return escape(text).replace("\t", "\\t").replace("\n", "\\n")


#: Characters a JSON text holds raw only outside its strings (JSON whitespace aside, a raw control character
#: is refused by the parser), and the escapes through which a string can hold one :func:`escape` writes out.
_RAW_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_JSON_HIDING_ESCAPE = re.compile(r"\\[ubfr]")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def json_may_hide(text: str) -> bool:
    """Whether the strings of the JSON ``text`` may hold a character :func:`escape` writes out: False lets a
    reader skip :func:`escape_all` over a document whose text is plainly printable. Regular expressions and the
    set of its few distinct non-ASCII characters: a pass of ``str.translate`` over the text cost more than the
    walk it saves."""
    if _RAW_CONTROL.search(text) or _JSON_HIDING_ESCAPE.search(text):
        return True
    return not text.isascii() and not "".join(set(_NON_ASCII.findall(text))).isprintable()


def escape_all(value: Any) -> Any:
    """``value`` (JSON data) with :func:`escape` applied to every string in it, keys included."""
    if isinstance(value, str):
        return escape(value)
    if isinstance(value, dict):
        return {escape(k) if isinstance(k, str) else k: escape_all(v) for k, v in value.items()}
    if isinstance(value, list):
        return [escape_all(v) for v in value]
    return value
