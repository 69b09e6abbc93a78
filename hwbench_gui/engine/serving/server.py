"""``hwbench serve``: hwbench's own engine (:mod:`.batcher`) behind an OpenAI-compatible HTTP API on aiohttp's web
server: ``GET /v1/models``, ``POST /v1/completions`` and ``POST /v1/chat/completions``, streamed as server-sent
events (one event per token, usage at the end when ``stream_options.include_usage`` asks) or answered whole.

Text is read and written by :mod:`.token_text` (the models are random-initialised or a user's weights without their
tokenizer: one word, one token id). Greedy decoding whatever ``temperature`` asks; a chat's messages are joined
(there is no chat template to apply). Errors are answered as OpenAI does: HTTP 400/404 with ``{"error": {...}}``.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
import uuid
from dataclasses import dataclass
from typing import Any, Callable

from hwbench_gui.engine.serving import token_text
from hwbench_gui.engine.serving.batcher import Engine, Event, Job

DEFAULT_MAX_TOKENS = 16  # OpenAI's default for /v1/completions
MAX_BODY_BYTES = 16 << 20


@dataclass(frozen=True)
class Served:
    """What the server serves: the id clients name, its architecture, the context a request may fill, and a
    sentence for the start-up line."""

    model_id: str
    arch: Any
    context: int
    description: str


class RequestError(Exception):
    """A request the API refuses: ``status`` and one line for the client."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def _error(status: int, message: str) -> Any:
    from aiohttp import web

    kind = "invalid_request_error" if status < 500 else "server_error"
    return web.json_response({"error": {"message": message, "type": kind, "code": status}}, status=status)


def _prompt_ids(body: dict, chat: bool, vocab: int) -> list[int]:
    if chat:
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise RequestError(400, "'messages' must be a non-empty list")
        parts = []
        for message in messages:
            content = message.get("content") if isinstance(message, dict) else None
            if isinstance(content, list):  # content parts: the text ones
                content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
            parts.append(str(content or ""))
        ids = token_text.encode(" ".join(parts), vocab)
    else:
        prompt = body.get("prompt")
        if isinstance(prompt, list) and len(prompt) == 1 and isinstance(prompt[0], (str, list)):
            prompt = prompt[0]  # a batch of one prompt
        if isinstance(prompt, str):
            ids = token_text.encode(prompt, vocab)
        elif isinstance(prompt, list) and all(isinstance(t, int) and not isinstance(t, bool) for t in prompt):
            ids = [t % vocab for t in prompt]
        else:
            raise RequestError(400, "'prompt' must be a string, a list of token ids, or a list of one of them")
    if not ids:
        raise RequestError(400, "the prompt is empty")
    return ids


def _max_tokens(body: dict) -> int:
    value = body.get("max_tokens", body.get("max_completion_tokens", DEFAULT_MAX_TOKENS))
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise RequestError(400, f"'max_tokens' must be a whole number of at least 1, not {value!r}")
    return value


class Api:
    """The HTTP handlers over one :class:`Engine`; each request's events reach it through its own queue."""

    def __init__(self, served: Served):
        self.served = served
        self.queues: dict[Job, asyncio.Queue] = {}
        self.engine: Engine | None = None
        self.loop: asyncio.AbstractEventLoop | None = None

    def post(self, events: list[Event]) -> None:
        """From the engine's thread: the step's events handed to the event loop in one call."""
        self.loop.call_soon_threadsafe(self._dispatch, events)

    def _dispatch(self, events: list[Event]) -> None:
        for job, kind, value in events:
            sink = self.queues.get(job)
            if sink is not None:
                sink.put_nowait((kind, value))

    async def models(self, request: Any) -> Any:
        from aiohttp import web

        return web.json_response({"object": "list", "data": [
            {"id": self.served.model_id, "object": "model", "created": int(time.time()), "owned_by": "hwbench",
             "max_model_len": self.served.context}]})

    async def completions(self, request: Any) -> Any:
        return await self._generate(request, chat=False)

    async def chat(self, request: Any) -> Any:
        return await self._generate(request, chat=True)

    def _job(self, body: Any, chat: bool) -> Job:
        if not isinstance(body, dict):
            raise RequestError(400, "the body must be a JSON object")
        model = body.get("model")
        if model not in (None, "", self.served.model_id):
            raise RequestError(404, f"the model {model!r} is not served here; this server serves "
                                    f"{self.served.model_id!r}")
        prompt, max_tokens = _prompt_ids(body, chat, self.served.arch.vocab), _max_tokens(body)
        if len(prompt) + max_tokens > self.served.context:
            raise RequestError(400, f"{len(prompt)} prompt tokens + {max_tokens} max_tokens exceed this server's "
                                    f"context of {self.served.context} positions")
        return Job(prompt, max_tokens)

    async def _generate(self, request: Any, chat: bool) -> Any:
        try:
            body = json.loads(await request.text())
        except ValueError as exc:
            return _error(400, f"the body is not JSON ({exc})")
        try:
            job = self._job(body, chat)
        except RequestError as exc:
            return _error(exc.status, str(exc))
        sink: asyncio.Queue = asyncio.Queue()
        self.queues[job] = sink
        self.engine.submit(job)
        try:
            if body.get("stream"):
                return await self._stream(request, job, sink, chat, body)
            return await self._whole(job, sink, chat)
        finally:
            self.queues.pop(job, None)

    def _chunk(self, ident: str, chat: bool, text: str | None, finish: str | None, first: bool = False) -> dict:
        if chat:
            delta = {"role": "assistant", "content": ""} if first else ({"content": text} if text else {})
            choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        else:
            choice = {"index": 0, "text": text or "", "logprobs": None, "finish_reason": finish}
        return {"id": ident, "object": "chat.completion.chunk" if chat else "text_completion",
                "created": int(time.time()), "model": self.served.model_id, "choices": [choice]}

    def _usage(self, job: Job) -> dict:
        return {"prompt_tokens": len(job.prompt), "completion_tokens": job.produced,
                "total_tokens": len(job.prompt) + job.produced}

    async def _stream(self, request: Any, job: Job, sink: asyncio.Queue, chat: bool, body: dict) -> Any:
        from aiohttp import web

        ident = f"{'chatcmpl' if chat else 'cmpl'}-{uuid.uuid4().hex}"
        kind, value = await sink.get()
        if kind == "error":  # nothing streamed yet: an HTTP error
            return _error(503, value)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await response.prepare(request)

        async def send(event: dict | str) -> None:
            data = event if isinstance(event, str) else json.dumps(event, separators=(",", ":"))
            await response.write(f"data: {data}\n\n".encode())

        if chat:
            await send(self._chunk(ident, chat, None, None, first=True))
        while True:
            if kind == "token":
                await send(self._chunk(ident, chat, token_text.decode(value), None))
            elif kind == "end":
                await send(self._chunk(ident, chat, None, value))
                break
            else:
                await send({"error": {"message": value, "type": "server_error"}})
                break
            kind, value = await sink.get()
        options = body.get("stream_options")
        if isinstance(options, dict) and options.get("include_usage"):
            await send({"id": ident, "object": "chat.completion.chunk" if chat else "text_completion",
                        "created": int(time.time()), "model": self.served.model_id, "choices": [],
                        "usage": self._usage(job)})
        await send("[DONE]")
        await response.write_eof()
        return response

    async def _whole(self, job: Job, sink: asyncio.Queue, chat: bool) -> Any:
        from aiohttp import web

        tokens: list[int] = []
        while True:
            kind, value = await sink.get()
            if kind == "token":
                tokens.append(value)
            elif kind == "error":
                return _error(503, value)
            else:
                break
        text = "".join(token_text.decode(t) for t in tokens)
        choice = ({"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": value} if chat
                  else {"index": 0, "text": text, "logprobs": None, "finish_reason": value})
        return web.json_response({"id": f"{'chatcmpl' if chat else 'cmpl'}-{uuid.uuid4().hex}",
                                  "object": "chat.completion" if chat else "text_completion",
                                  "created": int(time.time()), "model": self.served.model_id, "choices": [choice],
                                  "usage": self._usage(job)})


def application(api: Api) -> Any:
    from aiohttp import web

    app = web.Application(client_max_size=MAX_BODY_BYTES)
    app.router.add_get("/v1/models", api.models)
    app.router.add_post("/v1/completions", api.completions)
    app.router.add_post("/v1/chat/completions", api.chat)
    return app


def run(served: Served, make_engine: Callable[[Callable[[list[Event]], None]], Engine], host: str, port: int,
        ready: Callable[[str], None]) -> None:
    """Serve until SIGINT or SIGTERM: the engine made with the API's ``post``, the site started on ``host``:``port``
    (0: a free port), then ``ready(url)`` with the address it listens on."""
    asyncio.run(_serve(served, make_engine, host, port, ready))


async def _serve(served: Served, make_engine: Callable, host: str, port: int, ready: Callable[[str], None]) -> None:
    from aiohttp import web

    api = Api(served)
    api.loop = asyncio.get_running_loop()
    api.engine = make_engine(api.post)
    api.engine.start()
    runner = web.AppRunner(application(api), access_log=None, handle_signals=False)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    try:
        await site.start()
    except OSError as exc:
        await runner.cleanup()
        api.engine.stop()
        raise RequestError(0, f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    bound = runner.addresses[0][1]
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        if os.name != "nt":
            api.loop.add_signal_handler(sig, stop.set)
    ready(f"http://{host}:{bound}/v1")
    try:
        await stop.wait()
    finally:
        await runner.cleanup()
        api.engine.stop()
