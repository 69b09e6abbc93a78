"""The arithmetic behind each figure, pinned with known inputs and known answers.

Each test fakes only what makes the answer known — the clock, or the GPU (``torch.cuda`` on the
CPU) — and runs the benchmark's own formula: FLOPs and bytes per call, the unit divisor, the
median a document stores, the synchronize a CUDA timing needs, the TF32 state of an FP32 product,
the page-cache bypass of disk reads and the image count of the decode pool. Where statistics are
involved the samples are asymmetric ([1, 2, 3, 10, 100]: median 3, mean 23.2), so a mean can not
pass for a median.
"""

from __future__ import annotations

import importlib.util
import mmap
import multiprocessing.pool
import os
import sys
import threading
import types
from datetime import datetime, timezone

import pytest
from recording import Recorder

from hwbench_gui.engine.measure import stats

needs_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch not installed")

if importlib.util.find_spec("torch") is not None:
    from test_microbench_gpu_paths import fake_cuda  # noqa: F401  (a fixture: torch.cuda run on the CPU)

ASYMMETRIC = [1.0, 2.0, 3.0, 10.0, 100.0]  # median 3, mean 23.2


class FixedTimer:
    """Stands in for ``time_cpu``/``time_cuda``: runs the timed function once per call (the work
    really happens) and says each timed repeat took ``seconds[i]``, cycling through the list."""

    def __init__(self, seconds, on_call=None):
        self.seconds, self.on_call, self.calls = list(seconds), on_call, 0

    def __call__(self, fn, *, repeats, inner=1, warmup=1):
        fn()
        if self.on_call:
            self.on_call()
        self.calls += 1
        return [self.seconds[i % len(self.seconds)] for i in range(repeats)]


def _run(bench, params):
    return bench.run(bench.resolve_params(params), Recorder())


# -- 1. matmul: 2·n³ FLOPs per n×n×n product --------------------------------------------------------

@needs_torch
def test_matmul_counts_two_n_cubed_flops(monkeypatch):
    from hwbench_gui.engine.benchmarks import gpu_matmul
    from hwbench_gui.engine.measure import matmul_rate  # where the timing loop lives

    n = 100  # 2·100³ = 2e6 FLOPs; 2e-6 s per product is exactly 1 TFLOP/s
    monkeypatch.setattr(matmul_rate, "time_cpu", FixedTimer([2e-6]))
    outcome = _run(gpu_matmul.BENCHMARK, {"device": "cpu", "precision": "fp32", "sizes": str(n), "repeats": 3})
    assert outcome.samples == pytest.approx([1.0, 1.0, 1.0])
    assert outcome.figures["FP32"]["value"] == pytest.approx(1.0)


# -- 2. PCIe: bytes / s / 1e9 (decimal GB/s), bidirectional counts both directions -------------------

@needs_torch
def test_pcie_rate_is_decimal_gigabytes(fake_cuda, monkeypatch):
    from hwbench_gui.engine.benchmarks import gpu_pcie

    # 1e6 bytes per copy in 1 ms: 1 GB/s in decimal units (it would read 0.931 in GiB/s).
    monkeypatch.setattr(gpu_pcie, "time_cuda", FixedTimer([1e-3]))
    outcome = _run(gpu_pcie.BENCHMARK, {"min_bytes": 1_000_000, "max_bytes": 1_000_000, "repeats": 2})
    assert outcome.samples == pytest.approx([1.0, 1.0])
    size = gpu_pcie.human_bytes(1_000_000)
    for name in ("pinned D2H", "pageable H2D", "pageable D2H"):
        assert outcome.figures[f"{name}, {size}"]["value"] == pytest.approx(1.0)
    assert outcome.figures[f"pinned bidirectional, {size}"]["value"] == pytest.approx(2.0)


# -- 3. device copy: a copy of n bytes reads n and writes n ------------------------------------------

@needs_torch
def test_device_copy_counts_read_plus_write(fake_cuda, monkeypatch):
    from hwbench_gui.engine.benchmarks import gpu_d2d
    from hwbench_gui.engine.measure import bandwidth

    n = 1 << 20  # one copy of 1 MiB moves 2 MiB: in n / 1e9 seconds that is 2 GB/s
    monkeypatch.setattr(bandwidth, "time_cuda", FixedTimer([n / 1e9]))
    outcome = _run(gpu_d2d.BENCHMARK, {"size_mib": 1, "min_size_mib": 1, "repeats": 2})
    assert outcome.samples == pytest.approx([2.0, 2.0])


# -- 4. FP32 means TF32 off while the products are timed ---------------------------------------------

def _tf32_state(torch):
    return (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32,
            torch.get_float32_matmul_precision())


@pytest.fixture
def tf32_left_on():
    """TF32 allowed before the run (as a framework may leave it), restored after."""
    import torch

    saved = _tf32_state(torch)
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = True
    torch.set_float32_matmul_precision("high")
    yield
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved[:2]
    torch.set_float32_matmul_precision(saved[2])


@needs_torch
def test_fp32_products_run_with_tf32_off(fake_cuda, tf32_left_on, monkeypatch):
    """Every product the timer runs sees the TF32 flags of its precision: the product function
    records them at the moment it runs, and the timer marks which of those runs it timed."""
    import torch

    from hwbench_gui.engine.benchmarks import gpu_matmul
    from hwbench_gui.engine.measure import matmul_rate, square_product  # where the operands and timing loop live

    seen: list[tuple[str, bool, tuple]] = []
    timing = {"now": False}
    real_make = square_product.make_operands

    def observed_operands(label, n, device):
        fn, inputs = real_make(label, n, device)

        def product():
            seen.append((label, timing["now"], _tf32_state(torch)))
            return fn()
        return product, inputs

    def timer(fn, *, repeats, inner=1, warmup=1):
        timing["now"] = True
        try:
            fn()
        finally:
            timing["now"] = False
        return [1e-3] * repeats

    monkeypatch.setattr(square_product, "make_operands", observed_operands)
    monkeypatch.setattr(matmul_rate, "time_cuda", timer)
    gpu_matmul.BENCHMARK.run(gpu_matmul.BENCHMARK.resolve_params(
        {"device": "cuda:0", "precision": "all", "sizes": "32", "repeats": 2, "mode": "sustained"}), Recorder())
    timed: dict[str, set] = {}
    for label, now, state in seen:
        if now:
            timed.setdefault(label, set()).add(state)
    assert timed["FP32"] == {(False, False, "highest")}
    assert timed["TF32"] == {(True, True, "high")}
    assert _tf32_state(torch) == (True, True, "high")  # the caller's setting is restored afterwards


@needs_torch
def test_cpu_fp32_products_run_with_tf32_off(tf32_left_on, monkeypatch):
    import torch

    from hwbench_gui.engine.benchmarks import gpu_matmul
    from hwbench_gui.engine.measure import matmul_rate  # where the timing loop lives

    states = []
    monkeypatch.setattr(matmul_rate, "time_cpu", FixedTimer([1e-6], on_call=lambda: states.append(_tf32_state(torch))))
    _run(gpu_matmul.BENCHMARK, {"device": "cpu", "precision": "fp32", "sizes": "16", "repeats": 2})
    assert states and set(states) == {(False, False, "highest")}


# -- 5. a CUDA timing waits for the GPU and reads the time from events --------------------------------

class _SimulatedGpu:
    """A stream the host only enqueues on: work and event records run when someone synchronizes.

    An event's time is the GPU clock when the stream reaches it; reading ``elapsed_time`` before
    the end event has run fails, as cudaEventElapsedTime does (cudaErrorNotReady).
    """

    def __init__(self):
        self.clock_s, self.queue = 0.0, []

    def launch(self, seconds):
        self.queue.append(("work", seconds))

    def run_until(self, event=None):
        while self.queue:
            kind, item = self.queue.pop(0)
            if kind == "work":
                self.clock_s += item
            else:
                item.t_s = self.clock_s
                if item is event:
                    return

    def torch(self):
        gpu = self

        class Event:
            def __init__(self, enable_timing=False):
                self.t_s = None

            def record(self, stream=None):
                self.t_s = None
                gpu.queue.append(("event", self))

            def synchronize(self):
                gpu.run_until(self)

            def elapsed_time(self, end):
                if self.t_s is None or end.t_s is None:
                    raise RuntimeError("CUDA error: device not ready")
                return (end.t_s - self.t_s) * 1e3

        class Stream:
            def synchronize(self):
                gpu.run_until()

            def wait_stream(self, other):
                pass

        cuda = types.SimpleNamespace(Event=Event, current_stream=lambda device=None: Stream(),
                                     synchronize=lambda device=None: gpu.run_until())
        return types.SimpleNamespace(cuda=cuda)


def test_time_cuda_synchronizes_and_times_with_events(monkeypatch):
    from hwbench_gui.engine.measure.timing import time_cuda

    gpu = _SimulatedGpu()
    monkeypatch.setitem(sys.modules, "torch", gpu.torch())
    # Each call enqueues 2 ms of GPU work and returns at once, as a kernel launch does.
    seconds = time_cuda(lambda: gpu.launch(2e-3), repeats=3, inner=4, warmup=2)
    assert seconds == pytest.approx([2e-3] * 3)
    assert gpu.queue == []  # nothing left running on the GPU when the timer returns


# -- 6. the stored figure is the median of the samples --------------------------------------------------

def test_median_is_the_middle_sample_not_the_mean():
    from hwbench_gui.engine.measure.timing import figure

    assert stats.median(ASYMMETRIC) == 3.0
    assert stats.median([100.0, 1.0, 10.0, 3.0, 2.0]) == 3.0
    assert stats.median([1.0, 2.0, 10.0, 100.0]) == 6.0  # even count: the mean of the middle two
    assert figure(ASYMMETRIC, "GB/s")["value"] == 3.0
    summary = stats.summarize(ASYMMETRIC)
    assert (summary["median"], summary["mean"]) == (3.0, pytest.approx(23.2))


@needs_torch
def test_document_stores_the_median_of_a_benchmarks_samples(fake_cuda, monkeypatch):
    from hwbench_gui.engine.benchmarks import gpu_d2d
    from hwbench_gui.engine.measure import bandwidth
    from hwbench_gui.engine.results.document import build_document
    from hwbench_gui.engine.run.protocol import outcome_to_json

    # Repeat i takes 1 ms / ASYMMETRIC[i]: rates are base · [1, 2, 3, 10, 100] at each size.
    bench = gpu_d2d.BENCHMARK
    params = bench.resolve_params({"size_mib": 4, "min_size_mib": 1, "repeats": 5})
    monkeypatch.setattr(bandwidth, "time_cuda", FixedTimer([1e-3 / m for m in ASYMMETRIC]))
    outcome = bench.run(params, Recorder())
    base = {size: 2 * size / 1e-3 / 1e9 for size in (1 << 20, 4 << 20)}
    assert outcome.samples == pytest.approx([base[4 << 20] * m for m in ASYMMETRIC])
    assert outcome.series[0].y == pytest.approx([3 * base[1 << 20], 3 * base[4 << 20]])

    doc = build_document(bench, params, status="ok", outcome=outcome_to_json(outcome),
                         started_at=datetime(2026, 1, 1, tzinfo=timezone.utc), duration_s=1.0,
                         machine={"inventory": {}, "software": {}})
    assert doc["figure"]["value"] == pytest.approx(3 * base[4 << 20])
    assert doc["stats"]["median"] == pytest.approx(3 * base[4 << 20])
    assert doc["stats"]["mean"] == pytest.approx(23.2 * base[4 << 20])
    assert doc["figures"]["device copy, 1 MiB"]["value"] == pytest.approx(3 * base[1 << 20])


# -- 7. disk reads bypass the page cache ---------------------------------------------------------------

SIZE = 4 << 20


def _device_read_bytes() -> int:
    """Bytes this process has made the kernel fetch from storage (page-cache hits not counted)."""
    with open("/proc/self/io") as f:
        for line in f:
            if line.startswith("read_bytes:"):
                return int(line.split()[1])
    raise AssertionError("no read_bytes in /proc/self/io")


def _buffered_read(path) -> None:
    with open(path, "rb", buffering=0) as f:
        while f.read(1 << 20):
            pass


@pytest.fixture
def cached_file(tmp_path):
    """A just-written, fsynced 4 MiB file (so all of it is in the page cache) on a disk-backed folder
    where /proc/self/io tells cached reads from device reads; skips where that can't be had."""
    from hwbench_gui.engine.benchmarks import disk_read as disk

    if not os.path.exists("/proc/self/io"):
        pytest.skip("needs Linux /proc/self/io (read_bytes counts only reads the page cache did not serve)")
    fstype = disk.filesystem_of(str(tmp_path))[1]
    if fstype in disk.RAM_FILESYSTEMS:
        pytest.skip(f"{tmp_path} is on {fstype}: the file is the page cache, no read can bypass it")
    path = tmp_path / "f.bin"
    disk._write_random_file(str(path), SIZE)
    before = _device_read_bytes()
    _buffered_read(path)
    if _device_read_bytes() - before >= SIZE // 2:
        pytest.skip(f"a cached read of {path} was counted as a device read here ({fstype}): no way to tell")
    return path


def _o_direct_works(path) -> bool:
    """Whether the file system does O_DIRECT reads (probed here, independently of the benchmark)."""
    if not hasattr(os, "O_DIRECT"):
        return False
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    except OSError:
        return False
    buf = mmap.mmap(-1, 4096)
    try:
        os.preadv(fd, [buf], 0)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)
        buf.close()


def test_disk_reader_is_not_served_by_the_page_cache(cached_file):
    from hwbench_gui.engine.benchmarks import disk_read as disk

    if not _o_direct_works(cached_file):
        pytest.skip(f"the file system of {cached_file} refuses O_DIRECT reads")
    fd, bypass = disk._open_for_reading(str(cached_file))
    buf = mmap.mmap(-1, disk.SEQ_BLOCK_BYTES)
    try:
        before = _device_read_bytes()
        for _ in range(2):  # the second pass would be a pure cache hit without the bypass
            for offset in range(0, SIZE, disk.SEQ_BLOCK_BYTES):
                assert disk._pread(fd, buf, offset) == disk.SEQ_BLOCK_BYTES
        fetched = _device_read_bytes() - before
    finally:
        os.close(fd)
        buf.close()
    assert bypass == "O_DIRECT"
    assert fetched >= 2 * SIZE


@pytest.mark.skipif(not hasattr(os, "posix_fadvise"), reason="needs posix_fadvise")
def test_drop_page_cache_makes_the_next_read_come_from_the_device(cached_file):
    from hwbench_gui.engine.measure.filesystem import drop_page_cache

    assert drop_page_cache([str(cached_file)], sync=True) is True
    before = _device_read_bytes()
    _buffered_read(cached_file)
    assert _device_read_bytes() - before >= SIZE


@pytest.mark.parametrize("how", ["O_DIRECT", "fadvise(DONTNEED)"])
def test_disk_benchmark_reads_every_pass_from_the_device(cached_file, how, monkeypatch):
    """The whole benchmark on a disk-backed folder: each sequential pass fetches the file from the
    device, though the freshly written file sits in the page cache."""
    from hwbench_gui.engine.benchmarks import disk_read as disk

    if how == "O_DIRECT" and not _o_direct_works(cached_file):
        pytest.skip(f"the file system of {cached_file} refuses O_DIRECT reads")
    if how != "O_DIRECT":
        if not hasattr(os, "posix_fadvise"):
            pytest.skip("needs posix_fadvise")
        monkeypatch.delattr(os, "O_DIRECT", raising=False)
    folder = cached_file.parent / "bench"
    folder.mkdir()
    before = _device_read_bytes()
    outcome = disk.BENCHMARK.run(disk.BENCHMARK.resolve_params(
        {"folder": str(folder), "file_size_mib": SIZE >> 20, "repeats": 2, "random_reads": 10}), Recorder())
    assert outcome.details["cache_bypass"] == how
    assert _device_read_bytes() - before >= 2 * SIZE


# -- 8. decode rate = images decoded / time, each image counted once ----------------------------------

def test_decode_rate_counts_each_decoded_image_once(monkeypatch):
    """The pool runs as threads in this process (so decodes can be counted) and the clock ticks 1 s
    per reading: each repeat's rate must equal the decodes that happened between its two readings.
    The decoder is the real one, wrapped to count its calls."""
    from hwbench_gui.engine.measure import decode
    from hwbench_gui.engine.measure.imagegen import make_jpegs

    if importlib.util.find_spec("PIL") is None:
        pytest.skip("PIL not installed")
    lock, decoded = threading.Lock(), [0]
    real_decoder = decode.decoder

    def counting_decoder(library):
        real = real_decoder(library)

        def decode_one(data):
            pixels = real(data)
            with lock:
                decoded[0] += 1
            return pixels
        return decode_one

    ticks, decoded_at_tick = [0.0], []

    def clock():
        decoded_at_tick.append(decoded[0])
        ticks[0] += 1.0
        return ticks[0]

    def thread_pool(workers, initializer, initargs):
        # Every thread finishes its initializer (which decodes one image) before any task runs.
        ready = threading.Barrier(workers)

        def init(*args):
            initializer(*args)
            ready.wait()
        return multiprocessing.pool.ThreadPool(workers, initializer=init, initargs=initargs)

    threads = types.SimpleNamespace(Pool=thread_pool)
    monkeypatch.setattr(decode, "multiprocessing", types.SimpleNamespace(get_context=lambda method: threads))
    monkeypatch.setattr(decode, "decoder", counting_decoder)
    monkeypatch.setattr(decode, "time", types.SimpleNamespace(perf_counter=clock))

    jpegs = make_jpegs(5, 32)
    rates = decode.decode_rates("pil", jpegs, workers=2, passes=3, repeats=2)
    in_repeat = [end - start for start, end in zip(decoded_at_tick[::2], decoded_at_tick[1::2])]
    assert in_repeat == [2 * 3 * 5] * 2  # workers × passes × images
    assert rates == [30.0, 30.0]


# -- 9. STREAM byte counts: copy 2 arrays, scale 2, add 3, triad 3 -------------------------------------

@pytest.mark.parametrize("engine", ["numpy", pytest.param("torch", marks=needs_torch)])
def test_stream_kernels_count_stream_bytes(engine, monkeypatch):
    from hwbench_gui.engine.benchmarks import host_membw

    array_bytes = 1 << 20  # each kernel call "takes" array_bytes / 1e9 s: GB/s = arrays touched
    monkeypatch.setattr(host_membw, "time_cpu", FixedTimer([array_bytes / 1e9]))
    outcome = _run(host_membw.BENCHMARK, {"array_mib": 1, "threads": "1", "engine": engine, "repeats": 2})
    values = {name: outcome.figures[f"{name}, 1 thread"]["value"] for name in host_membw.KERNELS}
    assert values == pytest.approx({"copy": 2.0, "scale": 2.0, "add": 3.0, "triad": 3.0})
    assert outcome.samples == pytest.approx([3.0, 3.0])
