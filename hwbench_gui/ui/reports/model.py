"""What the Reports tab's views share: the results folder as last loaded.

Plain Python, no Qt. The library view lists and reloads it; the compare view reads the files it
skipped (a report says what it left out). The tab owns one and hands it to both.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from hwbench_gui.engine.results import library


@dataclass
class LoadedResults:
    results_dir: Path
    library: library.Library = field(default_factory=lambda: library.Library([], []))

    def load(self, include_reference: bool) -> library.Library:
        """Reload the results folder (not its sub-folders), plus the shipped references when asked."""
        self.library = library.list_results(self.results_dir, include_reference=include_reference)
        return self.library
