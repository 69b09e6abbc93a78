"""Recorded on the H200 box through hwbench's own CLI (see scripts/gpu_box_check.sh):
``hwbench inventory --json`` and ``hwbench monitor --csv`` while a BF16 matmul loop ran."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from support import FIXTURES


def test_h200_inventory_has_the_datasheet_figures():
    inventory = json.loads((FIXTURES / "inventory_h200.json").read_text())
    gpu = inventory["gpus"][0]
    assert gpu["name"] == "NVIDIA H200"
    assert gpu["sm_count"] == 132
    assert gpu["cuda_cores"] == 16896
    assert (gpu["tensor_cores"], gpu["tensor_core_generation"]) == (528, "4th")
    assert gpu["rt_cores"] == 0
    assert gpu["vram_total_bytes"] == 143771 * 2**20
    assert (gpu["memory_bus_width_bits"], gpu["memory_clock_max_mhz"]) == (6016, 3201)
    assert 4750 < gpu["memory_bandwidth_gb_per_s"] < 4850  # ≈ 4.8 TB/s
    assert (gpu["pcie_gen_max"], gpu["pcie_width_max"]) == (5, 16)
    assert inventory["gpu_system"]["available"] is True


def test_h200_monitor_recording_shows_the_load():
    rows = list(csv.DictReader((FIXTURES / "monitor_h200.csv").open()))
    assert list(rows[0])[0] == "timestamp"
    stamps = [float(r["timestamp"]) for r in rows]
    assert stamps == sorted(stamps) and len(rows) > 40
    util = [float(r["gpu0_util_percent"]) for r in rows]
    power = [float(r["gpu0_power_w"]) for r in rows]
    assert util[0] == 0 and max(util) >= 95  # idle first, then the matmul loop
    assert max(power) > 3 * power[0]
    assert max(float(r["gpu0_sm_clock_mhz"]) for r in rows) > 2 * float(rows[0]["gpu0_sm_clock_mhz"])


def test_h200_datapath_documents_are_consistent():
    """Recorded with scripts/gpu_box_datapath.sh: end-to-end never beats the slowest link by more than the
    noise the verdict allows, and each run names a bottleneck and gives advice with expected rates."""
    from pathlib import Path

    from hwbench_gui.engine.datapath.findings import CONSISTENCY_NOISE

    folder = Path(__file__).resolve().parent.parent / "resources" / "reference" / "archive" / "h200-2026-12-02"
    docs = [json.loads(p.read_text()) for p in sorted(folder.glob("*datapath.analyze*.json"))]
    assert len(docs) >= 3
    for doc in docs:
        details = doc["details"]
        consistency = details["consistency"]
        assert doc["figure"]["value"] <= consistency["slowest_rate"] * (1 + CONSISTENCY_NOISE), details["verdict"]
        assert details["bottleneck"] in ("augment", "decode", "compute", "interference")
    compute_bound = next(d for d in docs if d["details"]["bottleneck"] == "compute")
    bf16 = next(a for a in compute_bound["details"]["advice"] if a["action"].startswith("Mixed precision"))
    assert bf16["expected_gain"] > 2  # measured: FP32 1063 → BF16 2452 images/s
    final = next(d for d in docs if d["details"].get("epoch_refill_fraction"))
    assert any(a["action"] == "Keep the loader busy across epoch boundaries" for a in final["details"]["advice"])
    # 15 workers, augmentation-bound, recorded before that case had advice: today's verdict on its numbers
    # moves the work to the GPU (nvJPEG measured there) rather than adding workers there are no cores for.
    from hwbench_gui.engine.datapath.findings import Context
    from hwbench_gui.engine.datapath.verdict import analyze

    doc = next(d for d in docs if d["params"]["workers"] == 15)
    details, context = doc["details"], doc["details"]["context"]
    rates = {s["key"]: s["rate_images_per_s"] for s in details["stages"]}
    ctx = Context(device="cuda", workers=15, cpus=context["cpus"], batch=256, images=details["dataset"]["images"],
                  dataset_bytes=details["dataset"]["bytes"], available_ram_bytes=context["available_ram_bytes"],
                  precision=doc["precision"], channels_last=True, model="resnet50", image_size=224,
                  stored_width_px=500, stored_height_px=375)
    actions = [a.action for a in analyze(rates, ctx, data_wait_fraction=details["data_wait_fraction"]).advice]
    assert "Decode and augment on the GPU" in actions and not any(a.startswith("Use ") for a in actions)


def _h200_docs(pattern: str) -> list[dict]:
    """The H200's shipped documents named ``pattern``: the current set and the older runs beside it."""
    reference = Path(__file__).resolve().parent.parent / "resources" / "reference"
    folders = (reference / "h200", reference / "archive" / "h200-2026-12-02")
    return [json.loads(p.read_text()) for folder in folders for p in sorted(folder.glob(pattern))]


def test_h200_bf16_training_timed_gpu_util_agrees_with_nvidia_smi_dmon():
    """scripts/gpu_box_trust.sh dmon: ResNet-50 BF16-AMP training with `nvidia-smi dmon` sampled beside it
    (tests/fixtures/dmon_h200.txt). The stored (timed-phase) GPU utilisation is within 5 points of
    dmon's over the same windows; the whole run's, with model build and warm-up, is far lower."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("dmon_compare",
                                                  FIXTURES.parent.parent / "scripts" / "dmon_compare.py")
    dmon_compare = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(dmon_compare)
    (doc,) = [d for d in _h200_docs("2026-12-03T08-18-57_model.resnet50_*.json")]
    assert doc["precision"] == "BF16-AMP" and doc["stats"]["n"] >= 5 and doc["stats"]["p5"] <= doc["stats"]["p95"]
    assert sum(doc["details"]["window_s"]) >= 10.0
    from datetime import timezone

    rows = dmon_compare.dmon_rows(str(FIXTURES / "dmon_h200.txt"), timezone.utc)  # the H200 box runs in UTC
    windows = doc["telemetry"]["windows"]
    inside = [sm for t, sm in rows if any(a <= t + 0.5 <= b for a, b in windows)]
    assert len(inside) >= 8
    ours = doc["telemetry"]["seed"]["gpu_util_percent"]["mean"]
    assert abs(ours - sum(inside) / len(inside)) <= 5.0
    assert doc["telemetry_whole_run"]["seed"]["gpu_util_percent"]["mean"] < ours - 30


def test_h200_default_reference_runs_were_quiet_and_record_comparability():
    """The default-parameter references (scripts/gpu_box_trust.sh refs): every one records which
    parameters decide comparability, has a spread, and ran on a machine nobody else used."""
    docs = [d for d in _h200_docs("2026-12-03T08-2*.json") if d["benchmark"]["id"] != "demo.track"]
    assert {d["benchmark"]["id"] for d in docs} >= {"gpu.pcie", "gpu.d2d", "gpu.matmul", "host.membw",
                                                    "cpu.decode", "disk.read", "model.resnet50"}
    for doc in docs:
        assert doc["status"] == "ok" and doc["stats"]["n"] >= 3, doc["benchmark"]["id"]
        assert "comparability_params" in doc["benchmark"]
        assert not doc["telemetry"]["noise"]["busy"], (doc["benchmark"]["id"], doc["telemetry"]["noise"])


def test_h200_datapath_default_run_is_steady_and_its_best_found_is_measured():
    """scripts/gpu_box_datapath.sh, the analyzer with its defaults on the H200 box (16 cores): the
    default configuration (15 workers, ResNet-50 BF16 NCHW, batch 128) in steady state, its advice
    tried end to end within the 180 s budget, and the best configuration found."""
    from hwbench_gui.engine.datapath.tryouts import best

    (doc,) = _h200_docs("2026-12-03T18-40-55_datapath.analyze_*.json")
    details = doc["details"]
    assert doc["status"] == "ok" and doc["benchmark"]["version"] == "2" and not doc["telemetry"]["noise"]["busy"]
    assert (doc["params"]["workers"], doc["params_requested"]["workers"], doc["params"]["count"]) == (15, -1, 16384)
    rates = {s["key"]: s["rate_images_per_s"] for s in details["stages"]}
    # Steady state: no epoch start in the timed windows, end to end within 10 % of the slowest stage alone.
    e2e = next(s for s in details["stages"] if s["key"] == "end_to_end")
    assert details["epoch_refill_fraction"] == 0.0 and e2e["extra"]["epoch_start_waits_s"] == []
    assert details["bottleneck"] == "compute" and details["consistency"]["ratio"] >= 0.9
    assert rates["end_to_end"] >= 0.9 * rates["compute"]  # 2,291 of 2,348 images/s
    # An epoch start, measured apart, priced for ImageNet-1k's epoch (the dataset is generated).
    start = details["epoch_start"]
    assert start["epoch_batches"] == 1_281_167 // 128 and len(start["costs_s"]) == 2 and start["fraction"] <= 0.05
    # The what-ifs: measured end to end, the best found with decode on the GPU within 10 % of
    # channels-last compute alone (4,120 of 4,349), its code pasteable.
    measured = [t for t in details["tried"] if t["rate_images_per_s"] is not None]
    assert len(measured) >= 6 and all(len(t["samples"]) == 3 for t in measured)
    found = details["best_found"]
    assert found["config"]["gpu_decode"] and found["config"]["channels_last"]
    assert found["rate_images_per_s"] >= 0.9 * rates["compute_channels_last"]
    assert found["cpu_decode"]["rate_images_per_s"] >= 0.9 * rates["cpu_n"]  # 2,831 with 2,802 alone
    compile(found["code"], "best_found", "exec")
    assert "decode_jpeg(jpegs, device='cuda')" in found["code"] and "channels_last" in found["code"]
    assert doc["figure"]["value"] < doc["figures"]["best_found"]["value"]  # the headline stays the default's
    # The stored verdict and best found follow from the stored numbers.
    again, base, tried = _reanalyze(doc, rates)
    assert again.bottleneck == details["bottleneck"] and again.loss == {} and again.causes == []
    assert [a.action for a in again.advice][:2] == [a["action"] for a in details["advice"]][:2]
    assert best(rates["end_to_end"], base, tried).key == found["key"] == "combined_gpu_decode"


def test_h200_datapath_default_run_with_the_uint8_what_if():
    """The analyzer with its defaults on another H200 loan (2026-12-04, scripts/gpu_box_session.sh), the
    first with the uint8 what-if: the same bottleneck as the run of 2026-12-03 (model compute); the best
    found with decode in the workers (16 workers, prefetch 8, channels-last, uint8 batches normalised on
    the GPU) at 3,861 images/s, above 0.9 × decode + augment on 16 cores; with decode on the GPU 4,066,
    0.94 × channels-last compute alone. Its first timed window was slowed by the loader's start (1,547
    against 2,286 and 2,274): the analyzer recorded the mean (1,969) and named four causes; the median,
    which the document's headline already was, names none. Re-derived here with today's rule."""
    from statistics import median

    doc = json.loads((FIXTURES / "h200_datapath_2026-12-04.json").read_text())
    details = doc["details"]
    assert doc["status"] == "ok" and not doc["telemetry"]["noise"]["busy"]
    assert (doc["params"]["workers"], doc["params_requested"]["workers"], doc["params"]["count"]) == (15, -1, 16384)
    assert details["bottleneck"] == "compute"
    stages = {s["key"]: s for s in details["stages"]}
    rates = {key: s["rate_images_per_s"] for key, s in stages.items()}
    rates["end_to_end"] = median(stages["end_to_end"]["samples"])
    assert rates["end_to_end"] == doc["figure"]["value"] and rates["end_to_end"] >= 0.9 * rates["compute"]
    assert details["epoch_refill_fraction"] == 0.0 and details["epoch_start"]["fraction"] <= 0.05
    found = details["best_found"]
    cpu = found["cpu_decode"]
    assert cpu["config"]["normalize_on_device"] and cpu["config"]["channels_last"]
    # the workers stop at uint8: faster than the float pipeline measured alone (2,744)
    assert cpu["rate_images_per_s"] >= 2900 and cpu["rate_images_per_s"] > 1.3 * rates["cpu_n"]
    assert found["gpu_decode"]["rate_images_per_s"] >= 0.9 * rates["compute_channels_last"]
    compile(cpu["code"], "best_found", "exec")
    assert "v2.PILToTensor()" in cpu["code"] and "(images - mean) / std" in cpu["code"]
    again, _, tried = _reanalyze(doc, rates)
    # What the what-ifs measured, as their medians (today's rule): uint8 alone +3 %, with channels-last ×1.7.
    uint8 = next(t for t in tried if t.key == "normalize_on_device")
    assert median(uint8.samples) == pytest.approx(2342, abs=1)
    assert again.bottleneck == "compute" and again.loss == {} and again.causes == []
    assert len(details["causes"]) == 4  # what the mean named at the time


def _reanalyze(doc, rates):
    """(verdict, base configuration, what-ifs) of a recorded data-path document, analysed again from
    ``rates`` and its stored what-ifs with today's rules."""
    from hwbench_gui.engine.datapath.tryouts import LoaderConfig, Tried
    from hwbench_gui.engine.datapath.findings import Context
    from hwbench_gui.engine.datapath.verdict import analyze

    details = doc["details"]
    base = LoaderConfig(**details["base_config"])
    tried = [Tried(t["key"], LoaderConfig(**t["config"]), t["rate_images_per_s"], t["samples"], t["seconds"],
                   t["reason"], t["data_wait_fraction"]) for t in details["tried"]]
    c = details["context"]
    ctx = Context(device="cuda", workers=c["workers"], cpus=c["cpus"], batch=c["batch"],
                  images=details["dataset"]["images"], dataset_bytes=details["dataset"]["bytes"],
                  available_ram_bytes=c["available_ram_bytes"], precision=doc["precision"], channels_last=False,
                  model=c["model"], image_size=c["image_size"], stored_width_px=500, stored_height_px=375)
    verdict = analyze(rates, ctx, data_wait_fraction=details["data_wait_fraction"], tried=tried, base=base,
                      epoch_start=details["epoch_start"])
    return verdict, base, tried


def test_three_default_h200_runs_of_one_day_name_the_same_bottleneck():
    """The analyzer with its defaults, three times on 2026-12-04 (one loan, then two back to back on
    another, scripts/gpu_box_datapath.sh): each names model compute; each headline is the steady state
    (no epoch start in its timed windows) within 0.9 × compute alone; an epoch start priced at under
    5 % of an ImageNet epoch; the best configuration found above 2,900 images/s. With decode on the GPU
    the best was 0.94, 0.95 and 0.87 × channels-last compute alone (the GPU then also decodes); the
    third run's windows spread (3,660-3,771 images/s, against 4,100-4,107 for the same configuration in
    the run before) on a box another process kept busy, up to 76 % of a core (the document says so)."""
    folder = Path(__file__).resolve().parent.parent / "resources" / "reference" / "archive" / "h200-2026-12-02"
    docs = [json.loads((FIXTURES / "h200_datapath_2026-12-04.json").read_text())]
    docs += [json.loads(p.read_text()) for p in sorted(folder.glob("2026-12-04T20-*_datapath.analyze_*.json"))]
    assert len(docs) == 3
    gpu_decode_ratios = []
    for doc in docs:
        details = doc["details"]
        rates = {s["key"]: s["rate_images_per_s"] for s in details["stages"]}
        assert doc["status"] == "ok" and doc["params_requested"]["workers"] == -1 and doc["params"]["workers"] == 15
        assert details["bottleneck"] == "compute"
        assert details["epoch_refill_fraction"] == 0.0 and details["epoch_start"]["fraction"] < 0.05
        assert doc["figure"]["value"] >= 0.9 * rates["compute"]
        found = details["best_found"]
        assert found["rate_images_per_s"] >= 2900
        gpu_decode_ratios.append(found["gpu_decode"]["rate_images_per_s"] / rates["compute_channels_last"])
    assert [round(r, 2) for r in gpu_decode_ratios] == [0.94, 0.95, 0.87]
    assert any("busy machine" in w for w in docs[2]["warnings"])
