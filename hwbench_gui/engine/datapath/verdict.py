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

The thresholds, the chain's words, the context and the records live in :mod:`.findings`; what to change, and
what each change should reach, in :mod:`.advice`.
"""

from __future__ import annotations

import statistics
from typing import Any

from hwbench_gui.engine.datapath.advice import advise
from hwbench_gui.engine.datapath.defaults import IMAGENET_TRAIN_IMAGES
from hwbench_gui.engine.datapath.findings import (
    CONSISTENCY_NOISE,
    DATA_WAIT_NOTABLE,
    EPOCH_REFILL_NOTABLE,
    INTERFERENCE_RATIO,
    LOSS_NOTABLE,
    PROOF_SHARE,
    SETTING_WORDS,
    STEP_SLOWDOWN_NOTABLE,
    Context,
    Verdict,
    bottleneck_name,
    chain_links,
    cpu_part,
    link_word,
    rate_of,
    rate_text,
    settings_moved,
    share_text,
)
from hwbench_gui.engine.datapath.stages import stage_named
from hwbench_gui.engine.datapath.tryouts import BETTER_BY, LoaderConfig, Tried, changed_fields
from hwbench_gui.engine.models.common import GPU_IDLE_NOTE_BELOW_PERCENT


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
        return (f"{_link_phrase(link, stage, ctx)}: at least {rate_text(rate)}, reached end to end by {r['by']} "
                f"({rate_text(r['alone'])} alone: its standalone method underestimates it)")
    return f"{_link_phrase(link, stage, ctx)}: {rate_text(rate)}"


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
    e2e = rate_of(rates, "end_to_end")
    if not links:
        return Verdict("interference", None, None, e2e, "No stage could be measured.", chain=links,
                       data_wait_fraction=data_wait_fraction, device=ctx.device)
    alone = {link: rate_of(rates, key) for link, key in links.items()}
    link_rates, raised = measured_bounds(alone, e2e, ctx, tried, base)
    slowest_link = min(link_rates, key=lambda link: link_rates[link])
    slowest_rate = link_rates[slowest_link]
    limiting_stage = links[slowest_link]
    stage_bottleneck = {"storage": "disk", "cpu": cpu_part(rates), "transfer": "transfer",
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
    others = ", ".join(f"{link_word(link, ctx.device)} {rate_text(rate)}" for link, rate in link_rates.items()
                       if link != slowest_link)
    text = (f"Bottleneck of the default configuration ({ctx.describe()}): "
            f"{bottleneck_name(bottleneck if launch else stage_bottleneck, ctx.device)} ({bound}")
    text += f"; {others})." if others else ")."
    if launch:
        text += (f" The GPU was busy only {gpu_util_percent:.0f} % of the end-to-end timed time while the step "
                 "was compute-bound: it waits on the CPU queuing its kernels (Python, kernel launches). A larger "
                 "batch, channels-last or CUDA graphs (torch.compile) give the GPU more work per launch.")
    if e2e is not None:
        text += f" End-to-end training: {rate_text(e2e)}, {e2e / slowest_rate:.0%} of the slowest stage."
    if interfere:
        text = (f"Stages interfere: end-to-end {rate_text(e2e)} is well below every stage's standalone rate (slowest: "
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
                 f"{share_text(epoch_start['fraction'])} of {epoch_text(epoch_start, ctx.batch)}.")
    moved_by: dict[str, Any] = {}
    beyond = [t for t in tried if t.rate is not None and base is not None and t.rate > slowest_rate * (1 + BETTER_BY)]
    if beyond:
        top = max(beyond, key=lambda t: t.rate)
        fields = sorted(settings_moved(slowest_link, top.config, base, ctx))
        moved_by = {"key": top.key, "rate": top.rate, "changes": top.config.changes_from(base), "settings": fields}
        settings = ", ".join(SETTING_WORDS[f] for f in fields)
        text += (f" {top.config.changes_from(base)} ran {rate_text(top.rate)} end to end, above this bound: it changes "
                 f"how {link_word(slowest_link, ctx.device)} runs ({settings}), so the bound is the default "
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
    out["ruled_out"].extend(f"{link_word(link, ctx.device)} ({rate_text(rate)} alone)"
                            for link, rate in link_rates.items() if link != slowest_link and rate is not None)
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
        evidence = f"{top.config.changes_from(base)}: {rate_text(top.rate)} end to end, "
        if recovered <= 0:  # a loss is never negative: slower than the default recovers none of it
            evidence += f"no faster than the default's {rate_text(e2e)}"
        else:
            evidence += f"{recovered:.0%} of the" if recovered <= 1 else "more than all of the"
            evidence += f" {rate_text(lost)} lost"
        if recovered >= PROOF_SHARE:
            out["causes"].append({"key": key, "text": f"{words} (measured: {evidence}).", "recovered": recovered,
                                  "tried": top.key})
        else:
            out["ruled_out"].append(f"{words} ({evidence})")
    share = f"{lost / slowest:.0%}"
    if out["causes"]:
        out["text"] = (f"Cause of the {rate_text(lost)} lost between the stages ({share} of the slowest stage's rate): "
                       + " ".join(c["text"] for c in out["causes"]))
    else:
        out["unexplained"] = lost
        out["text"] = (f"Unexplained: {rate_text(lost)} ({share}) of the slowest stage's rate is lost end to end, and "
                       "no measured what-if recovered half of it")
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


