"""Multi-GPU model runs: PyTorch DDP started the way torchrun starts it, TensorFlow MirroredStrategy.

PyTorch: the benchmark's child process becomes a torchrun-style agent
(``torch.distributed.launcher.api.elastic_launch``, c10d rendezvous). Each rank is an ordinary
benchmark worker (:func:`hwbench_gui.engine.child.worker_command`, so a frozen build works
too) that finds torchrun's ``RANK``/``LOCAL_RANK``/``WORLD_SIZE`` and ``$HWBENCH_DDP_OUT`` in its
environment, joins the NCCL (gloo on the CPU) process group, measures with
``DistributedDataParallel`` and writes its timings to ``$HWBENCH_DDP_OUT/rank<N>.json``; rank 0 also
writes every rank's timings, gathered over the process group. A one-GPU run (one rank, no DDP) is
launched first for the scaling efficiency.

Several machines: run the same command on each with ``nnodes=N rdzv_endpoint=host:port`` (the
first machine's address); ranks are assigned by the rendezvous, as with ``torchrun --nnodes N
--rdzv-backend c10d --rdzv-endpoint host:port``. The machine that gets rank 0 reports the totals.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import Any

from hwbench_gui.engine.models.common import ModelSpec, OutOfMemoryError, TimedRun, build_outcome
from hwbench_gui.engine.spec.benchmark import Outcome, Reporter
from hwbench_gui.engine.spec.device import CUDA, split_device

OUT_ENV = "HWBENCH_DDP_OUT"
#: Seconds the rendezvous waits for every node to join.
JOIN_TIMEOUT_S = 600


def is_rank_process() -> bool:
    """Whether this process is a rank started by :func:`run_torch_ddp`'s launcher."""
    return OUT_ENV in os.environ and "RANK" in os.environ and "LOCAL_RANK" in os.environ


def rank_main(bench_id: str, spec: ModelSpec, params: dict[str, Any], reporter: Reporter) -> Outcome:
    """The body of one rank: measure, write ``rank<N>.json`` (or the error), return this rank's Outcome."""
    import torch

    from hwbench_gui.engine.models import torch_measure as model_torch

    rank, local_rank, world = rank_identity()
    kind, base = split_device(params["device"])
    if world > 1 and kind == CUDA:
        torch.cuda.set_device(base + local_rank)

    def measure(dist: Any) -> tuple[TimedRun, dict[str, Any]]:
        run, details, where = model_torch.measure(spec, params, _RankReporter(reporter, rank), dist=dist)
        return run, {"details": details, "where": where}

    record = run_rank("nccl" if kind == CUDA else "gloo", measure)
    run = TimedRun.from_json(record["runs"][0])  # this rank's own run (rank 0 lists every rank's, its own first)
    return build_outcome(spec, params, run, framework_label=f"PyTorch {torch.__version__} (rank {rank})",
                         device_label=record["where"], method_extra="One rank of a DDP run.",
                         details=record["details"], warnings=[])


def rank_identity() -> tuple[int, int, int]:
    """This rank's (RANK, LOCAL_RANK, WORLD_SIZE), as the launcher set them."""
    return int(os.environ["RANK"]), int(os.environ["LOCAL_RANK"]), int(os.environ["WORLD_SIZE"])


def run_rank(backend: str, measure: Any) -> dict[str, Any]:
    """What every rank of a launched run does around its measurement: join the process group (``backend``; alone,
    none), ``measure(dist)`` with ``dist`` a :class:`DistContext` when grouped else None, returning (its
    :class:`TimedRun`, more fields of its record), gather every rank's run into rank 0's record, write
    ``rank<N>.json`` for :func:`launch` (or the error's kind and message, then raise it) and leave the group.
    Returns the record."""
    import torch

    from hwbench_gui.engine.models.torch_measure import DistContext

    rank, local_rank, world = rank_identity()
    out = Path(os.environ[OUT_ENV])
    grouped = world > 1
    try:
        if grouped:
            torch.distributed.init_process_group(backend)
        run, extra = measure(DistContext(rank, local_rank, world) if grouped else None)
        runs = [run.to_json()]
        if grouped:
            gathered: list[Any] = [None] * world
            torch.distributed.all_gather_object(gathered, run.to_json())
            runs = gathered if rank == 0 else [run.to_json()]
        record = {"rank": rank, "runs": runs, **extra}
    except OutOfMemoryError as exc:
        _write(out, rank, {"rank": rank, "error_kind": "out_of_memory", "message": str(exc)})
        raise
    except Exception as exc:
        _write(out, rank, {"rank": rank, "error_kind": "exception", "message": f"{type(exc).__name__}: {exc}"})
        raise
    finally:
        if grouped and torch.distributed.is_initialized():
            torch.distributed.destroy_process_group()
    _write(out, rank, record)
    return record


class _RankReporter:
    """A rank's progress would repeat every other rank's in the run's log: only rank 0 reports it."""

    def __init__(self, inner: Reporter, rank: int):
        self.inner, self.rank = inner, rank

    def progress(self, fraction: float, message: str = "") -> None:
        if self.rank == 0:
            self.inner.progress(fraction, f"rank 0: {message}")

    def log(self, message: str) -> None:
        self.inner.log(f"rank {self.rank}: {message}")

    def metric(self, name: str, value: float, unit: str, **extra: Any) -> None:
        if self.rank == 0:
            self.inner.metric(name, value, unit, **extra)

    def phase(self, phase: str, state: str, repeat: int | None = None) -> None:
        if self.rank == 0:
            self.inner.phase(phase, state, repeat)


def _write(folder: Path, rank: int, record: dict[str, Any]) -> None:
    tmp = folder / f".rank{rank}.json.tmp"
    tmp.write_text(json.dumps(record))
    tmp.replace(folder / f"rank{rank}.json")


def launch(bench_id: str, params: dict[str, Any], nproc: int, nnodes: int, endpoint: str,
           reporter: Reporter) -> list[dict[str, Any]]:
    """Start ``nproc`` ranks here (of ``nnodes`` machines) and return the rank records written here.

    Raises OutOfMemoryError when a rank ran out of memory, RuntimeError when one failed otherwise. A rank
    that ends abnormally after every rank here wrote its timings (gloo's teardown can abort a process at
    exit) does not discard the measurement: the warning is reported through ``reporter.log`` and kept in
    each record's ``teardown_warning``.
    """
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
    from torch.distributed.launcher.api import LaunchConfig, elastic_launch

    from hwbench_gui.engine.child import worker_command

    folder = Path(tempfile.mkdtemp(prefix="hwbench-ddp-"))
    standalone = nnodes == 1 and not endpoint
    config = LaunchConfig(
        min_nodes=nnodes, max_nodes=nnodes, nproc_per_node=nproc,
        run_id=uuid.uuid4().hex if standalone else f"hwbench-{bench_id}",
        rdzv_backend="c10d", rdzv_endpoint="localhost:0" if standalone else endpoint,
        rdzv_configs={"join_timeout": JOIN_TIMEOUT_S}, max_restarts=0, monitor_interval=0.5)
    command = worker_command({"id": bench_id, "params": params})
    previous = os.environ.get(OUT_ENV)
    os.environ[OUT_ENV] = str(folder)
    reporter.log(f"launching {nproc} rank(s) on this machine, {nnodes} machine(s) "
                 f"({'standalone' if standalone else 'rendezvous at ' + endpoint})")
    try:
        try:
            elastic_launch(config, entrypoint=command[0])(*command[1:])
            failure = None
        except ChildFailedError as exc:
            failure = exc
        records = [json.loads(p.read_text()) for p in sorted(folder.glob("rank*.json"))]
    finally:
        if previous is None:
            os.environ.pop(OUT_ENV, None)
        else:
            os.environ[OUT_ENV] = previous
        shutil.rmtree(folder, ignore_errors=True)
    errors = [r for r in records if "error_kind" in r]
    for record in errors:
        if record["error_kind"] == "out_of_memory":
            raise OutOfMemoryError(f"{record['message']} (rank {record['rank']})")
    if errors:
        raise RuntimeError(f"rank {errors[0]['rank']} failed: {errors[0]['message']}")
    if failure is not None:
        if len(records) < nproc:
            raise RuntimeError(f"a DDP rank failed without a report: {failure}")
        summary = " ".join(str(failure).split())[:300]
        warning = f"a DDP rank ended abnormally after every rank had written its timings: {summary}"
        reporter.log(warning)
        for record in records:
            record["teardown_warning"] = warning
    if not records:
        raise RuntimeError("the DDP ranks wrote no results")
    return records


def run_torch_ddp(bench_id: str, spec: ModelSpec, params: dict[str, Any], reporter: Reporter) -> Outcome:
    """One-GPU baseline, then DDP on ``gpus`` GPUs per machine × ``nnodes`` machines."""
    import torch

    from hwbench_gui.engine.models import torch_measure as model_torch

    gpus, nnodes, endpoint = params["gpus"], params["nnodes"], params["rdzv_endpoint"]
    if nnodes > 1 and not endpoint:
        from hwbench_gui.engine.spec.benchmark import ParamError

        raise ParamError("rdzv_endpoint: needed when nnodes > 1 (host:port of the rendezvous, the same on every "
                         "machine)")
    reporter.log("one-GPU baseline (one rank, no DDP)")
    single_records = launch(bench_id, params, 1, 1, "", reporter)
    single = TimedRun.from_json(single_records[0]["runs"][0])
    reporter.log(f"one GPU: {single.images_per_s():.1f} images/s; now {gpus} GPU(s) × {nnodes} machine(s)")
    records = launch(bench_id, params, gpus, nnodes, endpoint, reporter)
    lead = next((r for r in records if r["rank"] == 0), None)
    warnings: list[str] = sorted({r["teardown_warning"] for r in [*single_records, *records]
                                  if "teardown_warning" in r})
    if lead is not None:
        runs = [TimedRun.from_json(r) for r in lead["runs"]]
    else:
        runs = [TimedRun.from_json(r["runs"][0]) for r in records]
        warnings.append("rank 0 ran on another machine: the totals here count this machine's ranks only")
    base = lead or records[0]
    world = len(runs)
    on_cuda = split_device(params["device"])[0] == CUDA
    kind = "NCCL" if on_cuda else "gloo"
    return build_outcome(
        spec, params, runs[0], framework_label=f"PyTorch {torch.__version__} DDP ({kind}, {world} ranks)",
        device_label=f"{base['where']} and {world - 1} more rank(s)" if world > 1 else base["where"],
        method_extra=model_torch.method_text(params, on_cuda) +
        f" Multi-GPU: torch.distributed elastic launch (torchrun's launcher, c10d rendezvous), {gpus} rank(s) per "
        f"machine × {nnodes} machine(s), DistributedDataParallel; throughput = all ranks' images / the longest "
        "rank's timed time; scaling efficiency = that / (ranks × the one-GPU run's images/s).",
        details={**base["details"], "ranks": world, "nnodes": nnodes, "backend": kind},
        warnings=warnings, world_size=world, rank_runs=runs, single_gpu=single)


def run_tf_mirrored(spec: ModelSpec, params: dict[str, Any], reporter: Reporter) -> Outcome:
    """One-GPU baseline, then MirroredStrategy over ``gpus`` GPUs, in this process."""
    from hwbench_gui.engine.models import tf_measure as model_tf
    from hwbench_gui.engine.spec.device import split_device

    gpus = params["gpus"]
    if params["nnodes"] > 1:
        from hwbench_gui.engine.spec.benchmark import BenchmarkUnavailable

        raise BenchmarkUnavailable("TensorFlow runs use MirroredStrategy on one machine; nnodes > 1 is PyTorch only")
    tf = model_tf.import_tf()
    kind, index = split_device(params["device"])
    model_tf.select_devices(tf, kind, index, gpus)
    reporter.log("one-GPU baseline")
    single, _details, _where = model_tf.measure(spec, params, reporter, replicas=1, tf_module=tf)
    reporter.log(f"one GPU: {single.images_per_s():.1f} images/s; now MirroredStrategy over {gpus} GPUs")
    run, details, where = model_tf.measure(spec, params, reporter, replicas=gpus, tf_module=tf)
    # The strategy's timing is one loop over all replicas: every replica did batch × steps.
    ranks = [TimedRun(batch=run.batch, steps=run.steps, total_s=run.total_s, step_s=run.step_s,
                      window_s=run.window_s, window_steps=run.window_steps) for _ in range(gpus)]
    warnings = list(details.pop("warnings", []))
    return build_outcome(
        spec, params, run, framework_label=f"TensorFlow {tf.__version__} MirroredStrategy ({gpus} GPUs)",
        device_label=where, method_extra=model_tf.method_text(params, spec.task) +
        f" Multi-GPU: tf.distribute.MirroredStrategy over {gpus} GPUs, global batch {run.batch * gpus}.",
        details=details, warnings=warnings, world_size=gpus, rank_runs=ranks, single_gpu=single)
