"""cpu.decode: JPEG decode rate with OpenCV and PIL, from 1 to N worker processes.

Every worker process holds all the JPEG bytes in its own memory before timing starts, so the disk
and inter-process transfer are not measured: only decode work, the way a DataLoader worker spends
its time once the file is read.
"""

from __future__ import annotations

import importlib.util
import math
import os
import time
from typing import Any

from hwbench_gui.engine.datapath.dataset import screen_image
from hwbench_gui.engine.foreign import ForeignFileError
from hwbench_gui.engine.measure.decode import decode_rates, decoder
from hwbench_gui.engine.measure.stats import median, spread
from hwbench_gui.engine.measure.timing import Steps, cpu_count, doubling_counts, figure, plural
from hwbench_gui.engine.spec.benchmark import Benchmark, BenchmarkUnavailable, Outcome, Param, Reporter, Series

LIBRARIES = {"opencv": "OpenCV", "pil": "PIL"}
JPEG_SUFFIXES = (".jpg", ".jpeg", ".jpe")


def _load_folder(folder: str, limit: int) -> tuple[list[bytes], list[str]]:
    """(the JPEGs' bytes, "name: reason" of each file skipped: not a regular file, too large, not an
    image or above the pixel limit)."""
    if not os.path.isdir(folder):
        raise BenchmarkUnavailable(f"folder {folder!r} does not exist")
    names = sorted(n for n in os.listdir(folder) if n.lower().endswith(JPEG_SUFFIXES))[:limit]
    if not names:
        raise BenchmarkUnavailable(f"no JPEG files (*.jpg, *.jpeg) in {folder}")
    jpegs, refused = [], []
    for name in names:
        try:
            data = screen_image(os.path.join(folder, name))  # every worker decodes every file: none may fail
        except ForeignFileError as exc:
            refused.append(f"{name}: {exc.reason}")
            continue
        jpegs.append(data)
    if not jpegs:
        raise BenchmarkUnavailable(f"no usable JPEG in {folder}: " + "; ".join(refused[:3]))
    return jpegs, refused


def _label(library: str, workers: int) -> str:
    return f"{LIBRARIES[library]}, {plural(workers, 'worker')}"


def run(params: dict[str, Any], reporter: Reporter) -> Outcome:
    from hwbench_gui.engine.measure.imagegen import make_jpegs

    libraries = ["opencv"] + (["pil"] if importlib.util.find_spec("PIL") else [])
    warnings = [] if "pil" in libraries else ["PIL (Pillow) is not installed: only OpenCV was measured"]
    worker_counts = sorted(set(params["workers"]))
    if max(worker_counts) > cpu_count():
        warnings.append(f"{max(worker_counts)} workers on {cpu_count()} CPUs: the larger counts oversubscribe")
    if params["folder"]:
        jpegs, refused = _load_folder(params["folder"], params["count"])
        if refused:
            warnings.append(f"{len(refused)} file(s) of {params['folder']} skipped as unusable: "
                            + "; ".join(refused[:3]) + ("; …" if len(refused) > 3 else ""))
        source = f"{len(jpegs)} JPEG files from {params['folder']}"
    else:
        reporter.progress(0.0, "generating test images")
        jpegs = make_jpegs(params["count"], params["image_size"], params["quality"])
        source = (f"{len(jpegs)} generated {params['image_size']}×{params['image_size']} JPEGs at quality "
                  f"{params['quality']} (gradients, shapes and noise)")
    mean_kib = sum(map(len, jpegs)) / len(jpegs) / 1024

    # One pass over all images in this process tells how many passes fill one timed repeat.
    passes, megapixels = {}, 0.0
    for library in libraries:
        decode = decoder(library)
        decode(jpegs[0])  # imports and first-call setup stay out of the calibration
        start = time.perf_counter()
        for data in jpegs:
            pixels = decode(data)
            if pixels is None:
                raise BenchmarkUnavailable(f"{LIBRARIES[library]} could not decode one of the images")
            if library == "opencv":
                megapixels += pixels.shape[0] * pixels.shape[1] / 1e6
        one_pass_s = time.perf_counter() - start
        passes[library] = max(1, math.ceil(params["repeat_s"] / max(one_pass_s, 1e-9)))
    mp_per_image = megapixels / len(jpegs)

    steps = Steps(reporter, len(libraries) * len(worker_counts))
    results: dict[str, dict[int, list[float]]] = {lib: {} for lib in libraries}
    for library in libraries:
        for workers in worker_counts:
            rates = decode_rates(library, jpegs, workers, passes[library], params["repeats"])
            results[library][workers] = rates
            reporter.metric(f"{LIBRARIES[library]} decode", median(rates), "images/s", workers=workers)
            steps.advance(f"{_label(library, workers)}: {median(rates):.0f} images/s")

    top = worker_counts[-1]
    figures = {_label(lib, w): figure(results[lib][w], "images/s", workers=w)
               for lib in libraries for w in worker_counts}
    series = [Series(f"{LIBRARIES[lib]}", [float(w) for w in worker_counts],
                     [median(results[lib][w]) for w in worker_counts], "worker processes", "images/s",
                     y_spread=[spread(results[lib][w]) for w in worker_counts]) for lib in libraries]
    # rate(N) / (N × rate(1)): 1.0 = perfect scaling; keys are worker counts as strings (JSON keys).
    scaling = ({LIBRARIES[lib]: {str(w): median(results[lib][w]) / (w * median(results[lib][1]))
                                 for w in worker_counts} for lib in libraries} if 1 in worker_counts else None)
    method = (
        f"Decoded {source} (mean {mean_kib:.0f} KiB each) from bytes already in each worker's memory, with "
        f"OpenCV cv2.imdecode(IMREAD_COLOR, cv2.setNumThreads(1))"
        + (" and PIL Image.open(...).convert('RGB')" if "pil" in libraries else "")
        + f". For each worker count ({', '.join(map(str, worker_counts))}) a pool of spawned processes ran one "
        f"untimed warm-up pass, then {params['repeats']} timed repeats in which every worker decoded all images "
        f"several times (about {params['repeat_s']:g} s per repeat). images/s = images decoded by all workers / "
        f"wall time of the repeat, measured in the parent. Headline: OpenCV at {top} workers."
    )
    return Outcome(
        # One name on every machine (the worker count is in details): see host.membw.
        figure_name="JPEG decode, OpenCV, largest worker count",
        unit="images/s",
        samples=results["opencv"][top],
        method=method,
        figures=figures,
        series=series,
        warnings=warnings,
        details={"source": source, "images": len(jpegs), "mean_jpeg_bytes": mean_kib * 1024,
                 "megapixels_per_image": mp_per_image, "passes_per_repeat": passes,
                 "scaling_efficiency": scaling, "cpus": cpu_count(),
                 "megapixels_per_s": {LIBRARIES[lib]: median(results[lib][top]) * mp_per_image for lib in libraries}},
        device=f"cpu ({cpu_count()} CPUs)",
    )


def _availability() -> str | None:
    if importlib.util.find_spec("cv2") is None:
        return "OpenCV (opencv-python) is not installed"
    return None


BENCHMARK = Benchmark(
    id="cpu.decode",
    title="CPU JPEG decode",
    category="CPU",
    description="JPEG decode rate with OpenCV and PIL from 1 to N worker processes, as a data loader does it.",
    params=(
        Param("folder", "path", "", "Folder of your own JPEGs; empty = generate test images.",
              decides_comparability=False),
        Param("count", "int", 64, "Number of images (taken from the folder, or generated).", minimum=1,
              maximum=100_000),
        Param("image_size", "int", 512, "Side of a generated square image.", minimum=16, maximum=8192, unit="px"),
        Param("quality", "int", 90, "JPEG quality of generated images.", minimum=1, maximum=100),
        Param("workers", "int_list", doubling_counts(cpu_count()), "Worker process counts to measure (default 1, 2, "
              "4, … up to every CPU); the headline is the largest.", minimum=1, maximum=1024,
              decides_comparability=False),
        # 5: with fewer, a comparison's Mann-Whitney test cannot reach p < 0.05 (3 vs 3: p >= 0.1)
        Param("repeats", "int", 5, "Timed repeats per worker count.", minimum=1, maximum=100,
              decides_comparability=False),
        Param("repeat_s", "float", 0.5, "Approximate duration of one timed repeat.", minimum=0.01, maximum=60,
              unit="s", decides_comparability=False),
    ),
    run=run,
    version="1",
    availability=_availability,
)
