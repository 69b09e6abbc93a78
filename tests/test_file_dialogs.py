"""Every file dialog opens in the home folder (or a folder hwbench names), never the process's working
folder: a dialog given "" or a bare file name opens wherever the window was started from."""

from __future__ import annotations

import ast
from pathlib import Path

from hwbench_gui.ui.start_folder import start_path

UI = Path(__file__).resolve().parent.parent / "hwbench_gui" / "ui"


def _dialog_calls():
    for path in sorted(UI.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "QFileDialog"
                    and node.func.attr.startswith("get")):
                yield f"{path.relative_to(UI)}:{node.lineno}", node


def test_no_dialog_starts_in_the_working_folder():
    calls = list(_dialog_calls())
    assert len(calls) >= 15
    relative = [where for where, node in calls
                if len(node.args) < 3 or isinstance(node.args[2], (ast.Constant, ast.JoinedStr))]
    assert relative == []


def test_the_start_is_the_home_folder():
    assert start_path() == str(Path.home())
    assert start_path("hwbench-report.pdf") == str(Path.home() / "hwbench-report.pdf")
