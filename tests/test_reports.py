"""Results library, comparison, charts and HTML/PDF/CSV reports (engine only, no Qt)."""

from __future__ import annotations

import csv
import io
import json
import math
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from reports_data import make_doc, model_doc, on_other_machine, sweep_series, write_bad_files, write_docs

from hwbench_gui.engine.reports import charts, compare, comparison_text, csv_export, power_charts
from hwbench_gui.engine.results import describe, library
from hwbench_gui.engine.reports.html import render_html, write_html
from hwbench_gui.engine.reports.pdf import pdf_bytes, write_pdf
from hwbench_gui.engine.reports.report import make_report


def two_machines():
    """Machine alpha vs beta: beta is 2× faster on 'rate' and takes half the time on 'latency' (lower is
    better), 8× on 'big'; the spreads are tight and there are 5 samples each."""
    a = [make_doc("t.rate"), make_doc("t.latency", [10.0, 10.1, 9.9, 10.05, 9.95], unit="ms", higher_is_better=False),
         make_doc("t.big", [1.0, 1.01, 0.99, 1.005, 0.995])]
    b = [on_other_machine(a[0], "beta", "Test GPU B", 2.0), on_other_machine(a[1], "beta", "Test GPU B", 0.5),
         on_other_machine(a[2], "beta", "Test GPU B", 8.0)]
    return a, b


# -- comparison ------------------------------------------------------------------------------------

def test_known_figures_give_ratios_and_geometric_mean():
    a, b = two_machines()
    sides = compare.sides_by_machine(a + b)
    assert [s.name for s in sides] == ["alpha · Test GPU A", "beta · Test GPU B"]
    result = compare.compare(sides, baseline=0)
    by_bench = {r.benchmark_id: r for r in result.rows}
    assert by_bench["t.rate"].cells[1].ratio == pytest.approx(2.0)
    assert by_bench["t.latency"].cells[1].ratio == pytest.approx(2.0)  # half the latency: twice as good
    assert by_bench["t.big"].cells[1].ratio == pytest.approx(8.0)
    for row in result.rows:
        assert row.cells[0].mark == compare.MARK_BASELINE
        assert row.cells[1].mark == compare.MARK_BETTER and row.cells[1].test == "Mann-Whitney U"
        assert row.cells[1].p_value < 0.05
    beta = result.summaries[1]
    assert beta.geomean == pytest.approx((2.0 * 2.0 * 8.0) ** (1 / 3))
    assert (beta.n_geomean, beta.wins, beta.losses) == (3, 3, 0)
    assert result.summaries[0].geomean == 1.0
    # The other way round, everything is worse by the inverse ratios.
    reverse = compare.compare(sides, baseline=1)
    assert reverse.summaries[0].geomean == pytest.approx(1 / (32 ** (1 / 3)))
    assert reverse.summaries[0].losses == 3


def test_geometric_mean_and_ratio_helpers():
    assert compare.geometric_mean([2.0, 8.0]) == pytest.approx(4.0)
    assert compare.geometric_mean([]) is None and compare.geometric_mean([1.0, 0.0]) is None


def test_three_repeats_are_too_few_for_a_verdict():
    """3 vs 3 samples: Mann-Whitney cannot reach p < 0.05 (its smallest p is 0.1), and disjoint p5-p95
    ranges of three samples are no test: no better/worse, whatever the values."""
    a = make_doc("t.rate", [10.0, 11.0, 12.0])
    b = on_other_machine(a, "beta", "Test GPU B")
    b["samples"], b["figure"]["value"] = [21.0, 22.0, 23.0], 22.0
    b["stats"] = {**b["stats"], "median": 22.0, "p5": 21.1, "p95": 22.9}
    result = compare.compare(compare.sides_by_machine([a, b]))
    cell = result.rows[0].cells[1]
    assert cell.ratio == pytest.approx(22.0 / 11.0)
    assert cell.mark == compare.MARK_TOO_FEW and "n=3 vs 3" in cell.test
    assert result.summaries[1].too_few == 1 and result.summaries[1].wins == 0
    assert "too few repeats 1" in result.summaries[1].counts_text()


def test_five_repeats_each_can_be_told_apart():
    a = make_doc("t.rate", [10.0, 11.0, 12.0, 10.5, 11.5])
    b = on_other_machine(make_doc("t.rate", [12.5, 13.0, 14.0, 13.5, 12.9]), "beta", "Test GPU B")
    cell = compare.compare(compare.sides_by_machine([a, b])).rows[0].cells[1]
    assert cell.test == "Mann-Whitney U" and cell.p_value < 0.05 and cell.mark == compare.MARK_BETTER


def test_a_busy_machine_is_shown_in_the_comparison():
    a = make_doc("t.rate", [10.0, 11.0, 12.0, 10.5, 11.5])
    b = on_other_machine(make_doc("t.rate", [6.0, 6.5, 7.0, 6.2, 6.8]), "beta", "Test GPU B")
    b["telemetry"] = {"noise": {"busy": True, "reasons": ["other processes used 180 % of a CPU core on average"]}}
    result = compare.compare(compare.sides_by_machine([a, b]))
    cell = result.rows[0].cells[1]
    assert cell.busy and "busy machine during this run" in cell.note and "180 %" in cell.note
    assert comparison_text.cell_text(cell).endswith("(busy)")
    assert result.summaries[1].busy == 1 and "1 on a busy machine" in result.summaries[1].counts_text()
    assert "busy machine" in comparison_text.format_table(result)


def test_summary_counts_agree_with_the_rows_shown():
    a = make_doc("t.rate", [10.0, 11.0, 12.0, 10.5, 11.5])
    a["figures"] = {"other": {"value": 3.0, "unit": "s", "higher_is_better": False, "samples": [3.0, 3.1, 2.9],
                              "stats": {"n": 3, "median": 3.0, "p5": 2.9, "p95": 3.1}}}
    b = on_other_machine(make_doc("t.rate", [12.5, 13.0, 14.0, 13.5, 12.9]), "beta", "Test GPU B")
    b["figures"] = {"other": {**a["figures"]["other"], "samples": [2.0, 2.1, 1.9]}}
    for all_figures in (False, True):
        result = compare.compare(compare.sides_by_machine([a, b]), all_figures=all_figures)
        marks = [row.cells[1].mark for row in result.rows]
        s = result.summaries[1]
        assert (s.wins, s.too_few) == (marks.count(compare.MARK_BETTER), marks.count(compare.MARK_TOO_FEW))
        assert len(result.rows) == (2 if all_figures else 1)


def test_many_noisy_samples_use_mann_whitney_and_can_be_not_significant():
    a = make_doc("t.rate", [10, 12, 9, 11, 13, 10, 12, 11])
    b = on_other_machine(a, "beta", "Test GPU B")
    b["samples"] = [11, 10, 12, 13, 9, 11, 12, 10]
    cell = compare.compare(compare.sides_by_machine([a, b])).rows[0].cells[1]
    assert cell.test == "Mann-Whitney U" and cell.p_value > 0.05 and cell.mark == compare.MARK_NOT_SIGNIFICANT


def test_different_parameters_are_not_comparable():
    a = make_doc("t.rate", params={"size": 128})
    b = make_doc("t.rate", params={"size": 256}, minutes=5)
    result = compare.compare(compare.sides_by_run([a, b]))
    assert len(result.rows) == 2
    cell = next(r for r in result.rows if r.params == {"size": 256}).cells[1]
    assert cell.mark == compare.MARK_NOT_COMPARABLE
    assert cell.note == "the baseline never ran t.rate with size 256 (it ran size 128)"
    assert result.summaries[1].not_comparable == 1 and result.summaries[1].geomean is None


def test_ignored_parameters_and_versions():
    a = make_doc("t.rate", params={"size": 1, "device": "cuda:0", "repeats": 5})
    b = on_other_machine(make_doc("t.rate", params={"size": 1, "device": "cuda:3", "repeats": 9}), "beta", "B")
    assert compare.comparable_params(a) == compare.comparable_params(b) == {"size": 1}
    assert len(compare.compare(compare.sides_by_machine([a, b])).rows) == 1
    b["benchmark"]["version"] = "2"
    cell = compare.compare(compare.sides_by_machine([a, b])).rows[0].cells[1]
    assert cell.mark == compare.MARK_NOT_COMPARABLE and "version 2 vs 1" in cell.note


def test_failed_runs_are_marked_failed_with_their_reason():
    a = make_doc("t.rate")
    b = make_doc("t.rate", status="failed", reason="CUDA out of memory at batch 512", host="beta", gpu="B")
    result = compare.compare(compare.sides_by_machine([a, b]))
    cell = result.rows[0].cells[1]
    assert cell.mark == compare.MARK_FAILED and "out of memory" in cell.note
    assert result.summaries[1].failed == 1
    assert "failed" in comparison_text.format_table(result)


def test_newest_run_of_a_configuration_is_used():
    old = make_doc("t.rate", [1.0, 1.0, 1.0], minutes=0)
    new = make_doc("t.rate", [5.0, 5.0, 5.0], minutes=10)
    result = compare.compare([compare.Side("alpha", [old, new])])
    assert result.rows[0].cells[0].metric.value == 5.0 and result.rows[0].cells[0].older_runs == 1


def test_baseline_by_name_and_errors():
    a, b = two_machines()
    sides = compare.sides_by_machine(a + b)
    assert compare.find_side(sides, "beta") == 1
    assert compare.find_side(sides, None) == 0
    with pytest.raises(ValueError, match="no side matches"):
        compare.find_side(sides, "gamma")
    with pytest.raises(ValueError, match="several"):
        compare.find_side(sides, "Test GPU")


def test_all_figures_adds_rows_outside_the_composite():
    figures = {"FP32": {"unit": "TFLOP/s", "samples": [1.0, 1.0, 1.0]},
               "BF16": {"unit": "TFLOP/s", "samples": [4.0, 4.1, 3.9]}}
    a = make_doc("t.matmul", figures=figures)
    b = on_other_machine(a, "beta", "B", 2.0)
    result = compare.compare(compare.sides_by_machine([a, b]), all_figures=True)
    assert sum(not r.headline for r in result.rows) == 2
    assert result.summaries[1].n_geomean == 1


# -- published references --------------------------------------------------------------------------

def test_shipped_reference_documents_load_and_stay_published():
    found = library.scan([library.reference_dir()], recursive=False)  # h200/ holds measured documents
    assert not found.errors, library.errors_text(found.errors)
    assert len(found.docs) >= 6
    for doc in found.docs:
        assert doc["provenance"] == "published" and doc["status"] == "published"
        ref = doc["reference"]
        assert ref["source_url"].startswith("https://") and ref["configuration"] and ref["retrieved"]
        assert ref.get("published") or ref.get("published_note")
        assert doc["samples"] == [] and doc["stats"] is None  # nothing pretends to be a measured spread
        assert describe.machine_name(doc).endswith("(published)")
    lambda_tf32 = next(d for d in found.docs if d["id"] == "published-lambda-h200-resnet50-train-tf32")
    assert lambda_tf32["precision"] == "TF32" and lambda_tf32["figure"]["value"] == 2259
    assert any("FP32" in w for w in lambda_tf32["warnings"])
    mlperf = next(d for d in found.docs if d["benchmark"]["id"] == "llm.infer")
    assert mlperf["precision"] == "FP8" and mlperf["params"]["model"] == "llama-3.1-8b"
    assert mlperf["figure"]["value"] == 5777 and mlperf["figures"]["MLPerf server: output tokens/s"]["value"] == 5103


def test_a_published_serving_figure_never_pairs_with_a_batch_one_figure():
    # MLPerf's offline throughput (thousands of output tokens/s from many sequences) beside llm.infer's batch-1
    # tg128 would read as "30 times better": the published document states its concurrency, so they stay apart
    folder = library.reference_dir() / "h100" / "llm-2026-12-05"
    measured = [doc for doc in library.scan([folder]).docs
                if doc["benchmark"]["id"] == "llm.infer" and doc["precision"] == "FP8"]
    refs = [doc for doc in library.scan([library.reference_dir()], recursive=False).docs
            if doc["benchmark"]["id"] == "llm.infer"]
    assert measured and refs
    result = compare.compare(compare.sides_by_machine(measured + refs), 0)
    for row in result.rows:
        assert sum(cell.metric is not None for cell in row.cells) == 1, row.figure_name


def test_shipped_h200_measurements_are_measured_documents():
    measured = library.scan([library.reference_dir() / "h200"])
    assert not measured.errors, library.errors_text(measured.errors)
    ids = {doc["benchmark"]["id"] for doc in measured.docs}
    assert {"gpu.matmul", "gpu.pcie", "model.resnet50"} <= ids
    for doc in measured.docs:
        assert not describe.is_published(doc) and doc["status"] == "ok" and doc["samples"]
        assert "H200" in describe.gpu_summary(doc)


def test_published_figures_are_their_own_side_and_compare_with_measured():
    measured = model_doc("resnet50", framework="torch", mode="train", precision="TF32", value=2500.0,
                         host="h200box")
    refs = library.scan([library.reference_dir()], recursive=False).docs
    sides = compare.sides_by_machine([measured] + refs)
    assert sides[0].name == "h200box · 2× Test GPU A" and not sides[0].published
    assert all(s.published for s in sides[1:])
    result = compare.compare(sides, compare.find_side(sides, "Lambda"))
    row = next(r for r in result.rows if r.precision == "TF32" and r.params.get("gpus") == 1
               and r.cells[0].metric is not None)
    lambda_index = compare.find_side(sides, "Lambda")
    assert row.cells[lambda_index].metric.value == 2259
    cell = row.cells[0]
    assert cell.ratio == pytest.approx(2500 / 2259)
    assert cell.mark == compare.MARK_BETTER  # 2259 lies outside the measured p5-p95
    assert "published" in cell.note


# -- library: scanning, bad input, import/export/delete ---------------------------------------------

def test_corrupt_foreign_and_newer_files_are_skipped_with_reasons(tmp_path):
    a, b = two_machines()
    write_docs(tmp_path, a + b)
    bad = write_bad_files(tmp_path)
    wrong_types = tmp_path / "wrong-types.json"
    doc = json.loads(json.dumps({k: v for k, v in a[0].items()}))
    doc["figure"]["value"] = "fast"
    wrong_types.write_text(json.dumps(doc), encoding="utf-8")
    found = library.scan([tmp_path])
    assert len(found.docs) == 6
    reasons = {e.path.name: e.reason for e in found.errors}
    assert "not valid JSON" in reasons[bad["corrupt"].name]
    assert "no schema_version" in reasons[bad["foreign"].name]
    assert "newer hwbench" in reasons[bad["newer"].name]
    assert "not a finite number" in reasons["wrong-types.json"]
    report = make_report(found.docs, found.errors, baseline="alpha", with_charts=False)
    beta = compare.find_side(report.comparison.sides, "beta")  # file order decides the side order
    assert report.comparison.summaries[beta].geomean == pytest.approx(32 ** (1 / 3))


def test_paths_inside_a_document_are_not_followed(tmp_path):
    secret = tmp_path / "elsewhere" / "secret.json"
    secret.parent.mkdir()
    secret.write_text(json.dumps(make_doc("t.secret")), encoding="utf-8")
    doc = make_doc("t.rate")
    doc["_path"] = str(secret)
    doc["params"] = {"folder": str(secret.parent)}
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "r.json").write_text(json.dumps(doc), encoding="utf-8")
    found = library.scan([folder])
    assert [d["benchmark"]["id"] for d in found.docs] == ["t.rate"]
    assert found.docs[0]["_path"] == str(folder / "r.json")  # where it really was, not what it claims


def test_import_export_and_delete_to_trash_with_undo(tmp_path):
    a, b = two_machines()
    other = tmp_path / "from-beta"
    write_docs(other, b)
    write_bad_files(other)
    results = tmp_path / "results"
    write_docs(results, a)
    imported = library.import_documents([other], results)
    assert len(imported.imported) == 3 and len(imported.skipped) == 3 and not imported.duplicates
    again = library.import_documents([other], results)
    assert not again.imported and len(again.duplicates) == 3
    docs = library.list_results(results).docs
    assert len(docs) == 6 and not any("_path" in json.loads(Path(d["_path"]).read_text()) for d in docs)

    exported = library.export_documents(docs[:2], tmp_path / "export")
    assert len(exported.written) == 2 and all(p.exists() for p in exported.written) and not exported.already_present

    trashed, failed = library.delete_to_trash([docs[0]["_path"]], results)
    assert len(library.list_results(results).docs) == 5 and not failed
    assert trashed[0].trashed.parent == results / ".trash"
    assert library.restore(trashed).failed == []
    assert len(library.list_results(results).docs) == 6


def test_library_rows_and_filter():
    doc = make_doc("t.rate", host="alpha", gpu="Test GPU A", params={"size": 4})
    row = describe.row(doc)
    assert set(row) == set(describe.ROW_COLUMNS)
    assert row["machine"] == "alpha · Test GPU A" and row["parameters"] == "size=4" and row["status"] == "ok"
    assert row["figure"].startswith("rate: 100")
    assert describe.matches(doc, "ALPHA rate") and not describe.matches(doc, "alpha gamma")
    assert describe.gpu_summary(make_doc(gpus=2)) == "2× Test GPU A"


# -- charts ----------------------------------------------------------------------------------------

def seed_like_docs():
    docs = []
    for host, scale in (("alpha", 1.0), ("beta", 1.5)):
        for model in ("resnet50", "vgg16"):
            for framework in ("torch", "tf"):
                for mode in ("train", "infer"):
                    docs.append(model_doc(model, framework=framework, mode=mode, precision="FP32",
                                          value=100 * scale * (2 if mode == "infer" else 1), host=host, power_w=300))
        docs.append(model_doc("resnet50", framework="torch", mode="train", precision="BF16-AMP", value=250 * scale,
                              host=host))
        docs.append(model_doc("resnet50", framework="torch", mode="train", precision="FP32", value=190 * scale,
                              host=host, gpus=2))
        docs.append(make_doc("gpu.pcie", host=host, unit="GB/s", series=sweep_series()))
    return docs


def test_every_chart_is_drawn_when_its_data_is_there():
    docs = seed_like_docs()
    sides = compare.sides_by_machine(docs)
    drawn = charts.build_charts(sides, compare.compare(sides))
    keys = [c.key for c in drawn]
    assert keys == ["relative", "throughput", "scaling", "gpu_util", "vram", "cpu_util", "mixed_precision",
                    "series:gpu.pcie", "perf_per_watt"]
    png = charts.to_png(drawn[0].figure)
    assert png.startswith(b"\x89PNG")
    assert charts.to_svg(drawn[1].figure).lstrip().startswith(b"<?xml")


def test_charts_without_data_are_left_out():
    docs = [make_doc("t.rate")]
    assert charts.build_charts(compare.sides_by_machine(docs)) == []
    assert power_charts.mean_gpu_power_w(docs[0]) is None
    assert power_charts.mean_gpu_power_w(model_doc("m", framework="torch", mode="train", precision="FP32", value=1,
                                             gpus=2, power_w=250)) == 500


# -- HTML, PDF, CSV --------------------------------------------------------------------------------

class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.loads: list[tuple[str, str, str]] = []  # (tag, attribute, value) that a browser would fetch
        self.images = 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "img":
            self.images += 1
        for attr in ("src", "href", "srcset", "data"):
            if tag in ("script", "link", "img", "iframe", "source", "video", "audio", "object", "embed") \
                    and attrs.get(attr):
                self.loads.append((tag, attr, attrs[attr]))


def test_html_is_self_contained_and_embeds_the_charts(tmp_path):
    docs = seed_like_docs() + library.scan([library.reference_dir()]).docs
    report = make_report(docs, title="test <report>")
    path = write_html(report, tmp_path / "r.html")
    text = path.read_text(encoding="utf-8")
    parser = _Tags()
    parser.feed(text)
    assert parser.images == len(report.charts) >= 8
    assert parser.loads and all(value.startswith("data:image/png;base64,") for _, _, value in parser.loads)
    assert not re.search(r"@import|url\(\s*['\"]?https?:", text)
    assert "test &lt;report&gt;" in text  # escaped by Jinja2's autoescape
    assert "published" in text and "lambdalabs.com" in text  # sources shown as plain anchors


def test_pdf_has_a_title_page_and_the_chart_pages(tmp_path):
    docs = seed_like_docs()
    report = make_report(docs)
    data = write_pdf(report, tmp_path / "r.pdf").read_bytes()
    assert data.startswith(b"%PDF")
    pages = len(re.findall(rb"/Type\s*/Page\b", data))
    assert pages == 1 + 1 + len(report.charts)  # title and table, the machines compared, one per chart


def test_csv_has_one_row_per_result(tmp_path):
    docs = seed_like_docs() + [make_doc("t.rate", status="failed", reason="crashed")]
    docs += library.scan([library.reference_dir()]).docs
    path = csv_export.write_csv(docs, tmp_path / "r.csv")
    rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))
    assert len(rows) == len(docs)
    assert list(rows[0]) == list(csv_export.COLUMNS)
    failed = next(r for r in rows if r["status"] == "failed")
    assert failed["value"] == "" and failed["reason"] == "crashed"
    published = [r for r in rows if r["provenance"] == "published"]
    assert published and all(r["source_url"] for r in published)
    first = next(r for r in rows if r["benchmark_id"] == "model.resnet50" and r["gpu_power_mean_w"])
    assert math.isclose(float(first["gpu_power_mean_w"]), 300.0)


def test_render_without_charts_and_with_skipped_files(tmp_path):
    a, b = two_machines()
    write_docs(tmp_path, a + b)
    write_bad_files(tmp_path)
    found = library.scan([tmp_path])
    report = make_report(found.docs, found.errors, group="run")
    text = render_html(report)
    assert "Skipped files" in text and "corrupt.json" in text
    assert pdf_bytes(report).startswith(b"%PDF")


# -- attribution: every flag is its own side's -----------------------------------------------------

def _busy(doc):
    doc["telemetry"] = {"noise": {"busy": True, "reasons": ["other processes used 180 % of a CPU core"]}}
    return doc


def test_a_busy_baseline_is_the_baselines_flag_not_the_other_sides(tmp_path):
    from hwbench_gui.engine.reports.csv_export import csv_text
    from hwbench_gui.engine.reports.html import render_html
    from hwbench_gui.engine.reports.report import make_report

    here = _busy(make_doc("t.rate", [10.0, 11.0, 12.0, 10.5, 11.5]))
    there = on_other_machine(make_doc("t.rate", [20.0, 21.0, 22.0, 20.5, 21.5]), "h200box", "NVIDIA H200")
    there["telemetry"] = {"noise": {"busy": False, "reasons": []}}
    result = compare.compare(compare.sides_by_machine([here, there]))
    base_cell, other_cell = result.rows[0].cells
    assert base_cell.busy and not other_cell.busy
    assert "(busy)" in comparison_text.cell_text(base_cell) and "busy" not in comparison_text.cell_text(other_cell)
    assert "busy" not in other_cell.note
    assert (result.summaries[0].busy, result.summaries[1].busy) == (1, 0)
    assert "on a busy machine" in result.summaries[0].counts_text()
    assert "on a busy machine" not in result.summaries[1].counts_text()
    table = comparison_text.format_table(result)
    assert "t.rate · rate [1]: baseline: busy machine during this run" in table and "[2]: " not in table
    report = make_report([here, there], with_charts=False)
    html = render_html(report)
    composite = html[html.index("<h2>Composite</h2>"):html.index("<h2>Side by side</h2>")]
    busy_cells = [re.findall(r'<td class="num">(\d+)</td><td class="num">\d+</td></tr>', row)[0]
                  for row in composite.split("<tr>")[2:]]
    assert busy_cells == ["1", "0"]
    busy_column = [r["busy"] for r in csv.DictReader(io.StringIO(csv_text(report.docs)))]
    assert busy_column == ["True", "False"]


def test_a_failed_baseline_does_not_fail_the_side_that_measured():
    here = make_doc("t.rate", status="failed", reason="CUDA out of memory")
    there = on_other_machine(make_doc("t.rate", [1009.0, 1010.0, 1011.0, 1010.5, 1009.5]), "h200box", "NVIDIA H200")
    result = compare.compare(compare.sides_by_machine([here, there]))
    base_cell, other_cell = result.rows[0].cells
    assert base_cell.mark == compare.MARK_FAILED and "out of memory" in base_cell.note
    assert other_cell.mark == compare.MARK_NO_BASELINE and "the baseline's run failed" in other_cell.note
    other_text = comparison_text.cell_text(other_cell)
    assert "failed" not in other_text and "1,010 items/s" in other_text
    assert (result.summaries[0].failed, result.summaries[1].failed) == (1, 0)


def test_a_cancelled_run_is_cancelled_not_failed():
    here = make_doc("t.rate")
    there = on_other_machine(make_doc("t.rate", status="cancelled", reason="cancelled by the user"), "b", "B")
    result = compare.compare(compare.sides_by_machine([here, there]))
    cell = result.rows[0].cells[1]
    assert cell.mark == compare.MARK_CANCELLED and comparison_text.cell_text(cell) == "cancelled"
    assert (result.summaries[1].cancelled, result.summaries[1].failed) == (1, 0)
    assert result.summaries[0].cancelled == 0 and result.rows[0].cells[0].mark == compare.MARK_BASELINE


def test_too_few_repeats_is_the_side_that_has_too_few():
    here = make_doc("t.rate", [10.0, 11.0])
    there = on_other_machine(make_doc("t.rate", [20.0, 21.0, 22.0, 20.5, 21.5]), "b", "B")
    result = compare.compare(compare.sides_by_machine([here, there]))
    base_cell, other_cell = result.rows[0].cells
    assert base_cell.few_repeats and not other_cell.few_repeats
    assert other_cell.mark == compare.MARK_UNTESTED and "too few repeats in the baseline (n=2)" in other_cell.note
    assert (result.summaries[0].too_few, result.summaries[1].too_few) == (1, 0)


def test_the_baseline_is_the_first_source_given_even_when_it_is_newer(tmp_path):
    newer = make_doc("t.rate", host="localbox", minutes=600)
    older = on_other_machine(make_doc("t.rate"), "h200box", "NVIDIA H200")
    write_docs(tmp_path / "local", [newer])
    write_docs(tmp_path / "h200", [older])
    found = library.scan([tmp_path / "local", tmp_path / "h200"])
    sides = compare.sides_by_machine(found.docs)
    assert sides[0].name.startswith("localbox")
    assert compare.compare(sides).baseline_name.startswith("localbox")


# -- the PDF loses no row --------------------------------------------------------------------------

def _pdf_text(pdf: Path) -> str:
    import shutil
    import subprocess

    if not shutil.which("pdftotext"):
        pytest.skip("pdftotext (poppler-utils) is not installed")
    return subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True).stdout


def pdf_row_numbers(text: str) -> set[int]:
    """The row numbers (the table's "#" column) in pdftotext's layout text of the table pages."""
    table = text.split("Machines compared")[0]
    return {int(m.group(1)) for m in re.finditer(r"^\s{0,8}(\d+)\s{2,}\S", table, re.MULTILINE)}


def test_the_pdf_holds_every_row_of_the_html_and_csv_even_when_rows_are_tall(tmp_path):
    docs = []
    for i in range(27):
        doc = make_doc(f"t.row{i:02d}", params={"size": i, "path": "/data/set/" * (4 + i % 9)})
        doc["benchmark"]["comparability_params"] = ["size", "path"]
        docs += [doc, on_other_machine(doc, "beta", "Test GPU B", 1.5)]
    reason = "\n".join(f"line {n} of a long traceback" for n in range(120)) + "\nEND-OF-REASON"
    docs.append(make_doc("t.tall", status="failed", reason=reason, host="beta", gpu="Test GPU B"))
    report = make_report(docs, with_charts=False)
    html = render_html(report)
    csv_rows = list(csv.DictReader(io.StringIO(csv_export.csv_text(report.docs))))
    text = _pdf_text(write_pdf(report, tmp_path / "tall.pdf"))
    labels = [comparison_text.row_label(row) for row in report.comparison.rows]
    assert html.count('<tr class="row">') == len(labels) == 28 and len(csv_rows) == len(docs) == 55
    assert [label for label in labels if label not in text] == []
    assert pdf_row_numbers(text) == set(range(1, len(labels) + 1))
    assert sum(r["benchmark_id"] in text for r in csv_rows) == len(csv_rows)
    assert "END-OF-REASON" in text and "line 60 of a long traceback" in text  # split across pages, not cut


def test_the_pdf_of_the_h200_references_and_a_local_run_holds_every_row(tmp_path):
    local = make_doc("host.membw", [5.4, 5.5, 5.6, 5.5, 5.45], host="laptop", gpu=None, unit="GB/s",
                     params={"array_mib": 0, "engine": "auto", "threads": [1, 2]},
                     figure_name="triad, largest thread count", precision="n/a")
    local["benchmark"]["comparability_params"] = ["array_mib", "engine"]
    h200 = library.scan([library.reference_dir() / "h200"]).docs
    report = make_report([local] + h200)
    html = render_html(report)
    text = _pdf_text(write_pdf(report, tmp_path / "h200.pdf"))
    rows = html.count('<tr class="row">')
    assert rows == len(report.comparison.rows) >= 20
    assert pdf_row_numbers(text) == set(range(1, rows + 1))
    membw = next(i for i, r in enumerate(report.comparison.rows, 1) if r.benchmark_id == "host.membw")
    # the one real comparison is there (the H200 folder's runs come from ten VMs named "vm": ten sides)
    assert any(cell.ratio is not None for cell in report.comparison.rows[membw - 1].cells[1:])


# -- configuration that reads ----------------------------------------------------------------------

def test_configuration_shows_only_what_differs_in_full_and_the_rest_once():
    long_path = "/data/" + "imagenet-subset-" * 6
    docs = []
    for batch, path in ((128, long_path + "a"), (256, long_path + "b")):
        doc = make_doc("t.train", params={"batch": batch, "path": path, "workers": 8, "nnodes": 1})
        doc["benchmark"]["comparability_params"] = ["batch", "path", "workers", "nnodes"]
        docs.append(doc)
    result = compare.compare(compare.sides_by_run(docs))
    assert result.common_params["t.train"] == {"nnodes": 1, "workers": 8}
    assert [row.config_text for row in result.rows] == [f"batch=128, path={long_path}a",
                                                        f"batch=256, path={long_path}b"]
    table = comparison_text.format_table(result)
    assert f"path={long_path}a" in table and f"path={long_path}b" in table  # in full, not cut at 60
    assert table.count("workers=8") == 1 and "t.train (every row: nnodes=1, workers=8)" in table
    html = render_html(make_report(docs, group="run", with_charts=False))
    table_html = html[html.index("<h2>Side by side</h2>"):html.index("<h2>Documents</h2>")]
    assert table_html.count("workers=8") == 3  # the benchmark's line, and each row's "all parameters" tooltip
    assert re.findall(r'<td title="[^"]*">([^<]*)</td>', table_html) == [r.config_text for r in result.rows]


def test_deciding_parameters_come_first_in_the_configuration():
    docs = []
    for size, extra in ((1, "x"), (2, "y")):
        doc = make_doc("t.order", params={"aaa_note": extra, "size": size})
        doc["benchmark"]["comparability_params"] = ["size"]
        docs.append(doc)
    row = compare.Row("t.order", "", "rate", "", True, "FP32", {"aaa_note": "x", "size": 1}, True,
                      [compare.Cell(compare.metrics_of(docs[0])[0], "")])
    other = compare.Row("t.order", "", "rate", "", True, "FP32", {"aaa_note": "y", "size": 2}, True,
                        [compare.Cell(compare.metrics_of(docs[1])[0], "")])
    compare._split_params([row, other])
    assert row.config_text == "size=1, aaa_note=x"


# -- consistency of shared documents ---------------------------------------------------------------

def _h200_doc() -> dict:
    path = next((library.reference_dir() / "h200").glob("*host.membw*.json"))
    return library.load_document(path)


def test_shipped_measurements_are_consistent():
    from hwbench_gui.engine.reports import flags

    docs = library.scan([library.reference_dir()]).docs
    assert docs and [d["_path"] for d in docs if flags.consistency_problems(d)] == []


@pytest.mark.parametrize("edit, words", [
    ("figure", "not the median of its samples"),
    ("eight", "driver counted 1"),
    ("device", "its inventory lists NVIDIA H200"),
    ("software", "software versions are missing"),
])
def test_an_edited_document_is_flagged_like_a_busy_one(edit, words):
    from hwbench_gui.engine.reports.csv_export import csv_text

    doc = _h200_doc()
    if edit == "figure":
        doc["figure"]["value"] *= 1.3
    elif edit == "eight":
        doc["inventory"]["gpus"] = [dict(doc["inventory"]["gpus"][0], uuid=f"GPU-{i}") for i in range(8)]
    elif edit == "device":
        doc["device"] = "cuda:0 (NVIDIA GeForce RTX 3060)"
    elif edit == "software":
        doc["software"] = None
    other = on_other_machine(_h200_doc(), "here", "Test GPU")
    assert describe.gpu_summary(doc) in ("NVIDIA H200", "8× NVIDIA H200")
    result = compare.compare(compare.sides_by_machine([other, doc]))
    cell = result.rows[0].cells[1]
    assert cell.inconsistent and words in cell.note and "inconsistent" in comparison_text.cell_text(cell)
    assert not result.rows[0].cells[0].inconsistent
    assert (result.summaries[0].inconsistent, result.summaries[1].inconsistent) == (0, 1)
    assert "1 from an inconsistent document" in result.summaries[1].counts_text()
    assert "inconsistent document" in render_html(make_report([other, doc], with_charts=False))
    rows = list(csv.DictReader(io.StringIO(csv_text([other, doc]))))
    assert rows[0]["inconsistent"] == "" and words in rows[1]["inconsistent"]


# -- the evaluation of one machine -----------------------------------------------------------------

def test_one_machine_is_laid_out_as_the_seed_evaluation(tmp_path):
    from reports_data import seed_suite_docs

    from hwbench_gui.engine.reports import evaluation

    docs = seed_suite_docs()
    assert evaluation.is_one_machine(docs) and not evaluation.is_one_machine(
        docs + [on_other_machine(docs[0], "beta", "B")])
    ev = evaluation.build_evaluation(docs, with_charts=False)
    assert [c.title for c in ev.columns] == ["PyTorch · training · FP32", "PyTorch · training · FP16-AMP",
                                             "PyTorch · inference · FP32", "PyTorch · inference · FP16-AMP"]
    assert [r.title for r in ev.rows] == ["RESNET50", "VGG16", "FASTERRCNN", "UNET"]
    first = ev.rows[0].cells[0].lines()
    assert first[0] == "400 images/s" and first[1].startswith("p5–p95") and first[2] == "GPU 90 % · 24.0 GiB · 250 W"
    assert [n.text for n in ev.not_measured] == ["TensorFlow is not installed: 16 cells"]
    assert [m.title for m in ev.micro] == ["gpu.pcie (gpu.pcie)", "host.membw (host.membw)"]
    html = evaluation.render_evaluation_html(ev)
    assert html.count('<tr class="matrixrow">') == 4 and html.count("TensorFlow is not installed") == 1
    assert "hint line" not in html and "Composite" not in html and "against itself" not in html
    text = _pdf_text(tmp_path / "e.pdf") if (tmp_path / "e.pdf").write_bytes(evaluation.evaluation_pdf_bytes(ev)) \
        else ""
    assert "TensorFlow is not installed: 16 cells" in text and text.count("hint line") == 0
    assert all(title in text for title in ("RESNET50", "VGG16", "FASTERRCNN", "UNET", "host.membw"))
    paths = evaluation.write_evaluation_report(docs, tmp_path / "out")
    assert [p.suffix for p in paths] == [".html", ".pdf"] and all(p.stat().st_size for p in paths)
    again = evaluation.write_evaluation_report(docs, tmp_path / "out")
    assert set(again).isdisjoint(paths)  # a second report in the same second gets its own names


def test_a_single_side_comparison_shows_no_composite_against_itself():
    result = compare.compare(compare.sides_by_machine([make_doc("t.rate"), make_doc("t.other", minutes=1)]))
    assert "Composite" not in comparison_text.format_table(result)
    assert "<h2>Composite</h2>" not in render_html(make_report([make_doc("t.rate")], with_charts=False))


def test_charts_of_many_runs_summarise_instead_of_one_legend_entry_per_run():
    docs = []
    for i in range(12):
        docs.append(make_doc("t.rate", [100.0 + i, 101.0 + i, 99.0 + i, 100.5 + i, 99.5 + i], minutes=i,
                             host="alpha" if i % 2 else "beta"))
    docs.append(model_doc("resnet50", framework="torch", mode="train", precision="FP32", value=100.0, minutes=20))
    sides = compare.sides_by_run(docs)
    drawn = {c.key: c for c in charts.build_charts(sides, compare.compare(sides))}
    relative = drawn["relative"].figure.axes[0]
    # the title counts the sides with a ratio: the model document's side has none
    assert "relative to the baseline" in relative.get_title() and "11 sides" in relative.get_title()
    assert len(relative.get_yticklabels()) == 1  # one box for t.rate, not twelve bars
    legends = [text.get_text() for legend in drawn["throughput"].figure.legends for text in legend.get_texts()]
    assert len(legends) <= 3  # one series per machine, never one per run


def test_a_pdf_of_many_runs_lists_every_row_and_side_without_a_column_per_run(tmp_path):
    docs = [make_doc(f"t.b{i % 3}", [10.0 + i, 10.1 + i, 9.9 + i, 10.0 + i, 10.05 + i], minutes=i) for i in range(30)]
    report = make_report(docs, group="run", with_charts=False)
    assert len(report.comparison.sides) == 30
    text = _pdf_text(write_pdf(report, tmp_path / "runs.pdf"))
    assert pdf_row_numbers(text.split("Side by side: one line per side")[1]) == {1, 2, 3}
    flat = " ".join(text.split())
    assert all(f"[{i + 1}]" in flat for i in range(30)) and "Machines compared" in flat


def test_a_not_comparable_note_says_the_precision_once():
    a = make_doc("t.m", params={"precision": "fp32", "batch": 128}, precision="FP32")
    b = on_other_machine(make_doc("t.m", params={"precision": "bf16-amp", "batch": 256}, precision="BF16-AMP"),
                         "b", "B")
    for doc in (a, b):
        doc["benchmark"]["comparability_params"] = ["precision", "batch"]
    result = compare.compare(compare.sides_by_machine([a, b]))
    (note,) = [c.note for row in result.rows for c in row.cells if c.mark == compare.MARK_NOT_COMPARABLE]
    assert note == "the baseline never ran t.m at BF16-AMP, with batch 256 (it ran batch 128)"


def test_a_figure_per_gpu_watt_only_where_the_gpu_did_the_work():
    """Host memory bandwidth, a disk or a PCIe copy per GPU watt measures nothing: their runs sample the
    GPUs' idle power. Model runs on the GPU are charted per watt."""
    power = {"metrics": {"gpu0_power_w": {"mean": 400.0}}}
    on_gpu = model_doc("resnet50", framework="torch", mode="train", precision="FP32", value=800.0, power_w=400)
    membw = make_doc("host.membw", [40.0, 41.0, 39.5, 40.5, 40.2], unit="GB/s", telemetry=power)
    membw["device"] = "cpu (16 CPUs)"
    pcie = make_doc("gpu.pcie", unit="GB/s", telemetry=power)
    pcie["device"] = "cuda:0 (Test GPU A)"
    assert [power_charts.gpu_power_is_the_cost(d) for d in (on_gpu, membw, pcie)] == [True, False, False]
    chart = charts.perf_per_watt_chart(compare.sides_by_machine([on_gpu, membw, pcie]))
    panels = [ax.get_title(loc="left") for ax in chart.figure.axes]  # one panel per benchmark and precision
    assert len(panels) == 1 and "model.resnet50" in panels[0]
    assert charts.perf_per_watt_chart(compare.sides_by_machine([membw, pcie])) is None


def test_sides_that_share_no_headline_with_the_baseline_do_not_turn_the_bars_into_boxes():
    """Two machines beside nine published-like sides that ran something else: one ratio a row, drawn as a
    bar with its value, not as a box of one ratio among 10 sides."""
    base = make_doc("t.rate", [100.0, 101.0, 99.0, 100.5, 99.5])
    docs = [base, on_other_machine(base, "b", "B", scale=1.25)]
    docs += [on_other_machine(make_doc(f"t.only{i}", minutes=i + 1), f"h{i}", f"G{i}") for i in range(9)]
    sides = compare.sides_by_machine(docs)
    result = compare.compare(sides)
    assert len(result.sides) == 11
    relative = {c.key: c for c in charts.build_charts(sides, result)}["relative"].figure.axes[0]
    assert relative.get_title() == "Headline figures relative to the baseline"
    assert any(t.get_text().startswith("×1.25") for t in relative.texts)


def test_a_row_centres_the_bars_of_the_sides_it_holds_on_its_label():
    """Three sides against the baseline, only one of them with a figure in the second row: that bar sits on its
    row's label, the first row's three bars around theirs."""
    base, other = make_doc("t.rate", [100.0, 101.0, 99.0, 100.5, 99.5]), make_doc("t.other", [50.0, 51.0, 49.0])
    docs = [base, other, on_other_machine(base, "b", "B", 1.2), on_other_machine(other, "b", "B", 0.8),
            on_other_machine(base, "c", "C", 0.9), on_other_machine(base, "d", "D", 1.1)]
    sides = compare.sides_by_machine(docs)
    result = compare.compare(sides)
    relative = {c.key: c for c in charts.build_charts(sides, result)}["relative"].figure.axes[0]
    labels = [t.get_text() for t in relative.get_yticklabels()]
    centres = sorted(round(bar.get_y() + bar.get_height() / 2, 6) for bar in relative.patches)
    other_row = next(i for i, label in enumerate(labels) if "t.other" in label)
    rate_row = 1 - other_row
    assert centres.count(float(other_row)) == 1
    assert sorted(c for c in centres if abs(c - rate_row) < 0.5) == \
        pytest.approx([rate_row - 0.8 / 3, rate_row, rate_row + 0.8 / 3])
