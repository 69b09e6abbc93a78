"""Hostile result documents: numbers beyond float range or not finite,
invisible and direction-changing characters, forged figures above the hardware's limits, one output
file named twice, and the two refusals that had turned into tracebacks (a link loop given to
compare, a folder given to run --like). Each hostile file is written here; one bad file never hides
the others."""

from __future__ import annotations

import copy
import csv
import io
import json
import os
from pathlib import Path

import pytest
from reports_data import make_doc, write_docs
from support import no_traceback, one_line, run_cli

from hwbench_gui.engine.reports import flags
from hwbench_gui.engine.reports.physical_limits import impossible_figures
from hwbench_gui.engine.results import library
from hwbench_gui.engine.shown_text import escape, json_may_hide


def _doc_text_with(value_text: str) -> str:
    """A valid document's JSON with its figure's value replaced by ``value_text`` verbatim."""
    doc = make_doc("t.rate")
    marker = 123456.789
    doc["figure"]["value"] = marker
    return json.dumps(doc).replace(repr(marker), value_text, 1)


@pytest.mark.parametrize("value_text, reason", [
    ("1" + "0" * 400, "an integer of 401 digits is beyond the range of a number"),
    ("1e400", "1e400 is beyond the range of a number"),
    ("NaN", "NaN is not a finite number"),
    ("-Infinity", "-Infinity is not a finite number"),
])
def test_a_number_no_reader_can_use_skips_its_file_and_keeps_the_others(tmp_path, value_text, reason):
    good = write_docs(tmp_path, [make_doc("t.rate")])[0]
    hostile = tmp_path / "hostile.json"
    hostile.write_text(_doc_text_with(value_text), encoding="utf-8")
    found = library.scan([tmp_path])
    assert [d["_path"] for d in found.docs] == [str(good)]
    assert [(e.path, e.reason) for e in found.errors] == [(hostile, f"not a result document ({reason})")]


def test_a_number_inside_float_range_but_beyond_any_measurement_is_refused_and_1e18_kept(tmp_path):
    """1e308 parses, but the first sum or ratio a chart takes of it overflows (matplotlib's ticks ended a report
    in "arange: cannot compute length")."""
    hostile = tmp_path / "big.json"
    for text in (str(10 ** 300), "1e308", "-1e19"):
        hostile.write_text(_doc_text_with(text), encoding="utf-8")
        with pytest.raises(library.ResultFileError, match=r"figure.value .* is beyond 1e\+18 \(no measurement"):
            library.load_document(hostile)
    hostile.write_text(_doc_text_with(str(10 ** 18)), encoding="utf-8")
    assert library.load_document(hostile)["figure"]["value"] == 10 ** 18


REFERENCE_H200 = Path(__file__).resolve().parents[1] / "resources" / "reference" / "h200"
HOSTILE_NAME = "al\u200bpha\u202eevil\x00\x1b[2J"
ESCAPED_NAME = "al\\u200bpha\\u202eevil\\x00\\x1b[2J"


def test_escape_writes_out_controls_zero_width_and_bidi_and_keeps_the_rest():
    assert escape(HOSTILE_NAME) == ESCAPED_NAME
    assert escape("\u2066x\u2069\ufeff\u00ad\u2028") == "\\u2066x\\u2069\\ufeff\\xad\\u2028"
    assert escape("Größe 4× H200\tGPU\n日本") == "Größe 4× H200\tGPU\n日本"


def test_a_documents_text_is_shown_escaped_in_the_library_csv_html_and_terminal(tmp_path, cli_env):
    doc = make_doc("t.rate", host=HOSTILE_NAME)
    doc["inventory"]["hostname"] = HOSTILE_NAME
    doc["inventory"]["gpus"] = [{"name": "GPU\u200b\u202e"}]
    write_docs(tmp_path, [doc])
    loaded = library.list_results(tmp_path).docs[0]
    assert loaded["hostname"] == ESCAPED_NAME and loaded["inventory"]["gpus"][0]["name"] == "GPU\\u200b\\u202e"
    out = tmp_path / "out"
    out.mkdir()
    proc = run_cli(["report", str(tmp_path), "--csv", str(out / "r.csv"), "--html", str(out / "r.html")], cli_env)
    no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    for name in ("r.csv", "r.html"):
        data = (out / name).read_bytes()
        for char in ("\u200b", "\u202e", "\x00", "\x1b"):
            assert char.encode("utf-8") not in data, (name, char)
        assert ESCAPED_NAME.encode("ascii") in data.replace(b"&#39;", b"'")
    rows = list(csv.DictReader(io.StringIO((out / "r.csv").read_text(encoding="utf-8"))))
    assert rows[0]["hostname"] == ESCAPED_NAME
    proc = run_cli(["compare", str(tmp_path)], cli_env)
    no_traceback(proc)
    assert ESCAPED_NAME in proc.stdout and "\u202e" not in proc.stdout and "\x00" not in proc.stdout


# -- figures beyond physical limits (item 9) ---------------------------------------------------------

def _host_membw(value_gb_s: float, memory: dict, gpus: int = 1, sampled_gpus: int = 1) -> dict:
    doc = make_doc("host.membw", [value_gb_s] * 5, unit="GB/s", gpu="NVIDIA H200", gpus=gpus,
                   figure_name="triad, largest thread count")
    doc["device"] = "cpu (8 CPUs)"
    doc["inventory"]["memory"] = memory
    doc["details"] = {"array_bytes": 1 << 30, "last_level_cache_bytes": 300 << 20}
    doc["telemetry"] = {"seed": {"gpu_util_percent": {"mean": 0.0, "max": 0.0,
                                                      "per_gpu": [{"mean": 0.0, "max": 0.0}] * sampled_gpus}}}
    return doc


DDR5_8CH = {"total_bytes": 128 * 2 ** 30, "speed_mts": 4800, "configured_speed_mts": 4800, "channels": 8,
            "dimm_type": "DDR5"}


def test_a_host_memory_figure_above_the_documented_rams_peak_is_impossible():
    # 4800 MT/s x 8 bytes x 8 channels = 307.2 GB/s
    assert impossible_figures(_host_membw(290.0, DDR5_8CH)) == []
    found = impossible_figures(_host_membw(835.0, DDR5_8CH))
    assert found == ["triad, largest thread count 835 GB/s is above the 307.2 GB/s theoretical peak of its documented "
                     "RAM (DDR5 at 4800 MT/s × 8 bytes × 8 channels)"]
    unknown = {"total_bytes": 128 * 2 ** 30, "speed_mts": None, "channels": None}
    assert impossible_figures(_host_membw(835.0, unknown)) == []  # no documented limit: no guess
    in_cache = _host_membw(835.0, DDR5_8CH)
    in_cache["details"]["array_bytes"] = 64 << 20  # arrays inside the cache measure the cache
    assert impossible_figures(in_cache) == []


def test_the_forged_document_is_flagged_in_compare_and_csv(tmp_path, cli_env):
    """A self-consistent forgery: a host-memory figure x10 on a CPU-device run whose inventory claims
    8 H200s (its own telemetry sampled one GPU)."""
    genuine = _host_membw(83.5, DDR5_8CH)
    forged = copy.deepcopy(genuine)
    forged["id"] = forged["id"][::-1]
    forged["samples"] = [v * 10 for v in forged["samples"]]
    forged["figure"]["value"] *= 10
    forged["stats"] = {k: v * 10 if isinstance(v, float) else v for k, v in forged["stats"].items()}
    forged["inventory"]["gpus"] = [{"name": "NVIDIA H200", "uuid": f"GPU-{i}"} for i in range(8)]
    assert flags.consistency_problems(genuine) == []
    problems = flags.consistency_problems(forged)
    assert "its inventory lists 8 GPU(s) but its telemetry sampled 1 during the run" in problems
    assert any(p.startswith("impossible: triad, largest thread count 835 GB/s is above") for p in problems)
    write_docs(tmp_path, [genuine, forged])
    proc = run_cli(["report", str(tmp_path), "--by", "run", "--csv", str(tmp_path / "r.csv")], cli_env)
    no_traceback(proc)
    rows = {round(float(r["value"]), 1): r for r in csv.DictReader(open(tmp_path / "r.csv", encoding="utf-8"))}
    assert rows[835.0]["inconsistent"].count("impossible: ") == 1 and rows[83.5]["inconsistent"] == ""


def _gpu_doc(bench_id: str, figures: dict, device: str = "cuda:0 (NVIDIA H200)", details=None) -> dict:
    name, (value, unit) = next(iter(figures.items()))
    doc = make_doc(bench_id, [value] * 5, unit=unit, gpu="NVIDIA H200", figure_name=name,
                   figures={n: {"value": v, "unit": u} for n, (v, u) in list(figures.items())[1:]})
    doc["device"] = device
    doc["inventory"]["gpus"] = [{"name": "NVIDIA H200", "index": 0, "memory_bandwidth_gb_per_s": 4800.0,
                                 "pcie_gen_max": 5, "pcie_width_max": 16,
                                 "peaks": {"fp32_tflops": 66.9, "tensor_fp16_dense_tflops": 1070.5}}]
    doc["details"] = details or {}
    return doc


def test_gpu_figures_above_the_inventorys_peaks_are_impossible():
    real = _gpu_doc("gpu.matmul", {"BF16 matmul (best size)": (790.0, "TFLOP/s"), "FP32": (53.9, "TFLOP/s"),
                                   "TF32": (411.9, "TFLOP/s"), "FP8": (1471.0, "TFLOP/s")})
    assert impossible_figures(real) == []
    forged = _gpu_doc("gpu.matmul", {"BF16 matmul (best size)": (790.0, "TFLOP/s"), "FP32": (80.0, "TFLOP/s")})
    assert impossible_figures(forged) == ["FP32 80 TFLOP/s is above its GPU's 66.9 TFLOP/s FP32 peak (CUDA cores × 2 × "
                                          "maximum SM clock)"]
    tf32 = _gpu_doc("gpu.matmul", {"TF32 matmul (best size)": (600.0, "TFLOP/s")})
    assert impossible_figures(tf32)[0].startswith("TF32 matmul (best size) 600 TFLOP/s is above its GPU's 535.2")
    assert impossible_figures(_gpu_doc("gpu.d2d", {"device copy, 2 GiB": (4266.0, "GB/s")})) == []
    assert impossible_figures(_gpu_doc("gpu.d2d", {"device copy, 2 GiB": (9000.0, "GB/s")})) == [
        "device copy, 2 GiB 9,000 GB/s is above its GPU's 4,800 GB/s theoretical memory bandwidth"]


def test_a_pcie_figure_above_its_links_maximum_is_impossible():
    link = {"pcie_link": {"max_theoretical_gbps": 63.0}}
    real = _gpu_doc("gpu.pcie", {"pinned H2D, 1 GiB": (54.1, "GB/s"), "pinned bidirectional, 1 GiB": (89.5, "GB/s")},
                    details=link)
    assert impossible_figures(real) == []
    forged = _gpu_doc("gpu.pcie", {"pinned H2D, 1 GiB": (540.0, "GB/s"),
                                   "pinned bidirectional, 1 GiB": (89.5, "GB/s")}, details=link)
    assert impossible_figures(forged) == ["pinned H2D, 1 GiB 540 GB/s is above the 63.02 GB/s theoretical maximum of "
                                          "its PCIe link"]
    both = _gpu_doc("gpu.pcie", {"pinned bidirectional, 1 GiB": (130.0, "GB/s")}, details=link)
    assert "(both ways)" in impossible_figures(both)[0]


def test_a_gpu_benchmark_on_a_cpu_device_is_impossible():
    doc = _gpu_doc("gpu.matmul", {"FP32 matmul (best size)": (1.0, "TFLOP/s")}, device="cpu (16 CPUs)")
    assert impossible_figures(doc) == ["a GPU benchmark (gpu.matmul) whose device is the CPU (cpu (16 CPUs))"]


# -- files and folders -----------------------------------------------------------------------------

@pytest.mark.skipif(os.name != "posix", reason="symbolic links")
def test_compare_given_a_link_loop_says_so_in_one_line(tmp_path, cli_env):
    (tmp_path / "a.json").symlink_to(tmp_path / "b.json")
    (tmp_path / "b.json").symlink_to(tmp_path / "a.json")
    proc = run_cli(["compare", str(tmp_path / "a.json")], cli_env)
    no_traceback(proc)
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == ["skipped a.json: cannot be read: a loop of symbolic links",
                                        "no usable result documents"]


def test_run_like_a_folder_says_so_in_one_line(tmp_path, cli_env):
    proc = run_cli(["run", "--like", str(tmp_path)], cli_env)
    no_traceback(proc)
    assert proc.returncode == 2
    assert one_line(proc.stderr) == f"hwbench run: --like {tmp_path}: a folder: not read as a result document"


def test_one_output_file_named_twice_is_refused_before_anything_is_written(tmp_path, cli_env):
    write_docs(tmp_path, [make_doc("t.rate")])
    target = tmp_path / "out" / "X"
    target.parent.mkdir()
    proc = run_cli(["report", str(tmp_path), "--html", str(target), "--csv", str(target), "--pdf",
                    str(target)], cli_env)
    no_traceback(proc)
    assert proc.returncode == 2 and not target.exists()
    assert one_line(proc.stderr) == (f"hwbench report: --csv and --html name the same file {target}; give each "
                                     "output its own file")


@pytest.mark.parametrize("hidden", ["\u200b", "\x00", "\u202e", "\x85", "\r", "\x1b[2J", "\ufeff"])
def test_a_json_text_that_may_hide_a_character_is_told_apart_from_a_plainly_printable_one(hidden):
    """The load skips the walk over every string of a document whose text is plainly printable, so this test
    must see every way a string can hold a hidden one."""
    plain = {"name": "Größe 4× H200", "log": "line\n\tindented", "path": "C:/x", "quote": 'say "hi"'}
    assert not json_may_hide(json.dumps(plain, ensure_ascii=False))
    for ascii_only in (True, False):
        assert json_may_hide(json.dumps({**plain, "name": f"GPU{hidden}"}, ensure_ascii=ascii_only))


def _matmul_of(value: float, host: str) -> dict:
    doc = json.loads((REFERENCE_H200 / "2026-12-03T08-27-35_gpu.matmul_fafcfce5.json").read_text(encoding="utf-8"))
    doc["figure"]["value"] = value
    doc["samples"] = [value] * len(doc["samples"])
    doc["stats"] = {k: v if k == "n" else value for k, v in doc["stats"].items()}
    for figure in doc["figures"].values():
        figure["value"] = value
        figure["samples"] = [value] * len(figure.get("samples") or [])
    doc["hostname"] = doc["inventory"]["hostname"] = host
    doc["id"] = host + doc["id"]
    return doc


def test_a_chart_no_axis_can_show_is_left_out_with_a_note_and_the_report_is_written(tmp_path, cli_env):
    """1e-300 against 1e18: both within a number's range, their ratio is not (matplotlib refused the axis and the
    whole report ended in one line)."""
    write_docs(tmp_path, [_matmul_of(1e-300, "tiny"), _matmul_of(1e18, "huge")])
    out = tmp_path / "out"
    out.mkdir()
    # one machine kind on two hosts: told apart by host, as a user with two identical boxes asks
    proc = run_cli(["report", str(tmp_path), "--by", "host", "--baseline", "tiny", "--html", str(out / "r.html"),
                    "--pdf", str(out / "r.pdf")], cli_env)
    no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    page = (out / "r.html").read_text(encoding="utf-8")
    assert page.count("this chart could not draw them") == 1 and (out / "r.pdf").read_bytes().startswith(b"%PDF")
