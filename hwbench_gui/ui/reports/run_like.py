""""Run like this here", from the Library and the Compare page alike: the Benchmarks tab's form filled with
what a result measured (its benchmark and the parameters that decide comparability, as it asked them),
for review before it is queued."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QMessageBox, QWidget

from hwbench_gui.ui.context import AppContext


def run_like(parent: QWidget, context: AppContext, doc: dict[str, Any]) -> bool:
    """Fill the Benchmarks tab's form to measure here what ``doc`` measured; False (said to the user) when
    this install cannot run it or there is no Benchmarks tab."""
    from hwbench_gui.engine.run.rerun import run_like as like
    from hwbench_gui.engine.spec.benchmark import ParamError

    if context.request_run is None:
        context.show_status("No Benchmarks tab to run it in", 5000)
        return False
    try:
        bench_id, params = like(doc)
    except KeyError as exc:
        QMessageBox.warning(parent, "Run like this here", f"This install cannot run it: {exc.args[0]}")
        return False
    except ParamError as exc:
        QMessageBox.warning(parent, "Run like this here", str(exc))
        return False
    context.request_run(bench_id, dict(params))
    context.show_status(f"{bench_id}: the Benchmarks tab's form holds the result's parameters for review", 5000)
    return True
