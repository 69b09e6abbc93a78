"""The Benchmarks tab's page of a served model or an engine's run (llm.endpoint, llm.llamacpp, llm.ollama): the
lines the run wrote as its summary and its warnings; it only draws what the document says."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QPlainTextEdit, QVBoxLayout, QWidget

from hwbench_gui.engine.reports.serving_section import BENCHMARK_IDS
from hwbench_gui.ui.benchmarks.family_page import FamilyPage


class ServingView(QWidget):
    """The selected run's summary lines (each level, or each figure against its bound) and warnings."""

    def __init__(self) -> None:
        super().__init__()
        self.text = QPlainTextEdit(readOnly=True)
        self.text.setPlaceholderText("Run the server sweep, llama.cpp or Ollama to see its figures here.")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.text)

    def set_document(self, document: dict[str, Any]) -> None:
        details = document.get("details") if isinstance(document.get("details"), dict) else {}
        figure = document.get("figure") if isinstance(document.get("figure"), dict) else {}
        lines = [f"{(document.get('benchmark') or {}).get('title', '')}: {figure.get('name', '')} = "
                 f"{figure.get('value', '')} {figure.get('unit', '')}", ""]
        lines += [str(line) for line in details.get("summary") or [] if isinstance(line, str)]
        warnings = [str(w) for w in document.get("warnings") or [] if isinstance(w, str)]
        if warnings:
            lines += ["", "Warnings:"] + [f"  {w}" for w in warnings]
        self.text.setPlainText("\n".join(lines))


def shows(document: dict[str, Any]) -> bool:
    return isinstance(document, dict) and (document.get("benchmark") or {}).get("id") in BENCHMARK_IDS \
        and document.get("status") == "ok"


PAGE = FamilyPage("Serving", ServingView, shows, lambda page, document, _others: page.set_document(document))
