"""The Inventory tab and the sections it is made of."""

from hwbench_gui.ui.inventory.tab import InventoryTab

__all__ = ["InventoryTab"]
