"""An OpenAI-compatible streaming client on aiohttp: ``/v1/models``, and one streamed request to
``/v1/completions`` or ``/v1/chat/completions`` (server-sent events) timed chunk by chunk.

aiohttp rather than requests: the load keeps hundreds of streams open at once in one event loop, and each chunk's
arrival is timed as it is read. Every failure becomes :class:`EndpointError`, one line naming the URL, or a
request's own one-line ``error``: a server that does not answer, answers HTTP errors, or sends something that is not
an OpenAI stream is never a traceback.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from hwbench_gui.engine.serving.stats import RequestRecord

APIS = {"completions": "/v1/completions", "chat": "/v1/chat/completions"}
#: How much of a reply that is not a stream a message quotes.
QUOTED_CHARS = 120


class EndpointError(Exception):
    """The endpoint cannot be measured; the message is one line naming its URL and why."""


def base_url(url: str) -> str:
    """``url`` without a trailing ``/`` or ``/v1`` (users give either); EndpointError unless http(s)."""
    text = url.strip().rstrip("/")
    if not text.lower().startswith(("http://", "https://")):
        raise EndpointError(f"{url!r}: not an http:// or https:// URL")
    return text[:-3].rstrip("/") if text.endswith("/v1") else text


def _quoted(text: str) -> str:
    flat = " ".join(text.split())
    return repr(flat[:QUOTED_CHARS] + ("…" if len(flat) > QUOTED_CHARS else ""))


def _failure(url: str, exc: BaseException, timeout_s: float) -> str:
    """One line for an exception aiohttp raised while talking to ``url``."""
    import aiohttp

    if isinstance(exc, asyncio.TimeoutError):
        return f"{url}: no answer within {timeout_s:g} s"
    if isinstance(exc, aiohttp.ClientConnectorError):
        why = "connection refused" if isinstance(exc.os_error, ConnectionRefusedError) else \
            (exc.os_error.strerror or str(exc.os_error))
        return f"{url}: does not answer ({why})"
    if isinstance(exc, aiohttp.InvalidURL):
        return f"{url}: not a valid URL"
    return f"{url}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else 'connection failed'}"


async def list_models(session: Any, base: str, timeout_s: float) -> list[str]:
    """The model ids ``GET {base}/v1/models`` lists; EndpointError when the server does not answer or its answer
    is not an OpenAI model list."""
    import aiohttp

    url = f"{base}/v1/models"
    try:
        async with session.get(url, timeout=aiohttp.ClientTimeout(total=timeout_s)) as response:
            body = await response.text()
            if response.status != 200:
                raise EndpointError(f"{url}: answered HTTP {response.status} {_quoted(body)}, not a model list")
    except (aiohttp.ClientError, asyncio.TimeoutError, OSError) as exc:
        raise EndpointError(_failure(url, exc, timeout_s)) from None
    try:
        listed = json.loads(body)["data"]
        return [str(m["id"]) for m in listed if isinstance(m, dict) and "id" in m]
    except (ValueError, KeyError, TypeError):
        raise EndpointError(f"{url}: answered {_quoted(body)}, not an OpenAI model list") from None


def request_body(api: str, model: str, prompt: list[int] | str, max_tokens: int, ignore_eos: bool) -> dict:
    """The JSON body of one streamed request: greedy (temperature 0), usage asked for at the end of the stream;
    ``ignore_eos`` (vLLM's, llama.cpp's and hwbench's extension) so every request generates ``max_tokens``."""
    body: dict[str, Any] = {"model": model, "max_tokens": max_tokens, "stream": True, "temperature": 0.0,
                            "stream_options": {"include_usage": True}}
    if api == "chat":
        text = prompt if isinstance(prompt, str) else " ".join(map(str, prompt))
        body["messages"] = [{"role": "user", "content": text}]
    else:
        body["prompt"] = prompt
    if ignore_eos:
        body["ignore_eos"] = True
    return body


def _content(api: str, event: dict) -> str:
    choices = event.get("choices")
    if not isinstance(choices, list):
        raise ValueError("no 'choices' list")
    if not choices:
        return ""
    choice = choices[0] if isinstance(choices[0], dict) else {}
    if api == "chat":
        delta = choice.get("delta") or {}
        return str(delta.get("content") or delta.get("reasoning_content") or "")
    return str(choice.get("text") or "")


async def stream_one(session: Any, base: str, api: str, body: dict, started: float, timeout_s: float
                     ) -> RequestRecord:
    """Send ``body`` and read its stream: the time of every chunk with content (TTFT, the gaps between chunks),
    the server's usage when it sends one. ``started``: the level's start on :func:`time.perf_counter`."""
    import aiohttp

    url = base + APIS[api]
    sent = time.perf_counter()
    record = RequestRecord(sent_s=sent - started, asked_tokens=int(body["max_tokens"]))
    chunks, last = 0, None
    try:
        async with session.post(url, json=body, timeout=aiohttp.ClientTimeout(total=timeout_s)) as response:
            kind = response.headers.get("Content-Type", "")
            if response.status != 200 or not kind.startswith("text/event-stream"):
                text = await response.text()
                record.error = (f"{url}: answered HTTP {response.status} {kind or 'without a type'} {_quoted(text)}, "
                                "not an OpenAI stream")
                return record
            async for raw in response.content:
                line = raw.decode("utf-8", "replace").strip()
                if not line.startswith("data:"):
                    continue  # blank separators, SSE comments and event names
                data = line[5:].strip()
                if data == "[DONE]":
                    break
                now = time.perf_counter()
                try:
                    event = json.loads(data)
                    text = _content(api, event)
                except (ValueError, AttributeError, TypeError) as exc:
                    record.error = f"{url}: sent {_quoted(data)}, not an OpenAI stream event ({exc})"
                    return record
                usage = event.get("usage")
                if isinstance(usage, dict) and isinstance(usage.get("completion_tokens"), int):
                    record.output_tokens, record.tokens_counted_by = usage["completion_tokens"], "usage"
                    if isinstance(usage.get("prompt_tokens"), int):
                        record.prompt_tokens = usage["prompt_tokens"]
                if not text:
                    continue
                chunks += 1
                if last is None:
                    record.ttft_s = now - sent
                else:
                    record.itl_s.append(now - last)
                last = now
    except (aiohttp.ClientError, asyncio.TimeoutError, OSError) as exc:
        record.error = _failure(url, exc, timeout_s)
        return record
    if last is None:
        record.error = f"{url}: the stream ended without content"
        return record
    record.e2e_s = last - sent
    if record.tokens_counted_by != "usage":
        record.output_tokens = chunks
    return record
