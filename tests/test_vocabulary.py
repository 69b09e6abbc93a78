"""The engine's shared vocabulary, declared once: device grammar, precision labels, comparability."""

from __future__ import annotations

import pytest

from hwbench_gui.engine.reports.compare import comparable_params, deciding_params
from hwbench_gui.engine.run import registry
from hwbench_gui.engine.spec import device, precision
from hwbench_gui.engine.spec.benchmark import Param, ParamError


@pytest.mark.parametrize("text, kind, index", [("auto", "auto", 0), ("CPU", "cpu", 0), ("cuda", "cuda", 0),
                                               ("cuda:3", "cuda", 3), ("2", "cuda", 2), (1, "cuda", 1)])
def test_one_device_grammar(text, kind, index):
    parsed = device.parse(text)
    assert (parsed.kind, parsed.index) == (kind, index)


@pytest.mark.parametrize("text", ["gpu0", "cuda:x", "cuda:-1", "", "cuda1"])
def test_bad_device_names_the_grammar(text):
    with pytest.raises(ParamError, match="'cuda:N'"):
        device.parse(text)


def test_device_param_stores_canonical_text_and_checks_the_allowed_kinds():
    gpu_only = Param("device", "device", "cuda:0", "GPU", choices=(device.CUDA,))
    assert gpu_only.parse("1") == "cuda:1"
    assert gpu_only.parse(" CUDA ") == "cuda:0"
    with pytest.raises(ParamError, match="not allowed here"):
        gpu_only.parse("cpu")
    assert Param("device", "device", "auto", "any").parse("cpu") == "cpu"


def test_precision_labels_are_declared_once():
    assert precision.label_of("bf16-amp") == "BF16-AMP"
    assert precision.label_of("tf32") == "TF32"  # never FP32
    assert precision.requested_label("fp16-amp") == "FP16-AMP"
    assert precision.requested_label("all") is None and precision.requested_label(None) is None
    with pytest.raises(ParamError, match="fp32"):
        precision.label_of("fp33")
    model = registry.get("model.resnet50").param("precision")
    assert model.choices == precision.MODEL_KEYS
    matmul = registry.get("gpu.matmul").param("precision")
    assert matmul.choices == ("all",) + precision.MATMUL_KEYS


def test_resolved_params_are_not_resolved_again():
    bench = registry.get("gpu.matmul")
    resolved = bench.resolve_params({"precision": "bf16", "device": "0"})
    assert resolved["device"] == "cuda:0"
    assert bench.resolve_params(resolved) is resolved


def test_comparability_comes_from_the_parameter_declarations():
    bench = registry.get("gpu.pcie")
    deciding = set(bench.comparability_params())
    assert "device" not in deciding and "repeats" not in deciding and "max_bytes" in deciding
    # A document that recorded its deciding parameters is read as it says ...
    recorded = {"benchmark": {"id": "gpu.pcie", "comparability_params": ["max_bytes"]},
                "params": {"device": 0, "max_bytes": 1024, "repeats": 3}}
    assert comparable_params(recorded) == {"max_bytes": 1024}
    # ... an older one that did not is read with this install's declaration ...
    older = {"benchmark": {"id": "gpu.pcie"}, "params": {"device": 0, "max_bytes": 1024, "repeats": 3}}
    assert deciding_params(older) == frozenset(deciding)
    assert "device" not in comparable_params(older) and comparable_params(older)["max_bytes"] == 1024
    # ... and one of a benchmark nobody declares keeps every parameter.
    unknown = {"benchmark": {"id": "no.such"}, "params": {"a": 1}}
    assert comparable_params(unknown) == {"a": 1}


def test_run_like_a_reference_takes_its_deciding_parameters_and_local_defaults(tmp_path):
    from hwbench_gui.engine.run.rerun import run_like

    reference = {"benchmark": {"id": "gpu.pcie", "comparability_params": ["min_bytes", "max_bytes", "size_factor"]},
                 "params": {"device": "cuda:3", "min_bytes": 8192, "max_bytes": 1 << 26, "size_factor": "2",
                            "repeats": 99}}
    bench_id, params = run_like(reference)
    assert bench_id == "gpu.pcie"
    assert (params["min_bytes"], params["max_bytes"], params["size_factor"]) == (8192, 1 << 26, "2")
    defaults = registry.get("gpu.pcie").resolve_params({})
    assert params["device"] == defaults["device"] and params["repeats"] == defaults["repeats"]
    assert run_like(reference, {"repeats": 3})[1]["repeats"] == 3
    with pytest.raises(ParamError, match="do not fit gpu.pcie"):
        run_like({**reference, "params": {**reference["params"], "size_factor": "7"}})
    with pytest.raises(KeyError):
        run_like({"benchmark": {"id": "no.such"}, "params": {}})


def test_cli_run_like_a_document_runs_its_benchmark(tmp_path, cli_env):
    import json

    from support import run_cli

    doc = {"schema_version": 1, "benchmark": {"id": "no.such.bench"}, "params": {}, "status": "ok"}
    path = tmp_path / "ref.json"
    path.write_text(json.dumps(doc))
    out = run_cli(["run", "--like", str(path)], cli_env)
    assert out.returncode == 2 and ("no.such.bench" in out.stderr or "--like" in out.stderr), out.stderr
    out = run_cli(["run", "--like", str(tmp_path / "missing.json")], cli_env)
    assert out.returncode == 2 and "--like" in out.stderr


@pytest.mark.parametrize("kind, unit, text, expected", [
    ("int", "bytes", "64MiB", 64 * 2**20), ("int", "bytes", "64 MiB", 64 * 2**20), ("int", "bytes", "16G", 2**34),
    ("int", "bytes", "1e3", 1000), ("int", "bytes", "1.5 KiB", 1536), ("int", "bytes", "2 kB", 2000),
    ("int", "", "1e3", 1000), ("int", "", " -12 ", -12), ("int", "", "1,024", 1024), ("int", "", 7.0, 7),
    ("int_list", "", "1, 2,4", [1, 2, 4]), ("int_list", "bytes", "4K,1M", [4096, 2**20]),
])
def test_one_parser_reads_what_people_type(kind, unit, text, expected):
    assert Param("n", kind, 0, "n", unit=unit).parse(text) == expected


@pytest.mark.parametrize("unit, raw, reason", [
    ("", "16G", "expected a whole number"), ("", "1.5", "not a whole number"), ("", True, "true/false"),
    ("bytes", "1.3 B", "not a whole number of bytes"), ("bytes", "lots", "64 MiB or 16G"), ("", 2.5, "whole"),
])
def test_one_parser_names_what_it_refuses(unit, raw, reason):
    with pytest.raises(ParamError, match=reason) as refused:
        Param("n", "int", 0, "n", unit=unit).parse(raw)
    assert str(refused.value).startswith(f"n: {raw!r} is not a valid int")


def test_resolved_values_travel_typed_through_the_queue_and_into_the_child():
    import json

    from hwbench_gui.engine.child import worker_command
    from hwbench_gui.engine.run import worker
    from hwbench_gui.engine.run.queue import RunQueue

    bench = registry.get("gpu.pcie")
    resolved = bench.resolve_params({"min_bytes": "64 MiB", "max_bytes": "1G"})
    run = RunQueue().add(bench.id, resolved)
    assert bench.resolve_params(run.params) is run.params  # the runner does not resolve it again
    sent = json.loads(worker_command({"id": bench.id, "params": run.params})[-1])["params"]
    assert sent["min_bytes"] == 64 * 2**20 and sent["max_bytes"] == 2**30  # JSON numbers, not text
    assert worker.child_params(bench, sent) == dict(resolved)


def test_a_precision_declares_what_each_framework_is_asked_for():
    assert (precision.FP32.tf32, precision.TF32.tf32, precision.BF16_AMP.tf32) == (False, True, None)
    assert (precision.FP16_AMP.autocast_dtype, precision.BF16_AMP.autocast_dtype) == ("float16", "bfloat16")
    assert precision.FP32.autocast_dtype is None and precision.TF32.autocast_dtype is None
    assert [precision.from_key(k).keras_policy for k in precision.MODEL_KEYS] == \
        ["float32", "float32", "mixed_float16", "mixed_bfloat16"]
    assert [p.label for p in precision.PRECISIONS if p.loss_scaling] == ["FP16-AMP"]
    assert precision.from_key(" BF16-AMP ") is precision.BF16_AMP


def test_precision_labels_are_spelt_only_where_they_are_declared():
    import ast
    from pathlib import Path

    import hwbench_gui

    root = Path(hwbench_gui.__file__).parent
    declared = root / "engine" / "spec" / "precision.py"
    labels = set(precision.LABELS) - {precision.NOT_APPLICABLE}
    spelt = []
    for path in sorted(root.rglob("*.py")):
        if path == declared:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in labels:
                spelt.append(f"{path.relative_to(root)}:{node.lineno} {node.value}")
    assert spelt == []


def test_apply_torch_sets_the_tf32_switches_and_the_autocast_dtype():
    torch = pytest.importorskip("torch")
    saved = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32,
             torch.get_float32_matmul_precision())
    try:
        off = precision.apply_torch(precision.FP32, "cpu").settings
        assert off == {"cuda.matmul.allow_tf32": False, "cudnn.allow_tf32": False,
                       "float32_matmul_precision": "highest"}
        on = precision.apply_torch(precision.TF32, "cpu").settings
        assert on == {"cuda.matmul.allow_tf32": True, "cudnn.allow_tf32": True, "float32_matmul_precision": "high"}
        amp = precision.apply_torch(precision.BF16_AMP, "cpu")
        assert amp.settings == on  # mixed precision leaves the switches as it found them
        a = torch.randn(8, 8)
        with amp.autocast():
            assert torch.mm(a, a).dtype == torch.bfloat16
        with precision.apply_torch(precision.FP32, "cpu").autocast():
            assert torch.mm(a, a).dtype == torch.float32
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved[:2]
        torch.set_float32_matmul_precision(saved[2])


def test_apply_keras_sets_the_policy_and_the_tf32_switch():
    tf = pytest.importorskip("tensorflow")
    import keras

    try:
        assert precision.apply_keras(precision.FP32) == "float32"
        assert tf.config.experimental.tensor_float_32_execution_enabled() is False
        assert precision.apply_keras(precision.BF16_AMP) == "mixed_bfloat16"
        assert keras.mixed_precision.global_policy().name == "mixed_bfloat16"
        assert tf.config.experimental.tensor_float_32_execution_enabled() is True
    finally:
        keras.mixed_precision.set_global_policy("float32")
        tf.config.experimental.enable_tensor_float_32_execution(True)


def test_a_document_names_its_precision_in_one_place_and_the_shipped_references_read():
    import json
    from pathlib import Path

    import hwbench_gui

    assert precision.of_document({"precision": "bf16-amp", "params": {"precision": "fp32"}}) == "BF16-AMP"
    assert precision.of_document({"precision": None, "params": {"precision": "all"}}) == ""
    assert precision.of_document({"precision": "n/a"}) == "n/a" and precision.of_document([]) == ""
    references = Path(hwbench_gui.__file__).parent.parent / "resources" / "reference"
    read = {precision.of_document(json.loads(p.read_text())) for p in references.rglob("*.json")}
    assert {"TF32", "FP16-AMP", "BF16-AMP"} <= read and "" not in read
