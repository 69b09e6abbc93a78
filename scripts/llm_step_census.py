"""Kernels and bytes of llm.infer's one-token step, counted without a GPU: the step of a built-in model runs on
PyTorch's fake tensors (shapes only, no memory) under a dispatch mode that records every ATen operator that
would launch a kernel (views and metadata changes launch none), with the bytes of its tensor inputs and outputs.

Eagerly, and in step=graph (the same kernels replayed from a CUDA graph), each such operator is one kernel
launch; step=compile fuses the elementwise ones but keeps every matmul on cuBLAS; step=fused (coordinate-descent
tuning, adds split from the matmuls) leaves about one Triton kernel per matmul plus the attention's.

    PYTHONPATH=. python3 scripts/llm_step_census.py [--model llama-3.1-8b] [--positions 512] [--split]
"""

from __future__ import annotations

import argparse
from collections import Counter

import torch
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.utils._python_dispatch import TorchDispatchMode

from hwbench_gui.engine.models.llm import arithmetic as ar
from hwbench_gui.engine.models.llm import model as llm
from hwbench_gui.engine.models.llm.architectures import builtin

NO_KERNEL = {"view", "_unsafe_view", "t", "transpose", "unsqueeze", "squeeze", "expand", "reshape", "select",
             "slice", "permute", "alias", "as_strided", "detach", "split", "split_with_sizes", "chunk", "unbind",
             "empty", "lift_fresh", "unflatten", "device", "sym_size", "sym_stride", "sym_numel", "dim", "size",
             "stride", "is_contiguous", "numel", "sym_storage_offset", "storage_offset", "_local_scalar_dense"}


def _bytes(value) -> int:
    if isinstance(value, torch.Tensor):
        return value.numel() * value.element_size()
    if isinstance(value, (list, tuple)):
        return sum(_bytes(v) for v in value)
    return 0


class Census(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.calls: Counter[str] = Counter()
        self.bytes: Counter[str] = Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        name = func.overloadpacket.__name__
        if name not in NO_KERNEL:
            self.calls[name] += 1
            if name.endswith("_"):  # in place: the values written (index_put_'s row of the cache), not the target
                moved = 2 * _bytes(args[1:])
            elif name in ("embedding", "index"):  # a gather reads the rows it returns, not the table
                moved = 2 * _bytes(out)
            else:
                moved = _bytes(args) + _bytes(list((kwargs or {}).values())) + _bytes(out)
            self.bytes[name] += moved
        return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="llama-3.1-8b")
    parser.add_argument("--positions", type=int, default=512, help="KV-cache positions (depth + max(pp, tg))")
    parser.add_argument("--split", action="store_true", help="adds outside the matmuls, as step=fused traces it")
    args = parser.parse_args()
    arch = builtin(args.model)
    census = Census()
    with FakeTensorMode(), torch.no_grad():
        model = llm.Decoder(arch, torch.bfloat16, args.positions)
        model.make_tables()
        cache = llm.KVCache.allocate(arch, 1, args.positions, torch.bfloat16, "cpu")
        tokens = torch.zeros(1, 1, dtype=torch.long)
        position = torch.zeros((), dtype=torch.long)
        with census:
            logits = model.decode(tokens, position, cache, split=args.split)
            logits.argmax(dim=-1, keepdim=True)
    total_calls, total_bytes = sum(census.calls.values()), sum(census.bytes.values())
    weights = ar.WeightBytes.uniform(2).read_per_step(arch)
    print(f"{arch.name}, BF16, batch 1, cache of {cache.positions} positions: {total_calls} kernels per step "
          f"({total_calls / arch.layers:.1f} per layer), {total_bytes / 1e9:.3f} GB read and written "
          f"(weights read: {weights / 1e9:.3f} GB)")
    for name, calls in census.calls.most_common():
        print(f"  {name:32} {calls:5d} calls  {census.bytes[name] / 1e6:12.1f} MB")


if __name__ == "__main__":
    main()
