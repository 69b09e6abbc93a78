"""The data-path verdict's vocabulary: the thresholds its rules use, the chain's links and loader settings in
words, the :class:`Context` a verdict reads besides the rates, and the :class:`Verdict` and :class:`Advice`
records it returns (:mod:`.verdict` decides, :mod:`.advice` says what to change)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from hwbench_gui.engine.datapath.tryouts import LoaderConfig, changed_fields

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


def rate_of(rates: dict[str, float | None], key: str) -> float | None:
    value = rates.get(key)
    return float(value) if isinstance(value, (int, float)) and value > 0 else None


def chain_links(rates: dict[str, float | None], ctx: Context) -> dict[str, str]:
    """Link -> the stage that measures it: storage is the cached read when the dataset fits in RAM
    (after the first epoch the loader reads the page cache), else the cold read."""
    storage = "disk_cached" if ctx.fits_in_ram and rate_of(rates, "disk_cached") else "disk_cold"
    links = {"storage": storage, "cpu": "cpu_n", "transfer": "transfer", "compute": "compute"}
    return {link: key for link, key in links.items() if rate_of(rates, key) is not None}


def cpu_part(rates: dict[str, float | None]) -> str:
    """'decode' or 'augment': whichever takes more of one worker's time per image."""
    decode, augment = rate_of(rates, "decode_1"), rate_of(rates, "augment_1")
    if decode is None or augment is None:
        return "decode" if augment is None else "augment"
    return "decode" if 1 / decode >= 1 / augment else "augment"


def rate_text(rate: float | None) -> str:
    return "not measured" if rate is None else f"{rate:,.0f} images/s"


def share_text(fraction: float) -> str:
    """A share in words that never reads 0 % for a cost that is there."""
    return "under 0.1%" if 0 < fraction < 0.001 else f"{fraction:.1%}" if fraction < 0.1 else f"{fraction:.0%}"
