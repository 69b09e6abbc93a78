"""The catalogue: every registered benchmark by category, whether it can run here and why not, and the presets.

Availability and reasons come from the engine's registry; the catalogue only shows them and says
which benchmark the user picked (:attr:`Catalogue.selected`) or which preset to queue
(:attr:`Catalogue.suite_requested`).
"""

from __future__ import annotations

import importlib.util
from typing import Any, Iterator

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor, QPalette
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from hwbench_gui.engine import frameworks
from hwbench_gui.engine.run import registry
from hwbench_gui.engine.run.queue import RunSkipped
from hwbench_gui.engine.run.suites import SuiteRun, suite_names
from hwbench_gui.engine.spec.benchmark import Benchmark, ParamError
from hwbench_gui.ui.theme import ERROR_COLOR, WARNING_COLOR, on_theme_changed


def _with_nvml_detail(reason: str) -> str:
    """``reason``, with NVML's own message on a line below when the reason is NVML's plain words."""
    from hwbench_gui.engine import nvml

    summary = nvml.unavailable_summary()
    return f"{reason}\n{summary[1]}" if summary and summary[0] == reason else reason


class Catalogue(QWidget):
    #: The current benchmark changed: (:class:`Benchmark` or None, why it cannot run here or None).
    selected = Signal(object, object)
    #: "Queue suite" was pressed: the preset's name.
    suite_requested = Signal(str)
    #: "Resume suite" was pressed: the preset's name (its runs already done in the results folder are skipped).
    suite_resume_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._benchmarks: dict[str, Benchmark] = {}
        self._reasons: dict[str, str | None] = {}
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["Benchmark", "Status"])
        # The name takes what is left so that Status stays in view; long names elide (full text in the tooltip).
        self.tree.header().setStretchLastSection(False)
        self.tree.header().setSectionResizeMode(0, QHeaderView.Stretch)
        self.tree.header().setSectionResizeMode(1, QHeaderView.ResizeToContents)
        self.tree.setTextElideMode(Qt.ElideRight)
        self.tree.currentItemChanged.connect(self._on_current_changed)

        presets = QHBoxLayout()
        self.suite_combo = QComboBox()
        self.suite_combo.addItems(suite_names())
        self.suite_button = QPushButton("Queue suite")
        self.suite_button.setToolTip("Queue every run of the chosen preset (the seed suite: 4 models × "
                                     "PyTorch/TensorFlow × train/infer at FP32 and FP16-AMP)")
        self.suite_button.clicked.connect(lambda: self.suite_requested.emit(self.suite_combo.currentText()))
        self.resume_button = QPushButton("Resume suite")
        self.resume_button.setToolTip("Queue the preset's runs that have no ok result from this machine in the "
                                      "results folder yet (a suite that was stopped goes on where it stopped)")
        self.resume_button.clicked.connect(
            lambda: self.suite_resume_requested.emit(self.suite_combo.currentText()))
        presets.addWidget(QLabel("Preset"))
        presets.addWidget(self.suite_combo, 1)
        presets.addWidget(self.suite_button)
        presets.addWidget(self.resume_button)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tree, 1)
        layout.addLayout(presets)
        self._populate()
        on_theme_changed(self, self._on_theme_changed)

    def _populate(self) -> None:
        self.tree.clear()
        categories: dict[str, QTreeWidgetItem] = {}
        self._first_available = None
        for bench in registry.all_benchmarks():
            self._benchmarks[bench.id] = bench
            reason = registry.availability(bench)
            self._reasons[bench.id] = reason
            parent = categories.get(bench.category)
            if parent is None:
                parent = QTreeWidgetItem(self.tree, [bench.category, ""])
                parent.setFlags(parent.flags() & ~Qt.ItemIsSelectable)
                parent.setExpanded(True)
                categories[bench.category] = parent
            status = "ready" if reason is None else "unavailable"
            # The title alone: with its id beside it the longer names were cut at every window size; the id
            # is in the tooltip and above the form.
            item = QTreeWidgetItem(parent, [bench.title, status])
            item.setData(0, Qt.UserRole, bench.id)
            item.setToolTip(0, f"{bench.title} ({bench.id})")
            if reason is not None:
                item.setData(1, Qt.UserRole, "unavailable")
                item.setForeground(0, self._disabled_brush())
                item.setForeground(1, QBrush(QColor(WARNING_COLOR)))
                tooltip = _with_nvml_detail(reason)
                item.setToolTip(0, tooltip)
                item.setToolTip(1, tooltip)
            else:
                self._show_framework_limits(bench, item)
                if self._first_available is None:
                    self._first_available = item
        for broken_id, error in registry.module_errors().items():
            parent = categories.setdefault("Not loaded", QTreeWidgetItem(self.tree, ["Not loaded", ""]))
            item = QTreeWidgetItem(parent, [broken_id, "error"])
            item.setToolTip(0, error)
            item.setForeground(1, QBrush(QColor(ERROR_COLOR)))
        self.tree.expandAll()

    def _show_framework_limits(self, bench: Benchmark, item: QTreeWidgetItem) -> None:
        """A benchmark runnable in only some of its frameworks says which, and why not the others."""
        limits = registry.framework_limits(bench)
        if not limits:
            return
        runnable = [label for label in registry.framework_labels(bench) if label not in limits]
        item.setText(1, f"{' / '.join(runnable)} only")
        item.setForeground(1, QBrush(QColor(WARNING_COLOR)))
        tooltip = "\n".join(f"{label} runs cannot run here: {reason}" for label, reason in limits.items())
        item.setToolTip(0, tooltip)
        item.setToolTip(1, tooltip)

    def select_first_available(self) -> None:
        """Make the first registered benchmark that can run here current (listeners hear :attr:`selected`)."""
        if self._first_available is not None:
            self.tree.setCurrentItem(self._first_available)

    def select(self, bench_id: str) -> None:
        """Select a benchmark by id (for scripts and tests); ``KeyError`` for an id not listed."""
        for item in self.iter_items():
            if item.data(0, Qt.UserRole) == bench_id:
                self.tree.setCurrentItem(item)
                return
        raise KeyError(bench_id)

    def benchmark(self, bench_id: str) -> Benchmark:
        """The listed benchmark ``bench_id``; ``KeyError`` for an id not listed."""
        return self._benchmarks[bench_id]

    def iter_items(self) -> Iterator[QTreeWidgetItem]:
        """The benchmark items, category by category."""
        for i in range(self.tree.topLevelItemCount()):
            top = self.tree.topLevelItem(i)
            for j in range(top.childCount()):
                yield top.child(j)

    def prepare_suite_run(self, run: SuiteRun) -> dict[str, Any]:
        """A preset's run as it will be queued, or :class:`RunSkipped` saying why it cannot run here."""
        bench = self._benchmarks.get(run.bench_id)
        reason = self._reasons.get(run.bench_id) if bench is not None else "not registered"
        if reason is None and run.params.get("framework") == "tf" and importlib.util.find_spec("tensorflow") is None:
            reason = frameworks.missing_reason("TensorFlow", "pip install 'hwbench-gui[tf]'")
        if reason is None and bench is not None:
            reason = registry.framework_limits(bench).get("PyTorch") if run.params.get("framework") == "torch" else None
        if reason is not None:
            raise RunSkipped(reason)
        try:
            return bench.resolve_params(run.params)
        except ParamError as exc:
            raise RunSkipped(str(exc)) from None

    def _on_current_changed(self, item: QTreeWidgetItem | None, _previous=None) -> None:
        bench_id = item.data(0, Qt.UserRole) if item is not None else None
        bench = self._benchmarks.get(bench_id) if bench_id else None
        self.selected.emit(bench, self._reasons.get(bench.id) if bench is not None else None)

    def _disabled_brush(self) -> QBrush:
        palette = QApplication.instance().palette() if QApplication.instance() else self.palette()
        return QBrush(palette.color(QPalette.Disabled, QPalette.Text))

    def _on_theme_changed(self, _palette=None) -> None:
        """Greyed items paint with a colour of their own: redo it for the new palette."""
        brush = self._disabled_brush()
        for item in self.iter_items():
            if item.data(1, Qt.UserRole) == "unavailable":
                item.setForeground(0, brush)
