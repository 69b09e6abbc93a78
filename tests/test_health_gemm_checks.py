"""The burn-in's GEMM load checks, run on the CPU (the same code the GPU runs, one stream): a healthy run
compares every product and finds nothing; a wrong product, a wrong first product and a memory word that
reads back wrong are each caught and named with where, when and the size."""

from __future__ import annotations

import time

import pytest

from hwbench_gui.engine.health.gpu_load import FULL_CHECK_EVERY, GpuGemm
from hwbench_gui.engine.spec.precision import BF16, FP32

torch = pytest.importorskip("torch")


def _load(precision=FP32, n=64, **kwargs):
    load = GpuGemm(time.monotonic(), index=0, precision=precision, n=n, memory_bytes=1 << 16, device_type="cpu",
                   **kwargs)
    load.prepare()
    load.window()  # the first window takes the reference product
    return load


@pytest.mark.parametrize("precision", [FP32, BF16])
def test_a_healthy_product_passes_every_check(precision):
    load = _load(precision)
    for _ in range(3):
        assert load.window() > 0
    assert load.check_errors == [] and load.checked >= 3 * 3 and load.products >= 3
    load.release()


def test_a_wrong_product_is_caught_by_its_row_sums_and_by_the_full_compare():
    load = _load()
    right = load._t["fn"]
    calls = {"n": 0}

    def sometimes_wrong():
        calls["n"] += 1
        c = right()
        if calls["n"] == 2:
            c = c.clone()
            c[5, 7] += 0.5  # one element of one product
        return c
    load._t["fn"] = sometimes_wrong
    load.per_window = 4
    load.window()
    (error,) = load.check_errors
    assert error["what"] == "gemm" and "1 elements or row sums of 4 FP32 64×64 products on cpu" in error["text"]
    load.window()
    assert len(load.check_errors) == 1  # the count was reset: later good products are not counted again
    # every FULL_CHECK_EVERY-th product is compared element by element: a change a row sum could miss
    load.products = FULL_CHECK_EVERY - 1
    load._t["fn"] = lambda: swapped(right())
    load.per_window = 1
    load.window()
    assert len(load.check_errors) == 2


def swapped(c):
    c = c.clone()
    c[3, 1], c[3, 2] = c[3, 2].clone(), c[3, 1].clone()  # same row sum, two elements wrong
    return c


def test_a_wrong_first_product_fails_against_fp64():
    load = GpuGemm(time.monotonic(), index=0, precision=FP32, n=64, memory_bytes=1 << 16, device_type="cpu")
    load.prepare()
    right = load._t["fn"]
    load._t["fn"] = lambda: right() * 1.1
    load.window()
    (error,) = load.check_errors
    assert "differ from FP64 recomputation" in error["text"] and "first FP32 64×64 product on cpu" in error["text"]


def test_a_memory_word_that_reads_back_wrong_is_caught():
    load = _load()
    source = load._t["pattern"]
    real_copy = load._t["buffer"].copy_

    class Buffer:  # the device buffer, with one bit that does not hold what was written
        def __init__(self, tensor):
            self.tensor = tensor

        def copy_(self, src):
            real_copy(src)
            if src is source:
                self.tensor[11] ^= 4
            return self.tensor

        def __ne__(self, other):
            return self.tensor != other

        def numel(self):
            return self.tensor.numel()
    load._t["buffer"] = Buffer(load._t["buffer"])
    load.window()
    assert [e["what"] for e in load.check_errors] == ["memory"]
    assert "1 of 8192 words copied on cpu read back differently" in load.check_errors[0]["text"]


def test_unchecked_runs_compare_nothing():
    load = _load(check=False)
    load._t["fn"] = lambda: torch.zeros(64, 64)
    load.window()
    assert load.check_errors == [] and load.checked == 0
