"""``hwbench fits``: which language models run here for inference, before any run: each built-in model × weights
(bf16, fp8, int8, int4) × context, its weights, KV cache and workspace against this machine's GPU, all its GPUs
split tensor-parallel, and a 24 GB and a 48 GB card (:mod:`hwbench_gui.engine.models.llm.infer_fits`; NVML only,
no torch)."""

from __future__ import annotations

import argparse
import json
import sys


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "fits",
        help="which language models fit this machine for inference (weights, KV cache, workspace)",
        description="For each built-in language model, weights format and context: the memory llm.infer's plan "
                    "needs at batch 1, against this GPU, all GPUs tensor-parallel, and a 24 GB and a 48 GB card.",
    )
    parser.add_argument("--model", action="append", default=[], metavar="NAME",
                        help="only this built-in model (repeat for several)")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    parser.set_defaults(handler=run)
    return parser


def run(args: argparse.Namespace) -> int:
    from hwbench_gui.engine.models.llm.architectures import BUILT_IN
    from hwbench_gui.engine.models.llm.infer_fits import fit_lines, fit_table, machine_memory

    unknown = [m for m in args.model if m.strip().lower() not in BUILT_IN]
    if unknown:
        sys.stderr.write(f"hwbench fits: --model {unknown[0]!r} is not one of {', '.join(BUILT_IN)}\n")
        return 2
    memory, gpus, gpu_bytes, what = machine_memory()
    rows = fit_table(memory, gpus, gpu_bytes, tuple(m.strip().lower() for m in args.model))
    if args.json:
        json.dump({"against": what, "memory": dict(memory), "rows": rows}, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write("\n".join(fit_lines(rows, what)) + "\n")
    return 0
