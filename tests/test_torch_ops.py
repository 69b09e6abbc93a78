"""Whether PyTorch can run torchvision's operators decides whether the model benchmarks' PyTorch runs can run:
asked once per installed (interpreter, torch, torchvision), remembered, and shown in the catalogue, the CLI's
list and the queue."""

from __future__ import annotations

import json

import pytest

from hwbench_gui.engine.inventory import torch_probe
from hwbench_gui.engine.models import torch_ops
from hwbench_gui.engine.run import registry
from hwbench_gui.engine.run.queue import unavailable_here
from hwbench_gui.engine.run.suites import SuiteRun

BROKEN = {"ok": False, "version": None, "reason": "RuntimeError: operator torchvision::nms does not exist"}

pytestmark = pytest.mark.skipif(torch_ops.installed_pair() is None, reason="PyTorch is not installed")


@pytest.fixture(autouse=True)
def _fresh_answers():
    torch_ops.forget()
    yield
    torch_ops.forget()


def test_the_installed_pair_runs_nms_and_keeps_the_higher_scored_of_two_identical_boxes():
    assert torch_probe.torchvision_ops()["ok"] is True


def test_a_torchvision_whose_nms_does_not_exist_is_reported_with_its_error(monkeypatch):
    import torchvision.ops

    def missing(*_args):
        raise RuntimeError("operator torchvision::nms does not exist")

    monkeypatch.setattr(torchvision.ops, "nms", missing)
    report = torch_probe.torchvision_ops()
    assert report["ok"] is False and report["reason"] == "RuntimeError: operator torchvision::nms does not exist"


def test_the_answer_is_asked_once_per_installed_pair_and_remembered_on_disk(tmp_path):
    calls = []
    cache = tmp_path / "torch_ops.json"

    def probe():
        calls.append(1)
        return {"ok": True, "torchvision_ops": BROKEN}

    reason = torch_ops.unusable_reason(probe, cache)
    pair = torch_ops.installed_pair()
    assert reason.startswith(f"torch {pair['torch']} cannot run torchvision {pair['torchvision']}'s operators "
                             "(RuntimeError: operator torchvision::nms does not exist)")
    assert torch_ops.unusable_reason(probe, cache) == reason and len(calls) == 1
    torch_ops.forget()  # a new process: the file answers
    assert torch_ops.unusable_reason(probe, cache) == reason and len(calls) == 1
    stored = json.loads(cache.read_text())
    stored["key"]["torchvision"] = "another build"  # another install: asked again
    cache.write_text(json.dumps(stored))
    torch_ops.forget()
    torch_ops.unusable_reason(lambda: {"torchvision_ops": {"ok": True}}, cache)
    assert json.loads(cache.read_text())["reason"] is None


@pytest.mark.parametrize("reason", ["torch probe timed out after 120 s",
                                    "torch probe exited with code 2 without a report: unknown option"])
def test_a_probe_that_gave_no_answer_greys_nothing_and_is_not_remembered(tmp_path, reason):
    cache = tmp_path / "torch_ops.json"
    assert torch_ops.unusable_reason(lambda: {"ok": False, "reason": reason}, cache) is None and not cache.exists()


def test_a_torch_that_cannot_be_imported_is_the_reason(tmp_path):
    report = {"ok": False, "reason": "torch could not be imported: OSError: libcudnn.so.9: cannot open"}
    reason = torch_ops.unusable_reason(lambda: report, tmp_path / "torch_ops.json")
    assert reason == "PyTorch cannot be used: torch could not be imported: OSError: libcudnn.so.9: cannot open"


def test_a_broken_pytorch_is_named_in_the_listing_and_its_runs_are_refused(tmp_path, monkeypatch):
    reason = torch_ops.unusable_reason(lambda: {"torchvision_ops": BROKEN}, tmp_path / "torch_ops.json")
    bench = registry.get("model.resnet50")
    tf_installed = registry.framework_missing_reason("tf") is None
    if tf_installed:
        assert registry.availability(bench) is None  # TensorFlow still runs it
        assert registry.framework_limits(bench) == {"PyTorch": reason}
    else:
        assert reason in registry.availability(bench)
    assert unavailable_here(SuiteRun("model.resnet50", {"framework": "torch", "device": "cpu"}), 0) == reason
    assert registry.framework_limits(registry.get("gpu.matmul")) == {}  # no framework choice, no torchvision


def test_a_working_pytorch_limits_nothing(tmp_path):
    assert torch_ops.unusable_reason(lambda: {"torchvision_ops": {"ok": True}}, tmp_path / "t.json") is None
    assert unavailable_here(SuiteRun("model.resnet50", {"framework": "torch", "device": "cpu"}), 0) is None


def test_the_catalogue_and_the_form_say_pytorch_cannot_run_and_why(qtbot, qsettings, tmp_path):
    from hwbench_gui.ui.benchmarks import BenchmarksTab
    from hwbench_gui.ui.context import AppContext

    if registry.framework_missing_reason("tf") is not None:
        pytest.skip("TensorFlow is not installed: the model benchmarks are greyed whole (tested above)")
    reason = torch_ops.unusable_reason(lambda: {"torchvision_ops": BROKEN}, tmp_path / "torch_ops.json")
    tab = BenchmarksTab(AppContext(settings=qsettings, results_dir=tmp_path))
    qtbot.addWidget(tab)
    item = next(i for i in tab.catalogue.iter_items() if i.data(0, 256) == "model.resnet50")  # Qt.UserRole
    assert item.text(1) == "TensorFlow only" and reason in item.toolTip(1)
    tab.select("model.resnet50")
    combo = tab.form().editor("framework")
    torch_item = combo.model().item([combo.itemText(i).split()[0] for i in range(combo.count())].index("torch"))
    assert not torch_item.isEnabled() and torch_item.toolTip() == reason
    assert tab.form().values()["framework"] == "tf"
    tab.shutdown()


@pytest.mark.parametrize("kind", ["deep", "huge number"])
def test_a_cache_nested_deep_or_with_a_huge_number_is_not_read_and_asked_again(tmp_path, kind):
    cache = tmp_path / "torch_ops.json"
    cache.write_text("[" * 5000 if kind == "deep" else '{"key": ' + "9" * 5000 + "}")
    calls = []
    torch_ops.forget()
    torch_ops.unusable_reason(lambda: calls.append(1) or {"ok": True, "torchvision_ops": {"ok": True}}, cache)
    assert calls == [1]
