"""``hwbench compare`` and ``hwbench report`` as real subprocesses, on documents of the real runner."""

from __future__ import annotations

import csv
import json
import shutil

import pytest
from support import run_cli
from reports_data import on_other_machine, write_bad_files


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    """One real cpu.decode run (tiny), and the same document relabelled as a second machine."""
    import os

    from support import REPO_ROOT

    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO_ROOT)
    here = tmp_path_factory.mktemp("here")
    proc = run_cli(["run", "cpu.decode", "-q", "--out", str(here), "--param", "count=4", "--param", "image_size=32",
                    "--param", "workers=1", "--param", "repeats=2", "--param", "repeat_s=0.05"], env, timeout=180)
    assert proc.returncode == 0, proc.stderr
    (path,) = list(here.glob("*.json"))
    doc = json.loads(path.read_text())
    other = tmp_path_factory.mktemp("other")
    (other / path.name).write_text(json.dumps(on_other_machine(doc, "otherbox", "Test GPU (test data)", 2.0)))
    write_bad_files(other)
    return here, other


def test_compare_prints_the_side_by_side_table(measured, cli_env):
    here, other = measured
    proc = run_cli(["compare", str(here), str(other), "--baseline", "otherbox"], cli_env)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert " *[2] otherbox · Test GPU (test data)" in out  # the baseline is marked, wherever it is listed
    assert "cpu.decode" in out and "×0.50" in out and "Composite" in out
    assert "skipped corrupt.json: not valid JSON" in proc.stderr
    assert "skipped newer.json" in proc.stderr and "skipped package.json" in proc.stderr


def test_compare_with_published_references_and_bad_baseline(measured, cli_env):
    here, _ = measured
    proc = run_cli(["compare", str(here), "--reference"], cli_env)
    assert proc.returncode == 0, proc.stderr
    assert "Lambda · 1× NVIDIA H200 (published)" in proc.stdout and "2,259 images/s" in proc.stdout
    bad = run_cli(["compare", str(here), "--baseline", "no-such-machine"], cli_env)
    assert bad.returncode == 2 and "no side matches" in bad.stderr


def test_report_writes_html_pdf_and_csv(measured, cli_env, tmp_path):
    here, other = measured
    html, pdf, csv_path = tmp_path / "r.html", tmp_path / "r.pdf", tmp_path / "r.csv"
    proc = run_cli(["report", str(here), str(other), "--html", str(html), "--pdf", str(pdf), "--csv", str(csv_path),
                    "--title", "CLI test"], cli_env)
    assert proc.returncode == 0, proc.stderr
    assert html.read_text(encoding="utf-8").count("data:image/png;base64,") >= 2
    assert pdf.read_bytes().startswith(b"%PDF")
    with csv_path.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 2 and "otherbox" in {r["hostname"] for r in rows}


def test_nothing_usable_exits_1(tmp_path, cli_env):
    write_bad_files(tmp_path)
    proc = run_cli(["report", str(tmp_path), "--csv", str(tmp_path / "x.csv")], cli_env)
    assert proc.returncode == 1 and "no usable result documents" in proc.stderr
    assert not (tmp_path / "x.csv").exists()
    shutil.rmtree(tmp_path)


def test_report_of_one_machine_is_the_evaluation(cli_env, tmp_path):
    from reports_data import seed_suite_docs, write_docs

    folder = tmp_path / "seed"
    write_docs(folder, seed_suite_docs())
    proc = run_cli(["report", str(folder)], cli_env)
    assert proc.returncode == 0, proc.stderr
    assert "TensorFlow is not installed: 16 cells" in proc.stdout and "Composite" not in proc.stdout
    proc = run_cli(["report", str(folder), "--html", str(tmp_path / "e.html"), "--pdf", str(tmp_path / "e.pdf")],
                   cli_env, timeout=240)
    assert proc.returncode == 0, proc.stderr
    assert 'class="matrixrow"' in (tmp_path / "e.html").read_text(encoding="utf-8")
    proc = run_cli(["report", str(folder), "--layout", "comparison"], cli_env)
    assert proc.returncode == 0 and "BENCHMARK · FIGURE" in proc.stdout


def test_compare_json_carries_values_spreads_ratios_and_marks(cli_env):
    import json

    from support import run_cli

    from hwbench_gui.engine.results import library

    reference = library.reference_dir()
    proc = run_cli(["compare", str(reference / "h200"), *map(str, sorted(reference.glob("*.json"))), "--json"],
                   cli_env)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["baseline_name"] == data["sides"][0]["name"]
    assert len(data["summaries"]) == len(data["sides"]) >= 2
    row = next(r for r in data["rows"] if any(c["ratio"] is not None and c["mark"] != "baseline" for c in r["cells"]))
    assert {"benchmark", "figure", "unit", "precision", "params", "cells"} <= set(row)
    measured = next(c for c in row["cells"] if c["metric"] and not c["metric"]["failed"])
    assert measured["metric"]["value"] is not None and "spread" in measured["metric"]
