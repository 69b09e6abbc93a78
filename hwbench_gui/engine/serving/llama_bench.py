"""llama.cpp's ``llama-bench -o json`` output read as foreign input: a list of tests, each a prompt (``n_prompt``
tokens, ``n_gen`` 0: pp) or a generation (``n_gen`` tokens: tg) at ``n_depth`` cached positions, with its
repetitions' tokens/s (``samples_ts``) and the build, backend, GPU and model file that gave them. Only the fields
used are read, each checked; a file that is not such a list is one line naming it."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from hwbench_gui.engine import foreign

MAX_JSON_BYTES = 16 << 20  # a run of hundreds of tests is well under 1 MB
MAX_SAMPLES = 10_000


@dataclass(frozen=True)
class Test:
    """One llama-bench test: ``kind`` "pp" or "tg", its token count, depth, and every repetition's tokens/s."""

    kind: str
    tokens: int
    depth: int
    samples_ts: list[float]
    model_filename: str
    model_type: str
    model_size: int | None
    gpu_info: str
    backends: str
    n_gpu_layers: int | None
    type_k: str
    type_v: str
    build: str
    test_time: str

    @property
    def name(self) -> str:
        return f"{self.kind}{self.tokens} @ depth {self.depth}"


def _int(row: dict, key: str, path: str, index: int, default: int | None = None) -> int | None:
    value = row.get(key, default)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise foreign.ForeignFileError(path, f"test {index}: {key} = {value!r} is not a count: not llama-bench output")
    return value


def _text(row: dict, key: str) -> str:
    value = row.get(key, "")
    return " ".join(str(value).split())[:200] if isinstance(value, (str, int, float)) else ""


def _test(row: Any, path: str, index: int) -> Test:
    if not isinstance(row, dict):
        raise foreign.ForeignFileError(path, f"test {index} is not a JSON object: not llama-bench output")
    prompt, gen = _int(row, "n_prompt", path, index), _int(row, "n_gen", path, index)
    if prompt is None or gen is None or (prompt == 0) == (gen == 0):
        raise foreign.ForeignFileError(path, f"test {index}: n_prompt {prompt!r} and n_gen {gen!r}: not one pp or "
                                             "tg test (pg tests are not read)")
    samples = row.get("samples_ts")
    if samples is None and isinstance(row.get("avg_ts"), (int, float)):
        samples = [row["avg_ts"]]  # older builds: the mean only
    if not isinstance(samples, list) or not 0 < len(samples) <= MAX_SAMPLES or not all(
            isinstance(s, (int, float)) and not isinstance(s, bool) and math.isfinite(s) and s > 0 for s in samples):
        raise foreign.ForeignFileError(path, f"test {index}: samples_ts is not a list of positive tokens/s")
    return Test("tg" if gen else "pp", gen or prompt, _int(row, "n_depth", path, index, 0) or 0,
                [float(s) for s in samples], _text(row, "model_filename"), _text(row, "model_type"),
                _int(row, "model_size", path, index), _text(row, "gpu_info"), _text(row, "backends"),
                _int(row, "n_gpu_layers", path, index), _text(row, "type_k") or "f16", _text(row, "type_v") or "f16",
                f"{_text(row, 'build_commit')} ({_text(row, 'build_number')})", _text(row, "test_time"))


def read(path: str) -> list[Test]:
    """The tests of the llama-bench JSON (``-o json``: a list; ``-o jsonl``: one object a line) at ``path``."""
    data = foreign.read_regular(path, MAX_JSON_BYTES, "llama-bench output")
    depth = foreign.json_depth(data)
    if depth > foreign.MAX_JSON_DEPTH:
        raise foreign.ForeignFileError(path, f"JSON nested {depth} levels deep: not llama-bench output")
    text = data.decode("utf-8", "replace").strip()
    if text.startswith("["):
        rows = foreign.read_json(path, MAX_JSON_BYTES, "llama-bench output")
    else:
        import json

        try:
            rows = [json.loads(line) for line in text.splitlines() if line.strip()]
        except ValueError as exc:
            raise foreign.ForeignFileError(path, f"neither a JSON list nor JSON lines ({exc}): not llama-bench "
                                                 "output") from None
    if not isinstance(rows, list) or not rows:
        raise foreign.ForeignFileError(path, "no tests: not llama-bench output (llama-bench -o json)")
    return [_test(row, path, i) for i, row in enumerate(rows)]
