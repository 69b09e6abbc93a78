"""Rooms a reader can hold in their head: no engine module over 600 lines, the language-model benchmark at most
500, no function anywhere in the package over 120 lines. A file that grows past these is split by what it
holds, not chopped."""

from __future__ import annotations

import ast
from pathlib import Path

from support import REPO_ROOT

PACKAGE = REPO_ROOT / "hwbench_gui"
ENGINE_MODULE_LINES = 600
LLM_INFER_LINES = 500
FUNCTION_LINES = 120


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def long_functions(source: str, limit: int) -> list[tuple[str, int]]:
    """(name, lines) of every function or method in `source` longer than `limit` lines, decorators excluded."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = node.end_lineno - node.lineno + 1
            if length > limit:
                found.append((node.name, length))
    return found


def test_long_functions_are_found():
    body = "\n".join(f"    x{i} = {i}" for i in range(5))
    method_body = "\n".join(f"        y{i} = {i}" for i in range(10))
    source = f"def short():\n{body}\n\nclass A:\n    def method(self):\n{method_body}\n"
    assert long_functions(source, 6) == [("method", 11)]
    assert long_functions(source, 11) == []


def test_no_engine_module_over_its_size():
    too_long = {str(p.relative_to(REPO_ROOT)): _lines(p) for p in (PACKAGE / "engine").rglob("*.py")
                if _lines(p) > ENGINE_MODULE_LINES}
    assert not too_long, f"engine modules over {ENGINE_MODULE_LINES} lines: {too_long}"
    assert _lines(PACKAGE / "engine" / "benchmarks" / "llm_infer.py") <= LLM_INFER_LINES


def test_no_function_over_its_size():
    too_long = {f"{p.relative_to(REPO_ROOT)}:{name}": n for p in PACKAGE.rglob("*.py")
                for name, n in long_functions(p.read_text(encoding="utf-8"), FUNCTION_LINES)}
    assert not too_long, f"functions over {FUNCTION_LINES} lines: {too_long}"
