"""The burn-in's GPU side: back-to-back GEMMs on one GPU, every product checked, plus device-memory traffic.

The load thread's first product is checked once against a different path: 256 of its rows recomputed
in FP64 (not on tensor cores) from the exact values the operands hold, within ``2**-6 × (|A| @ |B|)``
per element (the output's rounding plus the accumulation order). Every later product of that thread
must then equal the first bit for bit (the same cuBLAS kernel on the same operands is deterministic):
each product's row sums in FP32 are compared with the first's, and every :data:`FULL_CHECK_EVERY`-th
product element by element. Beside it, on a second stream, a pattern and its complement are copied
into a buffer and compared after every copy. Torch is imported here only.
"""

from __future__ import annotations

import contextlib
from typing import Any

from hwbench_gui.engine.health.load import WINDOW_S, Load
from hwbench_gui.engine.spec.precision import BF16, FP8, FP16, Precision, apply_torch

FULL_CHECK_EVERY = 16
VALIDATE_ROWS = 256
FP8_MAX = 448.0  # largest finite float8_e4m3fn


def best_precision(torch: Any, index: int) -> tuple[Precision, str]:
    """The GEMM precision with the highest tensor rate this GPU and PyTorch offer, and why it was chosen."""
    major, minor = torch.cuda.get_device_capability(index)
    if (major, minor) >= (8, 9) and hasattr(torch, "_scaled_mm") and hasattr(torch, "float8_e4m3fn"):
        return FP8, f"compute capability {major}.{minor} has FP8 tensor cores"
    if major >= 8:
        return BF16, f"compute capability {major}.{minor}: BF16 tensor cores, no FP8"
    return FP16, f"compute capability {major}.{minor}: FP16 tensor cores, no BF16"


class GpuGemm(Load):
    """GEMMs of size ``n`` in ``precision`` on ``cuda:index``; rate in TFLOP/s. ``device_type="cpu"`` runs the
    same checks on the CPU, one stream (the tests' way to feed the checks a wrong product on a GPU-less box)."""

    unit = "TFLOP/s"

    def __init__(self, t0: float, *, index: int, precision: Precision, n: int, memory_bytes: int,
                 device_type: str = "cuda", **kwargs):
        super().__init__(t0, **kwargs)
        self.index, self.precision, self.n, self.memory_bytes = index, precision, n, memory_bytes
        self.cuda = device_type == "cuda"
        self.where = f"cuda:{index}" if self.cuda else "cpu"
        self.name = f"gpu{index}"
        self.products = 0
        self.per_window = 1
        self._t: dict[str, Any] = {}

    # -- setup ----------------------------------------------------------------------------------
    def prepare(self) -> None:
        import torch

        if self.cuda:
            torch.cuda.set_device(self.index)
        dev = torch.device("cuda", self.index) if self.cuda else torch.device("cpu")
        apply_torch(self.precision, dev.type)
        n = self.n
        gen = torch.Generator(device=dev).manual_seed(1234 + self.index)
        a = torch.randn(n, n, device=dev, generator=gen)
        b = torch.randn(n, n, device=dev, generator=gen)
        t = self._t
        if self.precision is FP8:
            sa, sb = a.abs().max() / FP8_MAX, b.abs().max() / FP8_MAX
            a8, b8 = (a / sa).to(torch.float8_e4m3fn), (b / sb).to(torch.float8_e4m3fn).t()
            exact_a, exact_b = a8.float() * sa, b8.float() * sb
            t["fn"] = lambda: torch._scaled_mm(a8, b8, scale_a=sa.float(), scale_b=sb.float(), out_dtype=torch.bfloat16)
        else:
            dtype = getattr(torch, self.precision.tensor_dtype)
            x, y = a.to(dtype), b.to(dtype)
            exact_a, exact_b = x.float(), y.float()
            out = torch.empty(n, n, device=dev, dtype=dtype)
            t["fn"] = lambda: torch.mm(x, y, out=out)
        del a, b
        t["exact"] = (exact_a, exact_b)
        t["bad"] = torch.zeros((), dtype=torch.int64, device=dev)
        words = max(self.memory_bytes // 4 // 2, 1)
        t["pattern"] = torch.randint(-2**31, 2**31 - 1, (words,), dtype=torch.int32, device=dev, generator=gen)
        t["complement"] = torch.bitwise_not(t["pattern"])
        t["buffer"] = torch.empty_like(t["pattern"])
        t["mem_bad"] = torch.zeros((), dtype=torch.int64, device=dev)
        t["stream"] = torch.cuda.Stream(dev) if self.cuda else None
        self._sync(torch)

    def _sync(self, torch: Any) -> None:
        if self.cuda:
            torch.cuda.synchronize(self.index)

    def _reference(self, torch: Any) -> None:
        """The load thread's first product becomes the reference, once checked against FP64 arithmetic on the
        operands' exact values (FP64 is untouched by the TF32 switch other threads' GEMMs depend on)."""
        t = self._t
        first = t["fn"]().clone()
        exact_a, exact_b = t.pop("exact")
        if self.check:
            rows = slice(0, min(VALIDATE_ROWS, self.n))
            a_rows, b = exact_a[rows].double(), exact_b.double()
            ref = a_rows @ b
            bound = a_rows.abs() @ b.abs()
            del b
            excess = (first[rows].double() - ref).abs() - 2.0**-6 * bound
            wrong = int((excess > 0).sum())
            if wrong:
                self.error("gemm", f"{wrong} of {ref.numel()} elements of the first {self.precision.label} "
                                   f"{self.n}×{self.n} product on {self.where} differ from FP64 recomputation "
                                   f"beyond 2^-6·(|A|·|B|) (largest excess {float(excess.max()):.3g})")
            del ref, bound, excess
        del exact_a, exact_b
        t["ref"] = first
        t["ref_rows"] = first.sum(dim=1, dtype=torch.float32)

    def release(self) -> None:
        self._t.clear()
        try:
            import torch

            if self.cuda:
                torch.cuda.empty_cache()
        except Exception:  # releasing must never hide why the load stopped
            pass

    # -- one window -------------------------------------------------------------------------------
    def window(self) -> float:
        import torch

        t = self._t
        if self.cuda:
            torch.cuda.set_device(self.index)  # the device is per thread; this runs on the load's own
        if "ref" not in t:  # the first window, in the load's thread: its first product is the reference
            self._reference(torch)
            self._sync(torch)
            return 0.0
        main = torch.cuda.current_stream(self.index) if self.cuda else None
        start = self.now()
        with torch.cuda.stream(t["stream"]) if self.cuda else contextlib.nullcontext():
            if self.cuda:
                t["stream"].wait_stream(main)
            for source in (t["pattern"], t["complement"]):
                t["buffer"].copy_(source)
                if self.check:
                    t["mem_bad"] += (t["buffer"] != source).sum()
        for _ in range(self.per_window):
            c = t["fn"]()
            self.products += 1
            if self.check:
                if self.products % FULL_CHECK_EVERY == 0:
                    t["bad"] += (c != t["ref"]).sum()
                else:
                    t["bad"] += (c.sum(dim=1, dtype=torch.float32) != t["ref_rows"]).sum()
        if self.cuda:
            main.wait_stream(t["stream"])
        self._sync(torch)
        if self.check:
            self.checked += self.per_window + 2
            bad, mem_bad = int(t["bad"]), int(t["mem_bad"])
            if bad:
                self.error("gemm", f"{bad} elements or row sums of {self.per_window} {self.precision.label} "
                                   f"{self.n}×{self.n} products on {self.where} differ from the first product")
                t["bad"].zero_()
            if mem_bad:
                self.error("memory", f"{mem_bad} of {t['buffer'].numel()} words copied on {self.where} "
                                     "read back differently")
                t["mem_bad"].zero_()
        took = self.now() - start
        ran = self.per_window
        if took > 0:
            self.per_window = max(1, min(4096, int(ran * WINDOW_S / took)))
        return ran * 2 * self.n ** 3 / 1e12
