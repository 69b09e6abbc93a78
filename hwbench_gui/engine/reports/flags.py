"""What a document says about its own trustworthiness, shown beside its figure wherever it goes.

Each flag belongs to the document that carries it (a busy baseline is the baseline's flag, never
the other side's): :func:`busy_reasons` (other processes were using the machine) and
:func:`few_repeats` (too few samples for a significance test to reach ``alpha``).
"""

from __future__ import annotations

from typing import Any

from hwbench_gui.engine.results import describe

#: Below this many samples a side cannot reach p < 0.05 against an equal side (3 vs 3: p >= 0.1).
MIN_REPEATS = 4


def busy_reasons(doc: dict[str, Any]) -> list[str]:
    """Why the machine was busy while ``doc`` was measured (empty when it was not, or nobody knows)."""
    telemetry = doc.get("telemetry") if isinstance(doc.get("telemetry"), dict) else {}
    noise = telemetry.get("noise") if isinstance(telemetry.get("noise"), dict) else {}
    if not noise.get("busy"):
        return []
    return [str(r) for r in noise.get("reasons") or []] or ["the run's telemetry marked the machine busy"]


def sample_count(doc: dict[str, Any]) -> int:
    return sum(1 for s in doc.get("samples") or [] if describe.is_number(s))


def few_repeats(doc: dict[str, Any]) -> bool:
    """A measured figure from fewer than :data:`MIN_REPEATS` samples."""
    figure = doc.get("figure") or {}
    return (not describe.is_published(doc) and figure.get("value") is not None
            and sample_count(doc) < MIN_REPEATS)
