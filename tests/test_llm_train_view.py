"""The Training page of an llm.train result shows its MFU lines, the memory estimate and what trains here."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("pytestqt")

from test_llm_train_step import _h100_document  # noqa: E402

from hwbench_gui.ui.benchmarks.llm_train_view import TrainingView, has_training_page  # noqa: E402


def test_training_page_shows_the_run_against_its_limits(qtbot):
    doc = _h100_document()
    assert has_training_page(doc) and not has_training_page({**doc, "status": "failed"})
    view = TrainingView()
    qtbot.addWidget(view)
    view.set_document(doc)
    assert "40.0%" in view.summary.text() and "989.5 TFLOP/s" in view.summary.text()
    assert "AdamW moments (FP32)" in view.memory.text()
    assert view.fits.rowCount() == 8  # four built-in models, full and LoRA
    headers = [view.fits.horizontalHeaderItem(c).text() for c in range(view.fits.columnCount())]
    assert headers[:3] == ["Model", "Method", "Verdict"]  # the verdict in view on a narrow screen
    cells = {(view.fits.item(r, 0).text(), view.fits.item(r, 1).text()): view.fits.item(r, 2).text()
             for r in range(view.fits.rowCount())}
    assert cells[("llama-3.1-8b", "full")] == "does not fit"
    assert cells[("llama-3.1-8b", "lora")].startswith("fits, micro-batch up to")
    assert "Llama 3: full llama-3.2-1b, LoRA llama-3.1-8b" in view.fits_title.text()


def test_before_a_run_the_page_shows_what_trains_on_this_gpu(qtbot):
    view = TrainingView()
    qtbot.addWidget(view)
    view.show_machine(80 * (1 << 30), "NVIDIA H100 80GB HBM3")
    rows = {(view.fits.item(r, 0).text(), view.fits.item(r, 1).text()): [view.fits.item(r, c).text() for c in (3, 4, 5)]
            for r in range(view.fits.rowCount())}
    assert rows[("llama-3.1-8b", "full")] == ["does not fit"] * 3
    assert rows[("llama-3.1-8b", "lora")][1] == "6"
    assert "Llama 3: full llama-3.2-1b, LoRA llama-3.1-8b; Qwen2.5: full none, LoRA qwen2.5-7b" in view.summary.text()
    view.show_machine(None, "no NVIDIA GPU found")
    assert "no NVIDIA GPU found" in view.summary.text() and view.fits.rowCount() == 0


def test_training_page_shows_an_fp8_run_against_both_peaks(qtbot):
    from test_llm_train_fp8 import h100_fp8_document

    view = TrainingView()
    qtbot.addWidget(view)
    view.set_document(h100_fp8_document())
    text = view.summary.text()
    assert "gpt2-124m · full · FP8 · seq 1024" in text
    assert "dense BF16 peak 989.5 and FP8 peak 1979 TFLOP/s (datasheet)" in text
    assert "autocast 16-bit weight copies (outside the blocks)" in view.memory.text()
    assert "FP8 casts of one matmul's backward (transient)" in view.memory.text()
    assert "full training with FP8 block matmuls" in view.fits_title.text()
