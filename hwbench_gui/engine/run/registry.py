"""Which benchmarks exist, and whether each can run on this machine.

A benchmark module exports ``BENCHMARK`` (one :class:`~hwbench_gui.engine.spec.benchmark.Benchmark`)
or ``BENCHMARKS`` (a sequence of them; test fixtures use this). A benchmark is registered where it is
declared: every module of the package ``hwbench_gui.engine.benchmarks`` is one (:data:`LIST_FIRST`
only orders the list); ``$HWBENCH_EXTRA_BENCHMARKS`` adds comma-separated dotted module names, and
because the child process inherits the environment it finds them too.

A module that is missing or fails to import does not break the others: it is listed by
:func:`module_errors` with the import error as the reason. Nothing here imports torch.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import os
import pkgutil
import traceback

from hwbench_gui.engine import frameworks
from hwbench_gui.engine.spec.benchmark import Benchmark

#: The order of the list, from the disk to the GPU (the seed's data path); a module not named here
#: follows them in name order.
LIST_FIRST = ("disk_read", "cpu_decode", "host_membw", "gpu_pcie", "gpu_d2d", "gpu_p2p", "gpu_matmul",
              "models", "datapath_analyze")

#: Environment variable naming extra benchmark modules (dotted names, comma-separated).
EXTRA_ENV = "HWBENCH_EXTRA_BENCHMARKS"

_PACKAGE = "hwbench_gui.engine.benchmarks"

_FRAMEWORK_MODULES = {"torch": ("torch", "PyTorch"), "tf": ("tensorflow", "TensorFlow")}


def builtin_modules() -> tuple[str, ...]:
    """Module names (without the package) of every module in ``hwbench_gui.engine.benchmarks``, in
    list order. Found on disk (or in the frozen build's archive), not in a list kept by hand."""
    package = importlib.import_module(_PACKAGE)
    found = {info.name for info in pkgutil.iter_modules(package.__path__) if not info.name.startswith("_")}
    first = [name for name in LIST_FIRST if name in found]
    return tuple(first + sorted(found - set(first)))


def module_names() -> list[str]:
    """Dotted names of every module the registry loads: the built-in ones, then the extra ones."""
    names = [f"{_PACKAGE}.{name}" for name in builtin_modules()]
    extra = os.environ.get(EXTRA_ENV, "")
    names += [part.strip() for part in extra.split(",") if part.strip()]
    return names


@functools.lru_cache(maxsize=8)
def _load(names: tuple[str, ...]) -> tuple[dict[str, Benchmark], dict[str, str]]:
    benchmarks: dict[str, Benchmark] = {}
    errors: dict[str, str] = {}
    for name in names:
        try:
            module = importlib.import_module(name)
        except Exception as exc:  # a broken or absent module must not hide the others
            last = traceback.format_exception_only(type(exc), exc)[-1].strip()
            errors[name] = f"could not import {name}: {last}"
            continue
        declared = getattr(module, "BENCHMARKS", None)
        if declared is None:
            declared = [getattr(module, "BENCHMARK", None)]
        for bench in declared:
            if not isinstance(bench, Benchmark):
                errors[name] = f"{name} exports no BENCHMARK (a Benchmark) or BENCHMARKS"
                continue
            if bench.id in benchmarks:
                errors[name] = f"{name} declares {bench.id!r}, which another module already declares"
                continue
            benchmarks[bench.id] = bench
    return benchmarks, errors


def _loaded() -> tuple[dict[str, Benchmark], dict[str, str]]:
    # Keyed on the module list so a changed $HWBENCH_EXTRA_BENCHMARKS (tests) is seen.
    return _load(tuple(module_names()))


def all_benchmarks() -> list[Benchmark]:
    """Every benchmark that could be imported, built-in ones first, in module order."""
    return list(_loaded()[0].values())


def module_errors() -> dict[str, str]:
    """Modules that could not be loaded: dotted module name -> reason (the import error)."""
    return dict(_loaded()[1])


def get(bench_id: str) -> Benchmark:
    """The benchmark with this id; ``KeyError`` naming the known ids when there is none."""
    benchmarks = _loaded()[0]
    try:
        return benchmarks[bench_id]
    except KeyError:
        known = ", ".join(sorted(benchmarks)) or "none"
        raise KeyError(f"no benchmark {bench_id!r}; known: {known}") from None


def availability(bench: Benchmark) -> str | None:
    """``None`` when ``bench`` can run here, else the reason it cannot.

    Checks ``needs`` cheaply (NVML for GPUs, ``find_spec`` for frameworks: nothing heavy is
    imported), then the benchmark's own ``availability()``.
    """
    for need in sorted(bench.needs):
        reason = _need_reason(need)
        if reason:
            return reason
    if bench.availability is not None:
        try:
            return bench.availability()
        except Exception as exc:  # the check itself broke: say so rather than crash a listing
            return f"availability check failed: {type(exc).__name__}: {exc}"
    return None


def framework_choice_limits(bench: Benchmark) -> dict[str, str]:
    """For a benchmark with a framework choice: the choices ("torch", "tf") that cannot run here, with
    why; empty without such a choice. Nothing heavy is imported; PyTorch's operator check is remembered
    per installation (``models.torch_ops``)."""
    names = {p.name: p for p in bench.params}
    if "framework" not in names:
        return {}
    from hwbench_gui.engine.models import torch_ops

    limits = {}
    for choice in names["framework"].choices:
        reason = framework_missing_reason(choice)
        if reason is None and choice == "torch":
            reason = torch_ops.unusable_reason()
        if reason:
            limits[choice] = reason
    return limits


def framework_limits(bench: Benchmark) -> dict[str, str]:
    """For a runnable benchmark with a framework choice: the frameworks it cannot run in here, by label
    ("PyTorch", "TensorFlow"), with why; empty when it runs in all of them or has no such choice."""
    if availability(bench) is not None:
        return {}
    return {_FRAMEWORK_MODULES[choice][1]: reason for choice, reason in framework_choice_limits(bench).items()}


def framework_labels(bench: Benchmark) -> list[str]:
    """The labels of the frameworks ``bench`` can be asked to run in ("PyTorch", "TensorFlow")."""
    names = {p.name: p for p in bench.params}
    return [_FRAMEWORK_MODULES[c][1] for c in names["framework"].choices] if "framework" in names else []


def framework_missing_reason(framework: str) -> str | None:
    """Why ``framework`` ("torch", "tf") cannot run here (found without importing it); None when it can.
    In a packaged build the reason says the build does not hold it, not how to pip install it."""
    return _need_reason(framework) if framework in _FRAMEWORK_MODULES else None


def _need_reason(need: str) -> str | None:
    if need in ("cuda", "multi_gpu"):
        from hwbench_gui.engine import nvml

        count = nvml.device_count()
        if count == 0:
            reason = nvml.unavailable_reason()
            return nvml.plain_reason(reason) if reason else "no NVIDIA GPU found (NVML sees 0 devices)"
        if need == "multi_gpu" and count < 2:
            return f"needs at least 2 NVIDIA GPUs; NVML sees {count}"
        return None
    if need in _FRAMEWORK_MODULES:
        module, label = _FRAMEWORK_MODULES[need]
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        return None if found else frameworks.missing_reason(label, f"no module {module!r}")
    return f"unknown requirement {need!r} (known: cuda, multi_gpu, torch, tf)"
