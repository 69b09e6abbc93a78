"""The telemetry CSV: ``timestamp`` (Unix seconds) then one column per metric, empty where N/A.

Written row by row and flushed, so a run that is killed leaves every sample taken so far.
"""

from __future__ import annotations

import csv
import math
import os
from pathlib import Path
from typing import IO, Iterable, Sequence

import numpy as np

from hwbench_gui.engine.atomic import atomic_open
from hwbench_gui.engine.csv_cells import safe_cell


def format_value(value: float | str | None) -> str:
    """Empty for None/NaN; integers without a decimal point; others with up to 10 significant digits;
    text as it is, quoted where a spreadsheet would run it as a formula."""
    if value is None:
        return ""
    if isinstance(value, str):
        return safe_cell(value)
    value = float(value)
    if math.isnan(value):
        return ""
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.10g}"


class CsvRowWriter:
    """Streams samples to an open text file (``newline=""``), flushing after every row."""

    def __init__(self, fh: IO[str], metric_names: Sequence[str]):
        self._fh = fh
        self._names = list(metric_names)
        self._writer = csv.writer(fh, lineterminator="\n")
        self._writer.writerow(["timestamp", *(safe_cell(str(name)) for name in self._names)])
        fh.flush()

    def write_sample(self, sample: dict) -> None:
        """Write a sample dict as produced by the sampler (``timestamp`` + metric keys)."""
        self._writer.writerow(
            [f"{sample['timestamp']:.3f}", *(format_value(sample.get(n)) for n in self._names)]
        )
        self._fh.flush()

    def write_rows(self, timestamps: np.ndarray, columns: Iterable[np.ndarray]) -> None:
        """Write many rows at once from a timestamp vector and per-metric value vectors."""
        cols = list(columns)
        for j, t in enumerate(timestamps):
            self._writer.writerow([f"{t:.3f}", *(format_value(c[j]) for c in cols)])
        self._fh.flush()


def write_history_csv(path: str | os.PathLike, timestamps: np.ndarray, values: dict[str, np.ndarray]) -> Path:
    """Write a whole history atomically (temp file in the same folder, then rename)."""
    path = Path(path)
    with atomic_open(path, newline="") as fh:
        CsvRowWriter(fh, list(values)).write_rows(timestamps, values.values())
    return path


def read_csv(path: str | os.PathLike) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Read a telemetry CSV back: ``(timestamps, {metric: values with NaN for empty cells})``.

    A truncated last line (a killed writer) is skipped.
    """
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.reader(fh)
        try:
            header = next(reader)
        except StopIteration:
            raise ValueError(f"{path}: empty file") from None
        if not header or header[0] != "timestamp":
            raise ValueError(f"{path}: first column must be 'timestamp', found {header[:1]}")
        rows = [r for r in reader if len(r) == len(header)]
    data = np.full((len(rows), len(header)), np.nan)
    for i, row in enumerate(rows):
        for j, cell in enumerate(row):
            if cell != "":
                try:
                    data[i, j] = float(cell)
                except ValueError:
                    pass  # a cut-off number in the last row: keep NaN
    keep = ~np.isnan(data[:, 0]) if len(rows) else np.zeros(0, bool)
    data = data[keep]
    return data[:, 0].copy(), {name: data[:, j].copy() for j, name in enumerate(header[1:], start=1)}
