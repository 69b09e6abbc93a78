"""The burn-in's GEMM load checks, run on the CPU (the same code the GPU runs, one stream): a healthy run
compares every product and finds nothing; a wrong product, a wrong first product and a memory word that
reads back wrong are each caught and named with where, when and the size. A window is collected (its
counts read) by the next window or by finish(), as on the GPU, where the host never waits on the window
it has just queued."""

from __future__ import annotations

import time

import pytest

from hwbench_gui.engine.health.gpu_load import FULL_CHECK_EVERY_S, GpuGemm, row_fingerprint
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
    assert load.window() == 0  # queued; nothing collected yet
    for _ in range(3):
        assert load.window() > 0
    assert load.finish() > 0
    # two memory copies a window beside its products
    assert load.check_errors == [] and load.products >= 4 and load.checked == load.products + 2 * 4
    load.release()


def _wrong_in_call(right, call, change):
    calls = {"n": 0}

    def sometimes_wrong():
        calls["n"] += 1
        c = right()
        return change(c.clone()) if calls["n"] == call else c
    return sometimes_wrong


def test_a_wrong_product_is_caught_by_its_row_fingerprint_when_its_window_is_collected():
    load = _load()
    load.next_full_check_t = float("inf")  # no full compare: the fingerprint alone
    load._t["fn"] = _wrong_in_call(load._t["fn"], 2, lambda c: c.index_put_((torch.tensor(5), torch.tensor(7)),
                                                                               torch.tensor(0.5), accumulate=True))
    load.per_window = 4
    load.window()
    assert load.check_errors == []  # queued, not collected yet
    load.window()
    (error,) = load.check_errors
    assert error["what"] == "gemm" and "1 elements or row fingerprints of 4 FP32 64×64 products on cpu" in error["text"]
    load.finish()
    assert len(load.check_errors) == 1  # the count was reset: later good products are not counted again


def one_ulp_up(c):
    """The element of row 0 with the largest row sum around it, one unit in the last place up: a change an
    FP32 row sum rounds away."""
    sums = c.sum(dim=1)
    row = int(sums.abs().argmax())
    col = int(c[row].abs().argmin())
    c[row, col] = torch.nextafter(c[row, col], torch.tensor(float("inf")))
    assert c[row].sum() == sums[row]  # the float row sum cannot see it
    return c


def test_the_fingerprint_sees_a_one_ulp_change_a_float_row_sum_rounds_away():
    load = _load()
    load.next_full_check_t = float("inf")
    load._t["fn"] = _wrong_in_call(load._t["fn"], 1, one_ulp_up)
    load.window()
    load.finish()
    (error,) = load.check_errors
    assert "1 elements or row fingerprints of 1 FP32" in error["text"]


def test_the_fingerprint_is_exact_whatever_the_order():
    c = torch.randn(8, 16)
    assert torch.equal(row_fingerprint(torch, c), row_fingerprint(torch, c.flip(1).flip(1).contiguous()))
    assert row_fingerprint(torch, c).dtype == torch.int64 and row_fingerprint(torch, c).shape == (8,)
    odd = torch.randn(8, 3)  # rows of 12 bytes: not whole 8-byte words
    assert row_fingerprint(torch, odd).tolist() == odd.view(torch.int32).to(torch.int64).sum(dim=1).tolist()


def swapped(c):
    c = c.clone()
    # FP32 elements 1 and 3 sit in the same half of two 8-byte words: the same row fingerprint, two elements wrong
    c[3, 1], c[3, 3] = c[3, 3].clone(), c[3, 1].clone()
    return c


def test_a_swap_within_a_row_is_caught_by_the_full_compare_every_few_seconds():
    now = {"t": 0.0}
    load = GpuGemm(0.0, index=0, precision=FP32, n=64, memory_bytes=1 << 16, device_type="cpu",
                   clock=lambda: now["t"])
    load.prepare()
    load.window()
    right = load._t["fn"]
    load._t["fn"] = lambda: swapped(right())
    load.window()  # at 0 s: the first full compare is due
    now["t"] = FULL_CHECK_EVERY_S / 2
    load.window()  # collects the first window; this one's swap has the same row fingerprints
    now["t"] = FULL_CHECK_EVERY_S
    load.window()  # collects the second (missed: no full compare due); this one is compared in full
    load.finish()
    assert [e["text"].split(" (queued at ")[1][:5] for e in load.check_errors] == ["0.0 s", "10.0 "]
    assert "the first compared element by element" in load.check_errors[1]["text"]


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
    load.finish()
    assert [e["what"] for e in load.check_errors] == ["memory"]
    assert "1 of 8192 words copied on cpu (queued at " in load.check_errors[0]["text"]
    assert load.check_errors[0]["text"].endswith(") read back differently")


def test_unchecked_runs_compare_nothing():
    load = _load(check=False)
    load._t["fn"] = lambda: torch.zeros(64, 64)
    load.window()
    load.finish()
    assert load.check_errors == [] and load.checked == 0


def test_a_gemm_that_stops_writing_its_output_is_caught_by_the_next_full_compare():
    now = {"t": 0.0}
    load = GpuGemm(0.0, index=0, precision=BF16, n=64, memory_bytes=1 << 16, device_type="cpu",
                   clock=lambda: now["t"])
    load.prepare()
    load.window()
    load.window()  # queues a window with a full compare at 0 s
    now["t"] = 1.0
    load.window()  # collects it (on the CPU its work is done then)
    out = load._t["out"]
    load._t["fn"] = lambda: out  # the buffer still holds the last right product: its fingerprint passes
    for t in (2.0, 3.0):
        now["t"] = t
        load.window()
    assert load.check_errors == []
    now["t"] = FULL_CHECK_EVERY_S + 1.0
    load.window()  # queues the next full compare
    load.finish()
    (error,) = load.check_errors
    assert error["text"].startswith("4096 elements or row fingerprints of ")
    assert "(queued at 11.0 s, the first compared element by element)" in error["text"]
