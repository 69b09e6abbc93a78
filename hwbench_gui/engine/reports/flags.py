"""What a document says about its own trustworthiness, shown beside its figure wherever it goes.

Each flag belongs to the document that carries it (a busy baseline is the baseline's flag, never
the other side's): :func:`busy_reasons` (other processes were using the machine) and
:func:`few_repeats` (too few samples for a significance test to reach ``alpha``) and
:func:`consistency_problems` (a shared document that does not agree with itself: comparisons flag
it, they never silently trust it).
"""

from __future__ import annotations

import re
import statistics
from typing import Any

from hwbench_gui.engine.reports import families
from hwbench_gui.engine.reports.physical_limits import impossible_figures
from hwbench_gui.engine.results import describe
from hwbench_gui.engine.results.formatting import format_value

#: Below this many samples a side cannot reach p < 0.05 against an equal side (3 vs 3: p >= 0.1).
MIN_REPEATS = 4
#: A GPU run whose GPU was busy less than this share of its timed phase measured something other than the
#: GPU: a step that waits on the host most of the time, or a telemetry window that missed the work (the H200's
#: first ResNet-50 runs: GPU 6-30 % busy). The model benchmarks' own note, at 90 %, says a GPU was left partly
#: idle; under half, a report prefers any other run of the same configuration.
LOW_GPU_USE_PERCENT = 50.0


def busy_reasons(doc: dict[str, Any]) -> list[str]:
    """Why the machine was busy while ``doc`` was measured (empty when it was not, or nobody knows)."""
    telemetry = doc.get("telemetry") if isinstance(doc.get("telemetry"), dict) else {}
    noise = telemetry.get("noise") if isinstance(telemetry.get("noise"), dict) else {}
    if not noise.get("busy"):
        return []
    return [str(r) for r in noise.get("reasons") or []] or ["the run's telemetry marked the machine busy"]


def sample_count(doc: dict[str, Any]) -> int:
    return sum(1 for s in doc.get("samples") or [] if describe.is_number(s))


def few_repeats(doc: dict[str, Any]) -> bool:
    """A measured figure from fewer than :data:`MIN_REPEATS` samples."""
    figure = doc.get("figure") or {}
    return (not describe.is_published(doc) and figure.get("value") is not None
            and sample_count(doc) < MIN_REPEATS)


def low_gpu_use(doc: dict[str, Any]) -> float | None:
    """The timed phase's mean GPU utilisation (%) of a GPU run that kept its GPU busy less than
    :data:`LOW_GPU_USE_PERCENT` of the time; None for a CPU run, a busy enough GPU, or no telemetry."""
    if not str(doc.get("device") or "").startswith("cuda"):
        return None
    telemetry = doc.get("telemetry") if isinstance(doc.get("telemetry"), dict) else {}
    entry = (telemetry.get("seed") or {}).get("gpu_util_percent") if isinstance(telemetry.get("seed"), dict) else None
    util = entry.get("mean") if isinstance(entry, dict) else None
    return float(util) if describe.is_number(util) and util < LOW_GPU_USE_PERCENT else None


_DEVICE_GPU = re.compile(r"^cuda(?::\d+)?\s*\((?P<name>[^)]+)\)")
_DEVICE_CPUS = re.compile(r"^cpu\s*\((?P<n>\d+) CPUs?\)")
#: Relative difference at which a figure no longer is the median of its samples (rounding aside).
MEDIAN_TOLERANCE = 1e-6


def consistency_problems(doc: dict[str, Any]) -> list[str]:
    """What in a measured document does not agree with itself: a figure that is not the median of
    its samples, a claimed GPU or CPU that its own inventory and device contradict, software
    versions missing, a GPU count its own telemetry contradicts, a figure above the physical limit
    its inventory states (:mod:`.physical_limits`, each starting "impossible: "), a stated verdict its own rows
    contradict (:func:`stated_verdicts`). Empty for a
    consistent document and for published figures (they state only what their source states)."""
    if describe.is_published(doc):
        return []
    problems = []
    figure = doc.get("figure") or {}
    samples = sorted(float(s) for s in doc.get("samples") or [] if describe.is_number(s))
    value = figure.get("value")
    if describe.is_number(value) and samples:
        median = statistics.median(samples)
        if abs(value - median) > MEDIAN_TOLERANCE * max(abs(median), 1e-12):
            problems.append(f"its figure {format_value(value)} is not the median of its samples "
                            f"({format_value(median)})")
    inventory = doc.get("inventory") if isinstance(doc.get("inventory"), dict) else {}
    gpus = [g for g in inventory.get("gpus") or [] if isinstance(g, dict)]
    names = {str(g.get("name")) for g in gpus if g.get("name")}
    device = str(doc.get("device") or "")
    claimed = _DEVICE_GPU.match(device)
    if claimed and names and claimed.group("name").strip() not in names:
        problems.append(f"it ran on {claimed.group('name').strip()} but its inventory lists {', '.join(sorted(names))}")
    system = inventory.get("gpu_system") if isinstance(inventory.get("gpu_system"), dict) else {}
    counted = system.get("device_count")
    if isinstance(counted, int) and counted > 0 and gpus and len(gpus) != counted:
        problems.append(f"its inventory lists {len(gpus)} GPU(s) but the driver counted {counted}")
    ids = [str(g.get("uuid")) for g in gpus if g.get("uuid")]
    if len(ids) != len(set(ids)):
        problems.append("its inventory lists one GPU (one UUID) several times")
    used = (doc.get("params") or {}).get("gpus")
    if isinstance(used, int) and not isinstance(used, bool) and gpus and used > len(gpus):
        problems.append(f"it ran on {used} GPUs but its inventory lists {len(gpus)}")
    cpus = _DEVICE_CPUS.match(device)
    cpu = inventory.get("cpu") if isinstance(inventory.get("cpu"), dict) else {}
    cores = cpu.get("logical_cores")
    if cpus and isinstance(cores, int) and int(cpus.group("n")) > cores:
        problems.append(f"it ran on {cpus.group('n')} CPUs but its inventory lists {cores} threads")
    sampled = _telemetry_gpu_count(doc)
    if sampled is not None and gpus and len(gpus) != sampled:
        problems.append(f"its inventory lists {len(gpus)} GPU(s) but its telemetry sampled {sampled} during the run")
    problems += _gpus_nothing_else_saw(doc, gpus, system, sampled)
    problems += [f"impossible: {what}" for what in impossible_figures(doc)]
    problems += stated_verdicts(doc)
    software = doc.get("software")
    if not isinstance(software, dict) or not any(isinstance(software.get(k), str) and software.get(k)
                                                 for k in SOFTWARE_KEYS):
        problems.append("its software versions are missing")
    return problems


def _gpus_nothing_else_saw(doc: dict[str, Any], gpus: list[dict[str, Any]], system: dict[str, Any],
                           sampled: int | None) -> list[str]:
    """GPUs an inventory lists that the rest of the document says were not there: the driver saw none, the run's
    sampler (it reads every GPU NVML sees, whatever the run's device) read no GPU figure, or a run told to take
    the first GPU it sees (device=auto) ran on the CPU while PyTorch could see one. A CPU-only machine's document
    given eight H200s in its inventory is caught here, its figures being CPU-sized and its device the CPU."""
    if not gpus:
        return []
    listed = f"its inventory lists {len(gpus)} GPU(s)"
    problems = []
    if system.get("available") is False or system.get("device_count") == 0:
        problems.append(f"{listed} but its driver saw none ({system.get('reason') or 'NVML counted 0'})")
    telemetry = doc.get("telemetry") if isinstance(doc.get("telemetry"), dict) else {}
    seed = telemetry.get("seed") if isinstance(telemetry.get("seed"), dict) else {}
    if sampled is None and seed and not any(str(key).startswith("gpu_") for key in seed):
        problems.append(f"{listed} but its telemetry sampled no GPU during the run")
    params = doc.get("params") if isinstance(doc.get("params"), dict) else {}
    probe = system.get("torch_probe") if isinstance(system.get("torch_probe"), dict) else {}
    if params.get("device") == "auto" and str(doc.get("device") or "").startswith("cpu") \
            and probe.get("cuda_available") is not False:
        problems.append(f"{listed} but it ran on the CPU with device=auto (which takes the first GPU PyTorch sees)")
    return problems


def stated_verdicts(doc: dict[str, Any]) -> list[str]:
    """Where a verdict the document states differs from what its own rows make it (a burn-in's PASS over a GPU
    row's FAIL; a serving point said within target whose p99s are not): readers show the derived verdict."""
    return families.disagreements(doc)


def _telemetry_gpu_count(doc: dict[str, Any]) -> int | None:
    """GPUs the run's own sampler read (NVML samples every GPU of the machine, whatever the run's
    device), or None when it read none or the document does not say."""
    for key in ("telemetry", "telemetry_whole_run"):
        telemetry = doc.get(key) if isinstance(doc.get(key), dict) else {}
        seed = telemetry.get("seed") if isinstance(telemetry.get("seed"), dict) else {}
        util = seed.get("gpu_util_percent") if isinstance(seed.get("gpu_util_percent"), dict) else {}
        per_gpu = util.get("per_gpu")
        if isinstance(per_gpu, list) and per_gpu:
            return len(per_gpu)
    return None


#: A measured document names at least one of these versions (hwbench records them all it can).
SOFTWARE_KEYS = ("python", "numpy", "torch", "tensorflow", "opencv")
