"""The PyTorch side of ``llm.train``: build the decoder for training (full or LoRA), find the largest
micro-batch that fits, and time optimizer steps on random token ids.

One process measures one GPU (or the CPU). A multi-GPU rank calls :func:`measure` with its
:class:`~hwbench_gui.engine.models.torch_measure.DistContext`: DDP when the model's training state fits
one GPU, FSDP2 (``fully_shard`` per block) when it does not. torch is imported at module level: only
a run imports this module.

The step is built the fastest way PyTorch allows without hand-written kernels: autocast to BF16/FP16,
flash attention through SDPA, each block compiled (``torch.compile``, default mode), the output
projection and loss fused a chunk of tokens at a time (:mod:`.linear_cross_entropy`: the FP32 logits
of a 128k vocabulary never exist whole), fused AdamW.
"""

from __future__ import annotations

import gc
import time
from dataclasses import dataclass
from typing import Any, Callable

import torch
from torch import nn

from hwbench_gui.engine.models.common import OutOfMemoryError, StepProgress, TimedRun, time_windows
from hwbench_gui.engine.models.llm import fp8_training
from hwbench_gui.engine.models.llm import model as llm_model
from hwbench_gui.engine.models.llm import training_arithmetic as ta
from hwbench_gui.engine.models.llm.architectures import Architecture
from hwbench_gui.engine.models.llm.linear_cross_entropy import linear_cross_entropy
from hwbench_gui.engine.models.llm.lora import Adapted, apply_lora
from hwbench_gui.engine.models.torch_measure import DistContext, max_over_ranks, record_peak_memory, time_steps
from hwbench_gui.engine.spec.benchmark import BenchmarkUnavailable, Reporter
from hwbench_gui.engine.spec.precision import FP8, Precision, apply_torch, from_key

#: AdamW as GPT-2/Llama pre-training sets it (the rate does not depend on the values).
LEARNING_RATE = 3e-4
BETAS = (0.9, 0.95)
WEIGHT_DECAY = 0.1
#: Times the compiled step halves an eager-found micro-batch that does not fit compiled.
COMPILED_OOM_RETRIES = 2


def low_dtype(precision: Precision) -> torch.dtype:
    """The 16-bit type a step's autocast computes in: the precision's own, BF16 around FP8's block matmuls."""
    return getattr(torch, precision.autocast_dtype) if precision.autocast_dtype else fp8_training.OTHER_DTYPE


def require_fp8(device: torch.device) -> None:
    """BenchmarkUnavailable with the reason when ``device`` cannot multiply in FP8 (a GPU below compute
    capability 8.9, a PyTorch without torch._scaled_mm there)."""
    from hwbench_gui.engine.models.llm.fp8 import unavailable_reason

    why_not = unavailable_reason(str(device) if device.type == "cuda" else "cpu")
    if why_not:
        raise BenchmarkUnavailable(f"precision=fp8: {why_not}")


class Checkpointed(nn.Module):
    """A block whose activations are recomputed in the backward pass (non-reentrant checkpoint)."""

    def __init__(self, block: nn.Module):
        super().__init__()
        self.block = block

    def forward(self, x: torch.Tensor, cos: torch.Tensor | None, sin: torch.Tensor | None) -> torch.Tensor:
        from torch.utils.checkpoint import checkpoint

        return checkpoint(self.block, x, cos, sin, use_reentrant=False)


class TrainingModule(nn.Module):
    """The decoder and its loss as one module (DDP and FSDP see one forward): mean cross-entropy of the
    next token, through the fused chunked output projection."""

    def __init__(self, decoder: llm_model.Decoder, compiled_loss: bool):
        super().__init__()
        self.decoder = decoder
        self.compiled_loss = compiled_loss

    def forward(self, tokens: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        hidden = self.decoder(tokens, hidden_only=True)
        return linear_cross_entropy(hidden, self.decoder.output_weight(), targets, compiled=self.compiled_loss)


@dataclass
class Built:
    module: nn.Module  # what the step calls (DDP/FSDP-wrapped where distributed)
    decoder: llm_model.Decoder
    optimizer: Any
    adapted: Adapted | None
    trainable: int
    sharding: str
    fused_adamw: bool


def build(arch: Architecture, params: dict[str, Any], device: torch.device, precision: Precision,
          dist: DistContext | None, sharding: str, on_block: Callable[[int, int], None] | None = None) -> Built:
    """The model for ``params["method"]``: full = FP32 master weights (autocast computes in 16 bits; under FP8
    each block's q/k/v, out, up and down multiply in FP8, :mod:`.fp8_training`); lora = the base in the autocast
    type, frozen, with FP32 adapters on q/k/v, out, up and down. ``on_block(done, total)``: called as each block's
    weights are drawn."""
    lora = params["method"] == "lora"
    low = low_dtype(precision)
    decoder = llm_model.build(arch, low if lora else torch.float32, device, rope_positions=params["seq"],
                              seed=1234, on_block=on_block)
    decoder.train()
    adapted = apply_lora(decoder, params["lora_rank"], params["lora_alpha"], ta.LORA_TARGETS) if lora else None
    blocks = decoder.blocks
    for i in range(len(blocks)):
        if precision is FP8:
            fp8_training.convert_block(blocks[i])
        if params["checkpointing"]:
            blocks[i] = Checkpointed(blocks[i])
        if params["compile"]:
            inner = blocks[i].block if params["checkpointing"] else blocks[i]
            inner.compile()  # default mode: max-autotune would spend minutes tuning
    module: nn.Module = TrainingModule(decoder, compiled_loss=bool(params["compile"]))
    if dist is not None and sharding == "fsdp":
        from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

        policy = MixedPrecisionPolicy(param_dtype=low, reduce_dtype=torch.float32)
        for block in blocks:
            fully_shard(block, mp_policy=policy)
        fully_shard(module, mp_policy=policy)
    elif dist is not None:
        from torch.nn.parallel import DistributedDataParallel

        module = DistributedDataParallel(module, device_ids=[device.index] if device.type == "cuda" else None,
                                         gradient_as_bucket_view=True)
    trainable = [p for p in decoder.parameters() if p.requires_grad]
    fused = device.type == "cuda"
    try:
        optimizer = torch.optim.AdamW(trainable, lr=LEARNING_RATE, betas=BETAS, weight_decay=WEIGHT_DECAY,
                                      fused=fused or None)
    except (RuntimeError, TypeError, ValueError):
        fused = False
        optimizer = torch.optim.AdamW(trainable, lr=LEARNING_RATE, betas=BETAS, weight_decay=WEIGHT_DECAY)
    return Built(module, decoder, optimizer, adapted, sum(p.numel() for p in trainable), sharding, fused)


def synthetic_tokens(vocab: int, accum: int, micro_batch: int, seq: int, device: torch.device,
                     seed: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """``accum`` micro-batches of random token ids (inputs and next-token targets), made on the device once."""
    generator = torch.Generator(device=device).manual_seed(seed)
    out = []
    for _ in range(accum):
        ids = torch.randint(0, vocab, (micro_batch, seq + 1), device=device, generator=generator)
        out.append((ids[:, :-1].contiguous(), ids[:, 1:].contiguous()))
    return out


def make_step(built: Built, precision: Precision, device: torch.device, batches: list[Any],
              scaler: Any) -> Callable[[], torch.Tensor]:
    """One optimizer step over every micro-batch of ``batches`` (gradients accumulated; DDP synchronises
    on the last only). Returns the loss of the last micro-batch (not synchronised)."""
    module, optimizer = built.module, built.optimizer
    autocast = torch.autocast(device.type, dtype=low_dtype(precision))
    no_sync = getattr(module, "no_sync", None)
    accum = len(batches)

    def step() -> torch.Tensor:
        loss = None
        for i, (tokens, targets) in enumerate(batches):
            last = i == accum - 1
            context = no_sync() if (no_sync is not None and not last) else _null()
            with context:
                with autocast:
                    loss = module(tokens, targets)
                scaled = loss / accum
                (scaler.scale(scaled) if scaler is not None else scaled).backward()
        if scaler is not None:
            scaler.step(optimizer)
            scaler.update()
        else:
            optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss

    return step


class _null:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        return None


def _is_oom(exc: BaseException) -> bool:
    return isinstance(exc, torch.cuda.OutOfMemoryError) or "out of memory" in str(exc).lower()


def _free(device: torch.device) -> None:
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()


def search_micro_batch(arch: Architecture, params: dict[str, Any], device: torch.device, precision: Precision,
                       reporter: Reporter, start: int, limit: int) -> tuple[int, list[tuple[int, bool]]]:
    """The largest micro-batch (≤ ``limit``) whose eager training step (forward, backward, AdamW) runs
    without running out of memory: :func:`~hwbench_gui.engine.measure.largest_fit.search_max_batch`'s doubling
    and bisection, each try one step in this process on a model built once (an out-of-memory try frees
    its tensors before the next). Eager, because compiling every tried shape would take minutes; the
    compiled step keeps fewer tensors, and halves the batch if it does not."""
    from hwbench_gui.engine.measure.largest_fit import search_max_batch

    if precision is FP8:
        require_fp8(device)  # before the first try, whose failure would read as something else
    eager = {**params, "compile": False}
    built = build(arch, eager, device, precision, None, "none")
    scaler = torch.amp.GradScaler(device.type) if precision.loss_scaling else None

    def fits(micro_batch: int) -> bool:
        batches = synthetic_tokens(arch.vocab, 1, micro_batch, params["seq"], device, seed=7)
        try:
            make_step(built, precision, device, batches, scaler)()
            torch.cuda.synchronize(device)
            ok = True
        except RuntimeError as exc:
            if not _is_oom(exc):
                raise
            ok = False
        built.optimizer.zero_grad(set_to_none=True)
        del batches
        _free(device)
        reporter.log(f"micro-batch {micro_batch}: {'fits' if ok else 'out of memory'}")
        return ok

    try:
        result = search_max_batch(fits, start=min(start, limit), limit=limit, step=1)
    finally:
        built.optimizer.state.clear()
        built.decoder.to("meta")  # frees the search's model before the timed one is built
        _free(device)
    return result.largest, result.tries


def measure(arch: Architecture, params: dict[str, Any], reporter: Reporter, device: torch.device,
            dist: DistContext | None = None, sharding: str = "none",
            on_block: Callable[[int, int], None] | None = None) -> tuple[TimedRun, dict[str, Any]]:
    """Warm-up and timed optimizer steps; ``params["micro_batch"]`` must be resolved (not 0) here.
    Raises :class:`OutOfMemoryError` (after freeing) when CUDA runs out of memory. ``on_block(done, total)``:
    called as each block of the model is built."""
    precision = from_key(params["precision"])
    applied = apply_torch(precision, device.type)
    cuda = device.type == "cuda"
    if cuda and low_dtype(precision) == torch.bfloat16 and not torch.cuda.is_bf16_supported():
        raise BenchmarkUnavailable(f"{torch.cuda.get_device_name(device)} has no BF16 support; use precision=fp16-amp")
    if precision is FP8:
        require_fp8(device)
    micro_batch = params["micro_batch"]
    retries: list[int] = []
    while True:
        try:
            run, details = _measure(arch, {**params, "micro_batch": micro_batch}, reporter, device, dist, sharding,
                                    precision, on_block)
            break
        except RuntimeError as exc:
            if not (cuda and _is_oom(exc)):
                raise
            failed = micro_batch
        # Outside the except block the frames holding the model and the activations are gone.
        _free(device)
        peak = torch.cuda.max_memory_allocated(device)
        total = torch.cuda.get_device_properties(device).total_memory
        if params.get("micro_batch_searched") and len(retries) < COMPILED_OOM_RETRIES and failed > 1 and dist is None:
            retries.append(failed)
            micro_batch = failed // 2
            reporter.log(f"micro-batch {failed} ran out of memory compiled; trying {micro_batch}")
            torch.cuda.reset_peak_memory_stats(device)
            continue
        raise OutOfMemoryError(f"CUDA out of memory at micro-batch {failed} × {params['seq']} tokens (peak "
                               f"{peak / ta.GIB:.1f} GiB of {total / ta.GIB:.1f} GiB); a smaller micro_batch, "
                               "checkpointing=true or method=lora needs less") from None
    details["precision_settings"] = applied.settings
    if precision is FP8:
        details["precision"] = dict(fp8_training.PRECISION_DETAILS)
    details["micro_batch_halved_from"] = retries
    return run, details


def _measure(arch: Architecture, params: dict[str, Any], reporter: Reporter, device: torch.device,
             dist: DistContext | None, sharding: str, precision: Precision,
             on_block: Callable[[int, int], None] | None = None) -> tuple[TimedRun, dict[str, Any]]:
    cuda = device.type == "cuda"
    sync = (lambda: torch.cuda.synchronize(device)) if cuda else (lambda: None)
    built = build(arch, params, device, precision, dist, sharding, on_block)
    micro_batch, accum, seq = params["micro_batch"], params["grad_accum"], params["seq"]
    tokens_per_step = micro_batch * accum * seq
    batches = synthetic_tokens(arch.vocab, accum, micro_batch, seq, device, seed=1000 + (dist.rank if dist else 0))
    scaler = torch.amp.GradScaler(device.type) if precision.loss_scaling else None
    step = make_step(built, precision, device, batches, scaler)

    warmup = params["warmup"]
    progress = StepProgress(reporter, {**params, "mode": "train"}, on_gpu=cuda)
    reporter.progress(0.0, f"warm-up ({warmup} steps{', compiling' if params['compile'] else ''})")
    reporter.phase("warmup", "start")
    t0 = time.perf_counter()
    first_step_s = None
    losses: list[float] = []
    for i in range(warmup):
        losses.append(float(step().detach().float()))
        if i == 0:
            first_step_s = time.perf_counter() - t0
        progress.step()
    sync()
    warmup_s = time.perf_counter() - t0 if warmup else None
    reporter.phase("warmup", "end")
    if cuda:
        torch.cuda.reset_peak_memory_stats(device)  # the peak of the timed steps, not of compilation
    if dist is not None:
        torch.distributed.barrier()
    last: list[Any] = [None]

    def run_steps(n: int) -> tuple[float, list[float], float]:
        seconds, step_s, last[0] = time_steps(step, n, cuda=cuda, sync=sync, progress=progress)
        return seconds, step_s, 0.0

    def agree(n: int) -> int:
        return max_over_ranks(n, device)

    windows = time_windows(run_steps, params, reporter, on_gpu=cuda, agree=agree if dist is not None else None,
                           progress=progress)
    steps = sum(windows.window_steps)
    final_loss = float(last[0].detach().float()) if last[0] is not None else None
    run = TimedRun(batch=tokens_per_step, steps=steps, total_s=sum(windows.window_s), step_s=windows.step_s,
                   warmup_s=warmup_s, first_step_s=first_step_s, final_loss=final_loss,
                   window_s=windows.window_s, window_steps=windows.window_steps)
    if windows.calibration:
        run.extra["calibration"] = windows.calibration
    record_peak_memory(run, torch, device)
    details = {
        "trainable_params": built.trainable,
        "adapted_matrices": len(built.adapted.shapes) if built.adapted else 0,
        "adapter_shapes": [list(s) for s in built.adapted.shapes] if built.adapted else [],
        "adapter_params": built.adapted.adapter_params if built.adapted else 0,
        "optimizer": (f"AdamW lr {LEARNING_RATE} betas {BETAS} weight decay {WEIGHT_DECAY}"
                      f"{' (fused)' if built.fused_adamw else ''}"),
        "grad_scaler": scaler is not None, "warmup_losses": losses,
        "loss_chunk_tokens": ta.chunk_tokens(arch.vocab), "sharding": sharding,
        "torch": torch.__version__, "cuda_runtime": torch.version.cuda,
    }
    return run, details
