"""Engines users run, read honestly: a GGUF written by the gguf package's own writer has its bytes per token counted
from its tensors (known answers), llama.cpp's llama-bench JSON (a real run, tests/fixtures/llama_bench/SOURCE.md)
becomes a document whose tg figure is held against a bandwidth bound, never above 100 %; Ollama's eval counts
become tokens/s; files and servers that are not what they claim are one line naming them."""

from __future__ import annotations

import http.server
import json
import threading
from pathlib import Path

import numpy as np
import pytest
from recording import Recorder

from hwbench_gui.engine.foreign import ForeignFileError
from hwbench_gui.engine.spec.benchmark import BenchmarkUnavailable

gguf = pytest.importorskip("gguf")

from hwbench_gui.engine.benchmarks import llm_llamacpp, llm_ollama  # noqa: E402
from hwbench_gui.engine.models.llm import gguf_file  # noqa: E402
from hwbench_gui.engine.serving import llama_bench  # noqa: E402

FIXTURE = Path(__file__).parent / "fixtures" / "llama_bench" / "rtx4080_qwen2.5-7b_q4_k_m.json"
Q = gguf.GGMLQuantizationType

# A 2-layer model: hidden 64, 4 heads of 16 (2 KV heads), vocabulary 32; bytes as stored per type:
# token table F16 32×64×2 = 4096; per layer attn_q Q4_K 64 rows of 256 (one 144-byte block each) = 9216,
# ffn_down Q6_K 64 rows (210-byte blocks) = 13440, a norm F32 64×4 = 256; output Q6_K 32 rows = 6720, its norm 256.
TOTAL = 4096 + 2 * (9216 + 13440 + 256) + 6720 + 256
READ_PER_TOKEN = TOTAL - 4096 + 4096 // 32  # one row of the (untied) token table
KV_PER_POSITION = 2 * 2 * (16 + 16) * 2  # layers × KV heads × (key + value) × f16


def write_gguf(path: Path, tied: bool = False) -> Path:
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_block_count(2)
    writer.add_embedding_length(64)
    writer.add_head_count(4)
    writer.add_head_count_kv(2)
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_Q4_K_M)
    writer.add_token_list([f"t{i}" for i in range(32)])
    writer.add_tensor("token_embd.weight", np.ones((32, 64), dtype=np.float16))
    for layer in range(2):
        writer.add_tensor(f"blk.{layer}.attn_q.weight", np.full((64, 144), 1, dtype=np.uint8), raw_dtype=Q.Q4_K)
        writer.add_tensor(f"blk.{layer}.ffn_down.weight", np.full((64, 210), 1, dtype=np.uint8), raw_dtype=Q.Q6_K)
        writer.add_tensor(f"blk.{layer}.attn_norm.weight", np.ones(64, dtype=np.float32))
    if not tied:
        writer.add_tensor("output.weight", np.full((32, 210), 1, dtype=np.uint8), raw_dtype=Q.Q6_K)
    writer.add_tensor("output_norm.weight", np.ones(64, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


@pytest.fixture
def model_file(tmp_path):
    return write_gguf(tmp_path / "m.gguf")


def test_bytes_per_token_from_the_gguf_itself(model_file, tmp_path):
    model = gguf_file.read(str(model_file))
    assert model.file_type == "Q4_K_M" and model.architecture == "llama"
    assert model.bytes_by_type == {"Q6_K": 2 * 13440 + 6720, "Q4_K": 2 * 9216, "F16": 4096, "F32": 3 * 256}
    assert model.tensor_bytes == TOTAL and model.weights_read_per_token == READ_PER_TOKEN
    assert model.kv_bytes_per_position(2.0) == KV_PER_POSITION
    # tg128 at depth 0: 128 steps of the weights, and the KV of 1 + 2 + ... + 128 attended positions
    assert model.window_bytes(0, 128, 2.0) == 128 * READ_PER_TOKEN + KV_PER_POSITION * 128 * 129 // 2
    tied = gguf_file.read(str(write_gguf(tmp_path / "tied.gguf", tied=True)))
    assert tied.tied_output and tied.weights_read_per_token == TOTAL - 6720  # the whole table is the output


def test_llama_bench_output_held_against_a_bound(model_file):
    params = llm_llamacpp.BENCHMARK.resolve_params({"file": str(FIXTURE), "gguf": str(model_file),
                                                    "bandwidth_gbps": 100.0})
    outcome = llm_llamacpp.run(params, Recorder())
    assert outcome.figure_name == "tg128 @ depth 0" and outcome.precision == "Q4_K_M"
    assert outcome.samples == [119.03, 120.178, 119.43, 118.307, 117.464]  # llama-bench's own repetitions
    bound = 128 * 100e9 / (128 * READ_PER_TOKEN + KV_PER_POSITION * 128 * 129 // 2)
    tg = outcome.figures["tg128 @ depth 0"]
    assert tg["bound_tokens_per_s"] == pytest.approx(bound)
    assert tg["fraction_of_bound"] == pytest.approx(119.03 / bound)
    assert outcome.figures["pp512 @ depth 0"]["value"] == 7136.37
    assert outcome.details["summary"][0].startswith("llama.cpp Q4_K_M: 119 tokens/s = 0.00 of this GPU's bound")
    assert outcome.device == "CUDA (NVIDIA GeForce RTX 4080)" and outcome.details["gpu"] == "NVIDIA GeForce RTX 4080"
    assert any("which this machine does not have" in w for w in outcome.warnings)


def test_a_figure_above_its_bound_gets_no_share(model_file):
    params = llm_llamacpp.BENCHMARK.resolve_params({"file": str(FIXTURE), "gguf": str(model_file),
                                                    "bandwidth_gbps": 0.001})
    tg = llm_llamacpp.run(params, Recorder()).figures["tg128 @ depth 0"]
    assert tg["fraction_of_bound"] is None and "above the" in tg["bound_reason"]


def test_without_a_limit_the_figure_says_why(model_file):
    params = llm_llamacpp.BENCHMARK.resolve_params({"file": str(FIXTURE), "gguf": str(model_file),
                                                    "measure": False})
    outcome = llm_llamacpp.run(params, Recorder())
    tg = outcome.figures["tg128 @ depth 0"]
    assert tg["fraction_of_bound"] is None and tg["bound_reason"].startswith("no bandwidth: NVIDIA GeForce RTX 4080")
    assert "\n" not in outcome.details["summary"][0]


@pytest.mark.parametrize("content, reason", [
    (b"GGUF\x03\x00\x00\x00", "a GGUF file the gguf package cannot read"),
    (b"PK\x03\x04 a zip", "not a GGUF file (no GGUF magic at its start)"),
])
def test_a_file_that_is_not_gguf_is_one_line(tmp_path, content, reason):
    path = tmp_path / "bad.gguf"
    path.write_bytes(content)
    with pytest.raises(ForeignFileError) as caught:
        gguf_file.read(str(path))
    assert str(path) in str(caught.value) and reason in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize("text, reason", [
    ("[]", "no tests"),
    ("{}", "n_prompt None and n_gen None: not one pp or tg test"),
    ("[" * 100 + "]" * 100, "nested 100 levels deep"),
    ('[{"n_prompt": 0, "n_gen": 128, "samples_ts": [-1]}]', "samples_ts is not a list of positive tokens/s"),
    ('[{"n_prompt": 512, "n_gen": 128, "samples_ts": [1.0]}]', "not one pp or tg test"),
])
def test_output_that_is_not_llama_bench_is_one_line(tmp_path, text, reason):
    path = tmp_path / "bench.json"
    path.write_text(text)
    with pytest.raises(ForeignFileError) as caught:
        llama_bench.read(str(path))
    assert str(path) in str(caught.value) and reason in str(caught.value)


class _Ollama(http.server.BaseHTTPRequestHandler):
    """Ollama's API as its documentation gives the answers (api.md): counts and nanosecond durations."""

    def _json(self, answer):
        body = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        if self.path == "/api/show":
            return self._json({"modelfile": "# Modelfile\nFROM relative-name\n"})
        self._json({"model": "m", "response": "x", "done": True, "eval_count": 128, "eval_duration": 640_000_000,
                    "prompt_eval_count": 16, "prompt_eval_duration": 20_000_000})

    def do_GET(self):
        self._json({"models": [{"name": "m", "size_vram": 0}]})

    def log_message(self, *args):
        pass


def test_ollama_eval_counts_become_tokens_per_s(model_file):
    site = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Ollama)
    threading.Thread(target=site.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{site.server_address[1]}"
        params = llm_ollama.BENCHMARK.resolve_params({"url": url, "model": "m", "gguf": str(model_file),
                                                      "repeats": 2, "bandwidth_gbps": 100.0})
        outcome = llm_ollama.run(params, Recorder())
    finally:
        site.shutdown()
    assert outcome.figure_name == "tg128 @ depth 16" and outcome.samples == [200.0, 200.0]  # 128 / 0.64 s
    assert outcome.figures["pp16 @ depth 0"]["samples"] == [800.0, 800.0]  # 16 / 0.02 s
    bound = 128 * 100e9 / (128 * READ_PER_TOKEN + KV_PER_POSITION * (128 * 16 + 128 * 129 // 2))
    assert outcome.figures["tg128 @ depth 16"]["fraction_of_bound"] == pytest.approx(200.0 / bound)
    assert outcome.details["summary"][0].startswith("Ollama Q4_K_M: 200 tokens/s = 0.00 of this CPU's bound")


def test_an_absent_ollama_is_one_line():
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    params = llm_ollama.BENCHMARK.resolve_params({"url": f"http://127.0.0.1:{port}", "model": "m"})
    with pytest.raises(BenchmarkUnavailable) as caught:
        llm_ollama.run(params, Recorder())
    assert str(caught.value) == f"http://127.0.0.1:{port}/api/show: does not answer (connection refused)"
