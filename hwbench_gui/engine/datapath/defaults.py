"""The analyzer's 'auto' parameters: what a careful engineer would use on this machine.

On a GPU box: ResNet-50 at 224 px, batch 128, one loader worker per CPU less one (the training
process and its pin-memory thread need a core), a dataset of 1024 images per CPU (16 384 on 16
cores) and three minutes for trying the advice. Training on the CPU, the same questions are asked
of a model the CPU trains in a useful time (ResNet-18 at 64 px, the side of downsampled ImageNet,
batch 16), half the cores load while the other half train, 512 images per CPU are generated, and
the whole run, the first one's dataset included, stays within two minutes on two cores.
"""

from __future__ import annotations

from typing import Any

from hwbench_gui.engine.spec.precision import BF16_AMP, FP32

#: ImageNet-1k's training images: the epoch the epoch-start cost is priced for when the dataset
#: is generated (a generated dataset's size is hwbench's choice, not the user's epoch).
IMAGENET_TRAIN_IMAGES = 1_281_167

GPU = {"model": "resnet50", "image_size": 224, "batch": 128, "budget_s": 180.0, "stage_s": 1.0, "images_per_cpu": 1024}
CPU = {"model": "resnet18", "image_size": 64, "batch": 16, "budget_s": 45.0, "stage_s": 0.5, "images_per_cpu": 512}
#: The parameters :func:`resolve` may choose (the document stores the values used, and what was
#: asked in ``params_requested``).
AUTO_PARAMS = ("model", "image_size", "batch", "budget_s", "stage_s", "workers", "count", "precision")
#: Bounds of the generated dataset (``images_per_cpu`` above): enough distinct files for every
#: worker's prefetch, and no more than a GPU box reads in a few seconds.
IMAGES_MIN, IMAGES_MAX = 1024, 16384


def auto_workers(kind: str, cpus: int) -> int:
    return max(1, cpus - 1) if kind == "cuda" else max(1, cpus // 2)


def resolve(params: dict[str, Any], kind: str, cpus: int) -> tuple[dict[str, Any], list[str]]:
    """``params`` with every 'auto' value (``auto`` choice, 0, or -1 for workers) replaced for a
    ``kind`` ('cuda' or 'cpu') device on ``cpus`` CPUs; also the lines saying what was chosen."""
    table = GPU if kind == "cuda" else CPU
    out = dict(params)
    chosen = []
    if out["model"] == "auto":
        out["model"] = table["model"]
        chosen.append(f"model {out['model']}")
    for name in ("image_size", "batch", "budget_s", "stage_s"):
        if not out[name]:
            out[name] = table[name]
            chosen.append(f"{name} {out[name]:g}")
    if out["workers"] < 0:
        out["workers"] = auto_workers(kind, cpus)
        chosen.append(f"workers {out['workers']}")
    if not out["count"] and not out["dataset"]:  # 0 with a folder of one's own = all its images
        out["count"] = min(IMAGES_MAX, max(IMAGES_MIN, table["images_per_cpu"] * cpus))
        chosen.append(f"count {out['count']}")
    if out["precision"] == "auto":
        out["precision"] = (BF16_AMP if kind == "cuda" else FP32).key
        chosen.append(f"precision {out['precision']}")
    return out, chosen


def epoch_images(params: dict[str, Any], dataset_images: int, generated: bool) -> int:
    """The user's epoch in images: the ``epoch_images`` parameter, else the given folder's size,
    else ImageNet-1k's training set."""
    if params.get("epoch_images"):
        return int(params["epoch_images"])
    return IMAGENET_TRAIN_IMAGES if generated else dataset_images


def epoch_source(params: dict[str, Any], generated: bool) -> str:
    """Whose epoch :func:`epoch_images` gives: 'param' (epoch_images), 'folder' (the given folder's
    images) or 'imagenet' (ImageNet-1k's, for a generated dataset)."""
    if params.get("epoch_images"):
        return "param"
    return "imagenet" if generated else "folder"
