"""The data-path verdict is consistent by construction: fed the figures of a CPU run
and of an H100 run, every statement it makes is checked; and the rules around it
that no test held (the noise allowance, the epoch-start statistic, the window length, the p5-p95
rule against a published figure) are pinned at their edges."""

from __future__ import annotations

import math
import re
from dataclasses import replace

from hwbench_gui.engine.datapath.end_to_end import MIN_STEPS, WINDOW_S, window_steps
from hwbench_gui.engine.datapath.stages import stage_named
from hwbench_gui.engine.datapath.tryouts import LoaderConfig, Tried
from hwbench_gui.engine.datapath.findings import CONSISTENCY_NOISE, Context, bottleneck_name, link_word
from hwbench_gui.engine.datapath.verdict import analyze, epoch_start_cost
from hwbench_gui.engine.models.common import GPU_IDLE_NOTE_BELOW_PERCENT

#: Words that name a GPU or the copy to it: none belongs in a verdict of a run without a GPU.
GPU_WORDS = re.compile(r"GPU|PCIe|copy|transfer|pinn|device|CUDA|nvJPEG", re.IGNORECASE)

# A CPU run: 1,024 generated images, batch 16, one loader worker of two CPUs,
# compute alone 36 images/s, end to end 29, its best configuration (no worker) 40, the collate
# stage between 69,094 and 170,931 images/s.
CPU_BASE = LoaderConfig(workers=1, prefetch=4, pin_memory=False, channels_last=False)
CPU_RATES = {"disk_cold": 9_000.0, "disk_cached": 55_000.0, "decode_1": 7_400.0, "decode_n": 7_400.0,
             "augment_1": 3_600.0, "cpu_n": 1_266.0, "transfer": 69_094.0, "compute": 36.0, "end_to_end": 29.0}
# An ImageNet-1k epoch priced at batch 16: 1,281,167 // 16 = 80,072 batches.
CPU_EPOCH = {"cost_s": 0.4, "costs_s": [0.4], "epoch_images": 1_281_167, "epoch_batches": 80_072, "step_s": 0.5,
             "fraction": 0.4 / (0.4 + 80_072 * 0.5), "epoch_of": "imagenet"}


def _cpu_ctx(**overrides) -> Context:
    values = dict(device="cpu", workers=1, cpus=2, batch=16, images=1024, dataset_bytes=80 << 20,
                  available_ram_bytes=8 << 30, precision="FP32", channels_last=False, model="resnet18",
                  image_size=64, stored_width_px=500, stored_height_px=375)
    values.update(overrides)
    return Context(**values)


def _cpu_tried(prefetch_rate: float = 12.2) -> list[Tried]:
    return [Tried("workers_0", replace(CPU_BASE, workers=0), 40.0, [40.0, 39.0, 41.0], 9.0),
            Tried("workers_2", replace(CPU_BASE, workers=2), 12.0, [12.0, 12.5, 11.8], 9.0),
            Tried("prefetch_8", replace(CPU_BASE, prefetch=8), prefetch_rate, [prefetch_rate] * 3, 9.0)]


def _cpu_verdict(rates=None, tried=None, epoch_start=None, **ctx):
    return analyze(rates or CPU_RATES, _cpu_ctx(**ctx), data_wait_fraction=0.05,
                   tried=_cpu_tried() if tried is None else tried, base=CPU_BASE,
                   epoch_start=epoch_start or CPU_EPOCH)


def _all_text(verdict) -> str:
    return " ".join([verdict.text, verdict.to_json()["bottleneck_name"]]
                    + [f"{a.action} {a.detail} {a.basis}" for a in verdict.advice if a.action != "Train on a GPU"])


def test_a_cpu_run_names_a_bound_no_measured_configuration_beats():
    verdict = _cpu_verdict()
    assert verdict.bottleneck == "compute" and verdict.limiting_rate == 36.0
    # 40 images/s with no worker beats 36 only because the model then trains on both cores: the
    # verdict says the bound is the default configuration's and what moved it.
    assert verdict.moved_by["key"] == "workers_0" and verdict.moved_by["settings"] == ["workers"]
    assert "on 1 thread (the 2 CPUs less one per loader worker)" in verdict.text
    assert "num_workers 1 → 0 ran 40 images/s end to end, above this bound" in verdict.text
    assert "the bound is the default configuration's" in verdict.text
    assert verdict.text.startswith("Bottleneck of the default configuration (resnet18, FP32, batch 16, 64 px, NCHW, "
                                   "1 loader worker)")
    # Every configuration that runs compute as it was measured alone (same threads, same layout) is below it.
    for t in _cpu_tried():
        if t.config.workers == CPU_BASE.workers:
            assert t.rate <= verdict.limiting_rate


def test_more_workers_that_leave_compute_its_threads_raise_the_compute_bound():
    """Two workers on two CPUs leave the model the one thread one worker left (the CPU run of
    2026-12-05 on this busy box: compute alone 25 images/s, num_workers 1 → 2 ran 50 end to end)."""
    rates = dict(CPU_RATES, compute=25.0, end_to_end=18.0)
    tried = [Tried("workers_2", replace(CPU_BASE, workers=2), 50.0, [50.0] * 3, 9.0)]
    verdict = _cpu_verdict(rates=rates, tried=tried)
    assert verdict.raised["compute"] == {"alone": 25.0, "rate": 50.0, "by": "num_workers 1 → 2"}
    assert verdict.limiting_rate == 50.0 and verdict.moved_by == {}


def test_a_configuration_that_runs_the_stage_as_measured_and_beats_it_raises_the_bound():
    # A deeper prefetch leaves compute's threads alone: its 40 images/s show compute delivers at
    # least that, whatever the standalone 36 said.
    verdict = _cpu_verdict(tried=_cpu_tried(prefetch_rate=40.0)[1:])
    assert verdict.limiting_stage == "compute" and verdict.limiting_rate == 40.0
    assert verdict.raised["compute"] == {"alone": 36.0, "rate": 40.0, "by": "prefetch_factor 4 → 8"}
    assert "at least 40 images/s, reached end to end by prefetch_factor 4 → 8 (36 images/s alone" in verdict.text
    # and the 11 images/s the default loses below it are the prefetch's, measured
    assert verdict.moved_by == {}
    assert [(c["key"], c["recovered"]) for c in verdict.loss["causes"]] == [("prefetch", 1.0)]
    # Within BETTER_BY (3 %) of it, a run is the same figure: nothing is raised.
    assert not _cpu_verdict(tried=_cpu_tried(prefetch_rate=36.0 * 1.029)[1:]).raised
    assert _cpu_verdict(tried=_cpu_tried(prefetch_rate=36.0 * 1.031)[1:]).raised["compute"]["rate"] == 36.0 * 1.031
    # The default's own end-to-end rate raises it too (a standalone method that underestimates).
    above = analyze(dict(CPU_RATES, end_to_end=38.0), _cpu_ctx(), data_wait_fraction=0.05)
    assert above.limiting_rate == 38.0 and above.raised["compute"]["by"] == "the default configuration"
    # A run that changes neither decode + augment's settings nor compute's raises both: decode +
    # augment measured 30 alone, yet fed 40 images/s end to end.
    moved = analyze(dict(CPU_RATES, cpu_n=30.0), _cpu_ctx(), data_wait_fraction=0.05,
                    tried=[Tried("prefetch_8", replace(CPU_BASE, prefetch=8), 40.0, [40.0] * 3, 9.0)], base=CPU_BASE)
    assert moved.limiting_stage == "cpu_n" and moved.limiting_rate == 40.0  # cpu_n ran 40 with prefetch 8 too


def test_no_negative_loss_and_every_share_is_of_something():
    verdict = _cpu_verdict(rates=dict(CPU_RATES, compute=36.0))
    text = verdict.text
    assert not re.search(r"(^|[\s(])-\d", text), text  # never "-240% of the 7 images/s lost"
    assert "prefetch_factor 4 → 8: 12 images/s end to end, no faster than the default's 29 images/s" in text
    assert "more than all of the 7 images/s lost" in text  # no worker: 40 against 29, 7 lost
    assert "Cause of the 7 images/s lost between the stages (19% of the slowest stage's rate)" in text
    # The epoch start says whose epoch it is priced for, in images and batches of this run's batch.
    assert ("under 0.1% of ImageNet-1k's epoch (the dataset here is generated; epoch_images sets yours): "
            "1,281,167 images, 80,072 batches of 16") in text
    folder = _cpu_verdict(epoch_start=dict(CPU_EPOCH, epoch_of="folder", epoch_images=1024, epoch_batches=64,
                                           fraction=0.2))
    assert "20% of an epoch over your folder's images: 1,024 images, 64 batches of 16" in folder.text
    old = _cpu_verdict(epoch_start={k: v for k, v in CPU_EPOCH.items() if k != "epoch_of"})
    assert "ImageNet-1k's epoch" in old.text  # a document from before epoch_of: known by its size


def test_no_gpu_stage_or_word_without_a_gpu():
    verdict = _cpu_verdict()
    assert not GPU_WORDS.search(_all_text(verdict)), GPU_WORDS.search(_all_text(verdict))
    assert "collate 69,094 images/s" in verdict.text
    assert link_word("transfer", "cpu") == "collate" and bottleneck_name("transfer", "cpu") == "collating batches"
    assert not GPU_WORDS.search(stage_named("transfer", "cpu").title + stage_named("transfer", "cpu").phrase)
    # collate the slowest link on the CPU: still named without a copy
    slow = _cpu_verdict(rates=dict(CPU_RATES, transfer=30.0, end_to_end=29.0), tried=[])
    assert slow.bottleneck == "transfer" and not GPU_WORDS.search(_all_text(slow))
    # the same figures on a GPU box speak of the copy
    assert "pin + copy" in analyze(CPU_RATES, _cpu_ctx(device="cuda"), data_wait_fraction=0.05).text


# An H100 run: ResNet-50 BF16 NCHW at batch 128, end to end 2,100 images/s, compute
# alone 2,150, the GPU busy 52 % of the timed time.
H100_RATES = {"disk_cold": 10_000.0, "disk_cached": 11_000.0, "decode_1": 660.0, "decode_n": 8_700.0,
              "augment_1": 385.0, "cpu_n": 2_900.0, "gpu_decode": 22_000.0, "transfer": 48_000.0,
              "compute": 2_150.0, "end_to_end": 2_100.0}


def _h100(util: float, **rates):
    ctx = Context(device="cuda", workers=15, cpus=16, batch=128, images=16384, dataset_bytes=1 << 30,
                  available_ram_bytes=128 << 30, precision="BF16-AMP", channels_last=False, model="resnet50",
                  image_size=224, stored_width_px=500, stored_height_px=375)
    return analyze(dict(H100_RATES, **rates), ctx, data_wait_fraction=0.0, gpu_util_percent=util)


def test_compute_bound_with_the_gpu_idle_is_the_hosts_launch_path():
    verdict = _h100(52.0)
    assert verdict.bottleneck == "launch" and verdict.limiting_stage == "compute"
    assert verdict.to_json()["bottleneck_name"] == "the host's launch path (kernel launches, Python)"
    assert verdict.text.startswith("Bottleneck of the default configuration (resnet50, BF16-AMP, batch 128, 224 px, "
                                   "NCHW, 15 loader workers): the host's launch path (kernel launches, Python) "
                                   "(model compute alone: 2,150 images/s")
    assert "The GPU was busy only 52 % of the end-to-end timed time" in verdict.text
    actions = [a.action for a in verdict.advice]
    assert actions[:2] == ["Larger batch (256)", "CUDA graphs (torch.compile)"]
    assert "Channels-last memory format" not in actions  # not measured: nothing to price it with
    larger = verdict.advice[0]
    assert larger.expected_images_per_s is None and larger.basis.startswith("not measured here")
    # measured what-ifs price it, capped by what the data path feeds (decode + augment 2,900)
    priced = _h100(52.0, compute_batch2x=3_900.0, compute_channels_last=4_300.0)
    by_action = {a.action: a for a in priced.advice}
    assert by_action["Larger batch (256)"].expected_images_per_s == 2_900.0
    assert by_action["Channels-last memory format"].expected_images_per_s == 2_900.0
    assert "capped by the data path's 2,900 images/s" in by_action["Larger batch (256)"].basis
    assert "the host's launch path is the limit" in by_action["Nothing to gain in the data path"].detail


def test_launch_path_threshold_is_the_model_benchmarks_note():
    assert GPU_IDLE_NOTE_BELOW_PERCENT == 90.0
    assert _h100(89.9).bottleneck == "launch"
    assert _h100(90.0).bottleneck == "compute" and "launch" not in _h100(90.0).text
    assert _h100(None).bottleneck == "compute"  # no utilisation sample: nothing to say


# -- rules pinned at their edges -----------------------------------------------------------------

def test_noise_allowance_before_end_to_end_counts_as_above_the_slowest_stage():
    """End to end may exceed the slowest stage alone by CONSISTENCY_NOISE (15 %) before the
    standalone method is said to underestimate it."""
    assert CONSISTENCY_NOISE == 0.15
    slowest = CPU_RATES["compute"]
    within = analyze(dict(CPU_RATES, end_to_end=slowest * 1.149), _cpu_ctx(), data_wait_fraction=0.0)
    beyond = analyze(dict(CPU_RATES, end_to_end=slowest * 1.151), _cpu_ctx(), data_wait_fraction=0.0)
    assert within.consistency["consistent"] is True and beyond.consistency["consistent"] is False
    assert (beyond.consistency["slowest_alone_stage"], beyond.consistency["slowest_alone_rate"]) == ("compute", slowest)


def test_epoch_start_cost_is_the_median_of_the_forced_starts():
    # one start slowed by something else (4.0 s) moves the mean (1.7 s), not the median
    assert epoch_start_cost([0.5, 4.0, 0.6]) == 0.6
    assert epoch_start_cost([1.0, 3.0]) == 2.0
    assert epoch_start_cost([]) is None


def test_end_to_end_windows_are_counted_in_steps_of_a_batch():
    """A window lasts about WINDOW_S seconds: rate × seconds / batch steps (not that many images)."""
    assert WINDOW_S == {"cuda": 1.5, "cpu": 1.0} and MIN_STEPS == 3
    assert window_steps(2000.0, 128, "cuda") == math.ceil(1.5 * 2000 / 128) == 24
    assert window_steps(100.0, 16, "cpu") == 7
    assert window_steps(20.0, 16, "cpu") == 3 and window_steps(None, 16, "cpu") == 3


def test_a_published_figure_differs_only_outside_the_measured_p5_p95():
    """Against a published figure (no samples) a measurement differs when its p5-p95 interval, ends
    included, does not hold the figure; the interval is asymmetric here so a median ± spread rule fails."""
    from hwbench_gui.engine.reports.compare import Metric, significance

    measured = Metric({}, "images/s", 105.0, "images/s", True, [100.0, 104.0, 105.0, 106.0, 120.0],
                      {"n": 5, "p5": 100.0, "p95": 120.0, "median": 105.0}, True)

    def published(value: float) -> Metric:
        doc = {"provenance": "published", "status": "published", "reference": {"source_url": "https://x"}}
        return Metric(doc, "images/s", value, "images/s", True, [], None, True)

    for value, differs in ((100.0, False), (120.0, False), (118.0, False), (99.9, True), (120.1, True)):
        result, test, _ = significance(measured, published(value))
        assert (result, test) == (differs, "p5-p95 overlap"), value
        assert significance(published(value), measured)[0] == differs


# -- one verdict, derived from the stored figures, for the page and the reports -----------------------

def _fixture(name: str) -> dict:
    import json

    from support import FIXTURES

    return json.loads((FIXTURES / name).read_text())


def test_a_fresh_run_derives_again_to_its_own_text_and_obeys_every_rule():
    """The CPU run of 2026-12-05 (this 2-core box, busy: the document says so): the verdict derived
    again from its stored figures is the one it wrote; its bound is beaten by no configuration it
    measured; no negative share, no GPU word, an epoch that says whose."""
    from hwbench_gui.engine.datapath.reread import verdict_details

    doc = _fixture("datapath_cpu_2026-12-05.json")
    details = verdict_details(doc)
    assert details["verdict_rederived"] is False and details["verdict"] == doc["details"]["verdict"]
    bound = details["consistency"]["slowest_rate"]
    assert all(t["rate_images_per_s"] is None or t["rate_images_per_s"] <= bound for t in doc["details"]["tried"])
    assert not GPU_WORDS.search(details["verdict"]) and not re.search(r"(^|[\s(])-\d", details["verdict"])
    assert "of ImageNet-1k's epoch" in details["verdict"] and "80,072 batches of 16" in details["verdict"]
    assert "gpu_decode" not in {s["key"] for s in doc["details"]["stages"]}


def test_the_page_and_the_reports_read_the_verdict_derived_again(qtbot):
    """The shipped H200 run (2026-12-04) wrote four causes from the mean of its windows; derived again
    from its headline (the median) with today's rules, it names the host's launch path (GPU busy 51 %),
    and the Pipeline page, the evaluation report and the report's chart all show that one text."""
    from hwbench_gui.engine.datapath.reread import verdict_details
    from hwbench_gui.engine.reports import charts, datapath_charts, evaluation
    from hwbench_gui.engine.reports.compare import Side
    from hwbench_gui.ui.pipeline_view import REDERIVED_NOTE, PipelineView

    doc = _fixture("h200_datapath_2026-12-04.json")
    details = verdict_details(doc)
    assert details["verdict_rederived"] is True and details["bottleneck"] == "launch"
    assert "End-to-end training: 2,274 images/s" in details["verdict"]  # the headline, not the stored 1,969
    view = PipelineView()
    qtbot.addWidget(view)
    view.set_document(doc)
    assert view.verdict_text.text() == details["verdict"] and view.verdict_note.text() == REDERIVED_NOTE
    assert view.verdict_name.text() == "Verdict: the host's launch path (kernel launches, Python)"
    assert [b.key for b in view.boxes() if b.bottleneck] == ["compute"]
    assert evaluation._datapath([doc])["verdict"] == details["verdict"]
    # the stage table beside it shows the same end-to-end figure (the run stored its windows' mean there)
    assert ("End-to-end training", "2,274 images/s", False) in evaluation._datapath([doc])["stages"]
    chart = charts.datapath_chart([Side("H200", [doc])])
    assert chart.caption == details["verdict"]
    # a CPU run's chart and evaluation rows name no GPU stage
    cpu = _fixture("datapath_cpu_2026-12-05.json")
    assert [t for _, t in datapath_charts.datapath_stages([cpu])][3:5] == ["Collate", "CPU compute"]
    assert not any(GPU_WORDS.search(title) for title, _, _ in evaluation._datapath([cpu])["stages"])
    view.set_document(cpu)
    assert not view.verdict_note.isVisibleTo(view) and view.verdict_text.text() == cpu["details"]["verdict"]
    assert not any(GPU_WORDS.search(b.title) for b in view.boxes())


def test_a_document_whose_context_is_broken_keeps_its_stored_verdict_with_the_reason():
    from hwbench_gui.engine.datapath.reread import verdict_details

    doc = _fixture("datapath_cpu_2026-12-05.json")
    doc["details"]["context"]["batch"] = "16"
    details = verdict_details(doc)
    assert details["verdict"] == doc["details"]["verdict"] and details["verdict_rederived"] is False
    assert "context" in details["verdict_rederived_reason"]
    doc["details"]["stages"] = "none"
    assert verdict_details(doc)["verdict_rederived_reason"] == "the document has no stage rates"


def test_twice_the_batch_is_measured_when_the_gpu_idles():
    from hwbench_gui.engine.benchmarks.datapath_analyze import compute_variants

    params = {"channels_last": False, "batch": 128}
    keys = {key: (variant["batch"], precision) for key, variant, precision, _, _ in
            compute_variants(params, "cuda", "bf16-amp", 52.0)}
    assert keys == {"compute_channels_last": (128, "bf16-amp"), "compute_batch2x": (256, "bf16-amp")}
    assert "compute_batch2x" not in {k for k, *_ in compute_variants(params, "cuda", "bf16-amp", 90.0)}
    assert "compute_batch2x" not in {k for k, *_ in compute_variants(params, "cuda", "bf16-amp", None)}
    assert [k for k, *_ in compute_variants(params, "cpu", "fp32", None)] == ["compute_channels_last"]
