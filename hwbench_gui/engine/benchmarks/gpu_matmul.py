"""gpu.matmul: dense matrix-multiply throughput (TFLOP/s) per precision and size, on a GPU or the CPU."""

from __future__ import annotations

from typing import Any

from hwbench_gui.engine.inventory.gpu_arch import FP8_CAPABILITY, fp8_capability_reason
from hwbench_gui.engine.measure.matmul_rate import BURST_S
from hwbench_gui.engine.measure.square_product import REPEAT_S, SQUARE_PRECISIONS, make_operands, product_rates_tflops
from hwbench_gui.engine.measure.stats import median, spread
from hwbench_gui.engine.measure.timing import (
    Steps,
    cuda_device,
    cuda_label,
    figure,
    torch_missing_reason,
)
from hwbench_gui.engine.spec.benchmark import (
    Benchmark,
    BenchmarkUnavailable,
    Outcome,
    Param,
    Reporter,
    Series,
)
from hwbench_gui.engine.spec.device import AUTO, CPU, resolve_auto
from hwbench_gui.engine.spec.device import parse as parse_device
from hwbench_gui.engine.spec.precision import (
    BF16,
    FP8,
    FP32,
    MATMUL_KEYS,
    apply_torch,
    from_key,
    from_label,
)

GPU_ORDER, CPU_ORDER = SQUARE_PRECISIONS, (FP32, BF16)
GPU_SIZES, CPU_SIZES = [1024, 2048, 4096, 8192, 16384], [256, 512, 1024, 2048]


def _skip_reason(torch: Any, label: str, device: str) -> str | None:
    """Why ``label`` cannot be measured on ``device``, or None."""
    if device == "cpu":
        if from_label(label) not in CPU_ORDER:
            return f"{label} is not measured on the CPU (CPU variant: FP32 and BF16)"
        try:
            make_operands(label, 16, "cpu")[0]()
        except RuntimeError as exc:
            return f"this PyTorch build cannot multiply {label} matrices on the CPU: {exc}"
        return None
    if from_label(label) is FP8:
        major, minor = torch.cuda.get_device_capability(device)
        if (major, minor) < FP8_CAPABILITY:
            return fp8_capability_reason(major, minor, torch.cuda.get_device_name(device))
        if not (hasattr(torch, "_scaled_mm") and hasattr(torch, "float8_e4m3fn")):
            return f"PyTorch {torch.__version__} has no torch._scaled_mm / float8_e4m3fn"
    return None


def run(params: dict[str, Any], reporter: Reporter) -> Outcome:
    import torch

    asked = parse_device(params["device"])
    kind, index = resolve_auto(asked).kind, resolve_auto(asked).index
    device = "cpu"
    fallback = asked.kind == AUTO and kind == CPU
    if kind == "cuda":
        cuda_device(index)
        device = f"cuda:{index}"
        torch.cuda.set_device(index)  # CUDA events are recorded on the current device's stream
    order = CPU_ORDER if kind == "cpu" else GPU_ORDER
    wanted = [p.label for p in (order if params["precision"] == "all" else (from_key(params["precision"]),))]
    sizes = sorted(set(params["sizes"])) or (CPU_SIZES if kind == "cpu" else GPU_SIZES)
    warnings, skipped = [], {}
    for label in list(wanted):
        reason = _skip_reason(torch, label, device)
        if reason:
            skipped[label] = reason
            wanted.remove(label)
    if not wanted:
        raise BenchmarkUnavailable("; ".join(skipped.values()))
    warnings += [f"{label} skipped: {why}" for label, why in skipped.items()]
    if fallback:
        warnings.append("no CUDA GPU visible to PyTorch: device=auto measured the CPU")
    headline = BF16.label if kind == "cuda" and BF16.label in wanted and params["precision"] == "all" else wanted[0]

    burst = kind == "cuda" and params["mode"] == "burst"
    saved = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32,
             torch.get_float32_matmul_precision())
    results: dict[str, dict[int, list[float]]] = {label: {} for label in wanted}
    steps = Steps(reporter, len(wanted) * len(sizes))
    try:
        for label in wanted:
            apply_torch(from_label(label), kind)
            for n in sizes:
                if label == FP8.label and n % 16:
                    warnings.append(f"FP8 size {n} skipped: torch._scaled_mm needs multiples of 16")
                    steps.advance()
                    continue
                try:
                    results[label][n] = product_rates_tflops(label, n, device, params["repeats"], burst)
                except torch.cuda.OutOfMemoryError:
                    warnings.append(f"{label} size {n} skipped: out of GPU memory")
                    steps.advance()
                    continue
                reporter.metric(label, median(results[label][n]), "TFLOP/s", size=n, precision=label)
                steps.advance(f"{label} {n}³: {median(results[label][n]):.3g} TFLOP/s")
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved[:2]
        torch.set_float32_matmul_precision(saved[2])

    figures, series = {}, []
    for label, by_size in results.items():
        if not by_size:
            continue
        best = max(by_size, key=lambda n: median(by_size[n]))
        figures[label] = figure(by_size[best], "TFLOP/s", size=best)
        measured = sorted(by_size)
        series.append(Series(label, [float(n) for n in measured], [median(by_size[n]) for n in measured],
                             "matrix size n (n×n×n)", "TFLOP/s", x_log=True,
                             y_spread=[spread(by_size[n]) for n in measured]))
    if headline not in figures:
        raise BenchmarkUnavailable(f"no {headline} size could be measured: {'; '.join(warnings)}")
    where = cuda_label(index) if kind == "cuda" else f"cpu ({torch.get_num_threads()} threads)"
    method = (
        f"Square matrix products C = A·B on {where}, n in {', '.join(map(str, sizes))}, precisions "
        f"{', '.join(wanted)}; A and B from torch.randn. FP32 = TF32 off (torch.backends.cuda.matmul.allow_tf32 = "
        "False, cudnn.allow_tf32 = False, float32 matmul precision 'highest'); TF32 = FP32 tensors with TF32 "
        "allowed; FP16/BF16 = torch.mm on half/bfloat16 tensors"
        + ("; FP8 = torch._scaled_mm on float8_e4m3fn with per-tensor scales, BF16 output, use_fast_accum off"
           if FP8.label in wanted else "")
        + f". Per size: 3 warm-up products, then {params['repeats']} repeats each timed "
        + ("with perf_counter" if kind == "cpu" else "with CUDA events")
        + (f" over a burst of products lasting about {BURST_S * 1e3:g} ms, each burst after an idle gap of 3x its "
           "length and 2 untimed warm-up products (burst mode: the clock-limited peak, before the power limiter "
           "lowers clocks; mode=sustained measures the power-capped rate)" if burst else
           f" over enough back-to-back products to last about {REPEAT_S[kind]:g} s"
           + (" (sustained mode: includes any power-limit clock reduction)" if kind == "cuda" else ""))
        + ". TFLOP/s = 2·n³ per product "
        f"/ time / 1e12. Each precision's figure is its best size; headline: {headline}."
    )
    return Outcome(
        figure_name=f"{headline} matmul (best size)",
        unit="TFLOP/s",
        samples=figures[headline]["samples"],
        precision=headline,
        method=method,
        figures=figures,
        series=series,
        warnings=warnings,
        details={"sizes": sizes, "best_size": {label: f["size"] for label, f in figures.items()},
                 "skipped": skipped, "torch": torch.__version__, "mode": params["mode"] if kind == "cuda" else None,
                 "cpu_capability": torch.backends.cpu.get_cpu_capability() if kind == "cpu" else None,
                 "compute_capability": list(torch.cuda.get_device_capability(index)) if kind == "cuda" else None},
        device=where,
    )


BENCHMARK = Benchmark(
    id="gpu.matmul",
    title="Matrix multiply throughput",
    category="Compute",
    description="Dense matmul TFLOP/s in FP32, TF32, FP16, BF16 and FP8 on a GPU (FP32 and BF16 on the CPU).",
    params=(
        Param("device", "device", "auto", "Where to run: 'auto' (GPU 0 when PyTorch sees one, else the CPU, "
              "with a warning), 'cuda:N' or 'cpu'.", decides_comparability=False),
        Param("precision", "choice", "all", "Precision to measure; all = every one the device has.",
              choices=("all",) + MATMUL_KEYS),
        Param("sizes", "int_list", [], "Matrix sizes n; empty = 1024,2048,4096,8192,16384 on a GPU, "
              "256,512,1024,2048 on the CPU.", minimum=16, maximum=65536, allow_empty=True),
        Param("repeats", "int", 10, "Timed repeats per precision and size.", minimum=1, maximum=1000,
              decides_comparability=False),
        Param("mode", "choice", "burst", "GPU timing: burst = short bursts after idle gaps (clock-limited peak); "
              "sustained = back-to-back products (power-limited rate). Ignored on the CPU.",
              choices=("burst", "sustained")),
    ),
    run=run,
    version="2",
    needs=frozenset({"torch"}),
    availability=torch_missing_reason,
)
