"""model.resnet50, model.vgg16, model.fasterrcnn, model.unet: training and inference throughput of the
seed's four models in PyTorch and TensorFlow (see ``model_common`` for the parameters and figures)."""

from __future__ import annotations

import functools
import importlib.util
from typing import Any

from hwbench_gui.engine import frameworks
from hwbench_gui.engine.models import multigpu, torch_ops
from hwbench_gui.engine.models.common import (
    MODELS,
    ModelSpec,
    build_outcome,
    default_batch,
    gpu_idle_notes,
    model_params,
    resolve_channels_last,
)
from hwbench_gui.engine.spec.benchmark import Benchmark, BenchmarkUnavailable, Outcome, Reporter
from hwbench_gui.engine.spec.device import AUTO, CPU, CUDA, parse, resolve_auto, split_device


def _torch_version() -> str:
    import torch

    return torch.__version__


#: Parameters a run decides when given as 0 / ``auto``; the document stores the values used.
RESOLVED_PARAMS = ("batch", "channels_last")


def _resolve(spec: ModelSpec, params: dict[str, Any], reporter: Reporter, asked_auto: bool) -> dict[str, Any]:
    """Batch and memory format for the concrete device; names the device before anything heavy runs."""
    kind, _ = split_device(params["device"])
    resolved = {**params, "batch": params["batch"] or default_batch(spec, kind),
                "channels_last": resolve_channels_last(params["channels_last"], params["framework"], kind,
                                                       params["precision"], spec.task)}
    if kind == CPU and asked_auto:
        note = (f"no GPU found: running on the CPU (batch {resolved['batch']}"
                f"{'' if params['batch'] else ', the CPU default'})")
    else:
        note = f"running on {params['device']}, batch {resolved['batch']}"
    reporter.log(note)
    reporter.progress(0.0, note)
    return resolved


def _finish(outcome: Outcome, params: dict[str, Any], asked_auto: bool) -> Outcome:
    outcome.resolved_params = {k: params[k] for k in RESOLVED_PARAMS}
    if asked_auto and split_device(params["device"])[0] == CPU:
        outcome.warnings.append("no GPU found (device=auto): ran on the CPU")
    return outcome


def run_model(spec: ModelSpec, bench_id: str, params: dict[str, Any], reporter: Reporter) -> Outcome:
    """Dispatch by framework and GPU count; every path returns the same kind of Outcome."""
    # A bad device is a ParamError before anything heavy loads. ``auto`` is made concrete from what the
    # run's framework sees, not from NVML: a CPU-only build of the framework on a GPU machine runs on the CPU.
    device = parse(params["device"], allow=(AUTO, CPU, CUDA))
    if params["framework"] == "tf":
        from hwbench_gui.engine.models import tf_measure as model_tf

        if importlib.util.find_spec("tensorflow") is None:
            raise BenchmarkUnavailable(frameworks.missing_reason("TensorFlow", "pip install 'hwbench-gui[tf]'"))
        tf = model_tf.import_tf()
        if device.kind == AUTO:
            params = {**params, "device": "cuda:0" if tf.config.list_physical_devices("GPU") else CPU}
        params = _resolve(spec, params, reporter, device.kind == AUTO)
        if params["gpus"] > 1:
            return _finish(multigpu.run_tf_mirrored(spec, params, reporter), params, device.kind == AUTO)
        kind, index = split_device(params["device"])
        model_tf.select_devices(tf, kind, index, 1)
        run, details, where = model_tf.measure(spec, params, reporter, tf_module=tf)
        warnings = list(details.pop("warnings", []))
        method = model_tf.method_text(params, spec.task)
        return _finish(build_outcome(spec, params, run, framework_label=f"TensorFlow {tf.__version__}",
                                     device_label=where, method_extra=method, details=details, warnings=warnings),
                       params, device.kind == AUTO)

    if importlib.util.find_spec("torch") is None:
        raise BenchmarkUnavailable("PyTorch is not installed")
    if device.kind == AUTO:
        params = {**params, "device": str(resolve_auto(device))}
    if multigpu.is_rank_process():
        return multigpu.rank_main(bench_id, spec, params, reporter)
    params = _resolve(spec, params, reporter, device.kind == AUTO)
    if params["gpus"] > 1 or params["nnodes"] > 1:
        return _finish(multigpu.run_torch_ddp(bench_id, spec, params, reporter), params, device.kind == AUTO)
    reason = torch_ops.unusable_reason()
    if reason:
        raise BenchmarkUnavailable(reason)
    from hwbench_gui.engine.models import torch_measure as model_torch

    run, details, where = model_torch.measure(spec, params, reporter)
    method = model_torch.method_text(params, where.startswith("cuda"))
    return _finish(build_outcome(spec, params, run, framework_label=f"PyTorch {_torch_version()}",
                                 device_label=where, method_extra=method, details=details, warnings=[]),
                   params, device.kind == AUTO)


def _availability() -> str | None:
    """Runnable when either framework can run it; the run itself says when the chosen one cannot."""
    torch_missing = importlib.util.find_spec("torch") is None
    if importlib.util.find_spec("tensorflow") is not None:
        return None
    if torch_missing:
        return "neither PyTorch nor TensorFlow is installed"
    reason = torch_ops.unusable_reason()
    return f"{reason}; TensorFlow is not installed" if reason else None


def _benchmark(spec: ModelSpec) -> Benchmark:
    bench_id = f"model.{spec.key}"
    return Benchmark(
        id=bench_id,
        title=f"{spec.title} training / inference",
        category="Models",
        description=(f"{spec.title} images/s in PyTorch ({spec.torch_source}) or TensorFlow ({spec.tf_source}); "
                     "training or inference, FP32 / TF32 / FP16-AMP / BF16-AMP, one or more GPUs, synthetic or "
                     "real data, with step-time and latency percentiles, peak VRAM and data-wait time."),
        params=model_params(spec),
        run=functools.partial(run_model, spec, bench_id),
        version="1",
        availability=_availability,
        default_timeout_s=1800.0,
        telemetry_notes=gpu_idle_notes,
    )


BENCHMARKS = [_benchmark(MODELS[key]) for key in ("resnet50", "vgg16", "fasterrcnn", "unet")]
