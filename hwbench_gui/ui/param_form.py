"""A form generated from a benchmark's parameter declarations (the same ones the CLI parses)."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QWidget,
)

from hwbench_gui.engine.spec.benchmark import Param

_INT_LIMIT = 2**31 - 1


class _PathEdit(QWidget):
    def __init__(self, value: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.edit = QLineEdit(value)
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        layout.addWidget(self.edit, 1)
        layout.addWidget(browse)

    def _browse(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Choose a folder", self.edit.text())
        if folder:
            self.edit.setText(folder)

    def text(self) -> str:
        return self.edit.text()


class ParamForm(QWidget):
    """Editors for each :class:`Param`; :meth:`values` returns raw values for ``resolve_params``."""

    def __init__(self, params, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.params: list[Param] = list(params)
        self._editors: dict[str, QWidget] = {}
        layout = QFormLayout(self)
        layout.setFieldGrowthPolicy(QFormLayout.ExpandingFieldsGrow)
        for param in self.params:
            editor = self._editor_for(param)
            editor.setToolTip(param.help)
            self._editors[param.name] = editor
            label = param.name + (f" ({param.unit})" if param.unit else "")
            layout.addRow(label, editor)

    @staticmethod
    def _editor_for(param: Param) -> QWidget:
        if param.kind == "bool":
            box = QCheckBox()
            box.setChecked(bool(param.default))
            return box
        if param.kind == "choice":
            combo = QComboBox()
            combo.addItems([str(c) for c in param.choices])
            combo.setCurrentText(str(param.default))
            return combo
        if param.kind == "int":
            spin = QSpinBox()
            spin.setRange(int(param.minimum if param.minimum is not None else -_INT_LIMIT),
                          int(param.maximum if param.maximum is not None else _INT_LIMIT))
            spin.setValue(int(param.default))
            spin.setGroupSeparatorShown(True)
            return spin
        if param.kind == "float":
            spin = QDoubleSpinBox()
            spin.setDecimals(3)
            spin.setRange(param.minimum if param.minimum is not None else -1e12,
                          param.maximum if param.maximum is not None else 1e12)
            spin.setValue(float(param.default))
            return spin
        if param.kind == "path":
            return _PathEdit(str(param.default or ""))
        default = param.default
        if isinstance(default, (list, tuple)):
            default = ",".join(str(v) for v in default)
        return QLineEdit("" if default is None else str(default))

    def values(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for param in self.params:
            editor = self._editors[param.name]
            if isinstance(editor, QCheckBox):
                out[param.name] = editor.isChecked()
            elif isinstance(editor, QComboBox):
                # choices may be ints or strings; hand back the declared object
                out[param.name] = param.choices[editor.currentIndex()]
            elif isinstance(editor, (QSpinBox, QDoubleSpinBox)):
                out[param.name] = editor.value()
            else:
                out[param.name] = editor.text()
        return out

    def editor(self, name: str) -> QWidget:
        return self._editors[name]
