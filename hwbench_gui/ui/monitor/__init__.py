"""The Monitor tab and the views it is made of."""

from hwbench_gui.ui.monitor.tab import MonitorTab

__all__ = ["MonitorTab"]
