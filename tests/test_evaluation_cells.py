"""The evaluation's matrix: runs of one configuration in a row, a cell's own batch and memory format named
where its row's cells differ, and a clean run shown before a newer busy / few-repeats / idle-GPU one."""

from __future__ import annotations

from pathlib import Path

import pytest
from reports_data import model_doc

from hwbench_gui.engine.reports import evaluation
from hwbench_gui.engine.results import library

REFERENCE = Path(__file__).resolve().parent.parent / "resources" / "reference"
#: The H200's current set and its older runs: one machine kind, so one evaluation.
H200 = (REFERENCE / "h200", REFERENCE / "archive" / "h200-2026-12-02")


@pytest.fixture(scope="module")
def h200():
    docs = [library.load_document(p) for folder in H200 for p in sorted(folder.rglob("*.json"))]
    return evaluation.build_evaluation(docs, with_charts=False)


def _cell(ev, row_title: str, column: str):
    row = next(r for r in ev.rows if r.title == row_title)
    return row.cells[[c.title for c in ev.columns].index(column)]


def test_the_h200_folder_puts_each_resnet50_configuration_in_a_row_of_its_own(h200):
    resnet = [r.title for r in h200.rows if r.title.startswith("ResNet-50")]
    prefix = "ResNet-50 training / inference · "
    assert resnet == [prefix + "batch auto, memory format auto, not compiled",
                      prefix + "batch 128, NCHW, not compiled", prefix + "batch 256, NHWC, not compiled",
                      prefix + "batch 256, NHWC, compiled", prefix + "batch 128, NHWC, not compiled"]
    # the suite's row: FP32 resolved to NCHW and FP16-AMP to NHWC, so each cell names its own
    fp16 = _cell(h200, resnet[0], "PyTorch · training · FP16-AMP").lines()
    assert fp16[0] == "4,673 images/s" and "NHWC · batch 128" in fp16
    assert "NCHW · batch 128" in _cell(h200, resnet[0], "PyTorch · training · FP32").lines()
    assert _cell(h200, resnet[0], "PyTorch · training · BF16-AMP").lines() == ["—"]
    # BF16-AMP at batch 128 NCHW sits with FP32 and TF32 of that configuration, not beside NHWC FP16-AMP
    bf16 = _cell(h200, resnet[1], "PyTorch · training · BF16-AMP").lines()
    assert bf16[0] == "2,351 images/s" and not any("NCHW" in line or "no clean run" in line for line in bf16)
    # the faster BF16 runs are in their rows, each saying it has no clean run
    for row, value in ((resnet[2], "4,730 images/s"), (resnet[3], "6,655 images/s")):
        lines = _cell(h200, row, "PyTorch · training · BF16-AMP").lines()
        assert lines[0] == value and "(no clean run: few repeats, GPU under 50 % busy)" in lines
    html = evaluation.render_evaluation_html(h200)
    assert "batch 128, NCHW, not compiled" in html and "NHWC · batch 128" in html


def _gpu_doc(value: float, minutes: int, *, util: float = 95.0, samples: int = 5, busy: bool = False):
    doc = model_doc("resnet50", framework="torch", mode="train", precision="BF16-AMP", value=value, minutes=minutes)
    doc["device"] = "cuda:0 (Test GPU A)"
    doc["telemetry"]["seed"]["gpu_util_percent"]["mean"] = util
    doc["samples"] = doc["samples"][:samples]
    if busy:
        doc["telemetry"]["noise"] = {"busy": True, "reasons": ["another process used the GPU"]}
    return doc


@pytest.mark.parametrize("unclean, mark", [({"util": 20.0}, "GPU under 50 % busy"), ({"samples": 2}, "few repeats"),
                                           ({"busy": True}, "busy machine")])
def test_a_clean_run_is_shown_before_a_newer_one_that_is_not(unclean, mark):
    clean, newer = _gpu_doc(1000.0, 1), _gpu_doc(1500.0, 2, **unclean)
    cell = evaluation.build_evaluation([clean, newer], with_charts=False).rows[0].cells[0]
    assert cell.doc is clean and cell.other_runs == 1
    assert not any("no clean run" in line for line in cell.lines())
    only = evaluation.build_evaluation([newer], with_charts=False).rows[0].cells[0].lines()
    assert f"(no clean run: {mark})" in only


def test_of_two_clean_runs_the_newer_is_shown():
    older, newer = _gpu_doc(1000.0, 1), _gpu_doc(1100.0, 2)
    assert evaluation.build_evaluation([newer, older], with_charts=False).rows[0].cells[0].doc is newer


def test_a_cpu_run_is_never_called_an_idle_gpu():
    doc = _gpu_doc(30.0, 1, util=0.0)
    doc["device"] = "cpu (2 CPUs)"
    assert not any("no clean run" in line for line in
                   evaluation.build_evaluation([doc], with_charts=False).rows[0].cells[0].lines())


def test_cells_of_a_row_that_agree_on_batch_and_memory_format_do_not_repeat_them():
    docs = [model_doc("resnet50", framework="torch", mode=mode, precision="FP32", value=500.0, minutes=i)
            for i, mode in enumerate(("train", "infer"))]
    ev = evaluation.build_evaluation(docs, with_charts=False)
    assert [r.title for r in ev.rows] == ["RESNET50"]
    assert all(cell.configuration == "" for cell in ev.rows[0].cells)


def test_the_micro_benchmarks_value_is_named_the_median():
    """A demo's score per game is shown as a mean in its page and as this median here: the report says which."""
    from reports_data import make_doc

    ev = evaluation.build_evaluation([make_doc("host.membw", [40.0, 41.0, 39.5, 40.5, 40.2], unit="GB/s")],
                                     with_charts=False)
    assert "<th>Value (median)</th>" in evaluation.render_evaluation_html(ev)
