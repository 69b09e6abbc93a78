"""Where the burn-in's checking cost goes, kernel by kernel, on one GPU (or the CPU, small n, as a smoke test).

    PYTHONPATH=. python3 scripts/health_check_cost.py [--n 16384] [--precision fp8] [--products 40]

Builds the burn-in's own GEMM load (hwbench_gui.engine.health.gpu_load, same operands and output buffer),
then times with CUDA events, each over ``--products`` back-to-back products after a warm-up: the products
alone; each followed by the row fingerprint and its compare (the burn-in's check now); each followed by
FP32 row sums and their compare (the check before); and each check kernel alone on one product, with the
bandwidth it reached against the bytes it must read. Prints the cost of each check in % of the products'
time. No power-cap dynamics of a long run and no memory stream beside it: the kernels' own cost.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hwbench_gui.engine.health.gpu_load import GpuGemm, row_fingerprint
from hwbench_gui.engine.spec.precision import from_key


def main() -> int:
    import torch

    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=16384)
    parser.add_argument("--precision", default="fp8")
    parser.add_argument("--products", type=int, default=40)
    args = parser.parse_args()
    cuda = torch.cuda.is_available()
    if not cuda and args.n > 1024:
        print(f"no CUDA GPU: nothing to time at n={args.n} (--n 512 runs the same code on the CPU as a smoke test)")
        return 0
    load = GpuGemm(time.monotonic(), index=0, precision=from_key(args.precision), n=args.n, memory_bytes=1 << 20,
                   device_type="cuda" if cuda else "cpu")
    load.prepare()
    load.window()  # the reference product, checked against FP64
    if load.check_errors:
        print(f"the first product failed its FP64 check: {load.check_errors}")
        return 1
    t = load._t
    fn, ref, ref_rows, bad = t["fn"], t["ref"], t["ref_rows"], t["bad"]
    fp32_rows = fn().sum(dim=1, dtype=torch.float32)
    product_bytes = ref.numel() * ref.element_size()

    def timed(step, repeats: int) -> float:
        """Seconds per repeat of ``step`` (CUDA events on the GPU)."""
        for _ in range(3):
            step()
        if cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize()
            start.record()
            for _ in range(repeats):
                step()
            end.record()
            end.synchronize()
            return start.elapsed_time(end) / 1e3 / repeats
        began = time.perf_counter()
        for _ in range(repeats):
            step()
        return (time.perf_counter() - began) / repeats

    def fingerprint_check():
        bad.add_((row_fingerprint(torch, t["out"]) != ref_rows).sum())

    def fp32_rows_check():
        bad.add_((t["out"].sum(dim=1, dtype=torch.float32) != fp32_rows).sum())

    whole = t["out"].view(-1).view(torch.int64).sum() if product_bytes % 8 == 0 else None

    def whole_fingerprint_check():  # the alternative: one int64 sum of the whole product (no row to blame)
        bad.add_((t["out"].view(-1).view(torch.int64).sum() != whole).to(torch.int64))

    def full_check():
        bad.add_((t["out"] != ref).sum())

    if not cuda:
        print("no CUDA GPU: the CPU runs the same code as a smoke test; its times say nothing of a GPU's")
    gemm = timed(fn, args.products)
    flops = 2 * args.n ** 3
    print(f"{load.where} {load.precision.label} {args.n}³: {gemm * 1e3:.3f} ms a product, "
          f"{flops / gemm / 1e12:.1f} TFLOP/s; the product is {product_bytes / 1e9:.3f} GB")
    for name, check, reads in (("row fingerprint (int64 sums, now)", fingerprint_check, product_bytes),
                               ("FP32 row sums (before)", fp32_rows_check, product_bytes),
                               *((("whole-product int64 sum (an alternative)", whole_fingerprint_check,
                                   product_bytes),) if whole is not None else ()),
                               ("full compare", full_check, 2 * product_bytes)):
        alone = timed(check, args.products)
        with_gemm = timed(lambda: (fn(), check()), args.products)
        print(f"  {name}: {alone * 1e3:.3f} ms alone ({reads / alone / 1e9:.0f} GB/s over the {reads / 1e9:.3f} GB "
              f"it must read); beside each product {(with_gemm / gemm - 1) * 100:.2f} % of the products' time")
    if int(bad) != 0:
        print(f"  {int(bad)} wrong elements or rows found: the GPU gives different products for the same operands")
    load.release()
    return 0


if __name__ == "__main__":
    sys.exit(main())
