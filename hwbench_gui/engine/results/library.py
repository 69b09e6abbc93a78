"""The results library: find, check, list, import, export and delete result documents.

Documents are read with :func:`load_document`: a regular file only, a bounded read, then every
field any reader uses checked (:mod:`.document_check`), so a foreign or damaged file is
refused with a reason instead of breaking a comparison, a chart or the Reports tab later. Files
are only ever parsed as JSON: nothing in them is executed, and no path
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
from hwbench_gui.engine.shown_text import escape, escape_all, json_may_hide
from hwbench_gui.engine.results import document_check
from hwbench_gui.engine.results.describe import PUBLISHED
from hwbench_gui.engine.results.store import (
    ResultFileError,
    check_writable,
    parse_result,
    read_document_text,
    results_dir,
    write_result,
)
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

def check_document(doc: dict[str, Any], path: str | os.PathLike, raw_text: str | None = None) -> None:
    """Raise :class:`ResultFileError` when ``doc`` has a field of the wrong shape for any reader
    (:mod:`.document_check` lists them) or an unknown status or provenance."""
    found = document_check.problem(doc, raw_text)
    if found:
        raise ResultFileError(path, found)
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
    if status in ("ok", PUBLISHED) and (figure is None or figure.get("value") is None):
        raise ResultFileError(path, f"a {status} document without a figure value")


def load_document(path: str | os.PathLike) -> dict[str, Any]:
    """One checked document (with ``_path``); raises :class:`ResultFileError` with the reason.

    The one load every reader uses: a regular file only, read with a bound
    (:func:`store.read_document_text`), parsed (NaN, infinities and numbers beyond float range
    refused), then checked field by field. Its text comes back with control, zero-width and bidi
    characters written as escapes (:func:`hwbench_gui.engine.shown_text.escape`), so the terminal,
    the GUI, the HTML and the CSV show what is really there.
    """
    path = Path(path)
    text = read_document_text(path)
    doc = parse_result(text, path)
    check_document(doc, path, text)
    doc = {k: v for k, v in doc.items() if k != "_path"}
    if json_may_hide(text):
        doc = escape_all(doc)  # what every view shows, escaped once
    doc["_path"] = str(path)
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
    file are loaded once. Documents come back in the order of ``sources`` (the first one given is
    the first side of a comparison, its default baseline), each source's oldest first."""
    library = Library([], [])
    seen: set[Path] = set()
    for source in sources:
        found = Library([], [])
        source = Path(source)
        if source.is_dir():
            files = _json_files(source, recursive)
        elif source.exists() or source.is_symlink():
            files = [source]
        else:
            library.errors.append(ResultFileError(source, "no such file or folder"))
            continue
        for path in files:
            real = Path(os.path.realpath(path))  # never raises: a link loop is load_document's to report
            if real in seen:
                continue
            seen.add(real)
            try:
                found.docs.append(load_document(path))
            except ResultFileError as exc:
                found.errors.append(exc)
        found.docs.sort(key=lambda d: (str(d.get("started_at") or ""), d["_path"]))
        library.extend(found)
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
    #: Why the results folder could not be written (nothing was imported), or None.
    write_error: str | None = None
    #: Each source file's own outcome, in order: (file, "imported as NAME" / "already present" / reason).
    outcomes: list[tuple[Path, str]] = field(default_factory=list)


def _known_ids(folder: Path) -> set[str]:
    return {str(d.get("id")) for d in scan([folder], recursive=False).docs if d.get("id")}


def import_documents(sources: Sequence[str | os.PathLike], results_dir: str | os.PathLike) -> ImportReport:
    """Copy every valid document under ``sources`` into ``results_dir``.

    Each file is loaded and checked as every reader does (:func:`load_document`), so what the
    readers would skip is refused here, then written anew from the parsed data (never copied byte
    for byte); a document whose ``id`` is already in the folder counts as a duplicate. A folder that
    cannot be written (read-only, full) stops the import before it starts (``write_error`` says
    why); a file that cannot be written for a reason of its own is skipped with it, and the import
    goes on. Nothing is raised.
    """
    results_dir = Path(results_dir)
    found = scan(sources)
    report = ImportReport(skipped=list(found.errors))
    report.outcomes = [(e.path, e.reason) for e in found.errors]
    if found.docs:
        report.write_error = check_writable(results_dir)
        if report.write_error:
            report.outcomes += [(Path(d["_path"]), "not imported: " + report.write_error) for d in found.docs]
            return report
    known = _known_ids(results_dir)
    for doc in found.docs:
        source = Path(doc["_path"])
        if doc.get("id") and str(doc["id"]) in known:
            report.duplicates.append(source)
            report.outcomes.append((source, "already present"))
            continue
        try:
            written = write_result(doc, results_dir)
        except OSError as exc:
            error = ResultFileError(source, f"cannot be written into {results_dir}: {exc.strerror or exc}")
            report.skipped.append(error)
            report.outcomes.append((source, error.reason))
            continue
        report.imported.append(written)
        report.outcomes.append((source, f"imported as {written.name}"))
        if doc.get("id"):
            known.add(str(doc["id"]))
    return report


class Exported(NamedTuple):
    """Files an export wrote, and the documents it left out because ``dest_dir`` already held them."""

    written: list[Path]
    already_present: list[dict[str, Any]]


def export_documents(docs: Sequence[dict[str, Any]], dest_dir: str | os.PathLike) -> Exported:
    """Write ``docs`` into ``dest_dir`` (created if missing), one file each. A document whose ``id``
    the folder already holds (an export into the results folder itself, or the same selection
    exported twice) is not written again. Raises ``OSError`` when the folder cannot be written."""
    dest = Path(dest_dir)
    known = _known_ids(dest) if dest.is_dir() else set()
    written, present = [], []
    for doc in docs:
        doc_id = str(doc.get("id") or "")
        if doc_id and doc_id in known:
            present.append(doc)
            continue
        written.append(write_result(doc, dest))
        if doc_id:
            known.add(doc_id)
    return Exported(written, present)


@dataclass(frozen=True)
class Trashed:
    original: Path
    trashed: Path


def trash_dir(results_dir: str | os.PathLike) -> Path:
    return Path(results_dir) / TRASH_DIR_NAME


class Moved(NamedTuple):
    """What a move did: each file moved, and each that could not be, with why (nothing is raised)."""

    done: list[Any]
    failed: list[ResultFileError]


def _move_reason(exc: OSError) -> str:
    if isinstance(exc, FileNotFoundError):
        return "is gone already (deleted or moved by another window or program)"
    return f"cannot be moved: {exc.strerror or exc}"


def delete_to_trash(files: Sequence[str | os.PathLike], results_dir: str | os.PathLike) -> Moved:
    """Move ``files`` into ``<results_dir>/.trash`` (listing skips it); :func:`restore` undoes it.

    ``done`` holds a :class:`Trashed` per file moved; a file already gone, or a folder that cannot
    be written (read-only, full), lands in ``failed`` with the reason, and the others still move."""
    trash = trash_dir(results_dir)
    try:
        trash.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        reason = f"cannot be moved to the trash ({trash}): {exc.strerror or exc}"
        return Moved([], [ResultFileError(file, reason) for file in files])
    moved, failed = [], []
    for file in files:
        file = Path(file)
        target = trash / file.name
        suffix = 1
        while target.exists():
            target = trash / f"{file.stem}~{suffix}{file.suffix}"
            suffix += 1
        try:
            os.rename(file, target)  # the trash is in the same folder: a rename, never a copy
        except OSError as exc:
            failed.append(ResultFileError(file, _move_reason(exc)))
            continue
        moved.append(Trashed(file, target))
    return Moved(moved, failed)


def restore(trashed: Sequence[Trashed]) -> Moved:
    """Move trashed files back where they were (a file now in the way is kept: the restored one
    gets a ``~N`` suffix). ``done`` holds the restored paths; a trashed file gone meanwhile, or a
    folder that cannot be written, lands in ``failed`` with the reason."""
    restored, failed = [], []
    for item in trashed:
        target = item.original
        suffix = 1
        while target.exists():
            target = item.original.with_name(f"{item.original.stem}~{suffix}{item.original.suffix}")
            suffix += 1
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(str(item.trashed), str(target))
        except OSError as exc:
            failed.append(ResultFileError(item.trashed, _move_reason(exc)))
            continue
        restored.append(target)
    return Moved(restored, failed)


def errors_text(errors: Sequence[ResultFileError]) -> list[str]:
    """One line per skipped file: ``name: reason``."""
    return [escape(f"{e.path.name}: {e.reason}") for e in errors]


def dumps(doc: dict[str, Any]) -> str:
    """A document as JSON text without the keys hwbench adds when loading (``_path``)."""
    return json.dumps({k: v for k, v in doc.items() if not str(k).startswith("_")}, indent=2, ensure_ascii=False)
