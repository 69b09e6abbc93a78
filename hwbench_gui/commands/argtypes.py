"""argparse types shared by the subcommands: a bad value is refused by the parser, in one line."""

from __future__ import annotations

import argparse
import math
import os
import tempfile
from collections.abc import Callable


def at_least(minimum: int) -> Callable[[str], int]:
    """An int type that refuses values below ``minimum``: ``argument --episodes: must be at least 1, got 0``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    parse.__name__ = "int"  # argparse names the type in its messages
    return parse


def finite_number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):  # float("nan") and "inf" parse, and nan compares false with every bound
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def positive_number(text: str) -> float:
    """A finite number above 0 (seconds, minutes): ``nan``, ``inf``, 0 and negatives are refused."""
    value = finite_number(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return value


positive_number.__name__ = finite_number.__name__ = "number"


def positive_at_most(high: float) -> Callable[[str], float]:
    """A finite number above 0 and at most ``high``: ``argument --minutes: must be at most 10080, got 1e300``."""

    def parse(text: str) -> float:
        value = positive_number(text)
        if value > high:
            raise argparse.ArgumentTypeError(f"must be at most {high:g}, got {text}")
        return value

    parse.__name__ = "number"
    return parse


def number_between(low: float, high: float) -> Callable[[str], float]:
    """A finite number in [low, high]: ``argument --conf: must be between 0 and 1, got 2``."""

    def parse(text: str) -> float:
        value = finite_number(text)
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be between {low:g} and {high:g}, got {text}")
        return value

    parse.__name__ = "number"
    return parse


def int_between(low: int, high: int, multiple_of: int = 1) -> Callable[[str], int]:
    """A whole number in [low, high] (and a multiple of ``multiple_of``)."""

    def parse(text: str) -> int:
        value = at_least(low)(text)
        if value > high:
            raise argparse.ArgumentTypeError(f"must be at most {high}, got {value}")
        if value % multiple_of:
            raise argparse.ArgumentTypeError(f"must be a multiple of {multiple_of}, got {value}")
        return value

    parse.__name__ = "int"
    return parse


def user_path(text: str) -> str:
    """A path as a shell user means it: ``~`` is the home folder (argparse gets it unexpanded when quoted
    or written ``--out=~/x``, which would make a folder literally named ``~``)."""
    return os.path.expanduser(text)


def output_file(text: str) -> str:
    """A file to write at the end of the work: refused at once when it is a folder or its folder is
    missing, so that a long run does not end without its output."""
    path = os.path.expanduser(text)
    if os.path.isdir(path):
        raise argparse.ArgumentTypeError(f"{text} is a folder; give a file name")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise argparse.ArgumentTypeError(f"the folder {parent} does not exist")
    try:  # a real file, not os.access: root passes that check on /proc and on read-only mounts
        with tempfile.TemporaryFile(dir=parent):
            pass
    except OSError as exc:
        raise argparse.ArgumentTypeError(f"the folder {parent} cannot be written: {exc.strerror or exc}") from None
    return path
