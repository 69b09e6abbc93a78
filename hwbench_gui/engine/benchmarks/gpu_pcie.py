"""gpu.pcie: host↔device copy bandwidth over PCIe, pinned and pageable, across transfer sizes."""

from __future__ import annotations

from typing import Any, Callable

from hwbench_gui.engine import nvml
from hwbench_gui.engine.inventory.gpu_arch import pcie_theoretical_gbps
from hwbench_gui.engine.measure.stats import median, spread
from hwbench_gui.engine.measure.timing import (
    GB,
    Steps,
    cuda_device,
    cuda_label,
    figure,
    gpu_missing_reason,
    human_bytes,
    nvml_handle_for,
    time_cuda,
)
from hwbench_gui.engine.spec.benchmark import Benchmark, Outcome, Param, ParamError, Reporter, Series
from hwbench_gui.engine.spec.device import GPU_PARAM
from hwbench_gui.engine.spec.device import parse as parse_device

FAR_BELOW = 0.6  # a healthy link delivers 80-90 % of its theoretical rate with pinned memory
TARGET_BYTES_PER_REPEAT = 256 << 20


def pcie_link(index: int) -> dict[str, Any]:
    """The PCIe link of PyTorch's GPU ``index`` as NVML reports it now (``None`` fields if unknown)."""
    handle = nvml_handle_for(index)
    link = {name: nvml.query(func, handle) if handle is not None else None for name, func in (
        ("current_gen", "nvmlDeviceGetCurrPcieLinkGeneration"), ("current_width", "nvmlDeviceGetCurrPcieLinkWidth"),
        ("max_gen", "nvmlDeviceGetMaxPcieLinkGeneration"), ("max_width", "nvmlDeviceGetMaxPcieLinkWidth"),
        ("gpu_max_gen", "nvmlDeviceGetGpuMaxPcieLinkGeneration"))}
    link["current_theoretical_gbps"] = pcie_theoretical_gbps(link["current_gen"], link["current_width"])
    link["max_theoretical_gbps"] = pcie_theoretical_gbps(link["max_gen"], link["max_width"])
    if handle is None:
        link["reason"] = nvml.unavailable_reason() or "NVML has no handle for this GPU's PCI bus id"
    return link


def transfer_sizes(min_bytes: int, max_bytes: int, factor: int) -> list[int]:
    if min_bytes > max_bytes:
        raise ParamError(f"min_bytes ({min_bytes}) is above max_bytes ({max_bytes})")
    sizes, n = [], min_bytes
    while n < max_bytes:
        sizes.append(n)
        n *= factor
    return sizes + [max_bytes]


def run(params: dict[str, Any], reporter: Reporter) -> Outcome:
    import torch

    index = parse_device(params["device"]).index
    dev = cuda_device(index)
    torch.cuda.set_device(dev)
    sizes = transfer_sizes(params["min_bytes"], params["max_bytes"], int(params["size_factor"]))
    top = sizes[-1]
    reporter.progress(0.0, f"allocating {human_bytes(top)} buffers (pinned, pageable, device)")
    # Random bytes made on the GPU and copied out: fast, and no buffer holds zeros.
    dev_src = torch.randint(0, 256, (top,), dtype=torch.uint8, device=dev)
    dev_dst = torch.empty_like(dev_src)
    pinned_src, pinned_dst = (torch.empty(top, dtype=torch.uint8, pin_memory=True) for _ in range(2))
    pageable_src, pageable_dst = (torch.empty(top, dtype=torch.uint8) for _ in range(2))
    for host in (pinned_src, pinned_dst, pageable_src, pageable_dst):
        host.copy_(dev_src)  # also faults every pageable page in before any timing
    h2d_stream, d2h_stream = torch.cuda.Stream(dev), torch.cuda.Stream(dev)

    def bidirectional(n: int) -> None:
        current = torch.cuda.current_stream()
        h2d_stream.wait_stream(current)
        d2h_stream.wait_stream(current)
        with torch.cuda.stream(h2d_stream):
            dev_dst[:n].copy_(pinned_src[:n], non_blocking=True)
        with torch.cuda.stream(d2h_stream):
            pinned_dst[:n].copy_(dev_src[:n], non_blocking=True)
        current.wait_stream(h2d_stream)
        current.wait_stream(d2h_stream)

    # name -> (one copy of n bytes, bytes moved per call as a multiple of n)
    modes: dict[str, tuple[Callable[[int], Any], int]] = {
        "pinned H2D": (lambda n: dev_dst[:n].copy_(pinned_src[:n], non_blocking=True), 1),
        "pinned D2H": (lambda n: pinned_dst[:n].copy_(dev_src[:n], non_blocking=True), 1),
        "pageable H2D": (lambda n: dev_dst[:n].copy_(pageable_src[:n]), 1),
        "pageable D2H": (lambda n: pageable_dst[:n].copy_(dev_src[:n]), 1),
        "pinned bidirectional": (bidirectional, 2),
    }
    steps = Steps(reporter, len(modes) * len(sizes))
    rates: dict[str, list[list[float]]] = {}
    for name, (copy, multiple) in modes.items():
        rates[name] = []
        for n in sizes:
            call = lambda n=n: copy(n)  # noqa: E731
            inner = max(1, min(1000, TARGET_BYTES_PER_REPEAT // n))
            seconds = time_cuda(call, repeats=params["repeats"], inner=inner, warmup=2)
            rates[name].append([multiple * n / s / GB for s in seconds])
            reporter.metric(name, median(rates[name][-1]), "GB/s", bytes=n)
            steps.advance(f"{name} {human_bytes(n)}: {median(rates[name][-1]):.1f} GB/s")
    link = pcie_link(index)  # read right after the load, before an idle link drops to a lower gen

    headline = rates["pinned H2D"][-1]
    warnings = []
    theory = link["current_theoretical_gbps"]
    for name in ("pinned H2D", "pinned D2H"):
        if theory and median(rates[name][-1]) < FAR_BELOW * theory:
            warnings.append(f"{name} reached {median(rates[name][-1]):.1f} GB/s, far below the "
                            f"{theory:.1f} GB/s theoretical rate of a PCIe gen {link['current_gen']} "
                            f"x{link['current_width']} link")
    if link["current_gen"] and link["max_gen"] and (link["current_gen"], link["current_width"]) < (
            link["max_gen"], link["max_width"]):
        warnings.append(f"PCIe link runs at gen {link['current_gen']} x{link['current_width']}, below its maximum "
                        f"gen {link['max_gen']} x{link['max_width']}")
    if theory is None:
        warnings.append(f"PCIe link generation/width unknown: {link.get('reason', 'NVML did not report it')}")
    method = (
        f"torch copy_ between host and {cuda_label(index)} buffers of {', '.join(human_bytes(n) for n in sizes)} "
        "holding random bytes: pinned (page-locked, non_blocking cudaMemcpyAsync) and pageable (ordinary "
        "malloc memory, blocking copy staged by the driver) host memory, H2D and D2H; bidirectional = pinned H2D "
        "and D2H issued together on two streams, counting both directions' bytes. Per size: warm-up copies, then "
        f"{params['repeats']} repeats timed with CUDA events, each of enough back-to-back copies to move "
        f"about {human_bytes(TARGET_BYTES_PER_REPEAT)} (at least one). GB/s = 1e9 bytes/s. The link's theoretical "
        "rate in details is derived from the PCIe generation and width NVML reports, not measured."
    )
    return Outcome(
        figure_name=f"pinned H2D, {human_bytes(top)}",
        unit="GB/s",
        samples=headline,
        method=method,
        figures={f"{name}, {human_bytes(top)}": figure(rates[name][-1], "GB/s", bytes=top)
                 for name in modes if name != "pinned H2D"},
        series=[Series(name, [float(n) for n in sizes], [median(r) for r in rates[name]], "transfer size (bytes)",
                       "GB/s", x_log=True, y_spread=[spread(r) for r in rates[name]]) for name in modes],
        warnings=warnings,
        details={"pcie_link": link, "sizes_bytes": sizes, "gpu": torch.cuda.get_device_name(index),
                 "theoretical_note": "pcie_link.*_theoretical_gbps = GT/s × line-code efficiency × lanes / 8 "
                                     "(derived from the PCIe spec, one direction)"},
        device=cuda_label(index),
    )


BENCHMARK = Benchmark(
    id="gpu.pcie",
    title="PCIe host↔GPU bandwidth",
    category="GPU",
    description="Host-to-device and device-to-host copy bandwidth, pinned and pageable memory, by transfer size.",
    params=(
        GPU_PARAM,
        Param("min_bytes", "int", 4096, "Smallest transfer.", minimum=1, maximum=1 << 34, unit="bytes"),
        Param("max_bytes", "int", 1 << 30, "Largest transfer (the headline size; ≥ 256 MiB for a link's peak).",
              minimum=1, maximum=1 << 34, unit="bytes"),
        Param("size_factor", "choice", "4", "Step between transfer sizes.", choices=("2", "4")),
        Param("repeats", "int", 10, "Timed repeats per size and direction.", minimum=1, maximum=1000,
              decides_comparability=False),
    ),
    run=run,
    version="1",
    needs=frozenset({"cuda", "torch"}),
    availability=gpu_missing_reason,
)
