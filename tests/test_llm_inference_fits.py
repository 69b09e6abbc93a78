"""What runs here for inference, to 70B: the byte counts of llama-3.1-70b and qwen2.5-72b's weights, KV cache and
workspace by weights format, the tensor-parallel split, the verdicts against a card's memory, the one-line
refusal with the arithmetic, and ``hwbench fits`` (no torch, no GPU needed)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hwbench_gui.engine.models.llm import architectures as archs
from hwbench_gui.engine.models.llm import arithmetic as ar
from hwbench_gui.engine.models.llm import infer_fits
from hwbench_gui.engine.spec.benchmark import BenchmarkUnavailable

ROOT = Path(__file__).resolve().parent.parent
LLAMA_70B = archs.builtin("llama-3.1-70b")
QWEN_72B = archs.builtin("qwen2.5-72b")
GIB = 1 << 30
# llama-3.1-70b by hand: a block's q/k/v 8192 × (8192 + 2 × 1024), output 8192², MLP 3 × 8192 × 28672
BLOCK = 8192 * 10240 + 8192 * 8192 + 3 * 8192 * 28672  # 855,638,016
MATMUL = 80 * BLOCK  # 68,451,041,280
# the rest: token table and output projection (128,256 × 8192 each), 2 norms a block, the final norm
OTHER = 2 * 128_256 * 8192 + 80 * 2 * 8192 + 8192  # 2,102,665,216
CHANNELS = 80 * ((8192 + 2048) + 8192 + 2 * 28672 + 8192)  # output channels of every block matmul


def test_the_70b_class_architectures_are_their_public_configs():
    assert (LLAMA_70B.layers, LLAMA_70B.hidden, LLAMA_70B.heads, LLAMA_70B.kv_heads, LLAMA_70B.intermediate,
            LLAMA_70B.vocab, LLAMA_70B.qkv_bias) == (80, 8192, 64, 8, 28672, 128256, False)
    assert (QWEN_72B.layers, QWEN_72B.hidden, QWEN_72B.heads, QWEN_72B.kv_heads, QWEN_72B.intermediate,
            QWEN_72B.vocab, QWEN_72B.qkv_bias) == (80, 8192, 64, 8, 29568, 152064, True)
    assert ar.total_params(LLAMA_70B) == MATMUL + OTHER == 70_553_706_496


HEAD = 128_256 * 8192  # the output projection, quantized with the blocks (as gpt-fast does)
QUANTIZED = MATMUL + HEAD


@pytest.mark.parametrize("weights, expected", [
    ("bf16", 2 * (MATMUL + OTHER)),
    ("int8", QUANTIZED + 2 * (CHANNELS + 128_256) + 2 * (OTHER - HEAD)),
    ("fp8", QUANTIZED + 2 * (CHANNELS + 128_256) + 2 * (OTHER - HEAD)),
    ("int4", QUANTIZED // 2 + QUANTIZED * 4 // 128 + 2 * (OTHER - HEAD)),  # 4 bits + a BF16 scale and zero per 128
])
def test_weight_bytes_of_llama_70b_by_format(weights, expected):
    plan = infer_fits.fit_plan(LLAMA_70B, weights, 4096)
    assert plan.weights_bytes == expected
    # KV cache: keys and values of 80 layers × 8 heads × 128 in BF16 = 327,680 bytes a position
    assert plan.kv_cache_bytes == 327_680 * 4096
    assert plan.total_bytes == plan.weights_bytes + plan.kv_cache_bytes + plan.activation_bytes \
        + plan.attention_bytes + plan.margin_bytes


def test_int4_70b_is_about_40_gb_and_fits_a_48_gb_card_at_4k_not_a_24_gb_one():
    rows = infer_fits.fit_table(list(infer_fits.CARDS), 0, None, ("llama-3.1-70b",))
    int4 = {r["context"]: r for r in rows if r["weights"] == "int4"}
    assert int4[4096]["weights_bytes"] == 39_026_769_920  # 36.3 GiB
    assert int4[4096]["fits"] == {"24 GB card": False, "48 GB card": True}
    # 32k: 47.8 GiB, and the 1.96 GiB BF16 copy of the output projection (128,256 × 8,192) a prompt's product
    # dequantises: more than the 47.5 GiB a 48 GB board leaves a model
    plan = infer_fits.fit_plan(LLAMA_70B, "int4", 32768)
    assert plan.activation_bytes - infer_fits.fit_plan(LLAMA_70B, "bf16", 32768).activation_bytes \
        == 2 * 128_256 * 8_192
    assert 49 * GIB < int4[32768]["total_bytes"] < 50 * GIB
    assert int4[32768]["fits"] == {"24 GB card": False, "48 GB card": False}
    assert int4[131072]["fits"] == {"24 GB card": False, "48 GB card": False}
    assert {r["context"] for r in rows} == {4096, 32768, 131072}
    assert {r["context"] for r in infer_fits.fit_table([], 0, None, ("qwen2.5-72b",))} == {4096, 32768}


def test_tensor_parallel_splits_weights_and_kv_heads():
    plan = infer_fits.fit_plan(LLAMA_70B, "bf16", 32768)
    rest = plan.activation_bytes + plan.attention_bytes + plan.margin_bytes
    assert infer_fits.tensor_parallel_bytes(LLAMA_70B, plan, 8) == int(
        plan.weights_bytes / 8 + plan.kv_cache_bytes / 8 + rest)
    # past 8 GPUs each still holds one of the 8 key/value heads
    assert infer_fits.tensor_parallel_bytes(LLAMA_70B, plan, 16) == int(
        plan.weights_bytes / 16 + plan.kv_cache_bytes / 8 + rest)
    rows = infer_fits.fit_table([("this GPU", 80 * GIB)], 8, 80 * GIB, ("llama-3.1-70b",))
    bf16 = next(r for r in rows if r["weights"] == "bf16" and r["context"] == 4096)
    assert bf16["fits"] == {"this GPU": False, "8 GPUs, tensor-parallel": True}


def test_a_run_that_cannot_fit_is_refused_with_the_arithmetic():
    from hwbench_gui.engine.benchmarks import llm_infer

    plan = infer_fits.fit_plan(LLAMA_70B, "int4", 4096)
    with pytest.raises(BenchmarkUnavailable) as refused:
        llm_infer._refuse_unless_fits(plan, 24 * GIB, "llama-3.1-70b in BF16 with int4 weights")
    text = str(refused.value)
    assert text.startswith("llama-3.1-70b in BF16 with int4 weights does not fit: weights 36.35 GiB + KV cache "
                           "1.25 GiB + ") and text.endswith("needed, 24.00 GiB free") and "\n" not in text
    llm_infer._refuse_unless_fits(plan, 48 * GIB, "llama-3.1-70b")


def test_hwbench_fits_prints_the_table():
    done = subprocess.run([sys.executable, "-m", "hwbench_gui.cli", "fits", "--model", "llama-3.1-70b", "--json"],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["rows"]
    assert len(rows) == 4 * 3 and {r["weights"] for r in rows} == {"bf16", "fp8", "int8", "int4"}
    bad = subprocess.run([sys.executable, "-m", "hwbench_gui.cli", "fits", "--model", "llama-9"],
                         capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "llama-9" in bad.stderr


def test_the_language_model_page_shows_what_fits_when_llm_infer_is_chosen_before_any_run(qtbot, qsettings, tmp_path):
    """The table a user reads before choosing a model and weights, as the Training page shows what trains: the
    same rows as `hwbench fits` (this box has no NVIDIA GPU: the two cards)."""
    from hwbench_gui.ui.benchmarks import BenchmarksTab
    from hwbench_gui.ui.context import AppContext

    context = AppContext(settings=qsettings, results_dir=tmp_path / "results")
    tab = BenchmarksTab(context)
    qtbot.addWidget(tab)
    tab.show()
    try:
        tab.select("llm.infer")
        page = tab.family_pages.pages["llm.infer"]
        table = page.fits
        headers = [table.horizontalHeaderItem(c).text() for c in range(table.columnCount())]
        cells = [[table.item(r, c).text() for c in range(len(headers))] for r in range(table.rowCount())]
        row = next(r for r in cells if r[:3] == ["llama-3.1-70b", "int4", "32,768"])
        assert dict(zip(headers, row))["Total (GiB)"] == "49.7"
        assert dict(zip(headers, row))["48 GB card"] == "does not fit"
        assert "48 GB card" in page.fits_title.text() and "Before a run" in page.heading.text()
    finally:
        tab.shutdown()
        context.workers.shutdown(timeout_s=10)
