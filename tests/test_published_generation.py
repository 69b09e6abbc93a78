"""The published image-generation and speech figures shipped in resources/reference: they load, say where they come
from, and pair in a comparison only with a measured run of the same model, size, steps, precision and batch (a
run that asked "auto" pairs by what it ran)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from hwbench_gui.engine.benchmarks import diffusion_infer, speech_transcribe
from hwbench_gui.engine.measure.timing import figure
from hwbench_gui.engine.reports import compare
from hwbench_gui.engine.results import describe, library
from hwbench_gui.engine.results.document import build_document
from hwbench_gui.engine.run.protocol import outcome_to_json
from hwbench_gui.engine.spec.benchmark import Outcome

GENERATION_IDS = {
    "published-diffusers-a100-sdxl-bf16-compiled": ("BF16", 60 / 2.52),
    "published-diffusers-a100-sdxl-bf16-eager": ("BF16", 60 / 3.31),
    "published-mlperf41-nvidia-h100-sdxl-fp8": ("FP8", 16.3484 / 8 * 60),
    "published-mlperf41-nvidia-h200-sdxl-fp8": ("FP8", 17.4186 / 8 * 60),
    "published-faster-whisper-v100s-large-v2-fp16": ("FP16", 13 * 60 / 54),
}


@pytest.fixture(scope="module")
def published():
    found = library.scan([library.reference_dir()], recursive=False)
    assert not found.errors, library.errors_text(found.errors)
    return [d for d in found.docs if d["id"] in GENERATION_IDS]


def _machine(gpu: str) -> dict:
    return {"inventory": {"hostname": "box", "gpus": [{"name": gpu}], "cpu": {"model": "CPU"}},
            "inventory_reason": None, "software": {}, "software_reason": None}


def diffusion_run(asked: dict, ran: dict, per_minute: float, precision: str = "BF16") -> dict:
    """A diffusion.infer document as a run writes it: the parameters as asked, what it chose in ``ran``."""
    params = diffusion_infer.BENCHMARK.resolve_params({"model": "sdxl", "device": "cuda:0", **asked})
    samples = [per_minute * f for f in (0.99, 1.0, 1.01, 0.995, 1.005)]
    outcome = Outcome(figure_name="images_per_minute", unit="images/min", samples=samples, precision=precision,
                      method="m", resolved_params=ran,
                      figures={"image_time": figure([60 / s for s in samples], "s", higher_is_better=False),
                               "step_time": figure([0.07] * 5, "s", higher_is_better=False)})
    return build_document(diffusion_infer.BENCHMARK, params, status="ok",
                          started_at=datetime(2026, 12, 7, tzinfo=timezone.utc), duration_s=1.0,
                          outcome=outcome_to_json(outcome), machine=_machine("NVIDIA H100 80GB HBM3"))


GPU_DEFAULT_RAN = {"size": 1024, "batch": 1, "compile": "true", "precision": "bf16"}


def paired_ids(measured: dict, published: list[dict], all_figures: bool = False) -> dict[str, set[str]]:
    """Per figure name of the measured run: the published documents that landed in its row."""
    result = compare.compare(compare.sides_by_machine([measured] + published), 0, all_figures=all_figures)
    out: dict[str, set[str]] = {}
    for row in result.rows:
        if row.cells[0].metric is None:
            continue
        out[row.cells[0].metric.name] = {c.metric.doc["id"] for c in row.cells[1:] if c.metric is not None}
    return out


def test_the_published_figures_load_with_their_sources(published):
    assert {d["id"] for d in published} == set(GENERATION_IDS)
    for doc in published:
        precision, value = GENERATION_IDS[doc["id"]]
        assert doc["precision"] == precision and doc["figure"]["value"] == pytest.approx(value, rel=1e-4)
        ref = doc["reference"]
        assert ref["source_url"].startswith("https://github.com/") and ref["configuration"] and ref["system"]
        assert doc["samples"] == [] and doc["stats"] is None and doc["warnings"]
        assert describe.machine_name(doc).endswith("(published)")
    mlperf = next(d for d in published if d["id"] == "published-mlperf41-nvidia-h100-sdxl-fp8")
    assert mlperf["params"] == {"model": "sdxl", "size": 1024, "steps": 20, "precision": "fp8", "batch": 32,
                                "compile": "true"}
    assert mlperf["figures"]["MLPerf offline: samples/s, 8 GPUs"]["value"] == 16.3484


def test_a_default_gpu_run_pairs_with_the_compiled_tutorial_figure_only(published):
    run = diffusion_run({"size": 0, "batch": 1, "compile": "auto", "precision": "auto"}, GPU_DEFAULT_RAN, 30.0)
    assert run["params_requested"]["precision"] == "auto" and run["params"]["precision"] == "bf16"
    pairs = paired_ids(run, published, all_figures=True)
    assert pairs["images_per_minute"] == {"published-diffusers-a100-sdxl-bf16-compiled"}
    # the tutorial's own seconds per image sit beside the run's image time, never beside its step time
    assert pairs["image_time"] == {"published-diffusers-a100-sdxl-bf16-compiled"}
    assert pairs["step_time"] == set()
    result = compare.compare(compare.sides_by_machine([run] + published), 0)
    row = next(r for r in result.rows if r.cells[0].metric is not None)
    tutorial = next(c for c in row.cells[1:] if c.metric is not None)
    assert tutorial.ratio == pytest.approx((60 / 2.52) / 30.0, rel=1e-4) and "published" in tutorial.note


def test_an_eager_run_pairs_with_the_eager_tutorial_figure(published):
    run = diffusion_run({"compile": "false"}, {"size": 1024, "precision": "bf16"}, 20.0)
    assert paired_ids(run, published)["images_per_minute"] == {"published-diffusers-a100-sdxl-bf16-eager"}


def test_mlperf_pairs_only_with_fp8_at_20_steps_and_32_images(published):
    mlperf = {"published-mlperf41-nvidia-h100-sdxl-fp8", "published-mlperf41-nvidia-h200-sdxl-fp8"}
    chose_32 = diffusion_run({"steps": 20, "batch": 0, "precision": "fp8"},
                             {"size": 1024, "batch": 32, "compile": "true"}, 100.0, precision="FP8")
    assert paired_ids(chose_32, published)["images_per_minute"] == mlperf
    chose_24 = diffusion_run({"steps": 20, "batch": 0, "precision": "fp8"},
                             {"size": 1024, "batch": 24, "compile": "true"}, 100.0, precision="FP8")
    assert paired_ids(chose_24, published)["images_per_minute"] == set()
    bf16_at_20 = diffusion_run({"steps": 20, "batch": 32}, {**GPU_DEFAULT_RAN, "batch": 32}, 90.0)
    assert paired_ids(bf16_at_20, published)["images_per_minute"] == set()


def test_a_run_at_another_size_or_step_count_pairs_with_nothing(published):
    for asked, ran in (({"size": 768}, {**GPU_DEFAULT_RAN, "size": 768}), ({"steps": 50}, GPU_DEFAULT_RAN)):
        assert paired_ids(diffusion_run(asked, ran, 30.0), published)["images_per_minute"] == set()


def test_a_whisper_run_never_pairs_with_faster_whispers_beam_search(published):
    params = speech_transcribe.BENCHMARK.resolve_params({"model": "large-v3", "precision": "fp16", "device": "cuda:0"})
    outcome = Outcome(figure_name="real-time factor, batch 1", unit="x real time", samples=[40.0, 41.0, 40.5, 40.2],
                      precision="FP16", method="m", resolved_params={"batches": [1, 16], "step": "graph"})
    run = build_document(speech_transcribe.BENCHMARK, params, status="ok",
                         started_at=datetime(2026, 12, 7, tzinfo=timezone.utc), duration_s=1.0,
                         outcome=outcome_to_json(outcome), machine=_machine("NVIDIA H100 80GB HBM3"))
    assert paired_ids(run, published)["real-time factor, batch 1"] == set()
    # not even a large-v2 folder of the user's: the published figure decodes with beam search until the speech ends
    own = {**run, "params": {**run["params"], "model": "large-v2"}}
    assert paired_ids(own, published)["real-time factor, batch 1"] == set()


def test_an_unpaired_published_figure_says_which_settings_keep_it_apart(published):
    run = diffusion_run({"size": 0, "batch": 1, "compile": "auto", "precision": "auto"}, GPU_DEFAULT_RAN, 30.0)
    result = compare.compare(compare.sides_by_machine([run] + published), 0)
    cells = [c for r in result.rows for c in r.cells
             if c.metric is not None and c.metric.doc["id"] == "published-mlperf41-nvidia-h100-sdxl-fp8"]
    assert len(cells) == 1 and cells[0].mark == compare.MARK_NOT_COMPARABLE
    # its own name for the figure is not what differs: the precision and the batch are (the size ran alike)
    assert "at FP8" in cells[0].note and "batch 32" in cells[0].note
    assert "another kind of figure" not in cells[0].note and "size" not in cells[0].note


def test_the_image_generation_section_says_who_published_a_figure(published):
    from hwbench_gui.engine.reports import diffusion_section

    rows = diffusion_section.build([d for d in published if d["benchmark"]["id"] == "diffusion.infer"])
    assert len(rows) == 4
    assert {r.date for r in rows} == {"published by Hugging Face (diffusers documentation)",
                                      "published by NVIDIA (MLPerf Inference v4.1)"}
    assert {r.images_per_minute for r in rows} == {"23.81 images/min", "18.13 images/min", "122.6 images/min",
                                                   "130.6 images/min"}


def test_each_published_figure_stands_in_its_familys_section_of_the_evaluation(published):
    """A published figure is its own machine's evaluation: its family's section shows the headline with who
    published it, in the text and the HTML, never a report of one result that shows none."""
    from hwbench_gui.engine.reports import evaluation

    for doc in published:
        report = evaluation.build_evaluation([doc], with_charts=False)
        text, html = evaluation.format_evaluation(report), evaluation.render_evaluation_html(report)
        publisher = doc["reference"]["publisher"]
        shown = f"{doc['figure']['value']:,.1f}" if doc["benchmark"]["id"] == "speech.transcribe" else \
            f"{doc['figure']['value']:.4g}"
        assert shown in text and f"published by {publisher}" in text, (doc["id"], text)
        assert shown in html, doc["id"]


def test_every_shipped_published_figure_shows_its_value_and_publisher_in_the_evaluation():
    """Every published document of the shipped references, whatever its family (a training matrix cell, a
    language-model section, image generation, speech), shows its headline and who published it in the
    evaluation's text, and never a parameter it does not hold ("batch None") or an empty device ("()")."""
    from hwbench_gui.engine.reports import evaluation
    from hwbench_gui.engine.results import formatting

    found = library.scan([library.reference_dir()], recursive=False)
    every = [d for d in found.docs if d.get("provenance") == "published"]
    assert len(every) >= 10
    for doc in every:
        text = evaluation.format_evaluation(evaluation.build_evaluation([doc], with_charts=False))
        value = doc["figure"]["value"]
        # the speech section gives a real-time factor to one decimal, the others hwbench's figure format
        shown = {formatting.format_value(value, doc["figure"]["unit"]).split()[0], f"{value:,.1f}×"}
        assert any(v in text for v in shown), (doc["id"], text)
        assert f"published by {doc['reference']['publisher']}" in text, (doc["id"], text)
        assert "Not measured" not in text and "None" not in text and "()" not in text, (doc["id"], text)
