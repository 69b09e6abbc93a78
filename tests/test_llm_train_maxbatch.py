"""``hwbench maxbatch llm.train``: llm.train has no ``batch``; maxbatch reads back its own micro-batch search
(largest_fit's doubling and bisection in the run), or refuses in one line where the run searches none."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from hwbench_gui.engine.run import maxbatch


def _gpu_document(used, tries, halved=()):
    # the fields a one-GPU llm.train run writes (the tries of the H200 LoRA run of 2026-12-05)
    return {"benchmark": {"id": "llm.train"}, "status": "ok", "device": "cuda:0 (NVIDIA H200)",
            "params": {"micro_batch": used},
            "details": {"micro_batch_search": {"tries": tries, "estimate_largest": 9, "limit": 32},
                        "micro_batch_halved_from": list(halved)}}


def test_the_run_s_search_is_read_back():
    tries = [[9, True], [18, False], [13, False], [11, False], [10, True]]
    result = maxbatch.searched_result(_gpu_document(10, tries), "micro_batch")
    assert (result.largest, result.smallest_failing) == (10, 11)
    assert result.tries == [(9, True), (18, False), (13, False), (11, False), (10, True)]
    # the compiled step halved 10 to 5: 5 is what runs, 10 is the smallest that did not
    halved = maxbatch.searched_result(_gpu_document(5, tries, halved=[10]), "micro_batch")
    assert (halved.largest, halved.smallest_failing) == (5, 10)
    # the search reached its limit: nothing failed
    at_limit = maxbatch.searched_result(_gpu_document(32, [[16, True], [32, True]]), "micro_batch")
    assert (at_limit.largest, at_limit.smallest_failing) == (32, None)


def test_a_run_that_did_not_search_or_failed_is_refused_in_one_line():
    cpu = {**_gpu_document(1, []), "device": "cpu (2 threads)", "details": {}}
    with pytest.raises(maxbatch.MaxBatchError, match=r"on one CUDA GPU only; this run on cpu \(2 threads\) took "
                                                     r"micro_batch=1 without trying any"):
        maxbatch.searched_result(cpu, "micro_batch")
    failed = {**_gpu_document(0, []), "status": "failed", "error_kind": "out_of_memory",
              "reason": "CUDA out of memory at micro-batch 1 × 2048 tokens"}
    with pytest.raises(maxbatch.MaxBatchError, match=r"llm.train failed \(out_of_memory\): CUDA out of memory"):
        maxbatch.searched_result(failed, "micro_batch")


def test_maxbatch_llm_train_on_the_cpu_says_why_not():
    pytest.importorskip("torch")
    out = subprocess.run([sys.executable, "-m", "hwbench_gui.cli", "maxbatch", "llm.train", "-p", "model=tiny",
                          "-p", "device=cpu", "-p", "seq=32"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 1, out.stderr
    assert re.fullmatch(r"hwbench maxbatch: llm\.train searches its largest micro_batch on one CUDA GPU only; this "
                        r"run on cpu \(\d+ threads\) took micro_batch=1 without trying any",
                        out.stderr.strip().splitlines()[-1]), out.stderr
    given = subprocess.run([sys.executable, "-m", "hwbench_gui.cli", "maxbatch", "llm.train", "-p", "micro_batch=4"],
                           capture_output=True, text=True, timeout=60)
    assert given.returncode == 2 and "searches its own micro_batch: leave it out" in given.stderr
