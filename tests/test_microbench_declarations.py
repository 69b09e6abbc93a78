"""Every data-path micro-benchmark declares usable parameters and imports without torch."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from hwbench_gui.engine.spec.benchmark import NEEDS, Benchmark, ParamError

MODULES = {
    "disk_read": "disk.read",
    "cpu_decode": "cpu.decode",
    "host_membw": "host.membw",
    "gpu_pcie": "gpu.pcie",
    "gpu_d2d": "gpu.d2d",
    "gpu_p2p": "gpu.p2p",
    "gpu_matmul": "gpu.matmul",
    "llm_infer": "llm.infer",
    "llm_train": "llm.train",
    "llm_endpoint": "llm.endpoint",
    "llm_llamacpp": "llm.llamacpp",
    "llm_ollama": "llm.ollama",
    "speech_transcribe": "speech.transcribe",
}


def _bench(module: str) -> Benchmark:
    return importlib.import_module(f"hwbench_gui.engine.benchmarks.{module}").BENCHMARK


@pytest.mark.parametrize("module", sorted(MODULES))
def test_declaration_is_complete(module):
    bench = _bench(module)
    assert bench.id == MODULES[module]
    assert bench.title and bench.category and bench.description
    assert set(bench.needs) <= set(NEEDS)
    defaults = bench.resolve_params()
    assert set(defaults) == {p.name for p in bench.params}
    for p in bench.params:
        assert p.help, f"{bench.id}.{p.name} has no help text"
        if p.kind == "choice":
            assert p.default in p.choices
        # The declared default survives a round trip through the parser (as the CLI would send it).
        raw = ",".join(map(str, p.default)) if p.kind == "int_list" else p.default
        assert p.parse(raw) == p.default


@pytest.mark.parametrize("module", sorted(MODULES))
def test_out_of_range_and_unknown_params_are_refused(module):
    bench = _bench(module)
    ranged = [p for p in bench.params if p.kind in ("int", "float", "int_list") and p.minimum is not None]
    assert ranged, f"{bench.id} declares no range-checked parameter"
    for p in ranged:
        with pytest.raises(ParamError):
            bench.resolve_params({p.name: str(p.minimum - 1) if p.kind != "float" or p.minimum <= 0 else p.minimum / 2})
    with pytest.raises(ParamError):
        bench.resolve_params({"no_such_param": 1})


def test_modules_import_without_torch_or_cv2():
    code = ("import sys\n"
            + "".join(f"import hwbench_gui.engine.benchmarks.{m}\n" for m in MODULES)
            + "heavy = [m for m in ('torch', 'cv2', 'PIL', 'numpy') if m in sys.modules]\n"
            + "assert not heavy, heavy\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
