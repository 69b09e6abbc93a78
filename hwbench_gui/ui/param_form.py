"""A form generated from a benchmark's parameter declarations (the same ones the CLI parses).

Integers that a ``QSpinBox`` cannot hold (byte sizes up to 2^34, any range past 2^31-1) get a
:class:`SizeEdit`, a validated line edit that also reads "64 MiB" or "16G". Labels are the
declared names made readable ("min_time_s" -> "Min time (s)").
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
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

from hwbench_gui.engine.spec.benchmark import Param, ParamError
from hwbench_gui.engine.spec.sizes import SIZE_HINT, format_size
from hwbench_gui.ui.start_folder import start_path

_INT_LIMIT = 2**31 - 1

#: Words shown in capitals (or spelled out) in labels.
_WORDS = {"gpu": "GPU", "gpus": "GPUs", "cpu": "CPU", "p2p": "P2P", "tf": "TF", "rdzv": "rendezvous",
          "nnodes": "nodes", "amp": "AMP", "id": "ID", "mib": "MiB"}
_UNIT_SUFFIXES = {"s", "ms", "mib", "px"}


def human_label(param: Param) -> str:
    """"min_bytes" -> "Min bytes", "file_size_mib" (MiB) -> "File size (MiB)", "gpus" -> "GPUs"."""
    words = param.name.split("_")
    unit = param.unit
    if len(words) > 1 and words[-1].lower() in _UNIT_SUFFIXES | {unit.lower()} and words[-1].lower() != "bytes":
        words = words[:-1]
    words = [_WORDS.get(w.lower(), w) for w in words]
    text = " ".join(words)
    text = text[:1].upper() + text[1:]
    if unit and unit.lower() not in (w.lower() for w in words):
        text += f" ({unit})"
    return text


class SizeEdit(QLineEdit):
    """An integer of any size, typed as a plain number or a byte size ("64 MiB", "16G").

    The text is read by :meth:`Param.parse`, as ``hwbench run -p`` reads it. :meth:`value` is the
    checked int, or the text as typed when it is refused (``resolve_params`` then raises the same
    message); :attr:`problem` is that message, the entry is outlined and its tooltip says it.
    """

    value_changed = Signal(object)

    def __init__(self, param: Param, parent: QWidget | None = None) -> None:
        self.param = param
        self.is_bytes = param.unit == "bytes"
        super().__init__(format_size(int(param.default)) if self.is_bytes else str(param.default), parent)
        self.setPlaceholderText(f"{SIZE_HINT} or 4096" if self.is_bytes else "an integer")
        self.problem: str | None = None
        self.textChanged.connect(self._check)
        self._check()

    def value(self) -> int | str:
        try:
            return self.param.parse(self.text())
        except ParamError:
            return self.text()

    def setValue(self, value: int) -> None:  # noqa: N802 (QSpinBox's name)
        self.setText(format_size(int(value)) if self.is_bytes else str(int(value)))

    def _check(self) -> None:
        self.problem = None
        try:
            value: int | str = self.param.parse(self.text())
        except ParamError as exc:
            self.problem = str(exc)
            value = self.text()
        self.setStyleSheet("" if self.problem is None else "QLineEdit { border: 1px solid #dc2626; }")
        shown = f" = {value:,} bytes" if self.is_bytes and not isinstance(value, str) else ""
        self.setToolTip((self.param.help + shown) + (f"\n{self.problem}" if self.problem else ""))
        self.value_changed.emit(value)


def _needs_size_edit(param: Param) -> bool:
    """Byte sizes, and any integer whose range a QSpinBox (32-bit) cannot hold."""
    low = param.minimum if param.minimum is not None else -_INT_LIMIT
    high = param.maximum if param.maximum is not None else _INT_LIMIT
    return param.unit == "bytes" or low < -_INT_LIMIT or high > _INT_LIMIT


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
        folder = QFileDialog.getExistingDirectory(self, "Choose a folder", self.edit.text() or start_path())
        if folder:
            self.edit.setText(folder)

    def text(self) -> str:
        return self.edit.text()


def _grey_choices(combo: QComboBox, param: Param, reasons: dict[Any, str]) -> None:
    """Grey the choices of ``combo`` that ``reasons`` names; the current one moves to the first left."""
    model = combo.model()
    for index, choice in enumerate(param.choices):
        reason = reasons.get(choice)
        if reason:
            item = model.item(index)
            item.setEnabled(False)
            item.setText(f"{choice} (not available)")
            item.setToolTip(reason)
    if reasons.get(param.choices[combo.currentIndex()]):
        usable = [i for i, choice in enumerate(param.choices) if not reasons.get(choice)]
        if usable:
            combo.setCurrentIndex(usable[0])


class ParamForm(QWidget):
    """Editors for each :class:`Param`; :meth:`values` returns raw values for ``resolve_params``."""

    def __init__(self, params, parent: QWidget | None = None,
                 unavailable: dict[str, dict[Any, str]] | None = None) -> None:
        """``unavailable`` maps a choice parameter's name to the choices that cannot run here and why:
        they are listed greyed, with the reason beside them and in their tooltip, and cannot be picked."""
        super().__init__(parent)
        self.params: list[Param] = list(params)
        self._editors: dict[str, QWidget] = {}
        layout = QFormLayout(self)
        layout.setFieldGrowthPolicy(QFormLayout.ExpandingFieldsGrow)
        for param in self.params:
            editor = self._editor_for(param)
            if isinstance(editor, QComboBox) and (unavailable or {}).get(param.name):
                _grey_choices(editor, param, unavailable[param.name])
            if not isinstance(editor, SizeEdit):  # it keeps its own tooltip (help, bytes, problem)
                editor.setToolTip(param.help)
            self._editors[param.name] = editor
            layout.addRow(human_label(param), editor)
            label = layout.labelForField(editor)
            label.setToolTip(f"{param.name}: {param.help}")

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
        if param.kind == "int" and _needs_size_edit(param):
            return SizeEdit(param)
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
        edit = QLineEdit("" if default is None else str(default))
        if param.kind == "int_list":
            edit.setPlaceholderText("comma-separated, e.g. 1,2,4" + ("; empty: automatic" if not param.default else ""))
        return edit

    def values(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for param in self.params:
            editor = self._editors[param.name]
            if isinstance(editor, QCheckBox):
                out[param.name] = editor.isChecked()
            elif isinstance(editor, QComboBox):
                # choices may be ints or strings; hand back the declared object
                out[param.name] = param.choices[editor.currentIndex()]
            elif isinstance(editor, (QSpinBox, QDoubleSpinBox, SizeEdit)):
                out[param.name] = editor.value()
            elif param.kind == "int_list" and not editor.text().strip() and not param.default:
                continue  # left empty as declared: the benchmark's own default (e.g. sizes it picks)
            else:
                out[param.name] = editor.text()
        return out

    def set_values(self, values: dict[str, Any]) -> None:
        """Show ``values`` (resolved parameters, e.g. a reference's) in the editors; unknown names are ignored."""
        for param in self.params:
            if param.name not in values:
                continue
            value, editor = values[param.name], self._editors[param.name]
            if isinstance(editor, QCheckBox):
                editor.setChecked(bool(value))
            elif isinstance(editor, QComboBox):
                texts = [str(c).lower() for c in param.choices]
                wanted = str(value).lower()
                if wanted in texts:
                    editor.setCurrentIndex(texts.index(wanted))
            elif isinstance(editor, (QSpinBox, QDoubleSpinBox, SizeEdit)):
                editor.setValue(value)
            else:
                editor.setText(",".join(map(str, value)) if isinstance(value, (list, tuple)) else
                               "" if value is None else str(value))

    def editor(self, name: str) -> QWidget:
        return self._editors[name]
