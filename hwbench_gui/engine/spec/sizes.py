"""Integers as people type them: "4096", "1,073,741,824", "1e3", and byte sizes "64 MiB", "64MiB", "16G",
"1 GB". The one grammar the GUI form and ``hwbench run -p`` share, through :meth:`Param.parse`."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

_BINARY = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}
_NUMBER = r"[+-]?[0-9][0-9_,]*(?:\.[0-9]+)?(?:e[+-]?[0-9]{1,2})?"
_INT_RE = re.compile(rf"^\s*({_NUMBER})\s*$", re.IGNORECASE)
_SIZE_RE = re.compile(rf"^\s*({_NUMBER})\s*([kmgt]?)(i?)(b?)\s*$", re.IGNORECASE)

#: What a byte-size parameter accepts, for error messages and placeholders.
SIZE_HINT = "a number or a size such as 64 MiB or 16G"


#: Digits a number given as text may have (its exponent included): more than any parameter's range.
MAX_DIGITS = 10_000


def parse_int(text: str, *, byte_size: bool = False) -> int:
    """The whole number ``text`` spells; with ``byte_size`` also a binary size ("64 MiB", "16G") or a
    decimal one ("1 GB", as disks and link speeds count). ``ValueError`` with the reason otherwise."""
    match = (_SIZE_RE if byte_size else _INT_RE).match(text)
    if not match:
        raise ValueError(f"expected {SIZE_HINT}" if byte_size else "expected a whole number")
    number, *unit = match.groups()
    try:
        value = Decimal(number.replace(",", "").replace("_", ""))
    except InvalidOperation:
        raise ValueError("expected a whole number") from None
    if value.adjusted() > MAX_DIGITS:  # "1e999999999" would take gigabytes as an int
        raise ValueError(f"a number of {value.adjusted() + 1} digits")
    if unit:
        prefix, binary, byte = unit
        prefix = prefix.lower()
        if prefix and byte and not binary:
            value *= 1000 ** " kmgt".index(prefix)
        else:
            value *= _BINARY[prefix]
    if value != value.to_integral_value():
        raise ValueError("not a whole number" + (" of bytes" if byte_size else ""))
    return int(value)


def format_size(value: int) -> str:
    """The shortest exact binary spelling: 4096 -> "4 KiB", 1073741824 -> "1 GiB", 1000 -> "1000"."""
    for unit, factor in (("TiB", 1024**4), ("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if value and value % factor == 0:
            return f"{value // factor} {unit}"
    return str(value)
