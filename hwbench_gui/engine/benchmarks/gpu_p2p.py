"""gpu.p2p: GPU-to-GPU copy bandwidth and latency for every pair, peer-to-peer on and off.

"On" is a direct device-to-device copy (NVLink or PCIe peer traffic) where the pair has peer
access; "off" is staged through pinned host memory in pipelined chunks, the comparison that
p2pBandwidthLatencyTest and nvbandwidth make.
"""

from __future__ import annotations

import itertools
from typing import Any, Callable

from hwbench_gui.engine import nvml
from hwbench_gui.engine.measure.stats import median
from hwbench_gui.engine.measure.timing import (
    GB,
    Steps,
    cuda_device,
    cuda_label,
    figure,
    gpu_missing_reason,
    human_bytes,
    nvml_handle_for,
    time_cpu,
)
from hwbench_gui.engine.spec.benchmark import Benchmark, BenchmarkUnavailable, Outcome, Param, Reporter

STAGING_CHUNK_BYTES = 4 << 20
TARGET_BYTES_PER_REPEAT = 1 << 30
LATENCY_BYTES = 4
TOPOLOGY_LEVELS = {0: "same board", 10: "single PCIe switch", 20: "multiple PCIe switches", 30: "host bridge",
                   40: "same CPU socket (NUMA node)", 50: "across CPU sockets"}
MODES = ("on", "off")


def _title(key: str) -> str:
    """``"on_unidirectional_gbps"`` -> ``"P2P on, unidirectional"``."""
    mode, kind = key.split("_", 1)
    return f"P2P {mode}, {kind.rsplit('_', 1)[0]}"


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def _topology(devices: list[int]) -> dict[str, Any]:
    """How NVML says each pair is connected, and each GPU's active NVLink count (None if unknown)."""
    handles = [nvml_handle_for(d) for d in devices]
    levels = [[None if a == b or handles[a] is None or handles[b] is None else
               TOPOLOGY_LEVELS.get(nvml.query("nvmlDeviceGetTopologyCommonAncestor", handles[a], handles[b]))
               for b in range(len(devices))] for a in range(len(devices))]
    nvlinks = []
    for h in handles:
        states = [nvml.query("nvmlDeviceGetNvLinkState", h, link) for link in range(18)] if h is not None else []
        nvlinks.append(sum(1 for s in states if s) if any(s is not None for s in states) else None)
    return {"pcie_common_ancestor": levels, "nvlink_active_links": nvlinks}


def run(params: dict[str, Any], reporter: Reporter) -> Outcome:
    import torch

    devices = sorted(set(params["devices"])) or list(range(torch.cuda.device_count()))
    for d in devices:
        cuda_device(d)
    if len(devices) < 2:
        raise BenchmarkUnavailable(f"needs 2 GPUs, found {len(devices)}")
    size = params["size_mib"] << 20
    n_dev = len(devices)
    reporter.progress(0.0, f"allocating {human_bytes(size)} buffers on {n_dev} GPUs")
    src = [torch.randint(0, 256, (size,), dtype=torch.uint8, device=f"cuda:{d}") for d in devices]
    dst = [torch.empty_like(s) for s in src]
    send = [torch.cuda.Stream(f"cuda:{d}") for d in devices]  # a copy runs here on its source GPU
    recv = [torch.cuda.Stream(f"cuda:{d}") for d in devices]  # the destination's side waits here
    hosts = [torch.empty(size, dtype=torch.uint8, pin_memory=True) for _ in range(2)]  # one per direction
    peer = [[a != b and torch.cuda.can_device_access_peer(devices[a], devices[b]) for b in range(n_dev)]
            for a in range(n_dev)]

    def direct(a: int, b: int, n: int) -> None:
        # torch orders a cross-GPU copy against the current stream of both GPUs; distinct streams per
        # direction keep the two directions of a bidirectional test from waiting on each other.
        with torch.cuda.stream(recv[b]), torch.cuda.stream(send[a]):
            dst[b][:n].copy_(src[a][:n], non_blocking=True)

    def staged(a: int, b: int, n: int, host: Any) -> None:
        send[a].wait_stream(recv[b])  # the previous call's H2D must have read the host buffer
        for lo in range(0, n, STAGING_CHUNK_BYTES):
            hi = min(lo + STAGING_CHUNK_BYTES, n)
            with torch.cuda.stream(send[a]):
                host[lo:hi].copy_(src[a][lo:hi], non_blocking=True)
            recv[b].wait_stream(send[a])
            with torch.cuda.stream(recv[b]):
                dst[b][lo:hi].copy_(host[lo:hi], non_blocking=True)

    def copier(mode: str, a: int, b: int, n: int, host: Any) -> Callable[[], None]:
        return (lambda: direct(a, b, n)) if mode == "on" else (lambda: staged(a, b, n, host))

    def per_call_s(fn: Callable[[], None], inner: int) -> list[float]:
        """Wall time per call, all GPUs synchronized at the end of each repeat (events can't span GPUs)."""
        def batch() -> None:
            for _ in range(inner):
                fn()
            for d in devices:
                torch.cuda.synchronize(d)
        return [t / inner for t in time_cpu(batch, repeats=params["repeats"], warmup=1)]

    inner_bw = max(1, TARGET_BYTES_PER_REPEAT // size)
    empty = lambda: [[None] * n_dev for _ in range(n_dev)]  # noqa: E731
    matrices: dict[str, list[list[Any]]] = {f"{m}_{k}": empty() for m in MODES
                                            for k in ("unidirectional_gbps", "bidirectional_gbps", "latency_us")}
    samples: dict[str, list[list[float]]] = {key: [] for key in matrices}
    ordered = [(a, b) for a in range(n_dev) for b in range(n_dev) if a != b]
    unordered = list(itertools.combinations(range(n_dev), 2))
    steps = Steps(reporter, 2 * (2 * len(ordered) + len(unordered)))

    def record(key: str, a: int, b: int, values: list[float], unit: str) -> None:
        matrices[key][a][b] = median(values)
        samples[key].append(values)
        reporter.metric(_title(key), median(values), unit, src=devices[a], dst=devices[b])
        steps.advance(f"{_title(key)} GPU {devices[a]}→{devices[b]}: {median(values):.1f} {unit}")

    for mode in MODES:
        for a, b in ordered:
            if mode == "on" and not peer[a][b]:
                steps.advance()
                steps.advance()
                continue
            seconds = per_call_s(copier(mode, a, b, size, hosts[0]), inner_bw)
            record(f"{mode}_unidirectional_gbps", a, b, [size / s / GB for s in seconds], "GB/s")
            seconds = per_call_s(copier(mode, a, b, LATENCY_BYTES, hosts[0]), params["latency_copies"])
            record(f"{mode}_latency_us", a, b, [s * 1e6 for s in seconds], "µs")
        for a, b in unordered:
            if mode == "on" and not (peer[a][b] and peer[b][a]):
                steps.advance()
                continue
            forward, backward = copier(mode, a, b, size, hosts[0]), copier(mode, b, a, size, hosts[1])
            seconds = per_call_s(lambda: (forward(), backward()), inner_bw)
            record(f"{mode}_bidirectional_gbps", a, b, [2 * size / s / GB for s in seconds], "GB/s")
            matrices[f"{mode}_bidirectional_gbps"][b][a] = matrices[f"{mode}_bidirectional_gbps"][a][b]

    def mean_over_pairs(key: str) -> list[float]:
        """Per repeat, the mean over the pairs measured (so the runner's spread is across repeats)."""
        return [_mean(list(per_repeat)) for per_repeat in zip(*samples[key])] if samples[key] else []

    warnings = []
    headline_key = "on_unidirectional_gbps" if samples["on_unidirectional_gbps"] else "off_unidirectional_gbps"
    if headline_key.startswith("off"):
        warnings.append("no GPU pair has peer access: the headline is the host-staged (P2P off) bandwidth")
    figures = {}
    for key in matrices:
        if key != headline_key and samples[key]:
            latency = key.endswith("latency_us")
            figures[f"{_title(key)} (mean over pairs)"] = figure(mean_over_pairs(key), "µs" if latency else "GB/s",
                                                                 higher_is_better=not latency)
    method = (
        f"For every pair of GPUs {devices}: unidirectional bandwidth = {human_bytes(size)} copies of random bytes "
        f"from one GPU to the other; bidirectional = both directions at once (bytes of both counted); latency = "
        f"time per {LATENCY_BYTES}-byte copy over {params['latency_copies']} back-to-back copies issued from PyTorch "
        "(includes launch overhead: an upper bound on link latency). P2P on = direct torch copy_ between the "
        "GPUs (peer access, where torch.cuda.can_device_access_peer allows); P2P off = staged through pinned "
        f"host memory in {human_bytes(STAGING_CHUNK_BYTES)} chunks, D2H and H2D pipelined on two streams. Each "
        f"figure: one warm-up, then {params['repeats']} repeats timed on the wall clock with every GPU "
        f"synchronized at the end, each repeat moving about {human_bytes(inner_bw * size)} per direction. "
        "GB/s = 1e9 bytes/s. Headline: mean over ordered pairs of the "
        + ("P2P-on" if headline_key.startswith("on") else "P2P-off") + " unidirectional bandwidth."
    )
    return Outcome(
        figure_name=f"mean P2P {'on' if headline_key.startswith('on') else 'off'} unidirectional bandwidth",
        unit="GB/s",
        samples=mean_over_pairs(headline_key),
        method=method,
        figures=figures,
        warnings=warnings,
        details={"devices": devices, "names": [torch.cuda.get_device_name(d) for d in devices],
                 "peer_access": peer, "size_bytes": size, "matrices_note": "row = source GPU, column = "
                 "destination; null = same GPU or not measured (no peer access)", **matrices,
                 **_topology(devices)},
        device=", ".join(cuda_label(d) for d in devices),
    )


BENCHMARK = Benchmark(
    id="gpu.p2p",
    title="GPU-to-GPU bandwidth and latency",
    category="GPU",
    description="Copy bandwidth and latency between every pair of GPUs, peer-to-peer on and off (staged via host).",
    params=(
        Param("devices", "int_list", [], "GPU indices to include; empty = all.", minimum=0, maximum=63,
              allow_empty=True, decides_comparability=False),
        Param("size_mib", "int", 256, "Size of one bandwidth copy.", minimum=1, maximum=1 << 16, unit="MiB"),
        Param("repeats", "int", 5, "Timed repeats per figure.", minimum=1, maximum=1000, decides_comparability=False),
        Param("latency_copies", "int", 1000, "Small copies per latency repeat.", minimum=1, maximum=1_000_000),
    ),
    run=run,
    version="1",
    needs=frozenset({"multi_gpu", "torch"}),
    availability=lambda: gpu_missing_reason(min_gpus=2),
)
