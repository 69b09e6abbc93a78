"""Generation with :mod:`.model`'s decoder (as gpt-fast keeps generate.py beside model.py): the model built in a
run's precision (random weights or a user's safetensors), a KV cache, the prompt pass (prefill), and
:class:`Stepper`, one decoding step of a batch of sequences (greedy, each token fed back), run eagerly,
compiled, or replayed from a CUDA graph; :class:`Clock` times queued work on either device.

The public API, for a benchmark or a server::

    model = build_model(torch, "tiny", arch, dtype, "cpu", positions=256)
    cache = new_cache(model, batch=4, positions=256)
    logits = prefill(model, prompts, cache)            # [batch, vocab] of each sequence's last position
    stepper = Stepper(torch, model, cache, batch=4, mode="eager")
    stepper.tokens[:] = logits.argmax(-1, keepdim=True); stepper.at(prompts.shape[1])
    stepper.step()                                     # every sequence one token further; stepper.tokens holds it

torch is imported by the caller (its module is passed in), so this module imports without it.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from hwbench_gui.engine.models.llm.architectures import BUILT_IN, Architecture


class Clock:
    """Timestamps of queued work: CUDA events on a GPU (read after one synchronize), perf_counter on a CPU."""

    def __init__(self, torch: Any, cuda: bool):
        self.torch, self.cuda = torch, cuda

    def mark(self) -> Any:
        if not self.cuda:
            return time.perf_counter()
        event = self.torch.cuda.Event(enable_timing=True)
        event.record()
        return event

    def seconds(self, start: Any, end: Any) -> float:
        if not self.cuda:
            return end - start
        end.synchronize()
        return start.elapsed_time(end) / 1e3


def capture(torch: Any, body: Callable[[], None], before: Callable[[], None] | None = None) -> Any:
    """``body`` (work on the current GPU with fixed shapes and buffers) captured in a CUDA graph after three
    warm-up calls on a side stream, as PyTorch's documentation does it, ``before`` run ahead of each warm-up call
    (outside the graph); ``graph.replay()`` runs it again."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            if before is not None:
                before()
            body()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        body()
    return graph


#: step=fused: gpt-fast's Inductor settings (never max-autotune). Coordinate-descent tuning is what matters at
#: batch 1: with it Inductor turns every one-row matmul into a Triton reduction (torch/_inductor/decomposition.py,
#: "our matrix vector multiplies only achieve peak bandwidth with coordinate descent tuning"), fuses the norm,
#: activation and residual add into it, and tunes its block sizes; the other two name kernels in a profile and
#: reuse compiled graphs across runs.
FUSED_INDUCTOR_OPTIONS = {"coordinate_descent_tuning": True, "triton.unique_kernel_names": True,
                          "fx_graph_cache": True}
STEP_MODES = ("auto", "graph", "compile", "fused", "eager")
RECOMPILE_LIMIT = 64  # Steppers of one run: depths + serving concurrencies, with room


class Stepper:
    """One decoding step of every sequence in ``cache``: logits, greedy next token fed back, position + 1.

    ``mode``: "eager" runs PyTorch's kernels one by one; "graph" captures the step once in a CUDA graph and
    replays it (no launch overhead per kernel); "compile" runs each block's step through ``torch.compile``
    (Inductor's fused kernels, default mode, never max-autotune; one compilation for every block) and, on a GPU,
    captures the whole step in a CUDA graph likewise; "fused" compiles the block's step with
    :data:`FUSED_INDUCTOR_OPTIONS`, residuals and biases added outside the matmuls so that every one-row matmul
    becomes a tuned reduction (``Decoder.decode``'s ``split``), and captures the step in a CUDA graph (what
    mode="reduce-overhead" does, done by hand: one graph, no CUDA-graph trees)."""

    def __init__(self, torch: Any, model: Any, cache: Any, batch: int, mode: str):
        self.torch = torch
        device = cache.k.device
        self.tokens = torch.randint(0, model.arch.vocab, (batch, 1), device=device)
        self.position = torch.zeros((), dtype=torch.long, device=device)
        self.graph = None

        def step(tokens: Any, position: Any, decode: Callable[..., Any], split: bool) -> None:
            logits = decode(tokens, position, cache, split=split)
            tokens.copy_(logits.argmax(dim=-1, keepdim=True))
            position.add_(1)

        if mode in ("compile", "fused"):
            # Every Stepper (each depth, each serving concurrency) compiles the same code for new shapes: past
            # Dynamo's default of 8 recompilations it would fall back to eager kernels and the figure would not say.
            torch._dynamo.config.recompile_limit = max(torch._dynamo.config.recompile_limit, RECOMPILE_LIMIT)
            # One block's step compiled once: the blocks share code and shapes, so the compilation (and in
            # step=fused the tuning of every kernel) is done for one block, not repeated for all of them.
            options = FUSED_INDUCTOR_OPTIONS if mode == "fused" else None
            layer = torch.compile(type(model.blocks[0]).decode, fullgraph=True, dynamic=False, options=options)
            # A quantized output projection compiled too: eagerly its one-row product would convert the whole
            # matrix (a quarter of an 8B model's weights) to BF16 at every token instead of reading it once.
            head = torch.compile(type(model)._logits, fullgraph=True, dynamic=False, options=options) \
                if model.head is not None and type(model.head) is not torch.nn.Linear else None

            def decode(tokens: Any, position: Any, cache: Any, split: bool) -> Any:
                return model.decode(tokens, position, cache, split=split, layer=layer, logits=head)

            def body() -> None:
                step(self.tokens, self.position, decode, mode == "fused")
        else:
            def body() -> None:
                step(self.tokens, self.position, model.decode, False)

        self.body = body

        last = min(cache.positions, model.rope_positions) - 1

        def at_last() -> None:
            # Warm-up steps write the last position both the cache and the position tables hold: no position a
            # run reads is overwritten, and the last is read only after a step at it has written it again.
            self.position.fill_(last)

        if mode in ("compile", "fused") and device.type != "cuda":
            at_last()
            body()  # compiles now, not inside the first timed window
        if device.type == "cuda" and mode in ("graph", "compile", "fused"):
            self.graph = capture(torch, body, before=at_last)

    def at(self, position: int) -> None:
        self.position.fill_(position)

    def step(self) -> None:
        if self.graph is not None:
            self.graph.replay()
        else:
            self.body()



def build_model(torch: Any, model_name: str, arch: Architecture, dtype: Any, device: str, positions: int,
                fp8_blocks: bool = False, on_block: Callable[[int, int], None] | None = None,
                weights: str = "bf16", int4_route: str = "packed") -> Any:
    """``model_name``'s decoder on ``device`` in ``dtype`` with RoPE tables for ``positions``: a built-in
    architecture with random weights (seed 0), or a Hugging Face folder's weights read through safetensors.
    ``fp8_blocks``: the blocks' matmul weights in FP8 (:mod:`.fp8`); ``weights``: "bf16", or a weight-only kind
    (:mod:`.weight_only`), int4 held as ``int4_route`` says. ``on_block(done, total)`` reports progress."""
    from hwbench_gui.engine.models.llm import model as llm

    if model_name.strip().lower() in BUILT_IN:
        return llm.build(arch, dtype, device, rope_positions=positions, seed=0, fp8_blocks=fp8_blocks,
                         weights=weights, int4_route=int4_route, on_block=on_block)
    from hwbench_gui.engine.models.llm import weights as loader

    return loader.load(model_name, dtype, device, rope_positions=positions, fp8_blocks=fp8_blocks, weights=weights,
                       int4_route=int4_route)


def new_cache(model: Any, batch: int, positions: int) -> Any:
    """An empty KV cache of ``batch`` sequences of up to ``positions`` positions, in the model's dtype and on its
    device."""
    from hwbench_gui.engine.models.llm.model import KVCache

    table = model.embed.weight
    return KVCache.allocate(model.arch, batch, positions, table.dtype, table.device)


def prefill(model: Any, tokens: Any, cache: Any, start: int = 0, layer: Any = None) -> Any:
    """Logits ``[batch, vocab]`` of each sequence's last position after ``tokens`` ``[batch, T]`` are processed
    in one pass at positions ``start``..``start + T - 1``, their keys and values written into ``cache``.
    ``layer``: each block's prefill compiled (:func:`compiled_prefill`), or None for eager."""
    return model(tokens, cache=cache, start=start, last_only=True, layer=layer)[:, 0]


def compiled_prefill(torch: Any, model: Any) -> Any:
    """One block's prompt pass compiled once for every block (torch.compile, default mode): its norms, rotations
    and residual adds fused around cuBLAS's matmuls instead of a dozen kernels each."""
    return torch.compile(type(model.blocks[0]).prefill, fullgraph=True, dynamic=False)


def fill(torch: Any, model: Any, cache: Any, depth: int, chunk: int, batch: int) -> None:
    """The KV cache's first ``depth`` positions filled by processing random tokens (as ``llama-bench -d``)."""
    generator = torch.Generator(device=cache.k.device).manual_seed(depth)
    for start in range(0, depth, chunk):
        length = min(chunk, depth - start)
        tokens = torch.randint(0, model.arch.vocab, (batch, length), device=cache.k.device, generator=generator)
        model(tokens, cache=cache, start=start, last_only=True)
