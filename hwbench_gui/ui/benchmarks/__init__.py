"""The Benchmarks tab and its views: catalogue, run panel, results table."""

from hwbench_gui.ui.benchmarks.tab import BenchmarksTab

__all__ = ["BenchmarksTab"]
