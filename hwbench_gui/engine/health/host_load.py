"""The burn-in's host side: every core on a matrix product whose answer is known exactly, and a memory
pattern written over a share of free RAM and read back.

The product's operands are small integers held in float64, so every partial sum is an integer well
below 2**53: the BLAS result is exact whatever order its threads add in, and must equal the integer
product computed once (numpy's integer matmul, no BLAS) bit for bit. The memory test writes
``(offset * K ^ key) ^ chunk * K`` (a different key each pass, the complement every other pass, so every
bit is written both ways) over the whole array, then reads it all back: the array is far larger than any
cache, so the read-back comes from RAM.
"""

from __future__ import annotations

import numpy as np

from hwbench_gui.engine.health.load import Load

CPU_MATRIX_N = 512
#: Words written or checked per step of the memory test (a step is short, so stop is seen soon).
CHUNK_WORDS = 4 << 20  # 32 MiB
_K = np.uint64(0x9E3779B97F4A7C15)
#: Chunks of memory the pattern test holds beside its array: the scratch chunk, and the pattern block with
#: the temporaries that make it.
_CHUNKS_BESIDE = 4


def ram_pattern_words(allowed_bytes: int, share: float) -> int:
    """Words of the pattern array so that it and what the test holds beside it fit in ``share`` of
    ``allowed_bytes`` (what this process may still allocate: :func:`hwbench_gui.engine.health.allowance.allowance`)."""
    budget = int(max(0, allowed_bytes) * share)
    beside = _CHUNKS_BESIDE * CHUNK_WORDS * 8
    if budget >= 2 * beside:
        return (budget - beside) // 8
    return budget // (_CHUNKS_BESIDE + 1) // 8  # chunks as small as the array: it and 4 of them fit


class CpuCheckedMatmul(Load):
    """A float64 BLAS product of integer-valued matrices against its exact integer answer; rate in GFLOP/s."""

    name = "cpu-matmul"
    unit = "GFLOP/s"

    def __init__(self, t0: float, *, n: int = CPU_MATRIX_N, seed: int = 1, **kwargs):
        super().__init__(t0, **kwargs)
        self.n = n
        rng = np.random.default_rng(seed)
        self.a = rng.integers(-8, 9, size=(n, n)).astype(np.float64)
        self.b = rng.integers(-8, 9, size=(n, n)).astype(np.float64)
        self.expected = (self.a.astype(np.int64) @ self.b.astype(np.int64)).astype(np.float64)
        self.products_per_window = 1

    def product(self) -> np.ndarray:
        return self.a @ self.b

    def window(self) -> float:
        start = self.now()
        done = 0
        while done < self.products_per_window and not self.stopping:
            c = self.product()
            if self.check:
                self.checked += 1
                wrong = np.count_nonzero(c != self.expected)
                if wrong:
                    self.error("cpu matmul", f"{wrong} of {c.size} elements of a {self.n}×{self.n} float64 product "
                                             "differ from the exact answer")
            done += 1
        took = self.now() - start
        if took > 0:  # aim at half a second per window
            self.products_per_window = max(1, int(self.products_per_window * 0.5 / took))
        return done * 2 * self.n ** 3 / 1e9


class RamPattern(Load):
    """Writes a pattern over ``words`` 64-bit words and reads it back; rate in GB/s (bytes written + read)."""

    name = "ram-pattern"
    unit = "GB/s"

    def __init__(self, t0: float, *, words: int, **kwargs):
        super().__init__(t0, **kwargs)
        self.words = max(int(words), 1)
        self.array: np.ndarray | None = None
        self.passes = 0
        self._pos = 0
        self._reading = False
        self._block_pass = -1
        self._block_data: np.ndarray | None = None
        self._scratch: np.ndarray | None = None

    def prepare(self) -> None:
        self.array = np.empty(self.words, dtype=np.uint64)
        self._scratch = np.empty(min(CHUNK_WORDS, self.words), dtype=np.uint64)

    def release(self) -> None:
        self.array = self._scratch = None

    def _block(self) -> np.ndarray:
        """This pass's pattern for one chunk; chunk ``j`` holds it XOR ``j * K`` (one cheap pass to make)."""
        if self._block_pass != self.passes:
            key = np.uint64((self.passes * 0x5851F42D4C957F2D) & 0xFFFFFFFFFFFFFFFF)
            block = np.arange(min(CHUNK_WORDS, self.words), dtype=np.uint64) * _K ^ key
            self._block_data = ~block if self.passes % 2 else block
            self._block_pass = self.passes
        return self._block_data

    def window(self) -> float:
        """Half a second of steps; a pass writes every chunk, then checks every chunk."""
        start, moved = self.now(), 0
        while self.now() - start < 0.5 and not self.stopping:
            moved += self.step()
        return moved / 1e9

    def step(self) -> int:
        """Write or check the next chunk; the bytes it moved."""
        lo, hi = self._pos, min(self._pos + CHUNK_WORDS, self.words)
        block = self._block()[: hi - lo]
        chunk_key = np.uint64((lo // CHUNK_WORDS) * int(_K) & 0xFFFFFFFFFFFFFFFF)
        scratch = self._scratch[: hi - lo]
        if self._reading:
            np.bitwise_xor(self.array[lo:hi], chunk_key, out=scratch)
            if self.check:
                self.checked += 1
                wrong = np.flatnonzero(scratch != block)
                if wrong.size:
                    self.error("ram pattern", f"{wrong.size} of {hi - lo} words read back differ (first at "
                                              f"byte {(lo + int(wrong[0])) * 8} of a {self.words * 8} byte array, "
                                              f"pass {self.passes})")
        else:
            np.bitwise_xor(block, chunk_key, out=self.array[lo:hi])
        self._pos = hi
        if self._pos >= self.words:
            self._pos = 0
            if self._reading:
                self.passes += 1
            self._reading = not self._reading
        return (hi - lo) * 8
