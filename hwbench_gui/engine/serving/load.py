"""The loads of ``llm.endpoint``: closed batches of concurrent requests, and Poisson arrivals at a request rate.

Written here rather than taken from a field tool: AIPerf and GuideLLM are whole applications (AIPerf: ZMQ worker
processes, a tokenizer download from the Hugging Face hub for its synthetic prompts; GuideLLM: a tokenizer too, and
its own report format) that a child run of a desktop app without internet cannot start, and vLLM's
benchmark_serving lives inside vLLM. What they agree on is followed: the request schedule of vLLM's
benchmark_serving (exponential gaps for a rate, a fixed seed), its figures (:mod:`.stats`), and GuideLLM's
"concurrent" and "poisson" load kinds.
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass
from typing import Any, Callable

from hwbench_gui.engine.serving import client
from hwbench_gui.engine.serving.stats import RequestRecord

#: Prompt token ids are drawn below this: every vocabulary has them (the ``tiny`` model's has 512).
PROMPT_ID_LIMIT = 500


@dataclass(frozen=True)
class Shape:
    """What every request asks: ``api`` (completions or chat), the model's id, prompt and output tokens."""

    api: str
    model: str
    prompt_tokens: int
    output_tokens: int
    ignore_eos: bool = True
    timeout_s: float = 120.0


def prompt_of(shape: Shape, rng: random.Random) -> list[int] | str:
    """Random prompt tokens: token ids for completions (exact on every server), words of digits for chat (one token
    each on ``hwbench serve``; a real tokenizer may split them, its usage then says how many)."""
    ids = [rng.randrange(PROMPT_ID_LIMIT) for _ in range(shape.prompt_tokens)]
    return ids if shape.api == "completions" else " ".join(map(str, ids))


def poisson_gaps(rate_per_s: float, count: int, seed: int) -> list[float]:
    """Seconds between ``count`` arrivals at ``rate_per_s`` on average: exponential gaps, as vLLM's
    benchmark_serving draws them (its burstiness 1), reproducible by ``seed``; the first request is sent at 0."""
    rng = random.Random(seed)
    return [0.0] + [rng.expovariate(rate_per_s) for _ in range(count - 1)]


async def _send(session: Any, base: str, shape: Shape, prompt: list[int] | str, started: float) -> RequestRecord:
    body = client.request_body(shape.api, shape.model, prompt, shape.output_tokens, shape.ignore_eos)
    return await client.stream_one(session, base, shape.api, body, started, shape.timeout_s)


async def _session_run(make: Callable[[Any, float], Any], connections: int) -> tuple[list[RequestRecord], float]:
    import aiohttp

    connector = aiohttp.TCPConnector(limit=max(1, connections))
    async with aiohttp.ClientSession(connector=connector) as session:
        started = time.perf_counter()
        records = await make(session, started)
        return records, time.perf_counter() - started


def closed_batch(base: str, shape: Shape, concurrency: int, seed: int) -> tuple[list[RequestRecord], float]:
    """``concurrency`` requests sent together at t = 0, the level ending when the last stream ends (as
    ``llm.infer``'s in-process sweep: a closed batch, no later arrivals). Returns the records and the wall time."""
    rng = random.Random(seed)
    prompts = [prompt_of(shape, rng) for _ in range(concurrency)]

    async def make(session: Any, started: float) -> list[RequestRecord]:
        return list(await asyncio.gather(*(_send(session, base, shape, p, started) for p in prompts)))

    return asyncio.run(_session_run(make, concurrency))


def poisson(base: str, shape: Shape, rate_per_s: float, count: int, seed: int) -> tuple[list[RequestRecord], float]:
    """``count`` requests sent at Poisson arrivals of ``rate_per_s``, each as soon as its time comes whatever is
    still streaming (an open load); the level ends when the last stream ends."""
    rng = random.Random(seed)
    prompts = [prompt_of(shape, rng) for _ in range(count)]
    gaps = poisson_gaps(rate_per_s, count, seed)

    async def make(session: Any, started: float) -> list[RequestRecord]:
        tasks, due = [], 0.0
        for prompt, gap in zip(prompts, gaps):
            due += gap
            wait = due - (time.perf_counter() - started)
            if wait > 0:
                await asyncio.sleep(wait)
            tasks.append(asyncio.create_task(_send(session, base, shape, prompt, started)))
        return list(await asyncio.gather(*tasks))

    return asyncio.run(_session_run(make, count))


def models(base: str, timeout_s: float) -> list[str]:
    """The server's model ids (:func:`client.list_models`), or EndpointError naming the URL."""
    async def ask() -> list[str]:
        import aiohttp

        async with aiohttp.ClientSession() as session:
            return await client.list_models(session, base, timeout_s)

    return asyncio.run(ask())
