"""Other processes' CPU is counted in percent of one core (the machine's percent times its core count,
less the watched tree and this app), and a run is busy when that exceeds 10 % of a core in more
than half the samples (the median), however high a minority of samples goes."""

from __future__ import annotations

import numpy as np
import pytest

from hwbench_gui.engine.telemetry import Sampler
from hwbench_gui.engine.telemetry.summary import BUSY_CPU_PERCENT, noise_summary


@pytest.fixture
def sampler():
    sampler = Sampler(interval_s=0.5)  # never started: only its accounting is used
    yield sampler
    sampler.stop()


def _others(sampler, monkeypatch, *, cores, machine_percent, tree, own):
    monkeypatch.setattr(sampler._host, "n_cores", cores)
    values = {"cpu_percent": machine_percent, "proc_cpu_percent": tree, "self_cpu_percent": own}
    sampler._others(values)
    return values["others_cpu_percent"]


def test_threshold_is_ten_percent_of_a_core():
    assert BUSY_CPU_PERCENT == 10.0


@pytest.mark.parametrize("cores, machine_percent, tree, own, expected", [
    (8, 50.0, 150.0, 30.0, 220.0),    # 50 % of 8 cores = 400 % of a core; the run and the app used 180
    (32, 5.0, 0.0, 0.0, 160.0),       # 5 % of the machine is 1.6 cores: far above 10 % of a core
    (2, 50.0, 100.0, 0.0, 0.0),       # the run itself is the whole load
    (4, 25.0, 95.0, 10.0, 0.0),       # sampling jitter below zero is no negative load
    (1, 40.0, 25.0, 5.0, 10.0),
])
def test_others_are_counted_in_percent_of_one_core(sampler, monkeypatch, cores, machine_percent, tree, own,
                                                   expected):
    assert _others(sampler, monkeypatch, cores=cores, machine_percent=machine_percent, tree=tree,
                   own=own) == pytest.approx(expected)


def test_a_light_load_on_a_big_machine_makes_it_busy(sampler, monkeypatch):
    # 2 % of 64 cores is 128 % of a core: busy, though "2 %" of the machine looks idle.
    series = [_others(sampler, monkeypatch, cores=64, machine_percent=2.0, tree=0.0, own=0.0) for _ in range(5)]
    summary = noise_summary({"others_cpu_percent": np.array(series)})
    assert summary["busy"] and summary["others_cpu_percent"]["median"] == pytest.approx(128.0)
    assert "128 % of a CPU core" in summary["reasons"][0]


@pytest.mark.parametrize("samples, busy", [
    ([0.0, 0.0, 30.0, 30.0, 30.0], True),      # 3 of 5 above: the majority
    ([0.0, 0.0, 0.0, 900.0, 900.0], False),   # 2 of 5, however high: short spikes
    ([11.0, 11.0, 11.0, 0.0, 0.0], True),
    ([10.0, 10.0, 10.0, 10.0, 10.0], False),  # at the threshold is not above it
    ([10.5, 10.5, 10.5, 0.0, 0.0], True),
    ([50.0, 50.0, 50.0], True),
    ([50.0, 0.0, 0.0], False),
])
def test_busy_needs_the_majority_of_samples_above_the_threshold(samples, busy):
    summary = noise_summary({"others_cpu_percent": np.array(samples)})
    assert summary["busy"] is busy
    assert summary["others_cpu_percent"]["median"] == pytest.approx(float(np.median(samples)))
    assert summary["others_cpu_percent"]["mean"] == pytest.approx(float(np.mean(samples)))
    assert summary["others_cpu_percent"]["max"] == pytest.approx(max(samples))
    assert bool(summary["reasons"]) is busy


def test_missing_samples_do_not_count_either_way():
    summary = noise_summary({"others_cpu_percent": np.array([np.nan, 30.0, np.nan, 30.0, 0.0])})
    assert summary["busy"] and summary["others_cpu_percent"]["median"] == 30.0
