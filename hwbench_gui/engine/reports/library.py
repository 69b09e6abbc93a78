"""The results library: find, check, describe, import, export and delete result documents.

Documents are read with :func:`hwbench_gui.engine.results.store.load_result` and then checked
field by field here, so a foreign or damaged file is refused with a reason instead of breaking a
comparison later. Files are only ever parsed as JSON: nothing in them is executed, and no path
written inside a document is opened (the ``_path`` key is set from where the file really was).

Published reference figures (``resources/reference/``) are documents with the top-level key
``provenance: "published"``, ``status: "published"`` and a ``reference`` block (source URL, date,
configuration). :func:`is_published` tells them apart everywhere.
"""

from __future__ import annotations

import json
import math
import os
import shutil
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Sequence

from hwbench_gui.engine import paths
from hwbench_gui.engine.results.formatting import format_value  # noqa: F401 (reports' templates use it from here)
from hwbench_gui.engine.results.store import ResultFileError, load_result, write_result

#: Bigger files are refused unread: a real document is tens of kilobytes.
MAX_FILE_BYTES = 64 * 1024 * 1024
TRASH_DIR_NAME = ".trash"
PUBLISHED = "published"


@dataclass
class Library:
    """Documents that loaded (each with ``_path``) and the files that were skipped, with reasons."""

    docs: list[dict[str, Any]] = field(default_factory=list)
    errors: list[ResultFileError] = field(default_factory=list)

    def extend(self, other: "Library") -> None:
        self.docs.extend(other.docs)
        self.errors.extend(other.errors)


def reference_dir() -> Path:
    """The shipped published reference documents."""
    return paths.resources_dir() / "reference"


# -- checking --------------------------------------------------------------------------------------

def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def check_document(doc: dict[str, Any], path: str | os.PathLike) -> None:
    """Raise :class:`ResultFileError` when ``doc`` has fields of the wrong shape for the reports."""
    bench = doc.get("benchmark")
    if not isinstance(bench.get("id"), str) or not bench["id"]:
        raise ResultFileError(path, "not a result document (benchmark.id is missing or not text)")
    if not isinstance(doc.get("params", {}), dict):
        raise ResultFileError(path, "params is not an object")
    status = doc.get("status")
    provenance = doc.get("provenance")
    if provenance not in (None, "measured", PUBLISHED):
        raise ResultFileError(path, f"unknown provenance {provenance!r}")
    allowed = ("published",) if provenance == PUBLISHED else ("ok", "failed", "cancelled")
    if status not in allowed:
        raise ResultFileError(path, f"status {status!r} is not one of {', '.join(allowed)}")
    if provenance == PUBLISHED:
        ref = doc.get("reference")
        if not isinstance(ref, dict) or not isinstance(ref.get("source_url"), str):
            raise ResultFileError(path, "a published document needs reference.source_url")
    figure = doc.get("figure")
    if figure is not None:
        if not isinstance(figure, dict) or not isinstance(figure.get("name", ""), str):
            raise ResultFileError(path, "figure is not an object with a name")
        value = figure.get("value")
        if value is not None and not _is_number(value):
            raise ResultFileError(path, f"figure.value {value!r} is not a finite number")
    if status in ("ok", PUBLISHED) and (figure is None or figure.get("value") is None):
        raise ResultFileError(path, f"a {status} document without a figure value")
    samples = doc.get("samples", [])
    if not isinstance(samples, list) or any(s is not None and not _is_number(s) for s in samples):
        raise ResultFileError(path, "samples is not a list of numbers")
    stats = doc.get("stats")
    if stats is not None and (not isinstance(stats, dict) or
                              any(v is not None and not _is_number(v) for v in stats.values())):
        raise ResultFileError(path, "stats is not an object of numbers")
    for key in ("figures", "inventory", "telemetry", "software"):
        if doc.get(key) is not None and not isinstance(doc[key], dict):
            raise ResultFileError(path, f"{key} is not an object")
    if not isinstance(doc.get("series", []), list):
        raise ResultFileError(path, "series is not a list")


def load_document(path: str | os.PathLike) -> dict[str, Any]:
    """One checked document (with ``_path``); raises :class:`ResultFileError` with the reason."""
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise ResultFileError(path, f"cannot be read: {exc}") from exc
    if size > MAX_FILE_BYTES:
        raise ResultFileError(path, f"too large for a result document ({size} bytes)")
    doc = load_result(path)
    check_document(doc, path)
    return doc


def _json_files(folder: Path, recursive: bool) -> list[Path]:
    found: list[Path] = []
    for root, dirs, files in os.walk(folder, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".")) if recursive else []
        for name in sorted(files):
            candidate = Path(root) / name
            if name.endswith(".json") and not name.startswith(".") and not candidate.is_symlink():
                found.append(candidate)
    return found


def scan(sources: Iterable[str | os.PathLike], *, recursive: bool = True) -> Library:
    """Load every ``*.json`` under the given files and folders (hidden folders such as the trash
    and symbolic links inside folders are skipped). Bad files land in ``errors``; duplicates of one
    file are loaded once. Documents come back oldest first."""
    library = Library()
    seen: set[Path] = set()
    for source in sources:
        source = Path(source)
        if source.is_dir():
            files = _json_files(source, recursive)
        elif source.exists():
            files = [source]
        else:
            library.errors.append(ResultFileError(source, "no such file or folder"))
            continue
        for path in files:
            real = path.resolve()
            if real in seen:
                continue
            seen.add(real)
            try:
                library.docs.append(load_document(path))
            except ResultFileError as exc:
                library.errors.append(exc)
    library.docs.sort(key=lambda d: (str(d.get("started_at") or ""), d["_path"]))
    return library


def load_results_dir(results_dir: str | os.PathLike, *, include_reference: bool = False) -> Library:
    """The results folder (not its sub-folders), plus the shipped references when asked."""
    library = scan([results_dir], recursive=False) if Path(results_dir).is_dir() else Library()
    if include_reference and reference_dir().is_dir():
        library.extend(scan([reference_dir()]))
    return library


# -- describing ------------------------------------------------------------------------------------

def is_published(doc: dict[str, Any]) -> bool:
    return doc.get("provenance") == PUBLISHED


def gpu_summary(doc: dict[str, Any]) -> str:
    """``"2× NVIDIA H200"``, ``"no GPU"``, or ``"unknown GPU"`` when there is no inventory."""
    inventory = doc.get("inventory")
    if not isinstance(inventory, dict):
        return "unknown GPU"
    gpus = inventory.get("gpus")
    if not isinstance(gpus, list) or not gpus:
        return "no GPU"
    names = Counter(str(g.get("name") or "unnamed GPU") if isinstance(g, dict) else "unnamed GPU" for g in gpus)
    return ", ".join(f"{count}× {name}" if count > 1 else name for name, count in names.items())


def cpu_summary(doc: dict[str, Any]) -> str:
    inventory = doc.get("inventory") if isinstance(doc.get("inventory"), dict) else {}
    cpu = inventory.get("cpu") if isinstance(inventory.get("cpu"), dict) else {}
    model = cpu.get("model")
    cores = cpu.get("logical_cores")
    if not model:
        return "unknown CPU"
    return f"{model} ({cores} threads)" if cores else str(model)


def machine_name(doc: dict[str, Any]) -> str:
    """What a comparison calls the machine that produced ``doc``.

    Measured: ``"hostname · GPUs"``, or ``"hostname · CPU model (N threads)"`` without a GPU (host
    names such as "vm" or "localhost" alone do not tell machines apart). Published:
    ``"publisher · GPUs (published)"``, so a published figure never shares a side with a measured one.
    """
    if is_published(doc):
        ref = doc.get("reference") or {}
        system = ref.get("system") or gpu_summary(doc)
        return f"{ref.get('publisher') or 'unknown publisher'} · {system} (published)"
    hostname = doc.get("hostname") or (doc.get("inventory") or {}).get("hostname") or "unknown host"
    gpus = gpu_summary(doc)
    return f"{hostname} · {cpu_summary(doc) if gpus == 'no GPU' else gpus}"


def params_text(params: dict[str, Any] | None) -> str:
    if not params:
        return ""
    return ", ".join(f"{k}={_param_value(v)}" for k, v in params.items())


def _param_value(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return "''" if value == "" else str(value)


def started(doc: dict[str, Any]) -> datetime | None:
    try:
        when = datetime.fromisoformat(str(doc.get("started_at")))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def date_text(doc: dict[str, Any]) -> str:
    if is_published(doc):
        return str((doc.get("reference") or {}).get("published") or "")
    when = started(doc)
    return when.astimezone().strftime("%Y-%m-%d %H:%M") if when else ""


#: Columns of :func:`row`, in the order the library table shows them.
ROW_COLUMNS = ("machine", "gpu", "benchmark", "parameters", "precision", "figure", "status", "date")


def row(doc: dict[str, Any]) -> dict[str, str]:
    """The library table's text for one document (keys: :data:`ROW_COLUMNS`)."""
    figure = doc.get("figure") or {}
    if figure.get("value") is not None:
        figure_text = f"{figure.get('name', '')}: {format_value(figure['value'], figure.get('unit', ''))}"
    else:
        figure_text = doc.get("reason") or ""
    bench = doc.get("benchmark") or {}
    return {
        "machine": machine_name(doc),
        "gpu": gpu_summary(doc),
        "benchmark": str(bench.get("id") or ""),
        "parameters": params_text(doc.get("params")),
        "precision": str(doc.get("precision") or ""),
        "figure": figure_text,
        "status": str(doc.get("status") or ""),
        "date": date_text(doc),
    }


def matches(doc: dict[str, Any], text: str) -> bool:
    """Case-insensitive: every word of ``text`` occurs somewhere in the document's row."""
    haystack = " ".join(row(doc).values()).lower()
    return all(word in haystack for word in text.lower().split())


# -- import, export, delete ------------------------------------------------------------------------

@dataclass
class ImportReport:
    imported: list[Path] = field(default_factory=list)
    duplicates: list[Path] = field(default_factory=list)
    skipped: list[ResultFileError] = field(default_factory=list)
    #: Why the results folder could not be written (the import stopped there), or None.
    write_error: str | None = None


def _known_ids(folder: Path) -> set[str]:
    return {str(d.get("id")) for d in scan([folder], recursive=False).docs if d.get("id")}


def import_documents(sources: Sequence[str | os.PathLike], results_dir: str | os.PathLike) -> ImportReport:
    """Copy every valid document under ``sources`` into ``results_dir``.

    Each file is parsed and checked, then written anew from the parsed data (never copied byte
    for byte); a document whose ``id`` is already in the folder counts as a duplicate. A folder that
    cannot be written (read-only, full) stops the import: ``write_error`` says why, nothing is raised.
    """
    results_dir = Path(results_dir)
    found = scan(sources)
    report = ImportReport(skipped=list(found.errors))
    known = _known_ids(results_dir)
    for doc in found.docs:
        if doc.get("id") and str(doc["id"]) in known:
            report.duplicates.append(Path(doc["_path"]))
            continue
        try:
            report.imported.append(write_result(doc, results_dir))
        except OSError as exc:
            report.write_error = f"cannot write into {results_dir}: {exc.strerror or exc}"
            break
        if doc.get("id"):
            known.add(str(doc["id"]))
    return report


def export_documents(docs: Sequence[dict[str, Any]], dest_dir: str | os.PathLike) -> list[Path]:
    """Write ``docs`` into ``dest_dir`` (created if missing), one file each; returns the files."""
    return [write_result(doc, dest_dir) for doc in docs]


@dataclass(frozen=True)
class Trashed:
    original: Path
    trashed: Path


def trash_dir(results_dir: str | os.PathLike) -> Path:
    return Path(results_dir) / TRASH_DIR_NAME


def delete_to_trash(files: Sequence[str | os.PathLike], results_dir: str | os.PathLike) -> list[Trashed]:
    """Move ``files`` into ``<results_dir>/.trash`` (listing skips it); :func:`restore` undoes it."""
    trash = trash_dir(results_dir)
    trash.mkdir(parents=True, exist_ok=True)
    moved = []
    for file in files:
        file = Path(file)
        target = trash / file.name
        suffix = 1
        while target.exists():
            target = trash / f"{file.stem}~{suffix}{file.suffix}"
            suffix += 1
        shutil.move(str(file), str(target))
        moved.append(Trashed(file, target))
    return moved


def restore(trashed: Sequence[Trashed]) -> list[Path]:
    """Move trashed files back where they were (a file now in the way is kept: the restored one
    gets a ``~N`` suffix)."""
    restored = []
    for item in trashed:
        target = item.original
        suffix = 1
        while target.exists():
            target = item.original.with_name(f"{item.original.stem}~{suffix}{item.original.suffix}")
            suffix += 1
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(item.trashed), str(target))
        restored.append(target)
    return restored


def errors_text(errors: Sequence[ResultFileError]) -> list[str]:
    """One line per skipped file: ``name: reason``."""
    return [f"{e.path.name}: {e.reason}" for e in errors]


def dumps(doc: dict[str, Any]) -> str:
    """A document as JSON text without the keys hwbench adds when loading (``_path``)."""
    return json.dumps({k: v for k, v in doc.items() if not str(k).startswith("_")}, indent=2, ensure_ascii=False)
