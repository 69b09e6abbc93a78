"""The Qt item model of the results library: one row per document, the filter, and how rows sort."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QSortFilterProxyModel, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QStandardItem

from hwbench_gui.engine.results import describe

HEADERS = ("Machine", "GPU", "Benchmark", "Parameters", "Precision", "Figure", "Status", "Date")
DOC_ROLE = Qt.UserRole + 1
SORT_ROLE = Qt.UserRole + 2
_PUBLISHED_COLOUR = "#6b4fbb"


class FilterProxy(QSortFilterProxyModel):
    """Keeps rows whose document matches every word of the filter (see ``describe.matches``)."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._text = ""
        self.setSortRole(SORT_ROLE)

    def set_text(self, text: str) -> None:
        if hasattr(self, "beginFilterChange"):  # Qt ≥ 6.10 deprecates invalidateFilter()
            self.beginFilterChange()
            self._text = text
            self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        else:
            self._text = text
            self.invalidateRowsFilter()

    def filterAcceptsRow(self, source_row: int, source_parent) -> bool:  # noqa: N802 (Qt's name)
        if not self._text.strip():
            return True
        item = self.sourceModel().item(source_row, 0)
        doc = item.data(DOC_ROLE) if item is not None else None
        return doc is not None and describe.matches(doc, self._text)


def row_items(doc: dict[str, Any], machine: str | None = None) -> list[QStandardItem]:
    """The table row of one document; the first item carries the document (:data:`DOC_ROLE`). ``machine``:
    its machine's name among the listed ones (:func:`describe.machine_labels`), else its own."""
    row = describe.row(doc)
    if machine is not None:
        row["machine"] = machine
    published = describe.is_published(doc)
    items = []
    for key in describe.ROW_COLUMNS:
        item = QStandardItem(row[key])
        item.setData(row[key].lower(), SORT_ROLE)
        item.setToolTip(row[key])
        if published:
            item.setForeground(QBrush(QColor(_PUBLISHED_COLOUR)))
            font = QFont()
            font.setItalic(True)
            item.setFont(font)
            item.setToolTip(f"Published figure, not measured: {(doc.get('reference') or {}).get('source_url')}")
        items.append(item)
    items[0].setData(doc, DOC_ROLE)
    items[7].setData(str(doc.get("started_at") or (doc.get("reference") or {}).get("published") or ""),
                     SORT_ROLE)
    status_colour = {"failed": "#c62828", "cancelled": "#ef6c00"}.get(doc.get("status"))
    if status_colour:
        items[6].setForeground(QBrush(QColor(status_colour)))
    return items
