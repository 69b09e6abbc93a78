"""The burn-in's verdict, driven through a stand-in NVML (tests/health_standin.py): each rule of
:mod:`hwbench_gui.engine.health.rules` fed the readings that trigger it, and a quiet GPU at its power cap that must
pass."""

from __future__ import annotations

import time

import pytest

from hwbench_gui.engine.health import rules
from hwbench_gui.engine.health.host_load import CpuCheckedMatmul, RamPattern
from tests.health_standin import burn, install

STEADY = {0: lambda t: 700.0}


def levels(section, rule):
    return [r["level"] for r in section["reasons"] if r["rule"] == rule]


def test_a_quiet_gpu_at_its_power_cap_passes_and_says_the_cap_is_normal(monkeypatch):
    fake, clock = install(monkeypatch)
    section = burn(fake, clock, STEADY)
    assert section["verdict"] == "PASS"
    assert levels(section, "power_cap") == ["NOTE"]
    assert "normal" in next(r["text"] for r in section["reasons"] if r["rule"] == "power_cap")
    gpu = section["gpus"][0]
    assert gpu["name"] == "NVIDIA H200" and len(gpu["timeline"]["t"]) == 241  # 0 to 120 s every 0.5 s
    assert gpu["timeline"]["power_w"][0] == pytest.approx(695.0) and gpu["timeline"]["mem_temp_c"][0] == 70
    # A passively cooled GPU has no fan reading: not available, with NVML's reason, not a failure.
    assert gpu["not_available"]["fan_percent"].endswith("Not Supported")
    assert gpu["timeline"]["fan_percent"][0] is None
    assert fake.event_sets == 0  # the XID event set was freed


@pytest.mark.parametrize("bit,name", [(0x40, "HW thermal slowdown"), (0x20, "SW thermal slowdown"),
                                      (0x8, "HW slowdown"), (0x80, "HW power brake")])
def test_thermal_or_hardware_slowdown_warns(monkeypatch, bit, name):
    fake, clock = install(monkeypatch)
    fake.reasons = lambda i, t: 0x4 | (bit if 30 <= t < 60 else 0)
    section = burn(fake, clock, STEADY)
    assert section["verdict"] == "WARN"
    text = next(r["text"] for r in section["reasons"] if r["rule"] == "slowdown")
    assert text.startswith(name) and "25 %" in text and "first at 30.0 s" in text  # 60 of 241 samples


def test_an_uncorrectable_ecc_error_during_the_run_fails(monkeypatch):
    fake, clock = install(monkeypatch)
    section = burn(fake, clock, STEADY, before_finish=lambda: fake.ecc[0].update({1: 2, 0: 5}))
    assert section["verdict"] == "FAIL"
    assert levels(section, "ecc_uncorrected") == ["FAIL"]
    assert "2 uncorrectable" in next(r["text"] for r in section["reasons"] if r["rule"] == "ecc_uncorrected")
    assert levels(section, "ecc_corrected") == ["NOTE"]  # corrected ones alone do not fail
    assert section["gpus"][0]["counters_before"]["ecc_volatile_uncorrected"] == 0
    assert section["gpus"][0]["counters_after"]["ecc_volatile_uncorrected"] == 2


def test_uncorrectable_errors_from_before_the_run_warn_only(monkeypatch):
    fake, clock = install(monkeypatch)
    fake.ecc[0][1] = 3
    section = burn(fake, clock, STEADY)
    assert section["verdict"] == "WARN" and levels(section, "ecc_uncorrected") == ["WARN"]


def test_an_xid_event_fails_with_its_number_and_time(monkeypatch):
    fake, clock = install(monkeypatch, gpus=2)
    fake.events.append((42.2, 1, 79))
    section = burn(fake, clock, {0: lambda t: 700.0, 1: lambda t: 700.0})
    assert section["verdict"] == "FAIL"
    gpu0, gpu1 = section["gpus"]
    assert gpu0["verdict"] == "PASS" and gpu1["verdict"] == "FAIL"
    assert gpu1["xid_events"] == [{"t": 42.5, "xid": 79}]  # seen at the first sample after it came
    assert "XID 79 at 42.5 s" in next(r["text"] for r in gpu1["reasons"] if r["rule"] == "xid")


def test_a_pending_row_remap_fails(monkeypatch):
    fake, clock = install(monkeypatch)
    section = burn(fake, clock, STEADY, before_finish=lambda: fake.remap.update({0: (0, 1, 1, 0)}))
    assert section["verdict"] == "FAIL" and levels(section, "remap_pending") == ["FAIL"]


def test_a_wrong_gemm_result_fails_naming_the_gpu_and_time(monkeypatch):
    fake, clock = install(monkeypatch)
    text = "3 elements or row sums of 40 FP8 16384×16384 products on cuda:0 differ from the first product"
    section = burn(fake, clock, STEADY, errors={0: ((17.25, text),)})
    assert section["verdict"] == "FAIL"
    reason = next(r for r in section["reasons"] if r["rule"] == "wrong_result")
    assert reason["scope"] == "gpu0" and reason["text"] == f"wrong result at 17.2 s: {text}"


def test_a_narrowed_pcie_link_under_load_warns(monkeypatch):
    fake, clock = install(monkeypatch)
    fake.link = lambda i, t: (4, 16) if t >= 60 else (5, 16)
    section = burn(fake, clock, STEADY)
    assert section["verdict"] == "WARN"
    text = next(r["text"] for r in section["reasons"] if r["rule"] == "pcie_link")
    assert "Gen4 x16" in text and "maximum Gen5 x16" in text and "first at 60.0 s" in text


def test_a_narrow_link_width_warns_too(monkeypatch):
    fake, clock = install(monkeypatch)
    fake.link = lambda i, t: (5, 8)
    assert levels(burn(fake, clock, STEADY), "pcie_link") == ["WARN"]


def test_a_gpu_slower_than_its_siblings_warns(monkeypatch):
    fake, clock = install(monkeypatch, gpus=3)
    section = burn(fake, clock, {0: lambda t: 700.0, 1: lambda t: 690.0, 2: lambda t: 600.0})
    verdicts = [g["verdict"] for g in section["gpus"]]
    assert verdicts == ["PASS", "PASS", "WARN"]
    text = next(r["text"] for r in section["gpus"][2]["reasons"] if r["rule"] == "slow_sibling")
    assert "14 % below" in text and "695" in text  # 600 against the median of 700 and 690


def test_a_sibling_within_ten_percent_is_not_slow(monkeypatch):
    fake, clock = install(monkeypatch, gpus=2)
    section = burn(fake, clock, {0: lambda t: 700.0, 1: lambda t: 640.0})  # 8.6 % slower
    assert section["verdict"] == "PASS"


def test_a_falling_rate_warns(monkeypatch):
    fake, clock = install(monkeypatch)
    section = burn(fake, clock, {0: lambda t: 700.0 - 1.0 * t}, duration_s=300.0)
    assert section["verdict"] == "WARN"
    gpu = section["gpus"][0]
    # first window 10-70 s (mean 660), last window 240-300 s (mean 430)
    assert gpu["rate_first_tflops"] == pytest.approx(660.0, abs=0.6)
    assert gpu["rate_last_tflops"] == pytest.approx(430.0, abs=0.6)
    assert levels(gpu, "rate_falls") == ["WARN"]


@pytest.mark.parametrize("slope,verdict", [(0.2, "WARN"), (0.1, "PASS")])
def test_the_falling_rate_limit_is_five_percent(monkeypatch, slope, verdict):
    fake, clock = install(monkeypatch)  # 10-70 s against 240-300 s: 6.6 % and 3.3 % lower
    assert burn(fake, clock, {0: lambda t: 700.0 - slope * t}, duration_s=300.0)["verdict"] == verdict


def test_the_first_seconds_boost_is_not_a_falling_rate(monkeypatch):
    fake, clock = install(monkeypatch)
    # 8 s at a boosted rate would put the first minute 5.4 % above the rest
    section = burn(fake, clock, {0: lambda t: 1000.0 if t < 8 else 700.0}, duration_s=300.0)
    assert section["verdict"] == "PASS"


def test_rate_windows_of_a_short_run_are_thirds():
    rate = [(t / 2, 100.0 if t / 2 < 30 else 80.0) for t in range(0, 121)]  # 0..60 s, drop at 30 s
    first, last, window = rules.rate_windows(rate)
    assert window == pytest.approx((60 - 10) / 3)
    assert first == pytest.approx(100.0) and last == pytest.approx(80.0)


def test_what_nvml_cannot_report_is_a_note_never_a_failure(monkeypatch):
    fake, clock = install(monkeypatch)

    def no_ecc(*args):
        raise fake.NVMLError("Not Supported")
    fake.nvmlDeviceGetTotalEccErrors = no_ecc
    fake.nvmlDeviceGetRemappedRows = no_ecc
    section = burn(fake, clock, STEADY)
    assert section["verdict"] == "PASS"
    notes = [r["text"] for r in section["reasons"] if r["rule"] == "not_available"]
    assert any(n.startswith("ecc_volatile_uncorrected not available") for n in notes)
    assert section["gpus"][0]["counters_after"]["remap_pending"] is None


def test_a_load_that_could_not_run_fails():
    ev = rules.GpuEvidence(index=0, load_error="CUDA out of memory (at 0.0 s)")
    assert rules.verdict([ev], None)["verdict"] == "FAIL"


def test_no_gpu_is_said_and_the_host_decides():
    host = rules.HostEvidence()
    judged = rules.verdict([], host, no_gpu_reason="No NVIDIA GPU or driver found")
    assert judged["verdict"] == "PASS" and judged["reasons"][0]["rule"] == "no_gpu"
    host.check_errors.append({"t": 1.0, "what": "ram pattern", "text": "1 of 8 words read back differ"})
    assert rules.verdict([], host, no_gpu_reason="none")["verdict"] == "FAIL"


# -- the host side's checks, on real work --------------------------------------------------------

def test_the_cpu_product_check_catches_a_wrong_element(monkeypatch):
    load = CpuCheckedMatmul(time.monotonic(), n=64)
    load.window()
    assert load.check_errors == [] and load.checked >= 1
    right = load.product

    def wrong():
        c = right()
        c[3, 5] += 1.0
        return c
    monkeypatch.setattr(load, "product", wrong)
    load.products_per_window = 1
    load.window()
    assert load.check_errors and "1 of 4096 elements" in load.check_errors[0]["text"]


def test_the_ram_pattern_test_catches_a_flipped_bit():
    words = (5 << 20) + 3  # two chunks, the second short
    load = RamPattern(time.monotonic(), words=words)
    load.prepare()
    for _ in range(8):  # two passes (each writes both chunks, then reads both back): pattern, then complement
        load.step()
    assert load.check_errors == [] and load.passes == 2 and load.checked == 4
    load.step(), load.step()  # the third pass writes
    load.array[words - 2] ^= 1 << 40
    load.step(), load.step()  # and reads back
    assert len(load.check_errors) == 1
    assert f"first at byte {(words - 2) * 8} " in load.check_errors[0]["text"]


def test_verdict_of_reads_only_a_well_formed_verdict():
    assert rules.verdict_of({"details": {"health": {"verdict": "FAIL"}}}) == "FAIL"
    for doc in (None, {}, {"details": []}, {"details": {"health": {"verdict": "bad"}}}):
        assert rules.verdict_of(doc) is None


def test_reason_bands_are_the_spans_each_kind_held():
    from hwbench_gui.engine.health.bands import reason_bands

    t = [0.0, 0.5, 1.0, 1.5, 2.0, 2.5]
    reasons = [0x4, 0x4 | 0x40, 0x4 | 0x40, 0x4, None, 0x4 | 0x8]
    bands = reason_bands(t, reasons)
    slow = [(b["start"], b["end"], b["names"]) for b in bands if b["level"] == "WARN"]
    cap = [(b["start"], b["end"]) for b in bands if b["label"] == "power cap"]
    assert slow == [(0.25, 1.25, ["HW thermal slowdown"]), (2.25, 2.75, ["HW slowdown"])]
    assert cap == [(0.0, 1.75), (2.25, 2.75)]  # the sample without a reading ends the band


def test_a_long_run_is_stored_merged_without_losing_a_band_or_a_narrowed_link():
    from hwbench_gui.engine.health.watch import decimate

    rows = [{"t": k * 0.5, "sm_clock_mhz": 1800.0 + (k % 2) * 100, "reasons": 0x4 | (0x40 if k == 4001 else 0),
             "pcie_gen": 4 if k == 3003 else 5} for k in range(5000)]
    out = decimate(rows, max_points=2400)
    assert out["step"] == 3 and len(out["t"]) == 1667  # ceil(5000 / 3)
    assert out["t"][1] == 1.5 and out["sm_clock_mhz"][0] == pytest.approx(1800 + 100 / 3)
    assert [i for i, m in enumerate(out["reasons"]) if m & 0x40] == [4001 // 3]
    assert [i for i, g in enumerate(out["pcie_gen"]) if g == 4] == [3003 // 3]
    assert out["fan_percent"][0] is None


def test_thousands_of_wrong_results_are_five_reasons_and_a_count():
    errors = [{"t": float(k), "what": "gemm", "text": "1 element differs"} for k in range(1000)]
    reasons = rules.judge_gpu(rules.GpuEvidence(index=0, check_errors=errors), [])
    wrong = [r["text"] for r in reasons if r["rule"] == "wrong_result"]
    assert len(wrong) == 6 and wrong[-1] == "995 more wrong results, the last at 999.0 s"


def test_a_host_check_that_compared_nothing_is_said():
    judged = rules.verdict([], rules.HostEvidence(compared_nothing=["ram-pattern"]))
    assert judged["verdict"] == "PASS"
    assert "ram-pattern compared nothing" in judged["host"]["reasons"][0]["text"]
