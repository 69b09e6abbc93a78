"""hwbench's own engine behind ``hwbench serve``: requests gathered into batches and generated as ``llm.infer``'s
in-process serving sweep does it (prompts processed a group at a time, each sequence's first token from its group's
logits, then every sequence decoded in lockstep, greedy), on one thread that owns the model.

A batch is static: requests arriving while one runs wait for the next. It holds requests of one prompt length (the
decoder's step takes one position for every sequence); others wait for a batch of their own. After the first
request the engine gathers more until none has come for ``gather_s`` (or ``max_batch`` are waiting), as a dynamic
batcher's queue delay (Triton's ``max_queue_delay``): requests sent together are served together. Generation runs to
each request's ``max_tokens``: random-initialised models have no end-of-sequence token worth stopping at.
"""

from __future__ import annotations

import queue
import sys
import threading
import time
import traceback
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable

#: Positions a group of prompts is processed in at once, here and in ``llm.infer``'s in-process serving sweep.
CHUNK_TOKENS = {"cuda": 8192, "cpu": 2048}
#: Batch shapes whose KV cache (and CUDA graph) are kept for the next batch of the same shape.
KEPT_SHAPES = 4
#: The longest a batch waits for more requests after its first, whatever keeps arriving.
GATHER_LIMIT_S = 1.0


@dataclass(eq=False)
class Job:
    """One request: its prompt's token ids and how many tokens it wants. The engine reports to ``post``
    (see :class:`Engine`) the events ``("token", id)``, ``("end", "length")`` and ``("error", one line)``."""

    prompt: list[int]
    max_tokens: int
    produced: int = 0
    arrived_s: float = field(default_factory=time.perf_counter)


Event = tuple[Job, str, Any]


class Engine:
    """The model (built by ``build() -> (torch, model, device_kind)``) and the thread that serves its batches,
    each decoding step a :class:`..models.llm.generate.Stepper` of ``step_mode`` (as llm.infer's: on a GPU
    replayed from a CUDA graph, "fused" compiled with gpt-fast's settings). ``post(events)`` is called from that
    thread with each step's events (one call per step: the caller hands them to its event loop at once)."""

    def __init__(self, build: Callable[[], tuple[Any, Any, str]], post: Callable[[list[Event]], None],
                 max_batch: int, gather_s: float, step_mode: str = "eager"):
        self.torch, self.model, self.kind = build()
        self.post, self.max_batch, self.gather_s = post, max_batch, gather_s
        self.step_mode = step_mode
        self.inbox: queue.Queue[Job] = queue.Queue()
        self.held: list[Job] = []
        self.shapes: OrderedDict[tuple[int, int], tuple[Any, Any, Any]] = OrderedDict()
        self.stopping = threading.Event()
        self.batches = 0
        self.thread = threading.Thread(target=self._loop, name="hwbench-serve-engine", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(timeout=10)

    def submit(self, job: Job) -> None:
        self.inbox.put(job)

    def _gather(self) -> list[Job]:
        """The next batch: the oldest waiting request and every other of its prompt length, gathered until none
        has arrived for ``gather_s``; requests of other lengths are held for later batches, in order."""
        if not self.held:
            try:
                self.held.append(self.inbox.get(timeout=0.1))
            except queue.Empty:
                return []
        first = time.perf_counter()
        while len(self.held) < self.max_batch and time.perf_counter() - first < GATHER_LIMIT_S:
            try:
                self.held.append(self.inbox.get(timeout=self.gather_s))
            except queue.Empty:
                break
        length = len(self.held[0].prompt)
        batch = [j for j in self.held if len(j.prompt) == length][:self.max_batch]
        self.held = [j for j in self.held if j not in batch]
        return batch

    def _loop(self) -> None:
        with self.torch.no_grad():
            while not self.stopping.is_set():
                batch = self._gather()
                if not batch:
                    continue
                try:
                    self._generate(batch)
                except self.torch.cuda.OutOfMemoryError:
                    self.shapes.clear()
                    self.torch.cuda.empty_cache()
                    self.post([(j, "error", f"out of GPU memory for {len(batch)} sequences of "
                                            f"{len(j.prompt)} + {j.max_tokens} positions") for j in batch])
                except Exception as exc:  # a bug: said to the requests and on stderr, and the server goes on
                    traceback.print_exc()
                    self.post([(j, "error", f"the engine failed: {type(exc).__name__}: {exc}") for j in batch])
                self.batches += 1

    def _shape(self, batch: int, positions: int) -> tuple[Any, Any, Any]:
        """The KV cache, step and host buffer of ``batch`` sequences of ``positions``, kept for the next batch of
        that shape (on a GPU the step's CUDA graph is captured, or compiled, once per shape)."""
        from hwbench_gui.engine.models.llm.generate import Stepper, new_cache

        key = (batch, positions)
        if key in self.shapes:
            self.shapes.move_to_end(key)
            return self.shapes[key]
        while len(self.shapes) >= KEPT_SHAPES:
            self.shapes.popitem(last=False)
        cache = new_cache(self.model, batch, positions)
        host = self.torch.empty((batch, 1), dtype=self.torch.long, pin_memory=self.kind == "cuda")
        try:
            stepper = Stepper(self.torch, self.model, cache, batch, self.step_mode)
        except self.torch.cuda.OutOfMemoryError:
            raise
        except Exception as exc:  # torch.compile's own failure: said, and the step runs PyTorch's kernels instead
            if self.step_mode not in ("compile", "fused"):
                raise
            fallback = "graph" if self.kind == "cuda" else "eager"
            print(f"hwbench serve: step={self.step_mode} failed for {batch} sequences ({type(exc).__name__}: "
                  f"{str(exc).splitlines()[0] if str(exc) else ''}); step={fallback} from now on", file=sys.stderr,
                  flush=True)
            self.step_mode = fallback
            stepper = Stepper(self.torch, self.model, cache, batch, self.step_mode)
        self.shapes[key] = (cache, stepper, host)
        return self.shapes[key]

    def _read(self, tokens: Any, host: Any) -> list[int]:
        """``tokens``' ids on the host. On a GPU through a pinned buffer and a CUDA event: waiting on the event
        releases the GIL, so the server's event loop streams while the GPU works (``tolist`` would hold it)."""
        if self.kind != "cuda":
            return tokens.view(-1).tolist()
        host[:tokens.shape[0]].copy_(tokens, non_blocking=True)
        done = self.torch.cuda.Event()
        done.record()
        done.synchronize()
        return host[:tokens.shape[0]].view(-1).tolist()

    def _generate(self, batch: list[Job]) -> None:
        from hwbench_gui.engine.models.llm.generate import prefill

        torch, model = self.torch, self.model
        count, length = len(batch), len(batch[0].prompt)
        longest = max(j.max_tokens for j in batch)
        cache, stepper, host = self._shape(count, length + longest)
        device = cache.k.device
        prompts = torch.tensor([j.prompt for j in batch], dtype=torch.long, device=device)
        group = max(1, min(count, CHUNK_TOKENS[self.kind] // length))
        for first in range(0, count, group):
            size = min(group, count - first)
            logits = prefill(model, prompts[first:first + size], cache.narrow(first, size))
            stepper.tokens[first:first + size] = logits.argmax(dim=-1, keepdim=True)
            self._deliver(batch[first:first + size], self._read(stepper.tokens[first:first + size], host))
        stepper.at(length)
        for _ in range(longest - 1):
            stepper.step()
            self._deliver(batch, self._read(stepper.tokens, host))

    def _deliver(self, jobs: list[Job], tokens: list[int]) -> None:
        events: list[Event] = []
        for job, token in zip(jobs, tokens):
            if job.produced >= job.max_tokens:
                continue
            job.produced += 1
            events.append((job, "token", token))
            if job.produced == job.max_tokens:
                events.append((job, "end", "length"))
        if events:
            self.post(events)
