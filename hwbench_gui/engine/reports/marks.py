"""What a comparison's cell can say against the baseline's (:mod:`.compare` explains each)."""

from __future__ import annotations

MARK_BASELINE = "baseline"
MARK_BETTER = "better"
MARK_WORSE = "worse"
MARK_NOT_SIGNIFICANT = "not significant"
MARK_UNTESTED = "untested"
MARK_TOO_FEW = "too few repeats"
MARK_FAILED = "failed"
MARK_CANCELLED = "cancelled"
MARK_NOT_COMPARABLE = "not comparable"
MARK_NO_BASELINE = "no baseline"
MARK_MISSING = "missing"
