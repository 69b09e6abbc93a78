"""``hwbench inventory``: what this machine is made of (GPUs, CPU, memory, disks, software).

Needs only psutil and nvidia-ml-py (torch for the optional probe child); no Qt, no platformdirs.
"""

from __future__ import annotations

import argparse
import json
import sys


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "inventory",
        help="list the hardware and software of this machine",
        description="List GPUs (with theoretical peaks), GPU topology, CPU, memory, disks and software versions.",
    )
    parser.add_argument("--json", action="store_true", help="print the inventory as JSON instead of text")
    parser.add_argument("--no-torch", action="store_true",
                        help="skip the torch probe (a child process that imports torch; gives SM count and L2 "
                             "size where NVML lacks them)")
    parser.add_argument("--output", "-o", metavar="FILE", help="also write the JSON to FILE (atomically)")
    parser.set_defaults(handler=run)
    return parser


def run(args: argparse.Namespace) -> int:
    from hwbench_gui.engine.inventory import collect, render_text, write_json

    inv = collect(use_torch_probe=not args.no_torch)
    if args.output:
        write_json(inv, args.output)
    if args.json:
        json.dump(inv, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render_text(inv))
    return 0
