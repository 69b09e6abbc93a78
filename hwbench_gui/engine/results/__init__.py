"""Result documents: one JSON file per benchmark run (``document`` builds it, ``store`` keeps
it, ``library`` lists and checks them, ``describe`` puts them in words)."""

from hwbench_gui.engine.results.document import SCHEMA_VERSION, build_document
from hwbench_gui.engine.results.library import list_results
from hwbench_gui.engine.results.store import ResultFileError, load_result, results_dir, write_result

__all__ = ["SCHEMA_VERSION", "build_document", "ResultFileError", "list_results", "load_result", "results_dir",
           "write_result"]
