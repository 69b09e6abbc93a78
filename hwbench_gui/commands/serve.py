"""``hwbench serve``: hwbench's own engine behind an OpenAI-compatible streaming endpoint (``/v1/models``,
``/v1/completions``, ``/v1/chat/completions``), for ``llm.endpoint`` and any OpenAI client. Runs until Ctrl-C."""

from __future__ import annotations

import argparse
import sys

from hwbench_gui.commands.argtypes import at_least, int_between, number_between


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "serve", help="serve a language model over an OpenAI-compatible HTTP API",
        description="Serve a built-in architecture with random weights (tiny on a CPU; llama-3.1-8b and others on "
                    "a GPU) or a Hugging Face folder (config.json + *.safetensors) over /v1/models, "
                    "/v1/completions and /v1/chat/completions, streamed as server-sent events. Concurrent requests "
                    "are batched as llm.infer's serving sweep batches them; greedy decoding to max_tokens; one word, "
                    "one token id (random weights have no tokenizer). Needs aiohttp (pip install "
                    "'hwbench-gui[serve]').")
    parser.add_argument("--model", default="tiny", help="built-in architecture or Hugging Face folder (default tiny)")
    parser.add_argument("--device", default="auto", help="auto (GPU 0 when PyTorch sees one), cpu or cuda:N")
    parser.add_argument("--precision", default="auto", help="auto (bf16 on a GPU, fp32 on the CPU), bf16, fp16, fp32")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine)")
    parser.add_argument("--port", type=int_between(0, 65535), default=8000, help="port (0: a free one; default 8000)")
    parser.add_argument("--context", type=at_least(2), default=4096,
                        help="positions one request may fill, prompt + output (default 4096)")
    parser.add_argument("--max-batch", type=int_between(1, 4096), default=256,
                        help="most sequences generated together (default 256)")
    parser.add_argument("--gather-ms", type=number_between(0.0, 1000.0), default=20.0,
                        help="a batch waits this long after the latest request for more (default 20 ms)")
    parser.add_argument("--step", default="auto", help="the one-token step as llm.infer's: auto (fused on a GPU with "
                        "Triton, graph without, eager on the CPU), fused, compile, graph, eager")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from hwbench_gui.engine.foreign import ForeignFileError
    from hwbench_gui.engine.serving.own_model import Options, prepare
    from hwbench_gui.engine.serving.server import RequestError
    from hwbench_gui.engine.spec.benchmark import BenchmarkUnavailable, ParamError

    try:
        import aiohttp  # noqa: F401
    except ImportError:
        print("error: hwbench serve needs aiohttp: pip install 'hwbench-gui[serve]'", file=sys.stderr)
        return 2
    options = Options(args.model, args.device, args.precision, args.context, args.max_batch, args.gather_ms, args.step)
    try:
        served, make_engine = prepare(options)
        from hwbench_gui.engine.serving import server

        def ready(url: str) -> None:
            print(f"serving {served.model_id} at {url}: {served.description}", flush=True)

        server.run(served, make_engine, args.host, args.port, ready)
    except (ParamError, BenchmarkUnavailable, ForeignFileError, RequestError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0
