"""Ollama's native API as a measurement: ``/api/generate`` (not streamed) reports its own ``eval_count`` and
``eval_duration`` (generation), ``prompt_eval_count`` and ``prompt_eval_duration`` (the prompt) in nanoseconds;
``/api/show`` names the GGUF file it loaded (its Modelfile's ``FROM``), ``/api/ps`` how much of it is in GPU memory.
Every failure is :class:`..client.EndpointError`, one line naming the URL."""

from __future__ import annotations

import asyncio
import json
import random
from dataclasses import dataclass
from typing import Any

from hwbench_gui.engine.serving.client import EndpointError, _failure, _quoted


@dataclass(frozen=True)
class Generation:
    """One ``/api/generate`` answer's own counts and durations (seconds)."""

    eval_count: int
    eval_s: float
    prompt_eval_count: int
    prompt_eval_s: float


def _count(answer: dict, key: str) -> int:
    value = answer.get(key, 0)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{key} = {value!r}")
    return value


def generation_of(answer: Any) -> Generation:
    """The counts of an ``/api/generate`` answer; ValueError naming a field that is missing or not a count."""
    if not isinstance(answer, dict):
        raise ValueError("not a JSON object")
    for key in ("eval_count", "eval_duration"):
        if key not in answer:
            raise ValueError(f"no {key}")
    return Generation(_count(answer, "eval_count"), _count(answer, "eval_duration") / 1e9,
                      _count(answer, "prompt_eval_count"), _count(answer, "prompt_eval_duration") / 1e9)


async def _call(session: Any, method: str, url: str, body: dict | None, timeout_s: float) -> Any:
    import aiohttp

    try:
        async with session.request(method, url, json=body, timeout=aiohttp.ClientTimeout(total=timeout_s)) as answer:
            text = await answer.text()
            if answer.status != 200:
                raise EndpointError(f"{url}: answered HTTP {answer.status} {_quoted(text)}")
    except (aiohttp.ClientError, asyncio.TimeoutError, OSError) as exc:
        raise EndpointError(_failure(url, exc, timeout_s)) from None
    try:
        return json.loads(text)
    except ValueError:
        raise EndpointError(f"{url}: answered {_quoted(text)}, not Ollama's JSON") from None


def prompt_words(count: int, seed: int) -> str:
    """``count`` random words of digits: a new prompt each time, so Ollama's prompt cache does not skip it."""
    rng = random.Random(seed)
    return " ".join(str(rng.randrange(1000)) for _ in range(count))


def measure(base: str, model: str, prompt_words_count: int, output_tokens: int, repeats: int, seed: int,
            timeout_s: float) -> tuple[list[Generation], str | None, int | None]:
    """One warm-up and ``repeats`` timed generations of ``output_tokens`` (greedy, raw prompt), the GGUF path Ollama
    loaded (None when its Modelfile names none) and the model's bytes in GPU memory (None when /api/ps does not say)."""
    import aiohttp

    async def go() -> tuple[list[Generation], str | None, int | None]:
        async with aiohttp.ClientSession() as session:
            shown = await _call(session, "POST", f"{base}/api/show", {"model": model}, timeout_s)
            path = None
            for line in str(shown.get("modelfile", "") if isinstance(shown, dict) else "").splitlines():
                if line.startswith("FROM ") and line[5:].strip().startswith("/"):
                    path = line[5:].strip()
            generations = []
            for repeat in range(repeats + 1):
                body = {"model": model, "prompt": prompt_words(prompt_words_count, seed + repeat), "stream": False,
                        "raw": True, "options": {"num_predict": output_tokens, "temperature": 0, "seed": seed}}
                url = f"{base}/api/generate"
                answer = await _call(session, "POST", url, body, timeout_s)
                try:
                    generation = generation_of(answer)
                except ValueError as exc:
                    raise EndpointError(f"{url}: answered {_quoted(json.dumps(answer))}, not an Ollama generation "
                                        f"({exc})") from None
                if repeat:
                    generations.append(generation)
            loaded = await _call(session, "GET", f"{base}/api/ps", None, timeout_s)
            vram = None
            for entry in loaded.get("models", []) if isinstance(loaded, dict) else []:
                if isinstance(entry, dict) and entry.get("name") in (model, f"{model}:latest") \
                        and isinstance(entry.get("size_vram"), int):
                    vram = entry["size_vram"]
            return generations, path, vram

    return asyncio.run(go())
