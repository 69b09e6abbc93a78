"""CSV cells a spreadsheet will not run as formulas (CSV injection, OWASP).

Excel, LibreOffice and Google Sheets treat a cell that starts with ``=``, ``+``, ``-`` or ``@`` (and
tab or carriage return) as a formula. A text cell with such a start gets a leading single quote;
numbers, including negative ones such as ``-1.5``, stay numbers.
"""

from __future__ import annotations

import math
from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: Any) -> Any:
    """``value`` as it may go into a CSV: text that would start a formula is prefixed with ``'``."""
    if not isinstance(value, str) or not value.startswith(FORMULA_STARTS):
        return value
    try:
        if math.isfinite(float(value)):
            return value  # a number written as text ("-1.5"): the spreadsheet reads it as a number
    except ValueError:
        pass
    return "'" + value
