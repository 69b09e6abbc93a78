"""Named sets of benchmark runs. "seed" is the seed evaluation's matrix: ResNet-50, VGG16, Faster R-CNN
and U-Net × PyTorch and TensorFlow × training and inference, in FP32 (TF32 off) at each model's
default batch (128 where it fits), plus the same in FP16 mixed precision (FP16-AMP runs on every
GPU with tensor cores; the seed's Quadro RTX 8000 has no BF16).

Parameters given with a suite either narrow it (a value for an axis the suite varies, such as
``framework=torch``, keeps the runs with that value) or apply to every run (``steps=20``).

This module only says what a suite's runs are; running them is the run queue's
(:func:`hwbench_gui.engine.run.queue.run_suite`).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any


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

