"""``python -m hwbench_gui`` and the ``hwbench-gui`` command: the one place that picks what this
program is this time.

The frozen (PyInstaller) build is one executable: the GUI, the benchmark worker
(``--hwbench-worker SPEC``), the torch probe (``--hwbench-torch-probe``), the self-test
(``--self-test``) and the CLI (``cli ...``). The flags are declared in
:mod:`hwbench_gui.engine.child`; nothing heavy is imported before the choice is made.
"""

from __future__ import annotations

import sys

from hwbench_gui.engine.child import CLI_WORD, SELF_TEST_FLAG, TORCH_PROBE_FLAG, WORKER_FLAG


def dispatch(args: list[str]) -> int | None:
    """Run the mode ``args`` (without the program name) selects; ``None`` for the window."""
    first = args[0] if args else None
    if first == WORKER_FLAG:
        from hwbench_gui.engine.run import worker

        return worker.main(args[1:])
    if first == TORCH_PROBE_FLAG:
        from hwbench_gui.engine.inventory import torch_probe

        return torch_probe.main()
    if first == CLI_WORD:
        from hwbench_gui import cli

        return cli.main(args[1:])
    if SELF_TEST_FLAG in args:
        from hwbench_gui.ui import self_test

        return self_test.main()
    return None


def main(argv: list[str] | None = None) -> int:
    """``argv`` as ``sys.argv`` is: the program name first."""
    argv = list(sys.argv if argv is None else argv)
    code = dispatch(argv[1:])
    if code is not None:
        return code
    from hwbench_gui.ui.app import main as gui_main

    return gui_main(argv)


if __name__ == "__main__":
    sys.exit(main())
