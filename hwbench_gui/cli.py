"""``hwbench``: the headless front end over the engine (servers, CI, a GPU box over ssh).

Never imports Qt. Each subcommand lives in ``hwbench_gui/commands/<name>.py`` with
``add_parser(subparsers)`` and ``run(args) -> int``.
"""

from __future__ import annotations

import argparse
import codecs
import importlib
import io
import os
import sys

from hwbench_gui import __version__

#: Subcommand modules, in the order ``hwbench --help`` lists them.
COMMANDS = ("inventory", "monitor", "bench", "demo", "report", "fits")


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
    names_printable(sys.stdout)
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
    except BrokenPipeError:  # the reader went away (| head)
        stdout_gone()
        return 0


def _file_name_bytes(exc: UnicodeError) -> tuple[bytes | str, int]:
    """Encoding error handler: a file name's undecodable bytes (os.fsdecode's U+DC80-U+DCFF) written back as
    those bytes, as ``ls`` prints them, so a printed path can be used as it is; any other unencodable character
    as its backslash escape."""
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    text = exc.object[exc.start:exc.end]
    if all(0xDC80 <= ord(c) <= 0xDCFF for c in text):
        return bytes(ord(c) - 0xDC00 for c in text), exc.end
    return text.encode("ascii", "backslashreplace").decode("ascii"), exc.end


codecs.register_error("hwbench-file-names", _file_name_bytes)


def names_printable(stream) -> None:
    """``stream`` (stdout) prints a path holding a name that is not UTF-8 instead of raising UnicodeEncodeError."""
    if isinstance(stream, io.TextIOWrapper):
        try:
            stream.reconfigure(errors="hwbench-file-names")
        except (ValueError, OSError):  # closed, or a stream that cannot change
            pass


def stdout_gone() -> None:
    """The reader of stdout went away (``| head -1``): stdout now points at the null device, so nothing left in
    its buffer is flushed into the closed pipe at exit (Python would print "Exception ignored ... BrokenPipeError")."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError):  # no stdout file descriptor at all: nothing to flush there either
        pass


if __name__ == "__main__":
    sys.exit(main())
