"""The Reports tab and the views it is made of."""

from hwbench_gui.ui.reports.tab import ReportsTab

__all__ = ["ReportsTab"]
