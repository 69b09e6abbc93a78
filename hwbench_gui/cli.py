"""``hwbench``: the headless front end over the engine (servers, CI, a GPU box over ssh).

Never imports Qt. Each subcommand lives in ``hwbench_gui/commands/<name>.py`` with
``add_parser(subparsers)`` and ``run(args) -> int``.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from hwbench_gui import __version__

#: Subcommand modules, in the order ``hwbench --help`` lists them.
COMMANDS = ("inventory", "monitor", "bench", "demo", "report")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hwbench",
        description="Evaluate a deep-learning workstation: inventory, benchmarks, live telemetry.",
    )
    parser.add_argument("--version", action="version", version=f"hwbench {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        module = importlib.import_module(f"hwbench_gui.commands.{name}")
        module.add_parser(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    try:
        return int(args.handler(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
