"""disk.read: sequential (1 MiB) and random (4 KiB) reads of a fresh file, page cache bypassed."""

from __future__ import annotations

import glob
import mmap
import os
import re
import shutil
import tempfile
from typing import Any

from hwbench_gui.engine.measure.filesystem import LAYERED_FILESYSTEMS, RAM_FILESYSTEMS, drop_page_cache, filesystem_of
from hwbench_gui.engine.measure.timing import MB, Steps, figure, human_bytes, time_cpu
from hwbench_gui.engine.spec.benchmark import Benchmark, BenchmarkUnavailable, Outcome, Param, Reporter, Series

SEQ_BLOCK_BYTES = 1 << 20
RANDOM_BLOCK_BYTES = 4096
WRITE_CHUNK_BYTES = 8 << 20
#: The test file's name carries the pid of the run that wrote it, so a later run can tell a file whose
#: writer was killed (SIGKILL leaves no chance to delete it) from one another run is reading now.
TEST_FILE_PREFIX = "hwbench-disk-"
_TEST_FILE_PID = re.compile(re.escape(TEST_FILE_PREFIX) + r"(\d+)-[^/]*\.bin$")


def remove_abandoned_test_files(folder: str) -> list[str]:
    """Delete the test files in ``folder`` whose writing process is gone; returns their paths."""
    import psutil

    removed = []
    for path in glob.glob(os.path.join(glob.escape(folder), f"{TEST_FILE_PREFIX}*.bin")):
        match = _TEST_FILE_PID.search(os.path.basename(path))
        if not match or psutil.pid_exists(int(match.group(1))):
            continue
        try:
            os.remove(path)
        except OSError:  # another run removed it first, or the folder is not ours to clean
            continue
        removed.append(path)
    return removed


def _write_random_file(path: str, size_bytes: int) -> None:
    """Fill ``path`` with fresh pseudo-random bytes (nothing compressible or dedupable) and fsync."""
    import numpy as np

    rng = np.random.default_rng()
    with open(path, "wb", buffering=0) as f:
        written = 0
        while written < size_bytes:
            n = min(WRITE_CHUNK_BYTES, size_bytes - written)
            f.write(rng.bit_generator.random_raw(n // 8).tobytes())
            written += n
        f.flush()
        os.fsync(f.fileno())


def _pread(fd: int, buf: Any, offset: int) -> int:
    if hasattr(os, "preadv"):
        return os.preadv(fd, [buf], offset)
    os.lseek(fd, offset, os.SEEK_SET)  # Windows: no preadv
    data = os.read(fd, len(buf))
    buf[: len(data)] = data
    return len(data)


def _open_for_reading(path: str) -> tuple[int, str]:
    """Open with O_DIRECT when the filesystem accepts it (checked by a real aligned read)."""
    if hasattr(os, "O_DIRECT"):
        try:
            fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
        except OSError:
            fd = -1
        if fd >= 0:
            probe = mmap.mmap(-1, RANDOM_BLOCK_BYTES)  # page-aligned, as O_DIRECT requires
            try:
                _pread(fd, probe, 0)
                return fd, "O_DIRECT"
            except OSError:  # tmpfs and some FUSE filesystems refuse O_DIRECT reads with EINVAL
                os.close(fd)
            finally:
                probe.close()
    flags = os.O_RDONLY | getattr(os, "O_BINARY", 0)
    return os.open(path, flags), "fadvise(DONTNEED)" if hasattr(os, "posix_fadvise") else "none"


def run(params: dict[str, Any], reporter: Reporter) -> Outcome:
    import numpy as np

    folder = params["folder"] or tempfile.gettempdir()
    if not os.path.isdir(folder):
        raise BenchmarkUnavailable(f"folder {folder!r} does not exist")
    for path in remove_abandoned_test_files(folder):
        reporter.log(f"removed {path}, left by a disk.read run that was killed")
    size_bytes = params["file_size_mib"] << 20
    free_bytes = shutil.disk_usage(folder).free
    if free_bytes < size_bytes + (256 << 20):
        raise BenchmarkUnavailable(f"{folder} has {human_bytes(free_bytes)} free; the test file needs "
                                   f"{human_bytes(size_bytes)} plus 256 MiB headroom")
    repeats, n_random = params["repeats"], params["random_reads"]
    mount, fstype, mount_device = filesystem_of(folder)
    steps = Steps(reporter, 1 + 2 * repeats)

    fd_file, path = tempfile.mkstemp(prefix=f"{TEST_FILE_PREFIX}{os.getpid()}-", suffix=".bin", dir=folder)
    os.close(fd_file)
    try:
        reporter.progress(0.0, f"writing {human_bytes(size_bytes)} of random data to {path}")
        _write_random_file(path, size_bytes)
        fd, bypass = _open_for_reading(path)
        steps.advance("test file written")
        # Both buffers come from mmap so they are page-aligned, which O_DIRECT needs.
        seq_buf, rand_buf = mmap.mmap(-1, SEQ_BLOCK_BYTES), mmap.mmap(-1, RANDOM_BLOCK_BYTES)
        offsets = np.random.default_rng().integers(0, size_bytes // RANDOM_BLOCK_BYTES, n_random)
        offsets = (offsets * RANDOM_BLOCK_BYTES).tolist()

        def read_sequential() -> None:
            offset = 0
            while offset < size_bytes:
                got = _pread(fd, seq_buf, offset)
                if got <= 0:
                    raise OSError(f"short read at byte {offset} of {path}")
                offset += got

        def read_random() -> None:
            for offset in offsets:
                _pread(fd, rand_buf, offset)

        seq_mbps, rand_iops = [], []
        try:
            for r in range(repeats):
                # fadvise also runs under O_DIRECT: it costs nothing and covers a filesystem that
                # silently serves O_DIRECT reads from the cache.
                dropped = drop_page_cache([path], sync=True)
                seq_s = time_cpu(read_sequential, repeats=1, warmup=0)[0]
                seq_mbps.append(size_bytes / seq_s / MB)
                reporter.metric("sequential read", seq_mbps[-1], "MB/s", repeat=r)
                steps.advance(f"repeat {r + 1}/{repeats}: sequential {seq_mbps[-1]:.0f} MB/s")
                drop_page_cache([path], sync=True)
                rand_s = time_cpu(read_random, repeats=1, warmup=0)[0]
                rand_iops.append(n_random / rand_s)
                reporter.metric("random 4 KiB read", rand_iops[-1], "IOPS", repeat=r)
                steps.advance(f"repeat {r + 1}/{repeats}: random 4 KiB {rand_iops[-1]:.0f} IOPS")
        finally:
            os.close(fd)
            seq_buf.close()
            rand_buf.close()
    finally:
        try:
            os.remove(path)
        except FileNotFoundError:
            pass

    if (bypass != "O_DIRECT" and not dropped) or fstype in RAM_FILESYSTEMS:
        bypass = "none"  # on tmpfs the file *is* page cache, whatever the open flags say
    warnings = []
    if fstype in RAM_FILESYSTEMS:
        warnings.append(f"{folder} is on {fstype} (memory-backed): these figures are RAM speed, not a disk")
    elif bypass == "none":
        warnings.append("the page cache could not be bypassed (no O_DIRECT, no posix_fadvise): the figures "
                        "may be RAM speed")
    elif bypass != "O_DIRECT" and fstype in LAYERED_FILESYSTEMS:
        warnings.append(f"{folder} is on {fstype} without O_DIRECT: dropping the cache may not reach the "
                        "lower layer, so the figures may be RAM speed")
    rand_mbps = [iops * RANDOM_BLOCK_BYTES / MB for iops in rand_iops]
    method = (
        f"A {human_bytes(size_bytes)} file of fresh pseudo-random bytes was written to {folder} ({fstype or 'unknown'} "
        f"filesystem) and fsynced. Each of {repeats} repeats read the whole file sequentially in 1 MiB blocks, then "
        f"made {n_random} reads of 4 KiB at uniformly random 4 KiB-aligned offsets, one thread at queue depth 1 "
        f"(pread). Page cache bypass: {bypass}"
        + (" (reads go straight to the device)" if bypass == "O_DIRECT" else
           " (fsync + POSIX_FADV_DONTNEED before each pass)" if bypass.startswith("fadvise") else
           " (NOT bypassed: the figures may be RAM speed)")
        + ". No warm-up: every pass starts cold. MB/s = 1e6 bytes/s. The file was deleted afterwards."
    )
    return Outcome(
        figure_name="sequential read",
        unit="MB/s",
        samples=seq_mbps,
        method=method,
        figures={
            "random 4 KiB read IOPS": figure(rand_iops, "IOPS"),
            "random 4 KiB read": figure(rand_mbps, "MB/s"),
        },
        series=[Series("sequential read", list(range(1, repeats + 1)), seq_mbps, "repeat", "MB/s"),
                Series("random 4 KiB read", list(range(1, repeats + 1)), rand_mbps, "repeat", "MB/s")],
        warnings=warnings,
        details={"cache_bypass": bypass, "folder": folder, "filesystem": fstype or None, "mountpoint": mount or None,
                 "mount_device": mount_device or None, "file_size_bytes": size_bytes,
                 "sequential_block_bytes": SEQ_BLOCK_BYTES, "random_block_bytes": RANDOM_BLOCK_BYTES,
                 "random_reads": n_random, "queue_depth": 1},
        device=f"{mount_device or 'unknown device'} ({fstype or 'unknown fs'} at {mount or '?'})",
    )


BENCHMARK = Benchmark(
    id="disk.read",
    title="Disk read",
    category="Storage",
    description="Sequential 1 MiB and random 4 KiB read speed of a folder's drive, with the page cache bypassed.",
    params=(
        Param("folder", "path", tempfile.gettempdir(), "Folder on the drive to test; a temporary file is written "
              "there and deleted afterwards.", decides_comparability=False),
        Param("file_size_mib", "int", 1024, "Size of the test file.", minimum=1, maximum=1 << 20, unit="MiB"),
        # 5: enough samples for a comparison to tell two machines apart (see cpu.decode)
        Param("repeats", "int", 5, "Passes over the file (each is one sample).", minimum=1, maximum=100,
              decides_comparability=False),
        Param("random_reads", "int", 20000, "Random 4 KiB reads per pass.", minimum=10, maximum=10_000_000),
    ),
    run=run,
    version="1",
    default_timeout_s=1800.0,
)
