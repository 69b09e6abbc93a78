"""What the model benchmarks share: the models, their parameters, precision labels, the step timing
record, the figures computed from it, and the out-of-memory error.

Nothing here imports torch or TensorFlow. ``model_torch`` and ``model_tf`` measure; this module
turns a :class:`TimedRun` into the :class:`~hwbench_gui.engine.spec.benchmark.Outcome` both report.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from hwbench_gui.engine.measure.stats import median, percentile
from hwbench_gui.engine.spec.benchmark import Outcome, Param, Reporter
from hwbench_gui.engine.spec.device import AUTO, CPU, CUDA
from hwbench_gui.engine.spec.precision import from_key, model_param

GIB = 1 << 30


@dataclass(frozen=True)
class ModelSpec:
    """One model of the suite: its id part, the task it does and its seed-compatible defaults."""

    key: str  # "resnet50", "vgg16", "fasterrcnn", "unet"
    title: str
    task: str  # "classify" | "detect" | "segment"
    image_size: int
    batch: int
    batch_note: str
    torch_source: str
    tf_source: str


MODELS = {
    "resnet50": ModelSpec("resnet50", "ResNet-50", "classify", 224, 128, "128 as in the seed",
                          "torchvision.models.resnet50(weights=None)",
                          "keras.applications.ResNet50(weights=None)"),
    "vgg16": ModelSpec("vgg16", "VGG16", "classify", 224, 128, "128 as in the seed",
                       "torchvision.models.vgg16(weights=None)",
                       "keras.applications.VGG16(weights=None)"),
    "fasterrcnn": ModelSpec("fasterrcnn", "Faster R-CNN R50-FPN", "detect", 800, 16,
                            "16: 128 images of 800 px do not fit in any current GPU's memory",
                            "torchvision.models.detection.fasterrcnn_resnet50_fpn(weights=None, "
                            "weights_backbone=None)",
                            "hwbench_gui.engine.models.keras_fasterrcnn: Keras implementation of the torchvision "
                            "architecture (keras.applications ResNet-50 backbone, FPN, RPN, RoIAlign through "
                            "tf.image.crop_and_resize; not a published TensorFlow model)"),
    "unet": ModelSpec("unet", "U-Net", "segment", 512, 32,
                      "32: 128 images of 512 px need about 190 GB for training in FP32",
                      "hwbench_gui.engine.models.unet.UNet (Ronneberger et al. 2015, padded convs, batch norm)",
                      "hwbench_gui.engine.models.unet.keras_unet (same architecture)"),
}

#: Classes of the synthetic heads: ImageNet for the classifiers, Pascal VOC (20 + background) for
#: Faster R-CNN, KiTS (background, kidney, tumour) for U-Net, as in the seed's data sets.
SYNTHETIC_CLASSES = {"classify": 1000, "detect": 21, "segment": 3}

#: On the CPU the default batch is the GPU default divided by this (at least 1): ResNet-50 training at
#: batch 128 holds about 10 GiB of RAM and takes about 10 s a step on a small CPU; at 16, about 1.5 GiB
#: and a second or two, so the default run ends in minutes and fits a laptop. A batch the user gives
#: is kept.
CPU_BATCH_DIVISOR = 8

#: ``channels_last`` values: ``auto`` lets the run pick the memory format (see :func:`resolve_channels_last`).
CHANNELS_LAST_CHOICES = ("auto", "true", "false")

#: Steps timed at batch 1 for the latency figures of an inference run (at most).
LATENCY_STEPS_MAX = 100

#: Least steps in a timed window on a GPU, where windows are sized by time: a model whose step takes
#: most of a second (U-Net training in FP32) then times windows of its share of ``min_time_s``,
#: not of ten steps (four times as long, and the suite with it).
GPU_WINDOW_MIN_STEPS = 3


def default_batch(spec: ModelSpec, device_kind: str) -> int:
    """The batch a run uses when none is given (``batch=0``): the model's GPU default on a GPU, that
    divided by :data:`CPU_BATCH_DIVISOR` on the CPU."""
    return spec.batch if device_kind == CUDA else max(1, spec.batch // CPU_BATCH_DIVISOR)


def resolve_channels_last(requested: Any, framework: str, device_kind: str, precision_key: str,
                          task: str = "classify") -> bool:
    """The memory format a run uses: True = NHWC. ``auto`` picks NHWC where it pays, as NVIDIA's
    DeepLearningExamples and timm do: PyTorch on a CUDA device with a tensor-core precision (TF32,
    FP16-AMP, BF16-AMP), where cuDNN's NHWC kernels avoid the transposes around every convolution
    (ResNet-50 BF16 training on an H200: 2,305 images/s NCHW, 4,694 NHWC). FP32 with TF32 off and the
    CPU stay NCHW. Keras always runs NHWC (its ``channels_last`` data format), so TensorFlow is True;
    torchvision's detection models take lists of images of any size and have no NHWC path (False)."""
    if framework == "tf":
        return True
    if task == "detect":
        return False
    if requested != "auto":
        return requested is True or str(requested).lower() == "true"
    return device_kind == CUDA and from_key(precision_key).uses_tensor_cores


def model_params(spec: ModelSpec) -> tuple[Param, ...]:
    """The parameters every model benchmark has, with this model's defaults."""
    return (
        Param("framework", "choice", "torch", "PyTorch (torch) or TensorFlow/Keras (tf).", choices=("torch", "tf")),
        Param("mode", "choice", "train", "Training steps (forward, backward, SGD update) or inference.",
              choices=("train", "infer")),
        model_param(),
        Param("batch", "int", 0, f"Images per step per GPU; 0 = the model's default: {spec.batch} on a GPU "
              f"({spec.batch_note}), {max(1, spec.batch // CPU_BATCH_DIVISOR)} on the CPU (the GPU default / "
              f"{CPU_BATCH_DIVISOR}: a CPU step takes seconds and fits in a few GiB). The result stores the batch "
              "used.",
              minimum=0, maximum=1 << 16),
        Param("image_size", "int", spec.image_size, "Square image side in pixels.", minimum=32, maximum=4096,
              unit="px"),
        Param("steps", "int", 10, "Timed steps per repeat on the CPU (or with min_time_s 0). On a GPU, the "
              f"untimed window that sizes the timed ones: each then holds as many steps as fill its share of "
              f"min_time_s (at least {GPU_WINDOW_MIN_STEPS}).",
              minimum=1, maximum=100000, decides_comparability=False),
        Param("repeats", "int", 5, "Timed windows; each gives one images/s sample (median and spread).",
              minimum=1, maximum=1000, decides_comparability=False),
        Param("min_time_s", "float", 10.0, "Least total timed time on a GPU, split over the repeats, so clocks "
              "reach their sustained (power-limited) level; 0 = just the steps. The CPU runs the steps only.",
              minimum=0.0, maximum=3600.0, unit="s", decides_comparability=False),
        Param("warmup", "int", 10, "Untimed steps first (cuDNN autotuning, compilation).", minimum=0,
              maximum=10000, decides_comparability=False),
        Param("device", "device", AUTO, "'auto' (the first GPU the framework sees, else the CPU), 'cuda:N' "
              "(first GPU of the run) or 'cpu'.", choices=(AUTO, CPU, CUDA), decides_comparability=False),
        Param("gpus", "int", 1, "GPUs on this machine: N > 1 runs PyTorch DDP (NCCL) started like torchrun, or "
              "TensorFlow MirroredStrategy, and a one-GPU run for the scaling efficiency.", minimum=1, maximum=64),
        Param("nnodes", "int", 1, "Machines taking part (PyTorch DDP only); every machine runs the same command "
              "with the same rdzv_endpoint.", minimum=1, maximum=1024),
        Param("rdzv_endpoint", "str", "", "host:port of the rendezvous (torchrun's --rdzv-endpoint); needed when "
              "nnodes > 1, else a free local port is used."),
        Param("channels_last", "choice", "auto", "NHWC memory format. auto = NHWC for PyTorch on a GPU with TF32, "
              "FP16-AMP or BF16-AMP (cuDNN's fast layout for tensor cores), NCHW for FP32 and on the CPU; Keras is "
              "always NHWC. The result stores the format used (true = NHWC).", choices=CHANNELS_LAST_CHOICES),
        Param("compile", "bool", False, "torch.compile (default mode) / Keras XLA jit_compile."),
        Param("data", "str", "synthetic",
              "'synthetic' (random tensors made on the device once) or a folder: ImageFolder tree for the "
              "classifiers, Pascal VOC (JPEGImages/ + Annotations/) for Faster R-CNN, images/ + masks/ for U-Net."),
        # A fixed default (not the core count) so that runs on different machines share it.
        Param("workers", "int", 8, "Data-loader worker processes (folder data).", minimum=0, maximum=256),
    )


#: Below this mean GPU utilisation in the timed phase (over its GPUs), a run on synthetic data (nothing
#: to wait for but the CPU) is said to be held back by the CPU side of the step.
GPU_IDLE_NOTE_BELOW_PERCENT = 90.0


def gpu_idle_notes(params: dict[str, Any], outcome: dict[str, Any], telemetry: dict[str, Any]) -> list[str]:
    """``Benchmark.telemetry_notes`` of the model benchmarks: a GPU run on synthetic data whose GPU
    was busy less than :data:`GPU_IDLE_NOTE_BELOW_PERCENT` % of the timed phase waited on the CPU
    (kernel launches, Python, host-side work such as a detector's box sampling). Its figure then
    measures the machine's CPU as much as its GPU, and spreads with it (ResNet-50 FP16-AMP training
    at batch 128 on an H200: GPU busy 84 %, windows 4,545-4,860 images/s)."""
    if params.get("data") != "synthetic" or not str(outcome.get("device") or "").startswith("cuda"):
        return []
    util = (((telemetry.get("seed") or {}).get("gpu_util_percent")) or {}).get("mean")
    if not isinstance(util, (int, float)) or util >= GPU_IDLE_NOTE_BELOW_PERCENT:
        return []
    return [f"the GPU was busy {util:.0f} % of the timed phase: the step waits on the CPU (kernel launches, Python, "
            "host-side work), so this figure measures the CPU's launch path as much as the GPU and spreads with "
            "it; a larger batch or compile=true moves the work to the GPU"]


class OutOfMemoryError(RuntimeError):
    """The accelerator ran out of memory. The worker recognises the class name and files the run
    as error kind ``out_of_memory``; the message is the reason shown to the user."""


def oom_message(batch: int, peak_bytes: float | None, total_bytes: float | None, where: str = "CUDA") -> str:
    """``"CUDA out of memory at batch 512 (peak 131.4 GiB of 139.8 GiB); try ..."``: one line."""
    if peak_bytes is not None and total_bytes:
        held = f" (peak {peak_bytes / GIB:.1f} GiB of {total_bytes / GIB:.1f} GiB)"
    elif peak_bytes is not None:
        held = f" (peak {peak_bytes / GIB:.1f} GiB; total unknown)"
    else:
        held = ""
    smaller = max(1, batch // 2)
    return (f"{where} out of memory at batch {batch}{held}; suggestion: batch {smaller} or less, bf16-amp/fp16-amp, "
            f"or 'hwbench maxbatch' to find the largest batch that fits")


@dataclass
class TimedRun:
    """What one measured loop produced (one process; one rank of a multi-GPU run).

    ``total_s`` is wall time from the synchronized start of the first timed step to the
    synchronize after the last one. ``step_s`` are per-step times (CUDA events, or wall time on
    the CPU / in TensorFlow where each step ends in a fetch). ``data_wait_s`` is the time the loop
    spent waiting for the loader's next batch (0 with synthetic data).
    """

    batch: int
    steps: int
    total_s: float
    step_s: list[float]
    data_wait_s: float = 0.0
    warmup_s: float | None = None  # warm-up steps including compilation
    first_step_s: float | None = None  # the first warm-up step alone (compilation happens there)
    latency_b1_s: list[float] = field(default_factory=list)
    peak_allocated_bytes: float | None = None
    peak_reserved_bytes: float | None = None
    total_memory_bytes: float | None = None
    peak_reason: str | None = None
    final_loss: float | None = None
    window_s: list[float] = field(default_factory=list)  # wall time of each timed window
    window_steps: list[int] = field(default_factory=list)  # steps in each
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def images(self) -> int:
        return self.batch * self.steps

    def images_per_s(self) -> float:
        return self.images / self.total_s

    def window_rates(self) -> list[float]:
        """Images/s of each timed window (the whole run as one window when none were recorded)."""
        if not self.window_s:
            return [self.images_per_s()]
        return [self.batch * n / s for n, s in zip(self.window_steps, self.window_s)]

    def to_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "TimedRun":
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


@dataclass
class Windows:
    """What :func:`time_windows` measured: per window wall time, steps, data wait; every step's time."""

    window_s: list[float] = field(default_factory=list)
    window_steps: list[int] = field(default_factory=list)
    step_s: list[float] = field(default_factory=list)
    data_wait_s: float = 0.0
    calibration: dict[str, Any] | None = None


def format_eta(seconds: float) -> str:
    """``"ETA 45 s"``, ``"ETA 3 min 10 s"``, ``"ETA 1 h 05 min"``."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"ETA {seconds} s"
    if seconds < 3600:
        return f"ETA {seconds // 60} min {seconds % 60:02d} s"
    return f"ETA {seconds // 3600} h {seconds % 3600 // 60:02d} min"


class StepProgress:
    """Progress after every warm-up and timed step, with an ETA from the measured step time.

    The fraction is time-based: elapsed / (elapsed + estimated remaining), so whoever watches (the
    suite's progress bar) can turn fraction and elapsed time into a remaining time. The estimate is
    the mean of the latest steps (the first warm-up step, which holds compilation and cuDNN's
    autotuning, is left out) times the steps still to come: the warm-up's rest, on a GPU the sizing
    window and the windows that fill ``min_time_s``, and for inference the batch-1 latency calls
    (counted as a tenth of a step each). Reports at most every ``interval_s`` unless the phase changes.
    """

    RECENT = 8

    def __init__(self, reporter: Reporter, params: dict[str, Any], *, on_gpu: bool, interval_s: float = 0.5,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        self.reporter, self.clock, self.interval_s = reporter, clock, interval_s
        self.warmup = int(params.get("warmup", 0))
        self.steps, self.repeats = int(params["steps"]), int(params.get("repeats", 1))
        self.min_time_s = float(params.get("min_time_s", 0.0)) if on_gpu else 0.0
        self.latency_steps = min(self.steps, LATENCY_STEPS_MAX) if params.get("mode") == "infer" else 0
        self.per_window: int | None = None if self.min_time_s > 0 else self.steps
        self.done = {"warm-up": 0, "sizing": 0, "timed": 0}
        self.phase = "warm-up"
        self.recent: list[float] = []
        self.start = self.last = clock()
        self.last_report = -math.inf
        self.first_step_seen = False
        self.repeat: int | None = None  # the timed window under way

    def set_window(self, per_window: int) -> None:
        """The timed windows' step count, once sized."""
        self.per_window = per_window

    def step_s(self) -> float | None:
        return sum(self.recent) / len(self.recent) if self.recent else None

    def remaining_steps(self) -> float:
        timed_total = self.repeats * self.per_window if self.per_window is not None else None
        if timed_total is None:
            estimate = self.step_s()
            per_window = self.steps
            if estimate:
                per_window = max(GPU_WINDOW_MIN_STEPS, math.ceil(self.min_time_s / self.repeats / estimate))
            timed_total = self.repeats * per_window
        sizing = self.steps if self.min_time_s > 0 else 0
        return (max(0, self.warmup - self.done["warm-up"]) + max(0, sizing - self.done["sizing"])
                + max(0, timed_total - self.done["timed"]) + 0.1 * self.latency_steps)

    def remaining_s(self) -> float | None:
        estimate = self.step_s()
        return None if estimate is None else estimate * self.remaining_steps()

    def begin(self, phase: str) -> None:
        """``warm-up``, ``sizing`` or ``timed`` starts (its first report comes at once)."""
        self.phase = phase
        self.last = self.clock()
        self.last_report = -math.inf

    def step(self) -> None:
        now = self.clock()
        took, self.last = now - self.last, now
        self.done[self.phase] += 1
        if self.phase == "warm-up" and not self.first_step_seen:
            self.first_step_seen = True
            if self.warmup > 1:  # compilation and autotuning: not a step time
                self._report(now)
                return
        self.recent = [*self.recent[-(self.RECENT - 1):], took]
        self._report(now)

    def _report(self, now: float) -> None:
        remaining = self.remaining_s()
        if now - self.last_report < self.interval_s and remaining is not None and remaining > 0:
            return
        self.last_report = now
        elapsed = now - self.start
        fraction = elapsed / (elapsed + remaining) if remaining is not None and elapsed + remaining > 0 else 0.0
        if self.phase == "warm-up" and self.done["warm-up"] > self.warmup:
            # a loader-fed run steps on untimed until its loader has started and settled
            where = f"settling the loader: step {self.done['warm-up'] - self.warmup}"
        elif self.phase == "warm-up":
            where = f"warm-up step {self.done['warm-up']}/{self.warmup}"
        elif self.phase == "sizing":
            where = f"sizing the timed windows: step {self.done['sizing']}/{self.steps}"
        else:
            total = self.repeats * self.per_window if self.per_window else "?"
            where = f"timed step {self.done['timed']}/{total}"
            if self.repeat is not None:
                where += f" (repeat {self.repeat + 1}/{self.repeats})"
        estimate = self.step_s()
        pace = f", {estimate:.3g} s/step, {format_eta(remaining)}" if estimate is not None and remaining is not None \
            else ", ETA after the first steps"
        self.reporter.progress(min(fraction, 0.999), where + pace)


#: ``run_steps(n)`` runs n steps, synchronized before the first and after the last, and returns
#: (wall seconds, per-step seconds, seconds waited for data).
RunSteps = Callable[[int], tuple[float, list[float], float]]


def time_windows(run_steps: RunSteps, params: dict[str, Any], reporter: Reporter, *, on_gpu: bool,
                 agree: Callable[[int], int] | None = None, progress: StepProgress | None = None) -> Windows:
    """``repeats`` timed windows of equal step count, each marked as a timed phase.

    On a GPU a first, untimed window of ``steps`` steps sizes the windows so that together they last
    at least ``min_time_s`` (a GPU holds its boost clock for about a second before its power limit
    brings it down: a short run measures the boost, not what training gets), each of at least
    :data:`GPU_WINDOW_MIN_STEPS` steps. ``agree`` makes every
    rank of a multi-GPU run use the same count (the largest). ``run_steps`` calls
    ``progress.step()`` after each step; this function tells ``progress`` the phase and window size.
    """
    steps, repeats = int(params["steps"]), int(params.get("repeats", 1))
    per_window = steps
    out = Windows()
    min_time_s = float(params.get("min_time_s", 0.0))
    if on_gpu and min_time_s > 0:
        if progress is not None:
            progress.begin("sizing")
        seconds, _, _ = run_steps(steps)
        target = min_time_s / repeats
        per_window = max(GPU_WINDOW_MIN_STEPS, math.ceil(steps * target / max(seconds, 1e-9)))
        out.calibration = {"steps": steps, "seconds": seconds, "target_window_s": target}
    if agree is not None:
        per_window = agree(per_window)
    if progress is not None:
        progress.set_window(per_window)
        progress.begin("timed")
    for r in range(repeats):
        if progress is not None:
            progress.repeat = r
        reporter.phase("timed", "start", r)
        seconds, step_s, waited = run_steps(per_window)
        reporter.phase("timed", "end", r)
        out.window_s.append(seconds)
        out.window_steps.append(per_window)
        out.step_s.extend(step_s)
        out.data_wait_s += waited
    return out


def window_rates(ranks: list[TimedRun]) -> list[float]:
    """Images/s of each timed window over all ranks: every rank's images in window i / the longest
    rank's window i (DDP ranks step together, so the slowest rank sets the pace)."""
    if len(ranks) == 1 or not ranks[0].window_s or any(len(r.window_s) != len(ranks[0].window_s) for r in ranks):
        return ranks[0].window_rates() if len(ranks) == 1 else [sum(r.images for r in ranks) /
                                                                 max(r.total_s for r in ranks)]
    return [sum(r.batch * r.window_steps[i] for r in ranks) / max(r.window_s[i] for r in ranks)
            for i in range(len(ranks[0].window_s))]


def _ms_figure(values_s: list[float], name_unit: str = "ms") -> dict[str, Any]:
    ms = [v * 1e3 for v in values_s]
    return {"unit": name_unit, "higher_is_better": False, "samples": ms,
            "p50": percentile(ms, 50), "p90": percentile(ms, 90), "p99": percentile(ms, 99)}


def build_outcome(spec: ModelSpec, params: dict[str, Any], run: TimedRun, *, framework_label: str,
                  device_label: str, method_extra: str, details: dict[str, Any], warnings: list[str],
                  world_size: int = 1, rank_runs: list[TimedRun] | None = None,
                  single_gpu: TimedRun | None = None) -> Outcome:
    """The Outcome of a model run: images/s = all images of all ranks / the longest rank's timed wall
    time (never a mean of per-step rates), step time and latency percentiles, peak memory, data wait."""
    ranks = rank_runs or [run]
    total_images = sum(r.images for r in ranks)
    total_s = max(r.total_s for r in ranks)
    rate = total_images / total_s
    samples = window_rates(ranks)
    figures: dict[str, dict[str, Any]] = {}
    figures["step_time"] = {**_ms_figure(run.step_s), "what": "time per step (rank 0)"}
    if run.latency_b1_s:
        figures["latency_batch1"] = {**_ms_figure(run.latency_b1_s), "what": "one image per call, synchronized"}
    if params["mode"] == "infer":
        figures["latency_batch"] = {**_ms_figure(run.step_s), "what": f"one call of {run.batch} images"}
    compute_s = max(0.0, run.total_s - run.data_wait_s)
    figures["data_wait_fraction"] = {"value": run.data_wait_s / run.total_s if run.total_s else None,
                                     "unit": "fraction", "higher_is_better": False}
    figures["data_wait_s"] = {"value": run.data_wait_s, "unit": "s", "higher_is_better": False}
    figures["compute_s"] = {"value": compute_s, "unit": "s", "higher_is_better": False,
                            "what": "timed wall time not spent waiting for data"}
    for key in ("peak_allocated_bytes", "peak_reserved_bytes"):
        value = getattr(run, key)
        entry = {"value": None if value is None else value / GIB, "unit": "GiB", "higher_is_better": False}
        if value is None:
            entry["reason"] = run.peak_reason or "not measured"
        figures[key.replace("_bytes", "_gib")] = entry
    if run.warmup_s is not None:
        figures["warmup_s"] = {"value": run.warmup_s, "unit": "s", "higher_is_better": False,
                               "what": "all warm-up steps, including compilation when compile=true"}
    if run.first_step_s is not None:
        figures["first_step_s"] = {"value": run.first_step_s, "unit": "s", "higher_is_better": False,
                                   "what": "first warm-up step (compile time when compile=true)"}
    if world_size > 1:
        headline = median(samples)  # what the document shows as the figure
        figures["per_gpu_images_per_s"] = {"value": headline / world_size, "unit": "images/s",
                                           "samples": [r.images_per_s() for r in ranks]}
        if single_gpu is not None:
            one = median(single_gpu.window_rates())
            efficiency = headline / (world_size * one)
            figures["single_gpu_images_per_s"] = {"value": one, "unit": "images/s"}
            figures["scaling_efficiency"] = {"value": efficiency, "unit": "fraction"}
            if efficiency > 1.0:
                warnings.append(f"scaling efficiency {efficiency:.0%} is above 100 %: the one-GPU run was slowed by "
                                "something the multi-GPU run was not (or the measurement is off); check both")
            elif efficiency < 0.5:
                warnings.append(f"scaling efficiency {efficiency:.0%} is below 50 %: communication or the data path "
                                "limits the multi-GPU run")
    if params["data"] != "synthetic" and run.total_s and run.data_wait_s / run.total_s > 0.1:
        warnings.append(f"{run.data_wait_s / run.total_s:.0%} of the timed time was spent waiting for data: the "
                        "input pipeline, not the GPU, limits this run")
    what = "training" if params["mode"] == "train" else "inference"
    data = ("synthetic data made once on the device (random, not zeros; no host-to-device copy)"
            if params["data"] == "synthetic" else
            f"images read from {params['data']} through the loader ({params['workers']} workers)")
    windows = (f"{len(samples)} timed window(s) of {run.window_steps[0] if run.window_steps else run.steps} steps"
               + (f" (sized so that together they last at least {params['min_time_s']:g} s)"
                  if run.extra.get("calibration") else ""))
    method = (
        f"{spec.title} {what} in {framework_label}, batch {run.batch} per GPU × {world_size} GPU(s), "
        f"{params['image_size']} px, {data}. {params['warmup']} warm-up steps, then {windows}; each window's "
        f"images/s = all images of its steps (all ranks) / its wall time from a synchronized start to a synchronize "
        f"after its last step (not a mean of per-step rates); the figure is the median of the windows, and "
        f"details.total_images_per_s = all timed images / all timed time. {method_extra}"
    )
    details = {**details, "model": spec.key, "task": spec.task, "framework": params["framework"],
               "world_size": world_size, "images_timed": total_images,
               "total_timed_s": total_s, "total_images_per_s": rate, "window_s": run.window_s,
               "window_steps": run.window_steps, "final_loss": run.final_loss, **run.extra}
    return Outcome(
        figure_name=f"{spec.title} {what} throughput",
        unit="images/s",
        samples=samples,
        higher_is_better=True,
        method=method,
        figures=figures,
        warnings=warnings,
        details=details,
        device=device_label,
    )
