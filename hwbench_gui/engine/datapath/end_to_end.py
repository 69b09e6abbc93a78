"""Loader-fed training of one :class:`~hwbench_gui.engine.datapath.tryouts.LoaderConfig`, measured
the same way for the default configuration and for every what-if, and the what-ifs tried within
a time budget.

Method (like with like across configurations): the warm-up steps run on a synthetic batch, then
the loader starts and its first ``workers`` + 2 steps (the start from empty) stay untimed; the
sampler draws several shuffled passes per DataLoader epoch, so no epoch boundary falls in the
timed windows. The cost of an epoch start is measured apart, after the windows (forced restarts),
for the verdict to price it for the user's epoch. torch is imported by the model benchmark's code.
"""

from __future__ import annotations

import gc
import math
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

from hwbench_gui.engine.datapath import gpu_augment
from hwbench_gui.engine.datapath.sampler import PassesSampler, passes_for
from hwbench_gui.engine.datapath.stages import FileImages, train_transform, uint8_transform, window_median
from hwbench_gui.engine.datapath.tryouts import LoaderConfig, Tried, candidates, combined
from hwbench_gui.engine.models.data import LoaderOptions
from hwbench_gui.engine.spec.benchmark import Reporter


class PhaseReporter:
    """Maps a sub-task's progress [0, 1] into [start, end] of the whole run; notes when the model
    benchmark's timed loop has begun (its progress messages read 'step i/n')."""

    def __init__(self, reporter: Reporter, start: float, end: float):
        self.reporter, self.start, self.end = reporter, start, end
        self.timed = threading.Event()

    def progress(self, fraction: float, message: str = "") -> None:
        if message.startswith(("step ", "timed step ")):
            self.timed.set()
        self.reporter.progress(self.start + (self.end - self.start) * max(0.0, min(1.0, fraction)), message)

    def log(self, message: str) -> None:
        self.reporter.log(message)

    def metric(self, name: str, value: float, unit: str, **extra: Any) -> None:
        self.reporter.metric(name, value, unit, **extra)

    def phase(self, phase: str, state: str, repeat: int | None = None) -> None:
        self.reporter.phase(phase, state, repeat)


#: Seconds each timed window of an end-to-end measurement should last (steps = this × the
#: expected rate / batch, at least MIN_STEPS).
WINDOW_S = {"cuda": 1.5, "cpu": 1.0}
MIN_STEPS = 3
#: Forced epoch starts measured after the default configuration's windows (each costs a few steps:
#: on the CPU, seconds).
EPOCH_STARTS = {"cuda": 2, "cpu": 1}
#: Untimed windows at most before the timed ones, until two in a row agree (the loader's queue
#: settled); on the CPU a window costs seconds.
SETTLE_WINDOWS = {"cuda": 12, "cpu": 3}
#: Share of the budget the single changes may use; the rest is kept for the combinations.
SINGLES_SHARE = 0.75


@dataclass
class Setup:
    """What stays fixed across configurations: the model benchmark's parameters (``params``, with
    ``data`` the dataset root), its model, the files and the device kind."""

    spec: Any
    params: dict[str, Any]
    files: list[str]
    labels: list[int]
    classes: list[str]
    read_delay_s: float
    kind: str  # "cuda" or "cpu"
    cpus: int
    measure: Callable[..., Any]  # model_torch.measure

    @property
    def batch(self) -> int:
        return int(self.params["batch"])


def window_steps(rate: float | None, batch: int, kind: str) -> int:
    """Steps per timed window for windows of about :data:`WINDOW_S` at ``rate`` images/s."""
    if not rate:
        return MIN_STEPS
    return max(MIN_STEPS, math.ceil(WINDOW_S[kind] * rate / batch))


def _dataset(config: LoaderConfig, setup: Setup) -> Any:
    if config.gpu_decode:
        return gpu_augment.JpegFiles(setup.files, setup.labels, setup.classes, setup.read_delay_s)
    transform = uint8_transform if config.normalize_on_device else train_transform
    return FileImages(setup.files, setup.labels, setup.classes, transform(setup.params["image_size"]),
                      setup.read_delay_s)


def _on_device(config: LoaderConfig, setup: Setup) -> Callable[[Any, Any, bool], Any] | None:
    if config.gpu_decode:
        return gpu_augment.device_decode(setup.params["image_size"])
    if config.normalize_on_device:
        return gpu_augment.device_normalize
    return None


def measure_config(config: LoaderConfig, setup: Setup, steps: int, warmup: int, reporter: Reporter,
                   epoch_starts: int = 0) -> tuple[Any, dict[str, Any], str]:
    """(TimedRun, details, device label) of training fed by ``config``'s loader."""
    import torch

    repeats = int(setup.params["repeats"])
    loader_steps = max(1, config.workers) + 2 + (repeats + SETTLE_WINDOWS[setup.kind]) * steps + 8
    options = LoaderOptions(
        prefetch_factor=config.prefetch, pin_memory=config.pin_memory,
        sampler=PassesSampler(len(setup.files), passes_for(len(setup.files), setup.batch, loader_steps)),
        collate_fn=gpu_augment.collate_jpegs if config.gpu_decode else None,
        on_device=_on_device(config, setup),
        epoch_starts=epoch_starts, start_after_warmup=True, settle_windows=SETTLE_WINDOWS[setup.kind])
    params = dict(setup.params, workers=config.workers, channels_last=config.channels_last, steps=steps,
                  warmup=warmup, drain_loader_steps=0)
    threads = torch.get_num_threads()
    if setup.kind == "cpu":  # the training process gets the cores the loader workers leave
        torch.set_num_threads(max(1, setup.cpus - config.workers))
    try:
        return setup.measure(setup.spec, params, reporter, dataset=_dataset(config, setup), loader=options)
    finally:
        torch.set_num_threads(threads)
        gc.collect()  # the loader's workers end with it, before the next configuration starts its own


def try_configs(base: LoaderConfig, base_rate: float, setup: Setup, budget_s: float, steps: int,
                reporter: Reporter) -> list[Tried]:
    """Every single change of :func:`candidates`, then the combinations of those that measured
    better (:func:`combined`), each measured end to end while ``budget_s`` lasts; what the budget
    does not reach is recorded with that reason. ``reporter``'s progress runs from 0 to 1 over the
    budget: each what-if reports within the share of it that the longest one so far took."""
    singles = candidates(base, setup.cpus, setup.kind == "cuda")
    start = time.perf_counter()
    budget = max(budget_s, 1e-9)
    tried: list[Tried] = []
    longest = reached = 0.0

    def one(key: str, config: LoaderConfig, limit_s: float) -> None:
        nonlocal longest, reached
        spent = time.perf_counter() - start
        if spent + longest > limit_s:
            tried.append(Tried(key, config, None, [], 0.0, reason=f"the budget ({budget_s:g} s, budget_s) was spent"))
            return
        # never back: a what-if quicker than the longest one leaves the next to start where it ended
        low = max(reached, min(1.0, spent / budget))
        share = PhaseReporter(reporter, low, min(1.0, low + (longest or limit_s / 4) / budget))
        reached = share.end
        share.progress(0.0, f"what-if end to end: {config.changes_from(base)}")
        t0 = time.perf_counter()
        try:
            run, _, _ = measure_config(config, setup, steps, max(1, int(setup.params["warmup"]) // 2), share)
        except Exception as exc:  # one failing what-if (e.g. a JPEG nvJPEG cannot read) must not cost the rest
            tried.append(Tried(key, config, None, [], time.perf_counter() - t0, reason=f"{type(exc).__name__}: {exc}"))
            return
        seconds = time.perf_counter() - t0
        longest = max(longest, seconds)
        wait = run.data_wait_s / run.total_s if run.total_s else None
        rate = window_median(run)
        tried.append(Tried(key, config, rate, run.window_rates(), seconds, data_wait_fraction=wait))
        reporter.log(f"what-if {key} ({config.describe()}): {rate:,.0f} images/s in {seconds:.0f} s")

    for key, config in singles:
        one(key, config, SINGLES_SHARE * budget_s)
    for gpu_decode in (False, True):
        config = combined(base, base_rate, tried, gpu_decode)
        if config is not None and config != base and all(t.config != config for t in tried):
            one("combined_gpu_decode" if gpu_decode else "combined", config, budget_s)
    return tried
