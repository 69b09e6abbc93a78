"""The limits llm.infer holds its figures against, measured at the start of the run the way the model runs:
the copy bandwidth (and on a CPU a read of a decoding step's weight bytes as the step reads them,
:mod:`...measure.bandwidth`), the fastest of the model's own products (:mod:`...measure.matmul_rate`) and, for
FP8 blocks, the FP8 square product with row-wise scales (:mod:`...measure.square_product`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hwbench_gui.engine.measure import matmul_rate
from hwbench_gui.engine.measure.bandwidth import copy_rates_gbps, read_rates_gbps
from hwbench_gui.engine.measure.square_product import product_rates_tflops
from hwbench_gui.engine.measure.stats import median
from hwbench_gui.engine.measure.timing import GB
from hwbench_gui.engine.models.llm import arithmetic as ar
from hwbench_gui.engine.models.llm.architectures import Architecture
from hwbench_gui.engine.spec.benchmark import Reporter
from hwbench_gui.engine.spec.precision import FP8, from_label

MATMUL_SIZE = {"cuda": 8192, "cpu": 1024}  # the square product measured beside the model's own
COPY_BYTES = {"cuda": 1 << 30, "cpu": 256 << 20}
LIMIT_REPEATS = 5


@dataclass
class Limits:
    """The machine's limits measured in this run, with their samples."""

    copy_gbps: list[float]
    matmul_tflops: list[float]
    copy_bytes: int
    matmul_n: int
    #: precision=fp8: the rate of FP8 products (the blocks' matmuls), beside ``matmul_tflops`` in BF16 (the rest).
    fp8_matmul_tflops: list[float] | None = None
    #: The CPU: GB/s of reading ``read_bytes`` of weights as a decoding step reads them (a one-row ``F.linear``).
    read_gbps: list[float] | None = None
    read_bytes: int = 0
    #: Which product gave ``matmul_tflops`` and every product's median (:class:`..measure.matmul_rate.MatmulLimit`).
    matmul_products: dict[str, Any] | None = None
    #: How many times the limits were measured (2: again after a figure came out above its bound).
    measured_times: int = 1

    @property
    def bandwidth_gbps(self) -> float:
        """The faster of the copy and the read: a step can read its bytes no faster than the faster of the two."""
        return max(median(self.copy_gbps), median(self.read_gbps) if self.read_gbps else 0.0)

    @property
    def bandwidth_bytes_per_s(self) -> float:
        return self.bandwidth_gbps * GB

    def best_of(self, other: Limits) -> Limits:
        """Each limit from whichever of the two measurements gave the higher median, measured twice."""
        def better(a: list[float] | None, b: list[float] | None) -> list[float] | None:
            if not a or not b:
                return a or b
            return a if median(a) >= median(b) else b

        matmul_self = median(self.matmul_tflops) >= median(other.matmul_tflops)
        return Limits(better(self.copy_gbps, other.copy_gbps), better(self.matmul_tflops, other.matmul_tflops),
                      self.copy_bytes, self.matmul_n, better(self.fp8_matmul_tflops, other.fp8_matmul_tflops),
                      better(self.read_gbps, other.read_gbps), self.read_bytes or other.read_bytes,
                      self.matmul_products if matmul_self else other.matmul_products,
                      self.measured_times + other.measured_times)

    @property
    def flops_per_s(self) -> float:
        return median(self.matmul_tflops) * 1e12

    def prompt_seconds(self, arch: Architecture, tokens: int, depth: int, logit_tokens: int) -> float:
        """The least time of a prompt's FLOPs at the measured rates: with FP8 blocks, their matmuls at the FP8
        rate and attention and the output projection at the BF16 rate; otherwise all at ``matmul_tflops``."""
        flops = ar.forward_flops(arch, tokens, depth, logit_tokens=logit_tokens)
        if self.fp8_matmul_tflops is None:
            return flops / self.flops_per_s
        blocks = ar.block_matmul_flops(arch, tokens)
        return blocks / (median(self.fp8_matmul_tflops) * 1e12) + (flops - blocks) / self.flops_per_s



def limit_products(arch: Architecture, tokens: int, square: int, pp: int = 0,
                   depths: tuple[int, ...] = ()) -> list[matmul_rate.Product]:
    """The products a prompt pass of ``tokens`` positions (all sequences) multiplies in every block (q/k/v, the
    attention output, the MLP's up and down), a square one of ``square``, and the prompt's attention of ``pp``
    queries at each of ``depths``: the matmul limit is the fastest (no part of the pass runs faster)."""
    up = (2 if arch.mlp == "swiglu" else 1) * arch.intermediate
    shapes = ((arch.hidden, arch.q_size + 2 * arch.kv_size), (arch.q_size, arch.hidden), (arch.hidden, up),
              (arch.intermediate, arch.hidden))
    attention = [matmul_rate.Product(pp, arch.head_dim, arch.heads, matmul_rate.ATTENTION, arch.kv_heads, depth)
                 for depth in depths] if pp else []
    return [matmul_rate.Product(tokens, k, n) for k, n in shapes] + [matmul_rate.Product(square, square, square)] \
        + attention


def measure_limits(torch: Any, kind: str, device: str, label: str, reporter: Reporter, fp8: bool = False,
                   arch: Architecture | None = None, tokens: int = 0, read_bytes: int = 0, rows: int = 1,
                   pp: int = 0, depths: tuple[int, ...] = ()) -> Limits:
    """The copy bandwidth (and on a CPU the read of ``read_bytes`` of weights by ``rows`` sequences), and the
    fastest of ``arch``'s products at ``tokens`` positions and of a square one, in ``label``, as the model runs."""
    reporter.progress(0.02, "measuring this device's copy bandwidth")
    n = COPY_BYTES[kind]
    src = torch.randint(0, 256, (n,), dtype=torch.uint8, device=device)
    dst = torch.empty_like(src)
    copy = copy_rates_gbps(src, dst, n, LIMIT_REPEATS, cuda=kind == "cuda")
    src = dst = None
    if kind == "cuda":
        torch.cuda.empty_cache()
    dtype = getattr(torch, from_label(label).tensor_dtype)
    read = None
    if kind == "cpu" and read_bytes:
        reporter.progress(0.03, f"measuring the read of {read_bytes / 2**20:.1f} MiB of weights as a decoding step "
                                "reads them")
        read_bytes = min(COPY_BYTES[kind], read_bytes)
        read = read_rates_gbps(read_bytes, dtype, device, LIMIT_REPEATS, rows=rows)
    reporter.progress(0.05, f"measuring the {label} matmul rate at the model's shapes")
    size = MATMUL_SIZE[kind]
    products = limit_products(arch, tokens, size, pp, depths) if arch is not None and tokens else \
        [matmul_rate.Product(size, size, size)]
    matmul = matmul_rate.limit_tflops(products, dtype, device, LIMIT_REPEATS, burst=kind == "cuda")
    fp8_rates = None
    if fp8:
        # gpu.matmul's FP8 product with row-wise scales, as the model's FP8 layers multiply (a GPU only)
        reporter.progress(0.06, "measuring the FP8 matmul rate (as gpu.matmul)")
        fp8_rates = product_rates_tflops(FP8.label, size, device, LIMIT_REPEATS,
                                         burst=kind == "cuda", fp8_rowwise=True)
    return Limits(copy, matmul.tflops, n, size, fp8_rates, read, read_bytes if read else 0, matmul.to_json())

