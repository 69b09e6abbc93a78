"""Named sets of benchmark runs. "seed" is the seed evaluation's matrix: ResNet-50, VGG16, Faster R-CNN
and U-Net × PyTorch and TensorFlow × training and inference, in FP32 (TF32 off) at each model's
default batch (128 where it fits), plus the same in FP16 mixed precision (FP16-AMP runs on every
GPU with tensor cores; the seed's Quadro RTX 8000 has no BF16).

Parameters given with a suite either narrow it (a value for an axis the suite varies, such as
``framework=torch``, keeps the runs with that value) or apply to every run (``steps=20``).
"""

from __future__ import annotations

import itertools
import os
import threading
from dataclasses import dataclass, field
from typing import Any, Callable


@dataclass(frozen=True)
class SuiteRun:
    bench_id: str
    params: dict[str, Any] = field(hash=False)
    label: str = ""


@dataclass(frozen=True)
class Suite:
    name: str
    title: str
    description: str
    axes: dict[str, tuple[Any, ...]]  # parameter -> values the suite goes through
    bench_axis: tuple[str, ...]


SEED_MODELS = ("model.resnet50", "model.vgg16", "model.fasterrcnn", "model.unet")

SUITES = {
    "seed": Suite(
        "seed", "Seed suite",
        "The seed evaluation's matrix: 4 models × PyTorch/TensorFlow × train/infer at FP32 (TF32 off) and "
        "FP16-AMP, each model at its default batch (128 where it fits) and image size.",
        axes={"framework": ("torch", "tf"), "mode": ("train", "infer"), "precision": ("fp32", "fp16-amp")},
        bench_axis=SEED_MODELS),
}


def suite_names() -> list[str]:
    return list(SUITES)


def expand_suite(name: str, overrides: dict[str, Any] | None = None) -> list[SuiteRun]:
    """The runs of suite ``name``, in order (models outermost). ``overrides`` narrow or extend them
    (see the module doc); ``KeyError`` naming the known suites for an unknown name."""
    try:
        suite = SUITES[name]
    except KeyError:
        raise KeyError(f"no suite {name!r}; known: {', '.join(SUITES)}") from None
    overrides = dict(overrides or {})
    axes = dict(suite.axes)
    for key in list(overrides):
        if key in axes:
            wanted = str(overrides.pop(key))
            axes[key] = tuple(v for v in axes[key] if str(v) == wanted) or (wanted,)
    runs = []
    for bench_id in suite.bench_axis:
        for values in itertools.product(*axes.values()):
            params = dict(zip(axes.keys(), values))
            params.update(overrides)
            label = f"{bench_id} " + " ".join(str(v) for v in values)
            runs.append(SuiteRun(bench_id, params, label))
    return runs


def run_suite(name: str, overrides: dict[str, Any] | None = None, *,
              on_run: Callable[[int, int, SuiteRun], Callable[[dict[str, Any]], None] | None] | None = None,
              cancel: threading.Event | None = None, timeout_s: float | None = None,
              results_dir: str | os.PathLike | None = None) -> list[tuple[SuiteRun, Any]]:
    """Run every run of the suite one after the other through the runner (one child each).

    ``on_run(i, total, run)`` is called before each run and may return an event callback for it.
    Stops early when ``cancel`` is set. Returns ``[(run, RunResult)]``. The runs go through a
    :class:`~hwbench_gui.engine.run.queue.RunQueue`, as the GUI's do.
    """
    from hwbench_gui.engine.run.queue import RunQueue

    queue = RunQueue(results_dir=results_dir, timeout_s=timeout_s)
    queued, _ = queue.add_suite(name, overrides)
    index = {id(run): i for i, run in enumerate(queued)}
    event_callbacks: dict[int, Callable[[dict[str, Any]], None] | None] = {}

    def listen(change) -> None:
        if change.kind == "started" and on_run is not None:
            event_callbacks[id(change.run)] = on_run(index[id(change.run)], len(queued), change.run.suite_run)
        elif change.kind == "event":
            callback = event_callbacks.get(id(change.run))
            if callback is not None:
                callback(change.event)

    queue.add_listener(listen)
    return [(run.suite_run, run.result) for run in queue.run_all(cancel)]
