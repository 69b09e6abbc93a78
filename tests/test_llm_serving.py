"""The serving sweep over HTTP against a real server: ``hwbench serve`` with the tiny model started as a subprocess
on a free port, the sweep (two concurrency levels) run through the CLI into a document whose figures are checked
against what was asked; refusals of an absent URL and of a server that does not speak OpenAI's stream; the figures'
formulas on known records."""

from __future__ import annotations

import http.server
import json
import queue
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from recording import Recorder
from support import no_traceback, run_cli

from hwbench_gui.engine.benchmarks import llm_endpoint
from hwbench_gui.engine.serving import load, token_text
from hwbench_gui.engine.serving.presets import HWBENCH, MLPERF_INTERACTIVE, MLPERF_SERVER, LatencyLimits
from hwbench_gui.engine.serving.stats import RequestRecord, level_figures
from hwbench_gui.engine.spec.benchmark import BenchmarkUnavailable

pytest.importorskip("aiohttp")
pytest.importorskip("torch")

START_S = 90  # torch's import on a busy 2-core box


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """``hwbench serve`` (tiny, CPU, a free port) as a real subprocess; its base URL."""
    import os

    env = dict(os.environ)
    env["PYTHONPATH"] = str(Path(__file__).resolve().parent.parent)
    proc = subprocess.Popen([sys.executable, "-m", "hwbench_gui.cli", "serve", "--model", "tiny", "--device", "cpu",
                             "--port", "0", "--context", "256"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: lines.put(proc.stdout.readline()), daemon=True).start()
    try:
        first = lines.get(timeout=START_S)
    except queue.Empty:
        proc.kill()
        pytest.fail(f"hwbench serve printed nothing in {START_S} s")
    assert first.startswith("serving tiny at http://127.0.0.1:"), first + proc.stderr.read()
    yield re.search(r"(http://\S+/v1)", first).group(1)
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()


def test_the_sweep_over_http_measures_what_it_asked(server, cli_env, tmp_path):
    prompt, output, repeats = 8, 5, 2
    proc = run_cli(["run", "llm.endpoint", "-p", f"url={server}", "-p", "concurrency=1,3", "-p",
                    f"prompt_tokens={prompt}", "-p", f"output_tokens={output}", "-p", f"repeats={repeats}",
                    "-p", "rate=50", "-p", "poisson_requests=5", "-p", "search=true", "-p", "search_limit=4",
                    "--out", str(tmp_path), "--quiet"], cli_env, timeout=120)
    no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(next(tmp_path.glob("*.json")).read_text())
    assert doc["status"] == "ok" and doc["figure"]["name"] == "output tokens/s @ 3 sequences"
    assert (doc["figure"]["unit"], doc["figure"]["higher_is_better"]) == ("tokens/s", True)
    levels = doc["details"]["serving"]
    # the levels asked, and those the search measured on its way (doubling from 1, then bisection, up to 4)
    search = doc["details"]["search"]
    by_level = {p["concurrency"]: p for p in levels}
    assert set(by_level) == {1, 3} | {t["concurrency"] for t in search["tries"]}
    assert search["tries"][0]["concurrency"] == 1
    assert all(by_level[t["concurrency"]]["meets_target"] == t["meets_target"] for t in search["tries"])
    passed = [t["concurrency"] for t in search["tries"] if t["meets_target"]]
    assert doc["details"]["largest_concurrency_within_target"] == search["largest"] == (max(passed) if passed else None)
    poisson = doc["details"]["poisson"]
    assert poisson["requests"] == 5 and poisson["failed"] == 0 and poisson["output_tokens"] == 5 * output
    assert all(t <= e for t, e in zip(poisson["ttft_s"], poisson["e2e_s"], strict=True))
    for point in levels:
        c = point["concurrency"]
        assert point["requests"] == c * repeats and point["failed"] == 0 and point["short"] == 0
        assert point["output_tokens"] == point["asked_tokens"] == c * repeats * output  # the server's usage
        assert point["prompt_tokens"] == c * repeats * prompt
        assert all(t <= e for t, e in zip(point["ttft_s"], point["e2e_s"], strict=True))
        assert len(point["tpot_s"]) == c * repeats
        for tokens_per_s, seconds in zip(point["output_tokens_per_s"], point["scenario_seconds"], strict=True):
            assert tokens_per_s == pytest.approx(c * output / seconds)
        assert 0.0 <= point["within_limits_share"] <= 1.0
        assert point["ttft"]["p50"] <= point["ttft"]["p99"] <= max(point["e2e_s"])
    assert doc["details"]["endpoint"]["tokens_counted_by"] == "usage"
    assert doc["details"]["targets"] == {"tpot_p99_ms": 50.0, "ttft_p99_s": 2.0}


def test_the_server_refuses_what_it_cannot_serve(server):
    import asyncio

    import aiohttp

    async def ask(path, body):
        async with aiohttp.ClientSession() as session:
            async with session.post(server + path, json=body) as response:
                return response.status, await response.json()

    status, answer = asyncio.run(ask("/completions", {"model": "llama", "prompt": "1 2"}))
    assert status == 404 and "serves 'tiny'" in answer["error"]["message"]
    status, answer = asyncio.run(ask("/completions", {"prompt": [1] * 250, "max_tokens": 10}))
    assert status == 400 and "context of 256" in answer["error"]["message"]
    status, answer = asyncio.run(ask("/chat/completions", {"messages": [{"role": "user", "content": "7 8 9"}],
                                                           "max_tokens": 3}))
    assert status == 200 and answer["usage"] == {"prompt_tokens": 3, "completion_tokens": 3, "total_tokens": 6}
    assert len(token_text.encode(answer["choices"][0]["message"]["content"], 512)) == 3


def _refusal(url: str) -> str:
    params = llm_endpoint.BENCHMARK.resolve_params({"url": url, "concurrency": [1], "timeout_s": 10})
    with pytest.raises(BenchmarkUnavailable) as caught:
        llm_endpoint.run(params, Recorder())
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_an_absent_url_is_one_line_naming_it():
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    assert _refusal(f"http://127.0.0.1:{port}/v1") == \
        f"http://127.0.0.1:{port}/v1/models: does not answer (connection refused)"
    assert _refusal("ftp://example") == "'ftp://example': not an http:// or https:// URL"


def test_a_server_that_is_not_an_openai_stream_is_one_line_naming_it():
    class Page(http.server.BaseHTTPRequestHandler):
        def _answer(self):
            body = b'{"data": [{"id": "m"}]}' if self.path.endswith("/models") else b"<html>hello</html>"
            self.send_response(200)
            self.send_header("Content-Type", "application/json" if b"data" in body else "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = _answer

        def log_message(self, *args):
            pass

    site = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=site.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{site.server_address[1]}"
        assert _refusal(url) == (f"{url}/v1/completions: answered HTTP 200 text/html '<html>hello</html>', not an "
                                 "OpenAI stream")
    finally:
        site.shutdown()


def test_level_figures_from_known_records():
    # three requests of 4 tokens: TTFT 0.1/0.2/0.3 s, last token 0.4/0.5/0.6 s after sending
    records = [RequestRecord(0.0, 4, 4, 8, ttft, ttft + 0.3, [0.1, 0.1, 0.1], "usage") for ttft in (0.1, 0.2, 0.3)]
    records.append(RequestRecord(0.0, 4, error="x: does not answer"))
    point = level_figures(records, wall_s=2.0, limits=HWBENCH)
    assert point["requests"] == 4 and point["failed"] == 1 and point["output_tokens"] == 12
    assert point["output_tokens_per_s"] == pytest.approx(6.0)  # 12 tokens / 2 s
    assert point["tpot_s"] == pytest.approx([0.1, 0.1, 0.1])  # (e2e - ttft) / (4 - 1)
    assert point["ttft"]["p50"] == pytest.approx(0.2) and point["ttft"]["p99"] == pytest.approx(0.298)
    assert point["meets_target"] is False  # a failed request: the level meets nothing
    assert level_figures(records[:3], 2.0, LatencyLimits("x", "x", 0.3, 0.101, ""))["meets_target"]
    assert not level_figures(records[:3], 2.0, LatencyLimits("x", "x", 0.29, 0.101, ""))["meets_target"]  # TTFT
    assert not level_figures(records[:3], 2.0, MLPERF_INTERACTIVE)["meets_target"]  # TPOT 100 ms > 30 ms


def test_poisson_gaps_are_reproducible_and_average_the_rate():
    gaps = load.poisson_gaps(4.0, 4001, seed=3)
    assert gaps[0] == 0.0 and gaps == load.poisson_gaps(4.0, 4001, seed=3)
    assert sum(gaps) / 4000 == pytest.approx(0.25, rel=0.05)


def test_presets_are_the_published_pairs():
    assert (MLPERF_SERVER.ttft_p99_s, MLPERF_SERVER.tpot_p99_s) == (2.0, 0.1)
    assert (MLPERF_INTERACTIVE.ttft_p99_s, MLPERF_INTERACTIVE.tpot_p99_s) == (0.5, 0.03)
    assert (HWBENCH.ttft_p99_s, HWBENCH.tpot_p99_s) == (2.0, 0.05)


@pytest.mark.parametrize("args, line", [
    (["--model", "/no/such/folder"], "error: model: /no/such/folder is not a folder"),
    (["--device", "cpu", "--step", "graph"], "error: step=graph needs a CUDA GPU (CUDA graphs); use step=eager or "
                                             "compile on the CPU"),
])
def test_hwbench_serve_refuses_in_one_line(cli_env, args, line):
    proc = run_cli(["serve", *args], cli_env, timeout=120)
    no_traceback(proc)
    assert proc.returncode == 2 and proc.stderr.strip() == line


def test_the_chat_api_streams_too(server):
    params = llm_endpoint.BENCHMARK.resolve_params({"url": server, "api": "chat", "concurrency": [2],
                                                    "prompt_tokens": 6, "output_tokens": 4, "repeats": 1})
    outcome = llm_endpoint.run(params, Recorder())
    point = outcome.details["serving"][0]
    assert point["failed"] == 0 and point["output_tokens"] == 2 * 4
    assert point["prompt_tokens"] == 2 * 6  # words of digits: one token each on hwbench serve
    assert outcome.details["endpoint"]["api"] == "chat"
