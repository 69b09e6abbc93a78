"""The JPEG decode pool: ``workers`` spawned processes, each holding every JPEG's bytes in its own
memory, decode them ``passes`` times per repeat. Disk and inter-process transfer are not measured:
only decode work, the way a DataLoader worker spends its time once a file is read. Used by
cpu.decode and by the data-path analyzer's decode stage."""

from __future__ import annotations

import multiprocessing
import os
import time
from typing import Any, Callable

from hwbench_gui.engine.lifeline import die_with_parent

_worker_state: dict[str, Any] = {}


def decode_pil(data: bytes) -> Any:
    """JPEG bytes -> RGB PIL image, as torchvision's default ImageFolder loader does it."""
    import io

    from PIL import Image

    with Image.open(io.BytesIO(data)) as image:
        return image.convert("RGB")


def decoder(library: str) -> Callable[[bytes], Any]:
    """A function bytes -> decoded RGB/BGR pixels, as each library is normally used."""
    if library == "opencv":
        import cv2
        import numpy as np

        cv2.setNumThreads(1)  # one process = one core; parallelism comes from the worker count

        def decode_cv2(data: bytes) -> Any:
            return cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)

        return decode_cv2
    return decode_pil


def _worker_init(jpegs: list[bytes], library: str, parent_pid: int) -> None:
    die_with_parent(parent_pid)  # a pool process never outlives the benchmark worker
    _worker_state["jpegs"] = jpegs
    _worker_state["decode"] = decoder(library)
    _worker_state["decode"](jpegs[0])  # pays imports and first-call setup before any timing


def _worker_decode(passes: int) -> int:
    decode, jpegs = _worker_state["decode"], _worker_state["jpegs"]
    for _ in range(passes):
        for data in jpegs:
            if decode(data) is None:
                raise ValueError("a JPEG could not be decoded")
    return passes * len(jpegs)


def decode_rates(library: str, jpegs: list[bytes], workers: int, passes: int, repeats: int) -> list[float]:
    """Images/s of ``workers`` processes each decoding its copy ``passes`` times, per repeat."""
    ctx = multiprocessing.get_context("spawn")  # no fork: safe after torch/CUDA or threads, and on every OS
    with ctx.Pool(workers, initializer=_worker_init, initargs=(jpegs, library, os.getpid())) as pool:
        pool.map(_worker_decode, [1] * workers, chunksize=1)  # warm-up pass
        rates = []
        for _ in range(repeats):
            start = time.perf_counter()
            decoded = sum(pool.map(_worker_decode, [passes] * workers, chunksize=1))
            rates.append(decoded / (time.perf_counter() - start))
    return rates
