"""Keep GPU 0 busy with BF16 matrix products for N seconds (a known load for telemetry checks).

    python scripts/gpu_load.py --seconds 15
"""

import argparse
import time


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--size", type=int, default=8192)
    args = parser.parse_args()
    import torch

    a = torch.randn(args.size, args.size, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(args.size, args.size, device="cuda", dtype=torch.bfloat16)
    end = time.monotonic() + args.seconds
    products = 0
    start = time.monotonic()
    while time.monotonic() < end:
        for _ in range(20):
            a @ b
        torch.cuda.synchronize()
        products += 20
    elapsed = time.monotonic() - start
    print(f"gpu_load: {products} products of {args.size}^3 in {elapsed:.1f} s "
          f"= {2 * args.size ** 3 * products / elapsed / 1e12:.0f} TFLOP/s")


if __name__ == "__main__":
    main()
