"""``python -m hwbench_gui`` and the ``hwbench-gui`` command: the one place that picks what this
program is this time.

The frozen (PyInstaller) build is one executable: the GUI, the benchmark worker
(``--hwbench-worker SPEC``), the torch probe (``--hwbench-torch-probe``), the self-test
(``--self-test``) and the CLI (``cli ...``). The flags are declared in
:mod:`hwbench_gui.engine.child`; nothing heavy is imported before the choice is made.
``--version`` and ``--help`` print and exit without Qt; before the window, a missing X11 system
library is named in one line instead of Qt's abort (:mod:`hwbench_gui.ui.platform_check`).
"""

from __future__ import annotations

import sys

from hwbench_gui.engine.child import CLI_WORD, SELF_TEST_FLAG, TORCH_PROBE_FLAG, WORKER_FLAG

USAGE = f"""usage: hwbench-gui [--version] [--help] [{SELF_TEST_FLAG}]

Open the hwbench window: inventory, benchmarks, live monitor, demos and reports.

options:
  --version     print the version and exit
  --help, -h    print this help and exit
  {SELF_TEST_FLAG:<13} check this install end to end without a window and exit

`hwbench` is the same engine on the command line (`hwbench --help`); `hwbench-gui {CLI_WORD} ...` runs it
from a packaged build. Warnings and errors of the window are logged under the user log folder
(Help -> About names it).
"""


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
    if first == "--version":
        from hwbench_gui import __version__

        print(f"hwbench-gui {__version__}")
        return 0
    if first in ("--help", "-h"):
        print(USAGE, end="")
        return 0
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
    from hwbench_gui.ui.platform_check import startup_problem

    problem = startup_problem()
    if problem is not None:
        print(problem, file=sys.stderr, flush=True)
        return 1
    from hwbench_gui.ui.app import main as gui_main

    return gui_main(argv)


if __name__ == "__main__":
    sys.exit(main())
