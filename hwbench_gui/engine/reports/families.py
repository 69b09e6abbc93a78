"""The benchmark families the reports and the GUI know: one registration each, in the order their sections appear.

A new family adds its section module (declaring ``FAMILY``, :class:`~.family.Family`) and one line here; the
evaluation report, the PDF, the charts, the flags and the Benchmarks tab read this list
(``docs/add-a-family.md``)."""

from __future__ import annotations

from typing import Any

from hwbench_gui.engine.reports import (diffusion_section, health_section, llm_section, llm_train_section,
                                        serving_section, speech_section)
from hwbench_gui.engine.reports.family import Family

FAMILIES: tuple[Family, ...] = (
    health_section.FAMILY,
    llm_section.FAMILY,
    llm_train_section.FAMILY,
    diffusion_section.FAMILY,
    serving_section.FAMILY,
    speech_section.FAMILY,
)


def by_name(name: str) -> Family:
    """The family registered as ``name``; ``KeyError`` for none."""
    for family in FAMILIES:
        if family.name == name:
            return family
    raise KeyError(name)


def family_of(doc: Any) -> Family | None:
    """The family whose benchmark ran ``doc``, or None (a micro-benchmark, a model, the data-path analyzer)."""
    return next((family for family in FAMILIES if family.owns(doc)), None)


def disagreements(doc: dict[str, Any]) -> list[str]:
    """Where a verdict ``doc`` states differs from what its own rows make it, by every family's reading."""
    return [text for family in FAMILIES for text in family.disagreements(doc)]


def draws_its_series(doc: Any) -> bool:
    """Whether a family draws ``doc``'s series in its own charts (the generic sweep chart leaves them out)."""
    family = family_of(doc)
    return family is not None and family.draws_its_series
