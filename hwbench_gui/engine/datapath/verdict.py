"""From the stages' standalone rates to a verdict: which stage holds training back, and what to change.

Pure functions over numbers (images/s), so a verdict can be recomputed from a stored document and
tested without running anything. The chain an image passes through is storage → CPU (decode and
augment in the loader workers) → transfer (pin + host→device copy) → compute; the slowest link is
the bottleneck. A bound the verdict names is never beaten by a configuration it measured: a
configuration that runs a link's stage as it was measured alone and goes faster end to end raises
that link to its rate (the standalone method underestimated it), and one that changes how the
stage runs (another worker count, memory format, decode placement) is said to move the bound. A
compute bound with the GPU idle part of the time is the host's launch path. When the end-to-end
rate falls below the slowest link, something is lost between the stages; a cause for that loss
is named only when a configuration measured end to end without it
(:mod:`hwbench_gui.engine.datapath.tryouts`) recovers at least half of the loss. Otherwise the
verdict says what was ruled out and how much stays unexplained.
"""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass, field
from typing import Any

from hwbench_gui.engine.datapath.defaults import IMAGENET_TRAIN_IMAGES
from hwbench_gui.engine.datapath.stages import stage_named
from hwbench_gui.engine.datapath.tryouts import BETTER_BY, LoaderConfig, Tried, changed_fields
from hwbench_gui.engine.models.common import GPU_IDLE_NOTE_BELOW_PERCENT
from hwbench_gui.engine.spec.precision import FP32, TF32, from_label

#: End-to-end below this fraction of the slowest standalone stage = the stages interfere.
INTERFERENCE_RATIO = 0.7
#: End-to-end above the slowest stage by more than this fraction = a measurement is off.
CONSISTENCY_NOISE = 0.15
#: A dataset "fits in RAM" for caching when it takes at most this fraction of the available memory.
RAM_FIT_FRACTION = 0.5
#: Data wait above this fraction of the timed time is worth acting on.
DATA_WAIT_NOTABLE = 0.1
#: Epoch-start refills above this share of the timed time (or of the user's epoch) are worth acting on.
EPOCH_REFILL_NOTABLE = 0.05
#: End-to-end below (1 - this) × the slowest stage = a loss between the stages worth explaining.
LOSS_NOTABLE = 0.1
#: Timed windows of one configuration spreading more than this share: the figure is approximate.
UNSETTLED_SPREAD = 0.08
#: A cause is named when the what-if without it recovers at least this share of the loss.
PROOF_SHARE = 0.5
#: A training step slower than this factor × its compute-only time while the loader runs = the
#: loader takes resources (CPU time, memory bandwidth) from the training process.
STEP_SLOWDOWN_NOTABLE = 1.15

BOTTLENECK_NAMES = {
    "disk": "storage (reading the files)",
    "decode": "JPEG decode on the CPU",
    "augment": "augmentation on the CPU",
    "transfer": "pinned copy to the device",
    "compute": "model compute",
    "launch": "the host's launch path (kernel launches, Python)",
    "interference": "stages interfere",
}
#: The bottlenecks named otherwise when the CPU trains (no copy to a device there).
CPU_BOTTLENECK_NAMES = {"transfer": "collating batches"}

#: The chain's links in words (the verdict's sentences), and where the CPU trains.
LINK_WORDS = {"storage": "storage", "cpu": "decode + augment", "transfer": "pin + copy", "compute": "model compute"}
CPU_LINK_WORDS = {"transfer": "collate"}

#: The loader settings each link's standalone measurement depends on: a configuration that changes
#: one of them runs that stage differently from how it was measured (disk reads use one thread per
#: worker; compute on the CPU gets the cores the workers leave).
LINK_SETTINGS = {"storage": {"workers"}, "cpu": {"workers", "gpu_decode", "normalize_on_device"},
                 "transfer": {"pin_memory", "gpu_decode", "normalize_on_device"}, "compute": {"channels_last"}}
CPU_LINK_SETTINGS = {"compute": {"channels_last", "workers"}}


#: The loader settings in words (what a configuration changed).
SETTING_WORDS = {"workers": "the worker count", "prefetch": "the prefetch depth", "pin_memory": "pinning",
                 "channels_last": "the memory format", "gpu_decode": "where JPEGs are decoded",
                 "normalize_on_device": "where batches are normalised"}


def bottleneck_name(key: str, device: str) -> str:
    return CPU_BOTTLENECK_NAMES.get(key, BOTTLENECK_NAMES[key]) if device == "cpu" else BOTTLENECK_NAMES[key]


def link_word(link: str, device: str) -> str:
    return CPU_LINK_WORDS.get(link, LINK_WORDS[link]) if device == "cpu" else LINK_WORDS[link]


def link_settings(link: str, device: str) -> set[str]:
    return CPU_LINK_SETTINGS.get(link, LINK_SETTINGS[link]) if device == "cpu" else LINK_SETTINGS[link]


def settings_moved(link: str, config: LoaderConfig, base: LoaderConfig, ctx: Context) -> set[str]:
    """The settings of ``link``'s standalone measurement that ``config`` changes from ``base`` (a
    worker count that leaves compute on the CPU the same threads does not count)."""
    moved = changed_fields(config, base) & link_settings(link, ctx.device)
    if link == "compute" and ctx.device == "cpu" and "workers" in moved and \
            max(1, ctx.cpus - config.workers) == max(1, ctx.cpus - base.workers):
        moved.discard("workers")
    return moved


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

    @property
    def compute_threads(self) -> int:
        """Threads the model trains with on the CPU: the cores the loader workers leave."""
        return max(1, self.cpus - self.workers)

    def describe(self) -> str:
        """The default configuration the stages were measured with, in words."""
        workers = f"{self.workers} loader worker{'' if self.workers == 1 else 's'}"
        return (f"{self.model}, {self.precision}, batch {self.batch}, {self.image_size} px, "
                f"{'channels-last' if self.channels_last else 'NCHW'}, {workers}")


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
    measured: bool = False  # expected_images_per_s was measured end to end (not estimated)

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
    loss: dict[str, Any] = field(default_factory=dict)  # the loss between stages: causes proven, ruled out
    device: str = "cuda"  # where the model trains
    #: link -> {"alone", "rate", "by"}: a link held to a measured end-to-end rate above its standalone one
    raised: dict[str, Any] = field(default_factory=dict)
    #: the fastest measured configuration above the named bound (it changes how the limiting stage runs)
    moved_by: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["bottleneck_name"] = bottleneck_name(self.bottleneck, self.device)
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


def _share(fraction: float) -> str:
    """A share in words that never reads 0 % for a cost that is there."""
    return "under 0.1%" if 0 < fraction < 0.001 else f"{fraction:.1%}" if fraction < 0.1 else f"{fraction:.0%}"


def epoch_whose(epoch_start: dict[str, Any]) -> str:
    """Whose epoch ``epoch_start`` (:func:`epoch_start_share`'s record) was priced for, in words."""
    source = epoch_start.get("epoch_of")
    images = epoch_start.get("epoch_images")
    if source is None and images == IMAGENET_TRAIN_IMAGES:
        source = "imagenet"
    if source == "imagenet":
        return "ImageNet-1k's epoch (the dataset here is generated; epoch_images sets yours)"
    if source == "param":
        return "your epoch (epoch_images)"
    return "an epoch over your folder's images"


def epoch_text(epoch_start: dict[str, Any], batch: int) -> str:
    """'ImageNet-1k's epoch (...): 1,281,167 images, 80,072 batches of 16' (what an epoch start's share is of)."""
    images, batches = epoch_start.get("epoch_images"), epoch_start.get("epoch_batches")
    size = f"{images:,} images, " if isinstance(images, int) else ""
    return f"{epoch_whose(epoch_start)}: {size}{batches:,} batches of {batch}"


def measured_bounds(alone: dict[str, float | None], e2e: float | None, ctx: Context, tried: list[Tried],
                    base: LoaderConfig | None) -> tuple[dict[str, float], dict[str, Any]]:
    """(link -> the rate the verdict holds it to, link -> how it was raised). A configuration
    measured end to end that runs a link's stage as it was measured alone (the default, or a
    what-if that changes none of :func:`link_settings`) shows the link delivers at least its rate:
    the link is held to the fastest such rate when that beats the standalone one by more than
    :data:`~hwbench_gui.engine.datapath.tryouts.BETTER_BY` (what the analyzer counts as a
    difference between two configurations; closer, the two are the same figure)."""
    runs: list[tuple[str, float, LoaderConfig | None]] = []
    if e2e is not None:
        runs.append(("the default configuration", e2e, None))
    if base is not None:
        runs += [(t.config.changes_from(base), t.rate, t.config) for t in tried if t.rate is not None]
    bounds: dict[str, float] = {}
    raised: dict[str, Any] = {}
    for link, rate in alone.items():
        if rate is None:
            continue
        same = [(words, r) for words, r, config in runs
                if config is None or not settings_moved(link, config, base, ctx)]
        top = max(same, key=lambda run: run[1], default=None)
        bounds[link] = rate
        if top is not None and top[1] > rate * (1 + BETTER_BY):
            bounds[link] = top[1]
            raised[link] = {"alone": rate, "rate": top[1], "by": top[0]}
    return bounds, raised


def _link_phrase(link: str, stage: str, ctx: Context) -> str:
    phrase = stage_named(stage, ctx.device).phrase
    if link == "compute" and ctx.device == "cpu":
        threads = ctx.compute_threads
        phrase += (f" on {threads} thread{'' if threads == 1 else 's'} (the {ctx.cpus} CPUs less one per loader "
                   "worker)")
    return phrase


def _bound_text(link: str, stage: str, rate: float, raised: dict[str, Any], ctx: Context) -> str:
    if link in raised:
        r = raised[link]
        return (f"{_link_phrase(link, stage, ctx)}: at least {_fmt(rate)}, reached end to end by {r['by']} "
                f"({_fmt(r['alone'])} alone: its standalone method underestimates it)")
    return f"{_link_phrase(link, stage, ctx)}: {_fmt(rate)}"


def analyze(rates: dict[str, float | None], ctx: Context, *, data_wait_fraction: float | None,
            gpu_util_percent: float | None = None, gpu_util_reason: str | None = None,
            step_slowdown: float | None = None, epoch_refill_fraction: float | None = None,
            tried: list[Tried] | None = None, base: LoaderConfig | None = None,
            epoch_start: dict[str, Any] | None = None) -> Verdict:
    """The verdict for standalone ``rates`` (stage key -> images/s; ``end_to_end`` among them).

    ``step_slowdown``: the end-to-end run's time per step outside the data wait divided by the
    compute-only time per step (None when unknown). ``epoch_refill_fraction``: the share of the
    timed time the step waited at epoch starts beyond its usual wait. ``tried``: configurations
    measured end to end, as changes from ``base`` (the configuration ``end_to_end`` ran);
    ``epoch_start``: the measured cost of an epoch start priced for the user's epoch
    (:func:`epoch_start_share`). ``gpu_util_percent``: the GPU's busy share of the end-to-end
    timed loop.
    """
    tried = list(tried or [])
    links = chain_links(rates, ctx)
    e2e = _rate(rates, "end_to_end")
    if not links:
        return Verdict("interference", None, None, e2e, "No stage could be measured.", chain=links,
                       data_wait_fraction=data_wait_fraction, device=ctx.device)
    alone = {link: _rate(rates, key) for link, key in links.items()}
    link_rates, raised = measured_bounds(alone, e2e, ctx, tried, base)
    slowest_link = min(link_rates, key=lambda link: link_rates[link])
    slowest_rate = link_rates[slowest_link]
    limiting_stage = links[slowest_link]
    stage_bottleneck = {"storage": "disk", "cpu": _cpu_part(rates), "transfer": "transfer",
                        "compute": "compute"}[slowest_link]

    consistency: dict[str, Any] = {"slowest_stage": limiting_stage, "slowest_rate": slowest_rate,
                                   "end_to_end": e2e, "noise_allowed": CONSISTENCY_NOISE}
    if e2e is not None:
        # The standalone methods' check: end to end above the slowest stage alone beyond noise.
        first = min((link for link in alone if alone[link] is not None), key=lambda link: alone[link])
        consistency["ratio"] = e2e / slowest_rate
        consistency["consistent"] = e2e <= alone[first] * (1 + CONSISTENCY_NOISE)
        consistency["slowest_alone_stage"], consistency["slowest_alone_rate"] = links[first], alone[first]

    interfere = e2e is not None and e2e < INTERFERENCE_RATIO * slowest_rate
    loss = explain_loss(link_rates, slowest_link, e2e, ctx, tried, base, data_wait_fraction, step_slowdown)
    causes = [c["text"] for c in loss.get("causes", [])]
    # The GPU idle for part of a compute-bound step: the step waits on the host queuing its kernels.
    launch = (stage_bottleneck == "compute" and not interfere and ctx.device == "cuda"
              and gpu_util_percent is not None and gpu_util_percent < GPU_IDLE_NOTE_BELOW_PERCENT)
    bottleneck = "interference" if interfere else "launch" if launch else stage_bottleneck

    bound = _bound_text(slowest_link, limiting_stage, slowest_rate, raised, ctx)
    others = ", ".join(f"{link_word(link, ctx.device)} {_fmt(rate)}" for link, rate in link_rates.items()
                       if link != slowest_link)
    text = (f"Bottleneck of the default configuration ({ctx.describe()}): "
            f"{bottleneck_name(bottleneck if launch else stage_bottleneck, ctx.device)} ({bound}")
    text += f"; {others})." if others else ")."
    if launch:
        text += (f" The GPU was busy only {gpu_util_percent:.0f} % of the end-to-end timed time while the step "
                 "was compute-bound: it waits on the CPU queuing its kernels (Python, kernel launches). A larger "
                 "batch, channels-last or CUDA graphs (torch.compile) give the GPU more work per launch.")
    if e2e is not None:
        text += f" End-to-end training: {_fmt(e2e)}, {e2e / slowest_rate:.0%} of the slowest stage."
    if interfere:
        text = (f"Stages interfere: end-to-end {_fmt(e2e)} is well below every stage's standalone rate (slowest: "
                f"{bound}).")
    if loss:
        text += " " + loss["text"]
    if data_wait_fraction is not None:
        text += f" The training step waited for data {data_wait_fraction:.0%} of the timed time"
        text += (f"; the GPU was busy {gpu_util_percent:.0f} % of it." if gpu_util_percent is not None and not launch
                 else ".")
    if step_slowdown is not None and step_slowdown > STEP_SLOWDOWN_NOTABLE and not interfere:
        text += (f" Outside the data wait each training step took {step_slowdown - 1:.0%} longer than alone while "
                 f"the {ctx.workers} loader workers ran.")
    if epoch_refill_fraction is not None and epoch_refill_fraction > EPOCH_REFILL_NOTABLE:
        text += (f" Epoch starts cost {epoch_refill_fraction:.0%} of the timed time: the loader refills from empty "
                 f"every {ctx.batches_per_epoch:,} batches (one pass over the {ctx.images:,} images read here, "
                 f"batch {ctx.batch}).")
    if epoch_start and epoch_start.get("fraction") is not None:
        text += (f" An epoch start costs {epoch_start['cost_s']:.2f} s (measured apart from the headline): "
                 f"{_share(epoch_start['fraction'])} of {epoch_text(epoch_start, ctx.batch)}.")
    moved_by: dict[str, Any] = {}
    beyond = [t for t in tried if t.rate is not None and base is not None and t.rate > slowest_rate * (1 + BETTER_BY)]
    if beyond:
        top = max(beyond, key=lambda t: t.rate)
        fields = sorted(settings_moved(slowest_link, top.config, base, ctx))
        moved_by = {"key": top.key, "rate": top.rate, "changes": top.config.changes_from(base), "settings": fields}
        settings = ", ".join(SETTING_WORDS[f] for f in fields)
        text += (f" {top.config.changes_from(base)} ran {_fmt(top.rate)} end to end, above this bound: it changes how "
                 f"{link_word(slowest_link, ctx.device)} runs ({settings}), so the bound is the default "
                 "configuration's, not the machine's.")
    verdict = Verdict(bottleneck, limiting_stage, slowest_rate, e2e, text, causes, data_wait_fraction,
                      gpu_util_percent, gpu_util_reason, step_slowdown, epoch_refill_fraction, links, consistency,
                      loss=loss, device=ctx.device, raised=raised, moved_by=moved_by)
    verdict.advice = advise(rates, ctx, verdict, stage_bottleneck, tried, base, epoch_start)
    return verdict


def epoch_start_cost(costs_s: list[float]) -> float | None:
    """The cost of an epoch start from the forced starts' costs: their median (one start slowed by
    something else moves the mean, not the median); None without any."""
    return statistics.median(costs_s) if costs_s else None


def epoch_start_share(cost_s: float | None, step_s: float | None, epoch_batches: int) -> float | None:
    """Share of an epoch of ``epoch_batches`` steps of ``step_s`` that one epoch start of
    ``cost_s`` takes (None when a figure is missing)."""
    if cost_s is None or not step_s or epoch_batches < 1:
        return None
    return cost_s / (cost_s + epoch_batches * step_s)


#: What could lose images/s between stages that are each fast enough, and the change that removes
#: it: (key, the cause in words, the configuration fields whose change removes it, a test on the
#: change).
_HYPOTHESES = (
    ("cores", "the loader workers take CPU time from the training process", "workers",
     lambda config, base: config.workers < base.workers),
    ("prefetch", "the prefetch queue is too shallow for bursts of slow batches", "prefetch",
     lambda config, base: config.prefetch > base.prefetch),
    ("pinning", "pinning every batch (the pin-memory thread's copy) competes for memory bandwidth", "pin_memory",
     lambda config, base: config.pin_memory != base.pin_memory),
    ("cpu_side", "decode and augmentation in the workers compete with the training process for memory bandwidth",
     "gpu_decode", lambda config, base: config.gpu_decode and not base.gpu_decode),
    ("float_batches", "the workers' float conversion and normalisation (four times the bytes of uint8 through shared "
     "memory, pinning and the copy)", "normalize_on_device",
     lambda config, base: config.normalize_on_device and not base.normalize_on_device),
)


def explain_loss(link_rates: dict[str, float | None], slowest_link: str, e2e: float | None, ctx: Context,
                 tried: list[Tried], base: LoaderConfig | None, data_wait: float | None,
                 step_slowdown: float | None) -> dict[str, Any]:
    """The loss between the slowest stage and end-to-end, and what the measured what-ifs say of it:
    ``causes`` (each proven: its what-if recovered at least :data:`PROOF_SHARE` of the loss),
    ``ruled_out`` (stages far above end-to-end, and what-ifs that recovered less) and
    ``unexplained``. Empty when end-to-end is within :data:`LOSS_NOTABLE` of the slowest stage."""
    slowest = link_rates[slowest_link]
    if e2e is None or slowest is None or e2e >= (1 - LOSS_NOTABLE) * slowest:
        return {}
    lost = slowest - e2e
    out: dict[str, Any] = {"lost_images_per_s": lost, "share": lost / slowest, "causes": [], "ruled_out": [],
                           "not_tried": []}
    out["ruled_out"].extend(f"{link_word(link, ctx.device)} ({_fmt(rate)} alone)" for link, rate in link_rates.items()
                            if link != slowest_link and rate is not None)
    for key, words, field_name, removes in _HYPOTHESES:
        if key in ("cpu_side", "float_batches") and ctx.device != "cuda":
            continue
        trials = [t for t in tried if t.rate is not None and base is not None
                  and changed_fields(t.config, base) == {field_name} and removes(t.config, base)]
        if not trials:
            if key != "pinning" or ctx.device == "cuda":
                out["not_tried"].append(words)
            continue
        top = max(trials, key=lambda t: t.rate)
        recovered = (top.rate - e2e) / lost
        evidence = f"{top.config.changes_from(base)}: {_fmt(top.rate)} end to end, "
        if recovered <= 0:  # a loss is never negative: slower than the default recovers none of it
            evidence += f"no faster than the default's {_fmt(e2e)}"
        else:
            evidence += f"{recovered:.0%} of the" if recovered <= 1 else "more than all of the"
            evidence += f" {_fmt(lost)} lost"
        if recovered >= PROOF_SHARE:
            out["causes"].append({"key": key, "text": f"{words} (measured: {evidence}).", "recovered": recovered,
                                  "tried": top.key})
        else:
            out["ruled_out"].append(f"{words} ({evidence})")
    share = f"{lost / slowest:.0%}"
    if out["causes"]:
        out["text"] = (f"Cause of the {_fmt(lost)} lost between the stages ({share} of the slowest stage's rate): "
                       + " ".join(c["text"] for c in out["causes"]))
    else:
        out["unexplained"] = lost
        out["text"] = (f"Unexplained: {_fmt(lost)} ({share}) of the slowest stage's rate is lost end to end, and no "
                       "measured what-if recovered half of it")
        if data_wait is not None and data_wait > DATA_WAIT_NOTABLE:
            out["text"] += f" (the step waited for data {data_wait:.0%} of the time)"
        out["text"] += "."
    if out["ruled_out"]:
        out["text"] += " Ruled out: " + "; ".join(out["ruled_out"]) + "."
    if out["not_tried"]:
        out["text"] += " Not tried within the budget: " + "; ".join(out["not_tried"]) + "."
    if step_slowdown is not None and step_slowdown > STEP_SLOWDOWN_NOTABLE:
        out["step_slowdown"] = step_slowdown
    return out


def _min_rate(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return min(present) if present else None


def _advice(action: str, detail: str, expected: float | None, e2e: float | None, basis: str,
            measured: bool = False) -> Advice:
    gain = expected / e2e if expected is not None and e2e else None
    return Advice(action, detail, expected, gain, basis, measured)


def tried_advice(tried: list[Tried], base: LoaderConfig, e2e: float | None) -> list[Advice]:
    """One line per configuration measured end to end, fastest first; failed ones last, with why."""
    lines = []
    for t in sorted((t for t in tried if t.rate is not None), key=lambda t: -t.rate):
        changes = t.config.changes_from(base) or "the default configuration again"
        better = e2e is not None and t.rate > e2e * (1 + BETTER_BY)
        worse = e2e is not None and t.rate < e2e * (1 - BETTER_BY)
        detail = t.config.describe() + "."
        spread = (max(t.samples) - min(t.samples)) / sorted(t.samples)[len(t.samples) // 2] if t.samples else 0.0
        if spread > UNSETTLED_SPREAD:
            detail += f" Its timed windows spread {spread:.0%} (the loader had not settled): an approximate figure."
        if worse:
            detail += " Measured slower: keep the default setting."
        elif not better:
            detail += " Within noise of the default."
        lines.append(_advice(changes, detail, t.rate, e2e,
                             f"measured end to end ({len(t.samples)} timed windows, the default's method)", True))
    for t in tried:
        if t.rate is None:
            lines.append(_advice(t.config.changes_from(base) or t.key, t.config.describe() + ".",
                                 None, e2e, f"not measured: {t.reason}"))
    return lines


def _compute_what_if(action: str, detail: str, what_if: float | None, compute: float | None, feed: float | None,
                     e2e: float | None) -> Advice | None:
    """Advice from a compute rate measured with one setting changed, capped by what the data path
    feeds (None when that rate was not measured)."""
    if what_if is None:
        return None
    expected = _min_rate([what_if, feed])
    basis = f"estimate: compute-only rate measured with this setting ({_fmt(what_if)})"
    if compute and what_if < compute:
        detail += f" Measured slower here ({_fmt(what_if)} against {_fmt(compute)}): keep the current setting."
    elif feed is not None and compute and feed < what_if:
        basis += f", capped by the data path's {_fmt(feed)}"
    return _advice(action, detail, expected, e2e, basis)


def advise(rates: dict[str, float | None], ctx: Context, verdict: Verdict, stage_bottleneck: str,
           tried: list[Tried] | None = None, base: LoaderConfig | None = None,
           epoch_start: dict[str, Any] | None = None) -> list[Advice]:
    """The changes measured end to end (``tried``), then the ones that cannot be tried cheaply with
    the end-to-end rate each should reach, estimated from the stage rates (``basis`` says how)."""
    e2e = verdict.end_to_end
    links = verdict.chain
    r = {link: _rate(rates, key) for link, key in links.items()}
    cuda = ctx.device == "cuda"
    interfere = verdict.bottleneck == "interference"
    tried = list(tried or [])
    advice: list[Advice] = tried_advice(tried, base, e2e) if base is not None else []
    tried_gpu_decode = any(t.config.gpu_decode for t in tried if t.rate is not None)

    share = (epoch_start or {}).get("fraction")
    if share is not None and share > EPOCH_REFILL_NOTABLE and e2e:
        advice.append(_advice(
            "Keep the loader busy across epoch boundaries",
            f"Each epoch start empties the prefetch queue ({epoch_start['cost_s']:.2f} s measured, "
            f"{share:.0%} of your epoch of {epoch_start['epoch_batches']:,} batches). Draw several passes per "
            "DataLoader epoch (RandomSampler(dataset, num_samples=k * len(dataset))) so the workers prefetch straight "
            "through the boundary.",
            e2e, e2e * (1 - share), "measured: steady-state end to end (the headline) against the same with one "
            "measured epoch start per epoch", True))

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
                                  "estimate: the decode + augment rate from bytes in memory measured here, capped by "
                                  "transfer and compute"))
        if stage_bottleneck == "disk":
            slow = ("each read waits for the simulated per-file latency (read_delay_ms)" if ctx.read_delay_ms
                    else f"reads reach {_fmt(r.get('storage'))}")
            advice.append(_advice("Faster storage or more parallel reads",
                                  f"Local NVMe, or more reader threads/workers for high-latency storage; now {slow}.",
                                  in_memory, e2e, "estimate: upper bound, the other stages' rates"))

    # Decode and augmentation share the loader workers: whichever of the two dominates, moving both
    # to the GPU or shrinking the stored images relieves them.
    cpu_limits = stage_bottleneck in ("decode", "augment") or (interfere and verdict.limiting_stage == "cpu_n")
    if cpu_limits:
        gpu_decode = _rate(rates, "gpu_decode")
        if cuda and not tried_gpu_decode and gpu_decode is not None and r.get("compute"):
            tools = "torchvision.io.decode_jpeg(device='cuda') (nvJPEG), then crop/flip/normalise on the GPU"
            if ctx.dali_installed:
                tools += ", or NVIDIA DALI (installed here)"
            shared = 1 / (1 / gpu_decode + 1 / r["compute"])  # decode and training share the GPU
            action = "Decode JPEGs on the GPU" if _cpu_part(rates) == "decode" else "Decode and augment on the GPU"
            advice.append(_advice(action, tools + ".", _min_rate([r.get("storage"), shared]), e2e,
                                  "estimate: nvJPEG decode rate measured here, sharing the GPU's time with the "
                                  "compute rate"))
        stored = (ctx.stored_width_px or 0) * (ctx.stored_height_px or 0)
        target_side = round(ctx.image_size * 256 / 224)
        short = min(ctx.stored_width_px or 0, ctx.stored_height_px or 0)
        if stored and short > 1.3 * target_side and r.get("cpu"):
            factor = (short / target_side) ** 2
            decode, augment = _rate(rates, "decode_1"), _rate(rates, "augment_1")
            part = (1 / decode) / (1 / decode + 1 / augment) if decode and augment else 1.0
            cpu_new = r["cpu"] / (part / factor + (1 - part))
            expected = _min_rate([r.get("storage"), cpu_new, r.get("transfer"), r.get("compute")])
            advice.append(_advice(
                f"Store smaller images (short side {target_side} px instead of {short} px)",
                f"Resize the dataset once; a {ctx.image_size} px crop does not need {short} px sources. Decode time "
                f"scales with pixels ({factor:.1f}× fewer).",
                expected, e2e, "estimate: decode share of the worker's time divided by the pixel ratio; "
                "augmentation cost assumed unchanged"))

    if stage_bottleneck == "compute" and not interfere:
        feed = _min_rate([r.get("storage"), r.get("cpu"), r.get("transfer")])
        if verdict.bottleneck == "launch":
            # Each of these gives the GPU more work per kernel the host queues.
            line = _compute_what_if(
                f"Larger batch ({2 * ctx.batch})", f"Twice the images per step: the host queues the same kernels "
                f"for {2 * ctx.batch} images instead of {ctx.batch} (scale the learning rate with it).",
                _rate(rates, "compute_batch2x"), r.get("compute"), feed, e2e)
            advice.append(line or _advice(
                f"Larger batch ({2 * ctx.batch})", f"Twice the images per step: the host queues the same kernels "
                f"for {2 * ctx.batch} images instead of {ctx.batch}.", None, e2e,
                f"not measured here: compute alone at batch {2 * ctx.batch} was not run"))
            advice.append(_advice(
                "CUDA graphs (torch.compile)", "torch.compile(model, mode='max-autotune') or 'reduce-overhead' "
                "captures the step in CUDA graphs and fuses kernels: one launch replays the whole step.", None, e2e,
                "not measured: compiling the model takes minutes, beyond this analysis's budget"))
        if cuda and from_label(ctx.precision) in (FP32, TF32):
            line = _compute_what_if(
                "Mixed precision (bf16-amp)", "torch.autocast(dtype=torch.bfloat16) runs convolutions and matmuls "
                "on the tensor cores.", _rate(rates, "compute_bf16"), r.get("compute"), feed, e2e)
            advice += [line] if line else []
        if not ctx.channels_last and not any(t.config.channels_last for t in tried if t.rate is not None):
            line = _compute_what_if(
                "Channels-last memory format", "model and inputs .to(memory_format=torch.channels_last)"
                + (": cuDNN's fastest convolution kernels are NHWC." if cuda else "."),
                _rate(rates, "compute_channels_last"), r.get("compute"), feed, e2e)
            advice += [line] if line else []
        if not cuda:
            advice.append(_advice("Train on a GPU", "The CPU computes the model; the data path is faster than it.",
                                  None, e2e, "not measurable on this machine"))
        if r.get("compute") and e2e:
            limit = "the host's launch path is" if verdict.bottleneck == "launch" else "the model is"
            advice.append(_advice("Nothing to gain in the data path", f"The input pipeline can deliver "
                                  f"{_fmt(feed)}; {limit} the limit.", None, None, "stage rates measured here"))

    tried_uint8 = any(t.config.normalize_on_device for t in tried if t.rate is not None)
    if stage_bottleneck == "transfer" and not interfere and cuda and not tried_uint8:
        expected = _min_rate([r.get("storage"), r.get("cpu"), r["transfer"] * 4, r.get("compute")])
        advice.append(_advice("Copy uint8 images and normalise on the GPU",
                              "Float32 batches are 4× the bytes of uint8; convert and normalise after the copy.",
                              expected, e2e, "estimate: copy rate measured here × 4 (a quarter of the bytes)"))
    return advice
