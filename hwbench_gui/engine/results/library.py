"""The results library: find, check, list, import, export and delete result documents.

Documents are read with :func:`hwbench_gui.engine.results.store.load_result` and then checked
field by field here, so a foreign or damaged file is refused with a reason instead of breaking a
comparison later. Files are only ever parsed as JSON: nothing in them is executed, and no path
written inside a document is opened (the ``_path`` key is set from where the file really was).

:func:`list_results` is the one listing of a results folder: the Benchmarks tab, the Reports tab
and the CLI see the same documents, checked the same way (:func:`check_document`). What a document
says about itself in words (machine, GPUs, row of the table) is in
:mod:`hwbench_gui.engine.results.describe`.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, NamedTuple, Sequence

from hwbench_gui.engine import paths
from hwbench_gui.engine.results.describe import PUBLISHED, is_number
from hwbench_gui.engine.results.store import ResultFileError, load_result, results_dir, write_result

#: Bigger files are refused unread: a real document is tens of kilobytes.
MAX_FILE_BYTES = 64 * 1024 * 1024
TRASH_DIR_NAME = ".trash"


class Library(NamedTuple):
    """Documents that loaded (each with ``_path``) and the files that were skipped, with reasons.

    A pair, so ``docs, errors = list_results(folder)`` reads both; build an empty one with
    ``Library([], [])`` (each library owns its lists).
    """

    docs: list[dict[str, Any]]
    errors: list[ResultFileError]

    def extend(self, other: "Library") -> None:
        self.docs.extend(other.docs)
        self.errors.extend(other.errors)


def reference_dir() -> Path:
    """The shipped published reference documents."""
    return paths.resources_dir() / "reference"


# -- checking --------------------------------------------------------------------------------------

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
        if value is not None and not is_number(value):
            raise ResultFileError(path, f"figure.value {value!r} is not a finite number")
    if status in ("ok", PUBLISHED) and (figure is None or figure.get("value") is None):
        raise ResultFileError(path, f"a {status} document without a figure value")
    samples = doc.get("samples", [])
    if not isinstance(samples, list) or any(s is not None and not is_number(s) for s in samples):
        raise ResultFileError(path, "samples is not a list of numbers")
    stats = doc.get("stats")
    if stats is not None and (not isinstance(stats, dict) or
                              any(v is not None and not is_number(v) for v in stats.values())):
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
    library = Library([], [])
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


def list_results(directory: str | os.PathLike | None = None, *, include_reference: bool = False) -> Library:
    """The one listing of a results folder (default :func:`store.results_dir`), for every view.

    The folder's own ``*.json`` files (not its sub-folders: the trash is one), each loaded and
    checked by :func:`load_document`; a file that fails is skipped and its reason is in ``errors``.
    Oldest first. With ``include_reference``, the shipped published references follow. A missing
    folder gives an empty library.
    """
    folder = results_dir(directory)
    library = scan([folder], recursive=False) if folder.is_dir() else Library([], [])
    if include_reference and reference_dir().is_dir():
        library.extend(scan([reference_dir()]))
    return library


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
