"""A benchmark family's result page in the Benchmarks tab, and the pages of every registered family.

Each family's page module declares a module-level :class:`FamilyPage`; the engine's family registration
(:mod:`hwbench_gui.engine.reports.families`) names it as ``"module:attribute"``, so the engine never imports Qt
and the tab never names a family. :class:`FamilyPages` adds a page to the tab's lower tabs with its family's first
result (or its first run, or its benchmark chosen in the catalogue, where the page has something to show then).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from PySide6.QtWidgets import QTabWidget, QWidget

from hwbench_gui.engine.reports import families
from hwbench_gui.engine.reports.family import Family


def _no_hook(_page: Any, *_args: Any) -> None:
    return None


@dataclass(frozen=True)
class FamilyPage:
    """How the Benchmarks tab shows one family's results.

    ``shows(document)``: whether the page has something to show for a result. ``show(page, document, documents)``
    draws it (``documents``: every result in the table, for pages that read a run beside others).
    ``live``: the page follows a run of the family while it runs (``on_run_started(page, run)`` and
    ``on_run_event(page, event)``), comes forward when it starts, and shows its document as soon as it ends;
    other pages come forward when the finished run's row is selected. ``on_chosen(page)``: the family's benchmark
    was chosen in the catalogue (the page shows what it can before a run), or None to add the page only with a
    result."""

    title: str
    make: Callable[[], QWidget]
    shows: Callable[[dict[str, Any]], bool]
    show: Callable[[Any, dict[str, Any], Sequence[dict[str, Any]]], None]
    live: bool = False
    on_run_started: Callable[[Any, Any], None] = _no_hook
    on_run_event: Callable[[Any, dict[str, Any]], None] = _no_hook
    on_chosen: Callable[[Any], None] | None = None


def declared_pages() -> list[tuple[Family, FamilyPage]]:
    """Every registered family with a GUI page, with that page's declaration, in registration order."""
    out = []
    for family in families.FAMILIES:
        if not family.gui_page:
            continue
        module, _, attribute = family.gui_page.partition(":")
        out.append((family, getattr(importlib.import_module(module), attribute)))
    return out


class FamilyPages:
    """The registered families' pages among ``tabs`` (each added when first needed), and which one a result,
    a run or a chosen benchmark brings forward. ``documents()`` gives every result the tab lists."""

    def __init__(self, tabs: QTabWidget, documents: Callable[[], Sequence[dict[str, Any]]]) -> None:
        self.tabs = tabs
        self.documents = documents
        self.declared = declared_pages()
        self.pages: dict[str, QWidget] = {}
        self._live: tuple[Family, FamilyPage] | None = None  # the live page following the running run
        self._pending: dict[str, Any] | None = None  # a finished run, its page brought forward once selected

    def page(self, name: str) -> QWidget | None:
        """Family ``name``'s page, None until it is added."""
        return self.pages.get(name)

    def ensure(self, family: Family, declaration: FamilyPage) -> QWidget:
        """Family's page, added to the tabs on first use."""
        if family.name not in self.pages:
            self.pages[family.name] = declaration.make()
            self.tabs.addTab(self.pages[family.name], declaration.title)
        return self.pages[family.name]

    def all(self) -> tuple[QWidget, ...]:
        """The pages added so far, in registration order."""
        return tuple(self.pages[f.name] for f, _ in self.declared if f.name in self.pages)

    def _showing(self, document: dict[str, Any]) -> list[tuple[Family, FamilyPage]]:
        return [(family, declaration) for family, declaration in self.declared if declaration.shows(document)]

    def page_of(self, document: dict[str, Any]) -> tuple[bool, QWidget | None]:
        """Whether a family has a page for ``document``, and that page (None until it is added)."""
        showing = self._showing(document)
        return (True, self.pages.get(showing[0][0].name)) if showing else (False, None)

    def on_selected(self, document: dict[str, Any]) -> None:
        """A result selected: every page that shows it draws it; the page of a run that just ended comes forward."""
        for family, declaration in self._showing(document):
            page = self.ensure(family, declaration)
            declaration.show(page, document, self.documents())
            if document is self._pending and not declaration.live:
                self.tabs.setCurrentWidget(page)
        self._pending = None

    def on_chosen(self, bench_id: str | None) -> None:
        """A benchmark chosen in the catalogue: its family's page shows what it can before a run."""
        for family, declaration in self.declared:
            if bench_id in family.benchmark_ids and declaration.on_chosen is not None:
                declaration.on_chosen(self.ensure(family, declaration))

    def on_run_started(self, bench_id: str, run: Any) -> None:
        """A run of a live page's family brings that page forward: progress now, the verdict when it ends."""
        self._live = next(((f, d) for f, d in self.declared if d.live and bench_id in f.benchmark_ids), None)
        if self._live is not None:
            page = self.ensure(*self._live)
            self._live[1].on_run_started(page, run)
            self.tabs.setCurrentWidget(page)

    def on_run_event(self, event: dict[str, Any]) -> None:
        if self._live is not None and self._live[0].name in self.pages:
            self._live[1].on_run_event(self.pages[self._live[0].name], event)

    def on_run_finished(self, document: dict[str, Any]) -> None:
        """A run ended: its page comes forward when its row is selected (a live page, at once: :meth:`show_live`)."""
        self._pending = document

    def show_live(self, document: dict[str, Any]) -> bool:
        """A live page that shows ``document`` draws it and comes forward (True); False where none does."""
        for family, declaration in self._showing(document):
            if declaration.live:
                page = self.ensure(family, declaration)
                declaration.show(page, document, self.documents())
                self.tabs.setCurrentWidget(page)
                return True
        return False
