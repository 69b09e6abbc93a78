"""The burn-in's GPU side: back-to-back GEMMs on one GPU, every product checked, plus device-memory traffic.

The load thread's first product is checked once against a different path: 256 of its rows recomputed
in FP64 (not on tensor cores) from the exact values the operands hold, within ``2**-6 × (|A| @ |B|)``
per element (the output's rounding plus the accumulation order). Every later product of that thread
must then equal the first bit for bit (the same cuBLAS kernel on the same operands is deterministic):
each product's row fingerprints (:func:`row_fingerprint`, one read of the product) are compared with the
first's, and the first product of a window at least :data:`FULL_CHECK_EVERY_S` after the last full compare
is compared element by element, its output buffer filled with NaN first (a GEMM that stopped writing
would leave the previous, right product there). Beside them, on a second stream, a pattern and its
complement are copied into a buffer and compared element by element after every copy.

What checking costs, by arithmetic (16384³ FP8 on an H100 SXM: 8.80 TFLOP, 7.22 ms a product at the
1,218 TFLOP/s the unchecked load gave; the BF16 product is 0.537 GB; HBM3 3.35 TB/s): the fingerprint reads
each product once, 0.16 ms at full bandwidth and 0.21 ms at 2.5 TB/s, 2.2-3.0 %, plus three small kernels
(~0.01 ms, 0.15 %); the full compare (1.6 GB) every 10 s instead of every 16th product, 0.01 % instead of
0.4-0.6 %; the memory stream's compares, 5.4 GB a window of ~63 products, 0.085 GB a product, at most
0.35 % (they run beside the GEMMs). Expected: 2.7-3.6 % at 2.5-3.35 TB/s. The design before (FP32 row
sums of every product, the full compare every 16th: 0.69 GB a product) measured 5.1 %, which means its
check kernels reached ~2 TB/s; should the fingerprint reach no more, 4.6 % (scripts/health_check_cost.py
times each kernel on the GPU). The read of each product is the floor of a per-product check. Torch is
imported here only.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Callable

from hwbench_gui.engine.health.load import WINDOW_S, Load
from hwbench_gui.engine.inventory.gpu_arch import FP8_CAPABILITY, FP8_MAX
from hwbench_gui.engine.spec.precision import BF16, FP8, FP16, Precision, apply_torch

#: A full element-by-element compare at most this often (seconds of load); every product is fingerprinted.
FULL_CHECK_EVERY_S = 10.0
VALIDATE_ROWS = 256


def best_precision(torch: Any, index: int) -> tuple[Precision, str]:
    """The GEMM precision with the highest tensor rate this GPU and PyTorch offer, and why it was chosen."""
    major, minor = torch.cuda.get_device_capability(index)
    if (major, minor) >= FP8_CAPABILITY and hasattr(torch, "_scaled_mm") and hasattr(torch, "float8_e4m3fn"):
        return FP8, f"compute capability {major}.{minor} has FP8 tensor cores"
    if major >= 8:
        return BF16, f"compute capability {major}.{minor}: BF16 tensor cores, no FP8"
    return FP16, f"compute capability {major}.{minor}: FP16 tensor cores, no BF16"


@dataclass
class _Queued:
    """A window queued on the GPU: when, how many products, whether its first was compared in full, the host
    slot its wrong-result counts land in, and the event that marks its end (on the CPU, instead of the event,
    the window's work, done when collected)."""

    started: float
    products: int
    full: bool
    slot: Any
    event: Any
    cpu_work: Callable[[], None] | None


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
        self.next_full_check_t = 0.0  # load time of the next element-by-element compare
        self._t: dict[str, Any] = {}
        self._queued: _Queued | None = None
        self._collected_t: float | None = None
        self._slot = 0

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
            sa32, sb32 = sa.float(), sb.float()
            out = torch.empty(n, n, device=dev, dtype=torch.bfloat16)
            t["fn"] = lambda: torch._scaled_mm(a8, b8, scale_a=sa32, scale_b=sb32, out_dtype=torch.bfloat16, out=out)
        else:
            dtype = getattr(torch, self.precision.tensor_dtype)
            x, y = a.to(dtype), b.to(dtype)
            exact_a, exact_b = x.float(), y.float()
            out = torch.empty(n, n, device=dev, dtype=dtype)
            t["fn"] = lambda: torch.mm(x, y, out=out)
        # Every product lands in this one buffer, which holds the previous (right) product: a GEMM that stopped
        # writing would pass its fingerprint, so the buffer is filled with NaN before each full compare.
        t["out"] = out
        del a, b
        t["exact"] = (exact_a, exact_b)
        # wrong GEMM elements (or row fingerprints) and wrong memory words of the window being queued
        t["counts"] = torch.zeros(2, dtype=torch.int64, device=dev)
        t["bad"], t["mem_bad"] = t["counts"][0], t["counts"][1]
        words = max(self.memory_bytes // 4 // 2, 1)
        t["pattern"] = torch.randint(-2**31, 2**31 - 1, (words,), dtype=torch.int32, device=dev, generator=gen)
        t["complement"] = torch.bitwise_not(t["pattern"])
        t["buffer"] = torch.empty_like(t["pattern"])
        t["stream"] = torch.cuda.Stream(dev) if self.cuda else None
        # Two host slots for the counts (the window being collected, the window just queued): pinned, so the
        # copy into them is queued behind the window's work instead of waiting for it.
        t["slots"] = [torch.zeros(2, dtype=torch.int64, pin_memory=self.cuda) for _ in range(2)]
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
        t["ref_rows"] = row_fingerprint(torch, first)

    def release(self) -> None:
        self._queued = None
        self._t.clear()
        try:
            import torch

            if self.cuda:
                torch.cuda.empty_cache()
        except Exception:  # releasing must never hide why the load stopped
            pass

    # -- one window -------------------------------------------------------------------------------
    def window(self) -> float:
        """Queue this window's work, then collect the window queued before it: the GPU always holds a
        window of work while the host waits, so no host sync or GIL wait ever leaves it idle. Returns the
        collected window's work (its time is the host's wait for it, which is its GPU time)."""
        import torch

        t = self._t
        if self.cuda:
            torch.cuda.set_device(self.index)  # the device is per thread; this runs on the load's own
        if "ref" not in t:  # the first window, in the load's thread: its first product is the reference
            self._reference(torch)
            self._sync(torch)
            return 0.0
        queued, self._queued = self._queued, self._queue(torch)
        return self._collect(queued) if queued is not None else 0.0

    def finish(self) -> float:
        """Collect the window still queued when the load stopped: its products are checked too."""
        queued, self._queued = self._queued, None
        return self._collect(queued) if queued is not None else 0.0

    def _queue(self, torch: Any) -> _Queued:
        t = self._t
        main = torch.cuda.current_stream(self.index) if self.cuda else None
        slot = t["slots"][self._slot]
        self._slot ^= 1
        started = self.now()
        full = self.check and started >= self.next_full_check_t
        if full:
            self.next_full_check_t = started + FULL_CHECK_EVERY_S
        products = self.per_window

        def work() -> None:
            with torch.cuda.stream(t["stream"]) if self.cuda else contextlib.nullcontext():
                if self.cuda:
                    t["stream"].wait_stream(main)
                for source in (t["pattern"], t["complement"]):
                    t["buffer"].copy_(source)
                    if self.check:
                        t["mem_bad"] += (t["buffer"] != source).sum()
            for k in range(products):
                if full and k == 0:
                    t["out"].fill_(float("nan"))
                c = t["fn"]()
                self.products += 1
                if self.check:
                    if full and k == 0:
                        t["bad"] += (c != t["ref"]).sum()
                    else:
                        t["bad"] += (row_fingerprint(torch, c) != t["ref_rows"]).sum()
            if self.cuda:
                main.wait_stream(t["stream"])
            if self.check:
                slot.copy_(t["counts"], non_blocking=True)  # one copy into a whole pinned tensor: queued, no sync
                t["counts"].zero_()

        if not self.cuda:  # the CPU computes as it is called: it does the window when collecting it, as a GPU would
            return _Queued(started, products, full, slot, None, work)
        work()
        event = torch.cuda.Event()
        event.record(main)
        return _Queued(started, products, full, slot, event, None)

    def _collect(self, q: _Queued) -> float:
        if q.event is not None:
            q.event.synchronize()
        if q.cpu_work is not None:
            q.cpu_work()
        done = self.now()
        if self.check:
            self.checked += q.products + 2
            bad, mem_bad = int(q.slot[0]), int(q.slot[1])
            if bad:
                self.error("gemm", f"{bad} elements or row fingerprints of {q.products} {self.precision.label} "
                                   f"{self.n}×{self.n} products on {self.where} (queued at {q.started:.1f} s"
                                   f"{', the first compared element by element' if q.full else ''}) differ from "
                                   "the first product")
            if mem_bad:
                self.error("memory", f"{mem_bad} of {self._t['buffer'].numel()} words copied on {self.where} "
                                     f"(queued at {q.started:.1f} s) read back differently")
        took = done - (self._collected_t if self._collected_t is not None else q.started)
        self._collected_t = done
        if took > 0:
            self.per_window = max(1, min(4096, int(q.products * WINDOW_S / took)))
        return q.products * 2 * self.n ** 3 / 1e12


def row_fingerprint(torch: Any, c: Any) -> Any:
    """Each row's bits summed as integers (int64, wrapping): one read of the product, exact whatever order the
    reduction adds in, and a single wrong element always changes its row's sum (an FP32 row sum can round a
    small change away). Two wrong elements of one row can cancel (two elements at the same place in two words
swapped); the full compare catches those."""
    row_bytes = c.shape[1] * c.element_size()
    if row_bytes % 8 == 0:
        return c.view(torch.int64).sum(dim=1)
    same_size = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[c.element_size()]
    return c.view(same_size).sum(dim=1)  # sizes whose rows are not whole 8-byte words: slower, as exact
