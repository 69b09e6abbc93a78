"""gpu.d2d: device-memory copy bandwidth of one GPU (bytes read + written), across buffer sizes."""

from __future__ import annotations

from typing import Any

from hwbench_gui.engine.measure.bandwidth import MAX_INNER, TARGET_TRAFFIC_BYTES, copy_rates_gbps
from hwbench_gui.engine.measure.stats import median, spread
from hwbench_gui.engine.measure.timing import (
    GB,
    Steps,
    cuda_device,
    cuda_label,
    figure,
    gpu_missing_reason,
    human_bytes,
)
from hwbench_gui.engine.spec.benchmark import Benchmark, Outcome, Param, ParamError, Reporter, Series
from hwbench_gui.engine.spec.device import GPU_PARAM
from hwbench_gui.engine.spec.device import parse as parse_device



def theoretical_gbps(index: int) -> float | None:
    """Peak DRAM bandwidth from the device's memory clock and bus width (double data rate), GB/s.

    Derived from CUDA's device properties, not measured; ``None`` where the driver reports no clock.
    """
    import torch

    props = torch.cuda.get_device_properties(index)
    clock_khz, bus_bits = getattr(props, "memory_clock_rate", 0), getattr(props, "memory_bus_width", 0)
    if not clock_khz or not bus_bits:
        return None
    return clock_khz * 1e3 * 2 * bus_bits / 8 / GB


def run(params: dict[str, Any], reporter: Reporter) -> Outcome:
    import torch

    index = parse_device(params["device"]).index
    dev = cuda_device(index)
    torch.cuda.set_device(dev)
    top = params["size_mib"] << 20
    n = params["min_size_mib"] << 20
    if n > top:
        raise ParamError(f"min_size_mib ({params['min_size_mib']}) is above size_mib ({params['size_mib']})")
    sizes = []
    while n < top:
        sizes.append(n)
        n *= 4
    sizes.append(top)

    reporter.progress(0.0, f"allocating two {human_bytes(top)} buffers on {cuda_label(index)}")
    src = torch.randint(0, 256, (top,), dtype=torch.uint8, device=dev)
    dst = torch.empty_like(src)
    steps = Steps(reporter, len(sizes))
    rates = []
    for n in sizes:
        rates.append(copy_rates_gbps(src, dst, n, params["repeats"]))
        reporter.metric("device copy", median(rates[-1]), "GB/s", bytes=n)
        steps.advance(f"{human_bytes(n)}: {median(rates[-1]):.0f} GB/s")

    theory = theoretical_gbps(index)
    warnings = []
    if theory and median(rates[-1]) < 0.5 * theory:
        warnings.append(f"copy bandwidth {median(rates[-1]):.0f} GB/s is under half the {theory:.0f} GB/s derived "
                        "from the memory clock and bus width")
    method = (
        f"torch copy_ (cudaMemcpyAsync device-to-device) between two buffers on {cuda_label(index)} holding random "
        f"bytes, sizes {', '.join(human_bytes(s) for s in sizes)}. Per size: 3 warm-up copies, then "
        f"{params['repeats']} repeats timed with CUDA events, each of back-to-back copies moving about "
        f"{human_bytes(TARGET_TRAFFIC_BYTES)} (at most {MAX_INNER} copies; small sizes are launch-bound). GB/s = "
        "2 × size (bytes read + bytes written) / time, 1e9 bytes/s. theoretical_gbps in details is derived "
        "from the memory clock × 2 (DDR) × bus width, not measured."
    )
    return Outcome(
        figure_name=f"device copy, {human_bytes(top)}",
        unit="GB/s",
        samples=rates[-1],
        method=method,
        figures={f"device copy, {human_bytes(s)}": figure(r, "GB/s", bytes=s) for s, r in zip(sizes[:-1], rates)},
        series=[Series("device copy (read + write)", [float(s) for s in sizes], [median(r) for r in rates],
                       "buffer size (bytes)", "GB/s", x_log=True, y_spread=[spread(r) for r in rates])],
        warnings=warnings,
        details={"sizes_bytes": sizes, "theoretical_gbps": theory, "gpu": torch.cuda.get_device_name(index),
                 "bytes_counted": "2 × size per copy (read + write)"},
        device=cuda_label(index),
    )


BENCHMARK = Benchmark(
    id="gpu.d2d",
    title="GPU memory copy bandwidth",
    category="GPU",
    description="Device-to-device copy bandwidth of one GPU's memory, counting bytes read plus written.",
    params=(
        GPU_PARAM,
        Param("size_mib", "int", 2048, "Largest buffer (the headline size); two are allocated.", minimum=1,
              maximum=1 << 18, unit="MiB"),
        Param("min_size_mib", "int", 1, "Smallest buffer of the sweep (sizes grow ×4).", minimum=1, maximum=1 << 18,
              unit="MiB"),
        Param("repeats", "int", 10, "Timed repeats per size.", minimum=1, maximum=1000, decides_comparability=False),
    ),
    run=run,
    version="1",
    needs=frozenset({"cuda", "torch"}),
    availability=gpu_missing_reason,
)
