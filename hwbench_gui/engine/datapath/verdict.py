"""From the stages' standalone rates to a verdict: which stage holds training back, and what to change.

Pure functions over numbers (images/s), so a verdict can be recomputed from a stored document and
tested without running anything. The chain an image passes through is storage → CPU (decode and
augment in the loader workers) → transfer (pin + host→device copy) → compute; the slowest link is
the bottleneck, unless the end-to-end rate falls well below even that link: then the stages
interfere (they share cores, memory bandwidth or the loader's queue) and the verdict says why.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from hwbench_gui.engine.datapath.stages import STAGES
from hwbench_gui.engine.spec.precision import FP32, TF32, from_label

#: End-to-end below this fraction of the slowest standalone stage = the stages interfere.
INTERFERENCE_RATIO = 0.7
#: End-to-end above the slowest stage by more than this fraction = a measurement is off.
CONSISTENCY_NOISE = 0.15
#: A dataset "fits in RAM" for caching when it takes at most this fraction of the available memory.
RAM_FIT_FRACTION = 0.5
#: Data wait above this fraction of the timed time is worth acting on.
DATA_WAIT_NOTABLE = 0.1
#: Epoch-start refills above this share of the timed time are worth acting on.
EPOCH_REFILL_NOTABLE = 0.05
#: A training step slower than this factor × its compute-only time while the loader runs = the
#: loader takes resources (CPU time, memory bandwidth) from the training process.
STEP_SLOWDOWN_NOTABLE = 1.15

BOTTLENECK_NAMES = {
    "disk": "storage (reading the files)",
    "decode": "JPEG decode on the CPU",
    "augment": "augmentation on the CPU",
    "transfer": "pinned copy to the device",
    "compute": "model compute",
    "interference": "stages interfere",
}


@dataclass
class Context:
    """What the verdict needs besides the rates (all known before or during the run)."""

    device: str  # "cuda" or "cpu"
    workers: int
    cpus: int
    batch: int
    images: int  # in the dataset the end-to-end loader reads
    dataset_bytes: int
    available_ram_bytes: int | None
    precision: str  # label: FP32, TF32, BF16-AMP, ...
    channels_last: bool
    model: str  # model key, e.g. resnet50
    image_size: int  # the model's input side (crop size)
    stored_width_px: int | None = None  # mean stored image size (None when unknown)
    stored_height_px: int | None = None
    read_delay_ms: float = 0.0
    dali_installed: bool = False

    @property
    def fits_in_ram(self) -> bool:
        return bool(self.available_ram_bytes) and self.dataset_bytes <= RAM_FIT_FRACTION * self.available_ram_bytes

    @property
    def batches_per_epoch(self) -> int:
        return self.images // max(1, self.batch)

    @property
    def usable_workers(self) -> int:
        return usable_workers(self.device, self.cpus)


def usable_workers(device: str, cpus: int) -> int:
    """Loader workers worth running: every CPU, less one for the training process when a GPU computes."""
    return max(1, cpus - 1) if device == "cuda" else max(1, cpus)


@dataclass
class Advice:
    action: str
    detail: str
    expected_images_per_s: float | None
    expected_gain: float | None  # expected end-to-end / measured end-to-end
    basis: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Verdict:
    bottleneck: str  # a key of BOTTLENECK_NAMES
    limiting_stage: str | None  # the stage key with the lowest standalone rate among the chain's links
    limiting_rate: float | None
    end_to_end: float | None
    text: str
    causes: list[str] = field(default_factory=list)
    data_wait_fraction: float | None = None
    gpu_util_percent: float | None = None
    gpu_util_reason: str | None = None
    step_slowdown: float | None = None  # the training step's own time with the loader running / alone
    epoch_refill_fraction: float | None = None  # share of the timed time lost refilling the loader at epoch starts
    chain: dict[str, str] = field(default_factory=dict)  # link -> stage key used for it
    consistency: dict[str, Any] = field(default_factory=dict)
    advice: list[Advice] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["bottleneck_name"] = BOTTLENECK_NAMES[self.bottleneck]
        data["advice"] = [a.to_json() for a in self.advice]
        return data


def _rate(rates: dict[str, float | None], key: str) -> float | None:
    value = rates.get(key)
    return float(value) if isinstance(value, (int, float)) and value > 0 else None


def chain_links(rates: dict[str, float | None], ctx: Context) -> dict[str, str]:
    """Link -> the stage that measures it: storage is the cached read when the dataset fits in RAM
    (after the first epoch the loader reads the page cache), else the cold read."""
    storage = "disk_cached" if ctx.fits_in_ram and _rate(rates, "disk_cached") else "disk_cold"
    links = {"storage": storage, "cpu": "cpu_n", "transfer": "transfer", "compute": "compute"}
    return {link: key for link, key in links.items() if _rate(rates, key) is not None}


def _cpu_part(rates: dict[str, float | None]) -> str:
    """'decode' or 'augment': whichever takes more of one worker's time per image."""
    decode, augment = _rate(rates, "decode_1"), _rate(rates, "augment_1")
    if decode is None or augment is None:
        return "decode" if augment is None else "augment"
    return "decode" if 1 / decode >= 1 / augment else "augment"


def _fmt(rate: float | None) -> str:
    return "not measured" if rate is None else f"{rate:,.0f} images/s"


def analyze(rates: dict[str, float | None], ctx: Context, *, data_wait_fraction: float | None,
            gpu_util_percent: float | None = None, gpu_util_reason: str | None = None,
            step_slowdown: float | None = None, epoch_refill_fraction: float | None = None) -> Verdict:
    """The verdict for standalone ``rates`` (stage key -> images/s; ``end_to_end`` among them).

    ``step_slowdown``: the end-to-end run's time per step outside the data wait divided by the
    compute-only time per step (None when unknown); above :data:`STEP_SLOWDOWN_NOTABLE` the loader
    visibly slows the training process itself. ``epoch_refill_fraction``: the share of the timed
    time the step waited at epoch starts beyond its usual wait (the loader refilling from empty).
    """
    links = chain_links(rates, ctx)
    e2e = _rate(rates, "end_to_end")
    if not links:
        return Verdict("interference", None, None, e2e, "No stage could be measured.", chain=links,
                       data_wait_fraction=data_wait_fraction)
    link_rates = {link: _rate(rates, key) for link, key in links.items()}
    slowest_link = min(link_rates, key=lambda link: link_rates[link])
    slowest_rate = link_rates[slowest_link]
    limiting_stage = links[slowest_link]
    stage_bottleneck = {"storage": "disk", "cpu": _cpu_part(rates), "transfer": "transfer",
                        "compute": "compute"}[slowest_link]

    consistency: dict[str, Any] = {"slowest_stage": limiting_stage, "slowest_rate": slowest_rate,
                                   "end_to_end": e2e, "noise_allowed": CONSISTENCY_NOISE}
    if e2e is not None:
        consistency["ratio"] = e2e / slowest_rate
        consistency["consistent"] = e2e <= slowest_rate * (1 + CONSISTENCY_NOISE)

    interfere = e2e is not None and e2e < INTERFERENCE_RATIO * slowest_rate
    causes = interference_causes(rates, ctx, data_wait_fraction, step_slowdown) if interfere else []
    bottleneck = "interference" if interfere else stage_bottleneck

    others = ", ".join(f"{link} {_fmt(rate)}" for link, rate in link_rates.items() if link != slowest_link)
    text = f"Bottleneck: {BOTTLENECK_NAMES[stage_bottleneck]} ({STAGES[limiting_stage].phrase}: {_fmt(slowest_rate)}"
    text += f"; {others})." if others else ")."
    if e2e is not None:
        text += f" End-to-end training: {_fmt(e2e)}, {e2e / slowest_rate:.0%} of the slowest stage."
    if interfere:
        text = (f"Stages interfere: end-to-end {_fmt(e2e)} is well below every stage's standalone rate (slowest: "
                f"{STAGES[limiting_stage].phrase}, {_fmt(slowest_rate)}). Likely cause: {causes[0]}"
                + (f" Also possible: {' '.join(causes[1:])}" if len(causes) > 1 else ""))
    if data_wait_fraction is not None:
        text += f" The training step waited for data {data_wait_fraction:.0%} of the timed time"
        text += f"; GPU utilisation {gpu_util_percent:.0f} %." if gpu_util_percent is not None else "."
    if step_slowdown is not None and step_slowdown > STEP_SLOWDOWN_NOTABLE and not interfere:
        text += (f" Outside the data wait each training step took {step_slowdown - 1:.0%} longer than alone: the "
                 f"{ctx.workers} loader workers take CPU time or memory bandwidth from the training process.")
    if epoch_refill_fraction is not None and epoch_refill_fraction > EPOCH_REFILL_NOTABLE:
        text += (f" Epoch starts cost {epoch_refill_fraction:.0%} of the timed time: the loader refills from empty "
                 f"every {ctx.batches_per_epoch} batches.")
    verdict = Verdict(bottleneck, limiting_stage, slowest_rate, e2e, text, causes, data_wait_fraction,
                      gpu_util_percent, gpu_util_reason, step_slowdown, epoch_refill_fraction, links, consistency)
    verdict.advice = advise(rates, ctx, verdict, stage_bottleneck)
    return verdict


def interference_causes(rates: dict[str, float | None], ctx: Context, data_wait: float | None,
                        step_slowdown: float | None = None) -> list[str]:
    """Likely reasons, most likely first, why end-to-end is far below every stage alone."""
    causes = []
    if step_slowdown is not None and step_slowdown > STEP_SLOWDOWN_NOTABLE:
        causes.append(f"the training step itself ran {step_slowdown:.1f}× slower than alone while the {ctx.workers} "
                      "loader workers ran (measured): they compete with it for CPU time or memory bandwidth.")
    if ctx.device == "cpu":
        causes.append(f"training and the {ctx.workers} loader workers share the same {ctx.cpus} CPUs; each stage "
                      "had every core to itself when measured alone.")
    elif ctx.workers >= ctx.cpus:
        causes.append(f"{ctx.workers} loader workers on {ctx.cpus} CPUs leave no core for the training process and its "
                      "pin-memory thread: the workers starve it of CPU.")
    if ctx.batches_per_epoch < 2 * max(1, ctx.workers):
        causes.append(f"an epoch holds only {ctx.batches_per_epoch} batches for {ctx.workers} workers: at every "
                      "epoch start the loader refills its queue and few workers have work.")
    if not causes:
        if data_wait is not None and data_wait > DATA_WAIT_NOTABLE:
            causes.append("too little prefetch for bursts of slow batches, or decode workers and the copy competing "
                          "for memory bandwidth (the step waited for data although every stage alone is faster).")
        else:
            causes.append("memory bandwidth or caches shared between the loader workers and the training step.")
    return causes


def _min_rate(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return min(present) if present else None


def _advice(action: str, detail: str, expected: float | None, e2e: float | None, basis: str) -> Advice:
    gain = expected / e2e if expected is not None and e2e else None
    return Advice(action, detail, expected, gain, basis)


def _compute_what_if(action: str, detail: str, what_if: float | None, compute: float | None, feed: float | None,
                     e2e: float | None, how_to_measure: str) -> Advice:
    """Advice from a compute rate measured with one setting changed, capped by what the data path feeds."""
    if what_if is None:
        return _advice(action, detail, None, e2e, f"not measured here; {how_to_measure}")
    expected = _min_rate([what_if, feed])
    basis = f"compute-only rate measured with this setting: {_fmt(what_if)}"
    if compute and what_if < compute:
        detail += f" Measured slower here ({_fmt(what_if)} against {_fmt(compute)}): keep the current setting."
    elif feed is not None and compute and feed < what_if:
        basis += f", capped by the data path's {_fmt(feed)}"
    return _advice(action, detail, expected, e2e, basis)


def advise(rates: dict[str, float | None], ctx: Context, verdict: Verdict, stage_bottleneck: str) -> list[Advice]:
    """Concrete changes with the end-to-end rate each should reach (``None`` where it cannot be
    predicted from this run's measurements; ``basis`` says how each was estimated)."""
    e2e = verdict.end_to_end
    links = verdict.chain
    r = {link: _rate(rates, key) for link, key in links.items()}
    advice: list[Advice] = []
    cuda = ctx.device == "cuda"
    interfere = verdict.bottleneck == "interference"

    usable = ctx.usable_workers
    if stage_bottleneck in ("decode", "augment") and r.get("cpu") and ctx.workers < usable and not interfere:
        decode_all, decode_n = _rate(rates, "decode_all"), _rate(rates, "decode_n")
        if decode_all and decode_n:
            cpu_new = r["cpu"] * decode_all / decode_n
            basis = (f"decode + augment rate measured here × the measured decode speed-up from "
                     f"{max(1, ctx.workers)} to {usable} worker processes ({decode_all / decode_n:.2f}×, against "
                     f"{usable / max(1, ctx.workers):.1f}× if it scaled linearly), capped by the other stages")
        else:
            cpu_new = r["cpu"] / max(1, ctx.workers) * usable
            basis = ("decode + augment rate per worker measured here × the new worker count, capped by the other "
                     "stages (assumes linear scaling across cores: the decode scaling was not measured)")
        expected = _min_rate([r.get("storage"), cpu_new, r.get("transfer"), r.get("compute")])
        advice.append(_advice(
            f"Use {usable} loader workers instead of {ctx.workers}",
            f"num_workers={usable}" + (" (one core left for the training process)" if cuda else "") + ".",
            expected, e2e, basis))
    starved = (interfere or (verdict.step_slowdown or 0) > STEP_SLOWDOWN_NOTABLE) and ctx.workers >= ctx.cpus
    if starved and cuda:
        advice.append(_advice(f"Use {usable} loader workers instead of {ctx.workers}",
                              "Leave a core to the training process and the pin-memory thread.",
                              None, e2e, "not predictable from standalone rates; rerun with workers="
                              f"{usable} to measure"))
    if interfere or (verdict.data_wait_fraction or 0) > DATA_WAIT_NOTABLE and stage_bottleneck == "compute":
        advice.append(_advice(
            "Pinned memory and deeper prefetch",
            "DataLoader(pin_memory=True, persistent_workers=True, prefetch_factor=4 or more) and non_blocking "
            "copies; this run already used them" + (" (pinning needs CUDA)" if not cuda else "") + ".",
            verdict.limiting_rate, e2e, "at best the slowest stage's standalone rate"))
    refill = verdict.epoch_refill_fraction
    if refill is not None and refill > EPOCH_REFILL_NOTABLE and e2e:
        advice.append(_advice(
            "Keep the loader busy across epoch boundaries",
            f"Each epoch of {ctx.batches_per_epoch} batches starts with an empty prefetch queue. Draw several passes "
            "per DataLoader epoch (e.g. RandomSampler(dataset, num_samples=k * len(dataset))) so the workers "
            "prefetch straight through the boundary.",
            min(verdict.limiting_rate or math.inf, e2e / (1 - refill)), e2e,
            f"end-to-end without the measured epoch-start waits ({refill:.0%} of the time), capped by the slowest "
            "stage"))
    if ctx.batches_per_epoch < 2 * max(1, ctx.workers):
        advice.append(_advice(
            "More images per epoch (or fewer workers)",
            f"An epoch of {ctx.batches_per_epoch} batches keeps at most that many of {ctx.workers} workers busy.",
            None, e2e, "not predictable; measure with a larger dataset"))

    cold, downstream = _rate(rates, "disk_cold"), _min_rate([r.get("cpu"), r.get("transfer"), r.get("compute")])
    first_epoch_slow = cold is not None and downstream is not None and cold < 0.9 * downstream
    if stage_bottleneck == "disk" or first_epoch_slow:
        in_memory = _min_rate([r.get("cpu"), r.get("transfer"), r.get("compute")])
        if ctx.fits_in_ram:
            detail = (f"The dataset ({ctx.dataset_bytes / 2**30:.2f} GiB) fits in RAM "
                      f"({(ctx.available_ram_bytes or 0) / 2**30:.1f} GiB available): hold the file bytes in memory "
                      "(e.g. read them once into a list the Dataset decodes from).")
            if stage_bottleneck != "disk":
                detail += " Only the first epoch reads the disk at the uncached rate; later ones hit the page cache."
            advice.append(_advice("Cache the dataset in RAM", detail, in_memory, e2e,
                                  "the decode + augment rate from bytes in memory measured here, capped by transfer "
                                  "and compute"))
        if stage_bottleneck == "disk":
            slow = ("each read waits for the simulated per-file latency (read_delay_ms)" if ctx.read_delay_ms
                    else f"reads reach {_fmt(r.get('storage'))}")
            advice.append(_advice("Faster storage or more parallel reads",
                                  f"Local NVMe, or more reader threads/workers for high-latency storage; now {slow}.",
                                  in_memory, e2e, "upper bound: the other stages' rates"))

    # Decode and augmentation share the loader workers: whichever of the two dominates, moving both
    # to the GPU or shrinking the stored images relieves them.
    cpu_limits = stage_bottleneck in ("decode", "augment") or (interfere and verdict.limiting_stage == "cpu_n")
    if cpu_limits:
        gpu_decode = _rate(rates, "gpu_decode")
        if cuda:
            tools = "torchvision.io.decode_jpeg(device='cuda') (nvJPEG), then crop/flip/normalise on the GPU"
            if ctx.dali_installed:
                tools += ", or NVIDIA DALI (installed here)"
            if gpu_decode is not None and r.get("compute"):
                shared = 1 / (1 / gpu_decode + 1 / r["compute"])  # decode and training share the GPU
                expected = _min_rate([r.get("storage"), shared])
                basis = ("nvJPEG decode rate measured here, sharing the GPU's time with the compute rate; crop, flip "
                         "and normalise on the GPU assumed cheap next to both (not measured)")
            else:
                expected, basis = None, "GPU decode was not measured in this run"
            action = "Decode JPEGs on the GPU" if _cpu_part(rates) == "decode" else "Decode and augment on the GPU"
            advice.append(_advice(action, tools + ".", expected, e2e, basis))
        stored = (ctx.stored_width_px or 0) * (ctx.stored_height_px or 0)
        target_side = round(ctx.image_size * 256 / 224)
        short = min(ctx.stored_width_px or 0, ctx.stored_height_px or 0)
        if stored and short > 1.3 * target_side and r.get("cpu"):
            factor = (short / target_side) ** 2
            decode, augment = _rate(rates, "decode_1"), _rate(rates, "augment_1")
            share = (1 / decode) / (1 / decode + 1 / augment) if decode and augment else 1.0
            cpu_new = r["cpu"] / (share / factor + (1 - share))
            expected = _min_rate([r.get("storage"), cpu_new, r.get("transfer"), r.get("compute")])
            advice.append(_advice(
                f"Store smaller images (short side {target_side} px instead of {short} px)",
                f"Resize the dataset once; a {ctx.image_size} px crop does not need {short} px sources. Decode time "
                f"scales with pixels ({factor:.1f}× fewer).",
                expected, e2e, "decode share of the worker's time divided by the pixel ratio; augmentation cost "
                "assumed unchanged"))

    if stage_bottleneck == "compute" and not interfere:
        feed = _min_rate([r.get("storage"), r.get("cpu"), r.get("transfer")])
        if cuda and from_label(ctx.precision) in (FP32, TF32):
            advice.append(_compute_what_if(
                "Mixed precision (bf16-amp)", "torch.autocast(dtype=torch.bfloat16) runs convolutions and matmuls "
                "on the tensor cores.", _rate(rates, "compute_bf16"), r.get("compute"), feed, e2e,
                f"run model.{ctx.model} with precision=bf16-amp to measure"))
        if not ctx.channels_last:
            advice.append(_compute_what_if(
                "Channels-last memory format", "model and inputs .to(memory_format=torch.channels_last)"
                + (": cuDNN's fastest convolution kernels are NHWC." if cuda else "."),
                _rate(rates, "compute_channels_last"), r.get("compute"), feed, e2e,
                "rerun with channels_last=true to measure"))
        if not cuda:
            advice.append(_advice("Train on a GPU", "The CPU computes the model; the data path is faster than it.",
                                  None, e2e, "not measurable on this machine"))
        if r.get("compute") and e2e:
            advice.append(_advice("Nothing to gain in the data path", f"The input pipeline can deliver "
                                  f"{_fmt(feed)}; the "
                                  "model is the limit.", None, None, "stage rates measured here"))

    if stage_bottleneck == "transfer" and not interfere and cuda:
        expected = _min_rate([r.get("storage"), r.get("cpu"), r["transfer"] * 4, r.get("compute")])
        advice.append(_advice("Copy uint8 images and normalise on the GPU",
                              "Float32 batches are 4× the bytes of uint8; convert and normalise after the copy.",
                              expected, e2e, "copy rate measured here × 4 (a quarter of the bytes)"))
    return advice
