"""Entry script of the frozen (PyInstaller) build: the one executable is the GUI, the benchmark
worker, the torch probe and the CLI (``hwbench-gui cli ...``); see ``hwbench_gui/__main__.py``."""

import multiprocessing
import sys

if __name__ == "__main__":
    # First thing: a multiprocessing spawn child (cpu.decode's worker pool) re-runs this
    # executable, and freeze_support() turns it into that child before any other import.
    multiprocessing.freeze_support()
    from hwbench_gui.__main__ import main

    sys.exit(main())
