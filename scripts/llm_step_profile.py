"""Per-kernel GPU time of llm.infer's one-token step, for each step kind (what scripts/llm_step_census.py counts
without a GPU, measured on one): the model is built once, each kind's Stepper (compiled and captured as llm.infer
does) generates 128 tokens three times, then ten steps run under torch.profiler and the kernels are summed.

    PYTHONPATH=. python3 scripts/llm_step_profile.py [--model llama-3.1-8b] [--modes fused,compile,graph]
                                                     [--positions 512]

Prints, per kind: build seconds, ms per token, effective GB/s (bytes of a step at half the cache ÷ its time),
kernels per step and the 22 kernels that take the most time. GPU only.
"""

from __future__ import annotations

import argparse
import collections
import time

import torch
from torch.profiler import ProfilerActivity, profile

from hwbench_gui.engine.models.llm import arithmetic as ar
from hwbench_gui.engine.models.llm import generate
from hwbench_gui.engine.models.llm import model as llm
from hwbench_gui.engine.models.llm.architectures import builtin


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="llama-3.1-8b")
    parser.add_argument("--modes", default="fused,compile,graph")
    parser.add_argument("--positions", type=int, default=512)
    args = parser.parse_args()
    torch.set_grad_enabled(False)
    arch = builtin(args.model)
    model = llm.build(arch, torch.bfloat16, "cuda", rope_positions=args.positions, seed=0)
    cache = llm.KVCache.allocate(arch, 1, args.positions, torch.bfloat16, "cuda")
    step_bytes = ar.bytes_per_step(arch, 2, 2, args.positions // 2, 1)
    print(f"{args.model}: {step_bytes / 1e9:.3f} GB a step", flush=True)
    for mode in args.modes.split(","):
        started = time.perf_counter()
        try:
            stepper = generate.Stepper(torch, model, cache, 1, mode)
        except Exception as exc:  # a kind that cannot build here is a finding, not the end of the others
            print(f"{mode}: failed: {exc!r}"[:400], flush=True)
            continue
        print(f"{mode}: built in {time.perf_counter() - started:.0f} s", flush=True)
        for _ in range(3):
            stepper.at(0)
            torch.cuda.synchronize()
            started = time.perf_counter()
            for _ in range(128):
                stepper.step()
            torch.cuda.synchronize()
            seconds = (time.perf_counter() - started) / 128
        print(f"{mode}: {seconds * 1e3:.3f} ms a token = {1 / seconds:.1f} tokens/s, "
              f"{step_bytes / seconds / 1e9:.0f} GB/s effective", flush=True)
        stepper.at(0)
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(10):
                stepper.step()
            torch.cuda.synchronize()
        kernels: dict[str, list[float]] = collections.defaultdict(lambda: [0, 0.0])
        for event in prof.events():
            if event.device_type.name == "CUDA":
                kernels[event.name][0] += 1
                kernels[event.name][1] += event.device_time_total
        total = sum(us for _, us in kernels.values()) / 10
        count = sum(n for n, _ in kernels.values()) / 10
        print(f"{mode}: {count:.0f} kernels a step, {total / 1e3:.3f} ms of kernel time (wall {seconds * 1e3:.3f})")
        for name, (n, us) in sorted(kernels.items(), key=lambda item: -item[1][1])[:22]:
            print(f"   {us / 10 / 1e3:8.3f} ms {n / 10:6.0f}x  {name[:110]}")
        del stepper
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
