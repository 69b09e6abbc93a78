"""``python -m hwbench_gui``: the GUI, or a benchmark worker when started with the worker flag.

The frozen (PyInstaller) build has no ``python -m``: its executable is this entry, and the
runner starts benchmark children as ``sys.executable --hwbench-worker ...``.
"""

import sys


def main() -> int:
    from hwbench_gui.cli import WORKER_FLAG

    if sys.argv[1:2] == [WORKER_FLAG]:
        from hwbench_gui.engine.bench import worker

        return worker.main(sys.argv[2:])
    # The literal of torch_probe.TORCH_PROBE_FLAG: importing that module here would load the
    # inventory package (and numpy) before the window, costing start-up time.
    if sys.argv[1:2] == ["--hwbench-torch-probe"]:
        from hwbench_gui.engine.inventory import torch_probe

        return torch_probe.main()
    if sys.argv[1:2] == ["cli"]:
        from hwbench_gui import cli

        return cli.main(sys.argv[2:])
    from hwbench_gui.ui.app import main as gui_main

    return gui_main()


if __name__ == "__main__":
    sys.exit(main())
