"""diffusion.infer: FLOPs counted on known shapes, the public models' sizes, the memory arithmetic, a step with
hwbench's settings against diffusers' plain call for the same weights, and a small CPU run's figures."""

from __future__ import annotations

import pytest
from recording import Recorder

pytest.importorskip("torch")
pytest.importorskip("diffusers")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from hwbench_gui.engine.benchmarks import diffusion_infer  # noqa: E402
from hwbench_gui.engine.measure.room import Room  # noqa: E402
from hwbench_gui.engine.models.common import OutOfMemoryError  # noqa: E402
from hwbench_gui.engine.models.diffusion import build, counting  # noqa: E402
from hwbench_gui.engine.models.diffusion import what_fits as fit  # noqa: E402
from hwbench_gui.engine.models.diffusion.architectures import BUILT_IN  # noqa: E402
from hwbench_gui.engine.spec.benchmark import BenchmarkUnavailable, ParamError  # noqa: E402

SMALL = {"model": "tiny", "device": "cpu", "size": 32, "repeats": 2, "steps": 30}


def _known_shapes(device: str):
    conv = torch.nn.Conv2d(3, 8, 3, padding=1, device=device)
    linear = torch.nn.Linear(32, 64, device=device)
    x = torch.randn(1, 3, 16, 16, device=device)
    rows = torch.randn(10, 32, device=device)
    q = torch.randn(1, 2, 64, 16, device=device)
    kv = torch.randn(1, 2, 48, 16, device=device)
    return (lambda: conv(x)), (lambda: linear(rows)), (lambda: F.scaled_dot_product_attention(q, kv, kv))


@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_flops_of_known_shapes(device):
    conv, linear, attention = _known_shapes(device)
    # a convolution: 2 × output elements (8 × 16 × 16) × kernel volume (3 × 3) × input channels (3)
    assert counting.count_flops(conv)[0] == 2 * (8 * 16 * 16) * (3 * 3) * 3 == 110_592
    # a linear layer: 2 × rows × in × out (the bias's additions are not counted)
    assert counting.count_flops(linear)[0] == 2 * 10 * 32 * 64 == 40_960
    # attention: the scores (2·h·q·k·d) and their product with the values (2·h·q·k·d)
    assert counting.count_flops(attention)[0] == 2 * (2 * 2 * 64 * 48 * 16) == 393_216


def test_the_public_models_have_their_published_sizes():
    # SDXL base's UNet: 2,567,463,684 parameters; Flux.1-dev's transformer: 11,901,408,320
    assert build.parameter_count(BUILT_IN["sdxl"]) == 2_567_463_684
    assert build.parameter_count(BUILT_IN["flux-dev"]) == 11_901_408_320
    assert build.parameter_count(BUILT_IN["flux-dev"], "vae") == 83_819_683


def test_memory_arithmetic():
    assert fit.activations(kept_bytes=100, largest_output_bytes=10) == 100 + fit.WORKING_TENSORS * 10
    plan = fit.Plan((fit.Stage("denoiser", 60, 30), fit.Stage("encoder", 20, 5), fit.Stage("VAE", 5, 40)))
    assert plan.one_at_a_time == 90  # the denoiser's 60 + 30
    assert plan.all_resident == 60 + 20 + 5 + 40  # every weight, the largest activations (the VAE's)
    assert plan.verdict(1000, "room") == (None, None)
    refusal, note = plan.verdict(int(90 / fit.FIT_FRACTION) - 1, "a small room")
    assert refusal.startswith("does not fit: the denoiser alone needs") and note is None
    refusal, note = plan.verdict(int(100 / fit.FIT_FRACTION), "a middle room")
    assert refusal is None and fit.MODEL_OFFLOAD in note


@pytest.mark.parametrize("name", ["tiny", "tiny-mmdit"])
def test_a_step_with_hwbench_settings_equals_diffusers_plain_call(name):
    arch = BUILT_IN[name]
    torch.manual_seed(0)
    model = build.denoiser(arch, "cpu", torch.float32)
    inputs = build.denoiser_inputs(arch, 1, arch.default_size, "cpu", torch.float32)
    with torch.no_grad():
        plain = build.step(model, inputs)
        settings = build.fast_settings(model, arch)
        fast = build.step(model, build.channels_last_inputs(inputs))
    assert any("fused QKV" in s for s in settings)
    assert fast.shape == plain.shape and plain.abs().mean() > 0
    assert torch.allclose(fast, plain, rtol=1e-4, atol=1e-5)


def test_size_and_model_are_checked():
    with pytest.raises(ParamError, match="model"):
        diffusion_infer.BENCHMARK.resolve_params({"model": "sd9"})
    with pytest.raises(ParamError, match="size: 33"):
        diffusion_infer._check_size(BUILT_IN["sdxl"], 33)


def test_a_run_that_cannot_fit_is_refused_in_one_line(monkeypatch):
    monkeypatch.setattr(diffusion_infer, "host_room", lambda: Room(64 << 10, "64 KiB of RAM available (test)"))
    params = diffusion_infer.BENCHMARK.resolve_params(SMALL)
    with pytest.raises(OutOfMemoryError) as refused:
        diffusion_infer.run(params, Recorder())
    message = str(refused.value)
    assert "\n" not in message and "does not fit" in message and "64 KiB of RAM" in message


def test_the_largest_batch_that_fits_is_searched_against_the_estimate_on_a_cpu():
    from hwbench_gui.engine.measure.timing import Steps

    arch, size, cpu = BUILT_IN["tiny"], 32, torch.device("cpu")
    den, vae, enc, _ = diffusion_infer.trace_parts(torch, arch, size, torch.float32)
    one = (den, vae, enc)

    def fits(images: int, room: Room) -> bool:
        return not diffusion_infer.cost_at(images, one, 4, False, room).plan.verdict(room.bytes, room.what)[0]

    # a room that holds five images' denoising step and not six: the search (doubling, then bisecting) finds 5
    need5 = diffusion_infer.cost_at(5, one, 4, False, Room(1 << 40, "")).plan.one_at_a_time
    room = Room(int(need5 / fit.FIT_FRACTION) + 1, "test room")
    assert fits(5, room) and not fits(6, room)
    found, tries = diffusion_infer.largest_batch(torch, arch, size, cpu, torch.float32, one, 4, False, room,
                                                 Steps(Recorder(), 1))
    assert found == 5 and tries == [(1, True), (2, True), (4, True), (8, False), (6, False), (5, True)]
    # and not one image in a room too small: refused in one line that shows the arithmetic
    with pytest.raises(OutOfMemoryError) as refused:
        diffusion_infer.largest_batch(torch, arch, size, cpu, torch.float32, one, 4, False,
                                      Room(64 << 10, "64 KiB (test)"), Steps(Recorder(), 1))
    assert "\n" not in str(refused.value) and "not even one 32² image of tiny fits" in str(refused.value)


def test_fp8_where_the_device_lacks_it_is_refused_up_front_saying_why(monkeypatch):
    from hwbench_gui.engine.inventory.gpu_arch import fp8_capability_reason
    from hwbench_gui.engine.models.llm import fp8

    # an A100's answer (compute capability 8.0), before anything is traced, built or measured
    monkeypatch.setattr(fp8, "unavailable_reason", lambda device: fp8_capability_reason(8, 0, "NVIDIA A100 (test)"))
    monkeypatch.setattr(diffusion_infer, "trace_parts", lambda *a: pytest.fail("traced before the refusal"))
    params = diffusion_infer.BENCHMARK.resolve_params({**SMALL, "precision": "fp8"})
    with pytest.raises(BenchmarkUnavailable) as refused:
        diffusion_infer.run(params, Recorder())
    message = str(refused.value)
    assert "\n" not in message and message.startswith("precision=fp8: FP8 needs compute capability 8.9")
    assert "NVIDIA A100 (test) is 8.0" in message


def test_without_diffusers_it_is_greyed_out_with_the_reason(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "diffusers" else real(name, *a))
    assert diffusion_infer.availability() == "diffusers is not installed (pip install 'hwbench[gen]')"


@pytest.fixture(scope="module")
def small_run():
    recorder = Recorder()
    params = diffusion_infer.BENCHMARK.resolve_params(SMALL)
    return diffusion_infer.run(params, recorder), recorder


def test_a_small_cpu_run(small_run):
    outcome, recorder = small_run
    assert (outcome.unit, outcome.higher_is_better, outcome.figure_name) == ("images/min", True, "images_per_minute")
    assert len(outcome.samples) == SMALL["repeats"] and all(s > 0 for s in outcome.samples)
    assert recorder.phases == [("timed", state, i) for i in range(SMALL["repeats"]) for state in ("start", "end")]
    assert outcome.resolved_params == {"size": 32, "batch": 1, "compile": "false", "precision": "fp32"}
    assert outcome.precision == "FP32"
    figures = outcome.figures
    assert set(k for k in figures if k.startswith("text_encoder ")) == {f"text_encoder {e.name}"
                                                                        for e in BUILT_IN["tiny"].encoders}


def test_the_image_time_adds_up_and_shares_stay_within_their_limits(small_run):
    outcome, _ = small_run
    figures = outcome.figures
    encoders = sum(v["value"] for k, v in figures.items() if k.startswith("text_encoder "))
    steps = SMALL["steps"]
    for step_s, image_s, per_minute in zip(figures["step_time"]["samples"], figures["image_time"]["samples"],
                                           outcome.samples):
        assert image_s == pytest.approx(encoders + steps * step_s + figures["vae_decode"]["value"])
        assert per_minute == pytest.approx(60 / image_s)
    for name in ("mfu_measured_matmul", "images_per_minute_share"):
        entry = figures[name]
        assert entry["unit"] == "fraction"
        assert (entry["value"] is None and entry.get("reason")) or 0 < entry["value"] <= 1
    assert figures["mfu_datasheet"]["value"] is None and "CPU" in figures["mfu_datasheet"]["reason"]
    assert figures["flops_per_step"]["value"] > 0
    assert outcome.details["check"]["max_abs_diff"] <= 1e-4 * max(1.0, outcome.details["check"]["reference_mean_abs"])
    assert outcome.details["check"]["relative_error"] < 1e-5  # FP32, eager: the same arithmetic reordered


@pytest.fixture(scope="module")
def small_document(small_run):
    from datetime import datetime, timezone

    from hwbench_gui.engine.results.document import build_document
    from hwbench_gui.engine.run.protocol import outcome_to_json

    outcome, _ = small_run
    machine = {"inventory": {"hostname": "alpha", "gpus": [], "cpu": {"model": "CPU"}}, "inventory_reason": None,
               "software": {}, "software_reason": None}
    params = diffusion_infer.BENCHMARK.resolve_params(SMALL)
    return build_document(diffusion_infer.BENCHMARK, {**params, **outcome.resolved_params}, status="ok",
                          started_at=datetime(2026, 12, 5, tzinfo=timezone.utc), duration_s=1.0,
                          outcome=outcome_to_json(outcome), machine=machine)


def test_the_report_section_reads_a_document(small_document):
    from hwbench_gui.engine.reports import diffusion_section

    rows = diffusion_section.build([small_document, {"benchmark": {"id": "diffusion.infer"}, "status": "ok"}])
    assert len(rows) == 1  # the document without figures is passed over
    assert rows[0].configuration == "tiny · 32² · 30 steps · FP32 · batch 1 · eager"
    assert "bound" in rows[0].images_per_minute and rows[0].mfu_datasheet.startswith("not measured")
    csv = diffusion_section.csv_rows([small_document])
    assert list(csv[0]) == list(diffusion_section.CSV_COLUMNS)
    assert csv[0]["images_per_minute"] == small_document["figure"]["value"]
    assert csv[0]["images_per_minute"] <= csv[0]["images_per_minute_bound"]
    assert csv[0]["mfu_datasheet"] is None and 0 < csv[0]["share_of_bound"] <= 1
    (heading, columns, cells), = diffusion_section.pdf_tables(rows, 10.0)
    assert heading.startswith("Image generation") and sum(w for _, w in columns) == pytest.approx(10.0)
    assert cells[0][0][0] == rows[0].configuration
    assert diffusion_section.chart([]) is None


def test_the_evaluation_shows_the_section_in_text_html_and_charts(small_document):
    from hwbench_gui.engine.reports import evaluation

    ev = evaluation.build_evaluation([small_document], with_charts=True)
    assert [row.configuration for row in ev.sections["diffusion.infer"]] == ["tiny · 32² · 30 steps · FP32 · batch 1 · "
                                                                              "eager"]
    assert "Image generation (images per minute" in evaluation.format_evaluation(ev)
    html = evaluation.render_evaluation_html(ev)
    assert "<h2>Image generation</h2>" in html and 'class="diffusion"' in html
    assert "Image generation: images per minute and step time" in [c.title for c in ev.charts]
    assert not [m for m in ev.micro if "diffusion" in m.title]


def test_the_image_generation_page_draws_a_result(small_document, qtbot):
    pytest.importorskip("PySide6")
    from hwbench_gui.ui.benchmarks.diffusion_view import DiffusionView, has_diffusion_page, step_bounds, time_text

    assert has_diffusion_page(small_document)
    view = DiffusionView()
    qtbot.addWidget(view)
    view.set_document(small_document)
    text = view.summary.text()
    assert "tiny · 32² · 30 steps · FP32 · batch 1" in text and "images/min" in text
    assert time_text(small_document).startswith("The batch of 1: text encoders")
    bounds = step_bounds(small_document)
    assert set(bounds) == {"measured matmul rate"}  # the CPU has no datasheet peak
    flops = small_document["figures"]["flops_per_step"]["value"]  # TFLOP over TFLOP/s: seconds
    assert bounds["measured matmul rate"] == pytest.approx(flops / small_document["figures"]["matmul_tflops"]["value"])
    assert len(view.step.listDataItems()) == 1 and len(view.per_minute.listDataItems()) == 1
    # the bounds are named in the key above each chart, never on the line, where the name ran under the bar
    assert "bound: the step’s FLOPs at the measured matmul rate" in view.step_key.text()
    assert "bound: every step at the measured matmul rate" in view.per_minute_key.text()
    import pyqtgraph as pg

    lines = [i for plot in (view.step, view.per_minute) for i in plot.getPlotItem().items
             if isinstance(i, pg.InfiniteLine)]
    assert len(lines) == 2 and not any(hasattr(line, "label") for line in lines)


def test_fp8_time_splits_the_linear_layers_from_the_rest():
    from hwbench_gui.engine.models.diffusion import figures

    trace = counting.Trace(flops=10 * 10**12, flops_by_op={}, params=1, linear_weights=1, largest_output_bytes=1,
                           kept_bytes=0, products=[], linear_flops=6 * 10**12)
    cost = figures.Cost(1, trace, trace, {}, fit.Plan((fit.Stage("denoiser", 1, 1),)), 1)
    # 6 TFLOP of linear layers at 2 TFLOP/s (FP8) and the other 4 TFLOP at 1 TFLOP/s (BF16): 3 s + 4 s
    assert figures.seconds_at_peaks(cost, 1.0, 2.0, fp8=True) == pytest.approx(7.0)
    assert figures.seconds_at_peaks(cost, 1.0, None, fp8=False) == pytest.approx(10.0)
    assert figures.seconds_at_peaks(cost, 1.0, None, fp8=True) is None  # no FP8 rate: no bound


def test_fp8_linear_layers_keep_the_step_close():
    from hwbench_gui.engine.models.llm import fp8

    if fp8.unavailable_reason("cpu"):
        pytest.skip(fp8.unavailable_reason("cpu"))
    arch = BUILT_IN["tiny-mmdit"]
    torch.manual_seed(0)
    model = build.denoiser(arch, "cpu", torch.bfloat16)
    inputs = build.denoiser_inputs(arch, 1, arch.default_size, "cpu", torch.bfloat16)
    with torch.no_grad():
        plain = build.step(model, inputs).float()
        swapped = build.fp8_linears(model)
        quantised = build.step(model, inputs).float()
    assert swapped == sum(1 for m in model.modules() if isinstance(m, fp8.Fp8Linear)) > 0
    assert (quantised - plain).norm() / plain.norm() < 0.1


def test_the_benchmarks_tab_adds_the_page_with_the_first_result(small_document, qtbot, qsettings, tmp_path):
    pytest.importorskip("PySide6")
    from hwbench_gui.ui.benchmarks import BenchmarksTab
    from hwbench_gui.ui.benchmarks.diffusion_view import DiffusionView
    from hwbench_gui.ui.context import AppContext

    context = AppContext(settings=qsettings, results_dir=tmp_path)
    tab = BenchmarksTab(context)
    qtbot.addWidget(tab)
    try:
        assert tab.family_page("diffusion.infer") is None
        tab._add_result_row(small_document, select=True)
        page = tab.family_page("diffusion.infer")
        assert isinstance(page, DiffusionView) and page.document is small_document
        assert tab.bottom.tabText(tab.bottom.indexOf(page)) == "Image generation"
    finally:
        tab.shutdown()
        context.workers.shutdown(timeout_s=10)
