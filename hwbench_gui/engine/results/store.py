"""Result files on disk: atomic writes and loading with validation (listing a folder, with the
full check of each document, is :func:`hwbench_gui.engine.results.library.list_results`).

A result is one JSON file named ``<UTC start, 2026-12-02T12-34-56>_<benchmark id>_<8 hex>.json``.
Writes go to a temporary file in the same folder, are fsynced, then renamed over the final name,
so a reader never sees half a document.

A document keeps its inputs' names exact: a file name that is not UTF-8 reaches Python with each
undecodable byte as a lone surrogate (``os.fsdecode``: byte 0xff is ``"\\udcff"``), written in the file as
the JSON escape ``\\udcff``, which reads back as the same text (and ``os.fsencode`` gives the same bytes).

Loaded documents get one extra key, ``_path`` (the file they came from, as a string); keys that
start with ``_`` are never written.
"""

from __future__ import annotations

import json
import os
import math
import re
from datetime import datetime
from pathlib import Path
from typing import Any

from hwbench_gui.engine import paths
from hwbench_gui.engine.atomic import remove_stale_temporaries, write_atomic
from hwbench_gui.engine.foreign import ForeignFileError, read_regular
from hwbench_gui.engine.results.document import SCHEMA_VERSION

#: Deepest nesting of lists and objects a loaded document may have (a real one has under ten).
MAX_NESTING = 64
#: Bigger files are refused: a real document is tens of kilobytes (the largest shipped one, 47 kB).
MAX_FILE_BYTES = 8 * 1024 * 1024
#: Integers with more digits are refused unread; float's range ends at about 1.8e308 (309 digits).
MAX_INT_DIGITS = 309

class ResultFileError(Exception):
    """A result file that cannot be used; ``path`` and ``reason`` say which and why."""

    def __init__(self, path: str | os.PathLike, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path = Path(path)
        self.reason = reason


def results_dir(override: str | os.PathLike | None = None) -> Path:
    """Where results go: ``override``, else ``$HWBENCH_RESULTS_DIR``, else the user data folder."""
    return paths.results_dir(override)


def result_file_name(doc: dict[str, Any]) -> str:
    """``2026-12-02T12-34-56_gpu.matmul_1a2b3c4d.json`` from the document's start time, id and run id."""
    try:
        started = datetime.fromisoformat(str(doc.get("started_at")))
        stamp = started.strftime("%Y-%m-%dT%H-%M-%S")
    except ValueError:
        stamp = "unknown-time"
    bench_id = re.sub(r"[^A-Za-z0-9._-]+", "-", str((doc.get("benchmark") or {}).get("id") or "unknown"))
    short = re.sub(r"[^A-Za-z0-9]+", "", str(doc.get("id") or ""))[:8] or "noid"
    return f"{stamp}_{bench_id}_{short}.json"


def write_result(doc: dict[str, Any], directory: str | os.PathLike | None = None) -> Path:
    """Write ``doc`` atomically into ``directory`` (default :func:`results_dir`); returns the path.

    Raises ``OSError`` when the folder cannot be written; the folder is created if missing.
    """
    folder = results_dir(directory)
    folder.mkdir(parents=True, exist_ok=True)
    text = document_text(doc)
    target = folder / result_file_name(doc)
    suffix = 1
    while target.exists():  # same second, same benchmark, same short id: practically never
        target = folder / f"{target.stem.rsplit('~', 1)[0]}~{suffix}.json"
        suffix += 1
    write_atomic(target, text)
    _fsync_dir(folder)
    remove_stale_temporaries(folder)  # what a save killed mid-write left (hidden, so never listed)
    return target


def check_writable(directory: str | os.PathLike | None = None) -> str | None:
    """Why results cannot be written into ``directory`` (default :func:`results_dir`), or None.

    A real probe: the folder is created if missing and a small file is written, fsynced and removed,
    so a read-only mount, missing permissions, a full disk or a path under a regular file all show.
    """
    folder = results_dir(directory)
    probe = folder / f".hwbench-write-probe-{os.getpid()}.tmp"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with open(probe, "wb") as handle:
            handle.write(b"x" * 4096)
            handle.flush()
            os.fsync(handle.fileno())
    except OSError as exc:
        return f"{folder} cannot be written: {exc.strerror or exc}"
    finally:
        try:
            probe.unlink()
        except OSError:
            pass
    return None


def write_result_file(doc: dict[str, Any], path: str | os.PathLike) -> Path:
    """Write ``doc`` atomically to the file ``path`` (a "Save as" of a result); raises ``OSError``."""
    return write_atomic(Path(path), document_text(doc))


#: A lone surrogate: text that cannot be written as UTF-8 (a file name's undecodable byte, as os.fsdecode
#: gives it); only ever inside a JSON string, where its escape means the same.
_SURROGATE = re.compile("[\ud800-\udfff]")


def document_text(doc: dict[str, Any]) -> str:
    """``doc`` as the JSON a result file holds (keys starting with ``_`` left out): UTF-8 text whatever
    names it holds, lone surrogates written as their ``\\uXXXX`` escapes. ``ValueError`` for NaN or an
    infinity, which no reader accepts."""
    clean = {k: v for k, v in doc.items() if not str(k).startswith("_")}
    text = json.dumps(clean, indent=2, allow_nan=False, ensure_ascii=False) + "\n"
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _fsync_dir(folder: Path) -> None:
    # Makes the rename itself durable on POSIX; Windows cannot open a folder this way.
    if os.name != "posix":
        return
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def load_result(path: str | os.PathLike) -> dict[str, Any]:
    """The document in ``path``, with ``_path`` added.

    Raises :class:`ResultFileError` when the file cannot be read, is not JSON, is not a JSON
    object, has no integer ``schema_version``, or comes from a newer hwbench (higher version).
    """
    path = Path(path)
    return parse_result(read_document_text(path), path)


def parse_result(text: str, path: str | os.PathLike) -> dict[str, Any]:
    """:func:`load_result` on text already read from ``path``."""
    path = Path(path)
    try:
        doc = json.loads(text, parse_constant=_refuse_constant, parse_int=_finite_int, parse_float=_finite_float)
    except _NotFinite as exc:
        raise ResultFileError(path, str(exc)) from None
    except ValueError as exc:
        raise ResultFileError(path, f"not valid JSON: {exc}") from exc
    except RecursionError:  # a hostile file such as 100 000 '[': the parser's stack runs out
        raise ResultFileError(path, "not a result document (JSON nested too deeply)") from None
    if _nested_deeper_than(doc, MAX_NESTING):  # would break json.dumps and the reports later
        raise ResultFileError(path, f"not a result document (JSON nested too deeply: over {MAX_NESTING} levels)")
    if not isinstance(doc, dict):
        raise ResultFileError(path, "not a result document (the JSON is not an object)")
    version = doc.get("schema_version")
    if version is None:
        raise ResultFileError(path, "not a result document (no schema_version)")
    if isinstance(version, bool) or not isinstance(version, int):
        raise ResultFileError(path, f"schema_version {version!r} is not an integer")
    if version > SCHEMA_VERSION:
        raise ResultFileError(path, f"written by a newer hwbench (schema {version}; this one reads up to "
                                    f"{SCHEMA_VERSION})")
    if not isinstance(doc.get("benchmark"), dict) or "status" not in doc:
        raise ResultFileError(path, "not a result document (no benchmark or status)")
    doc["_path"] = str(path)
    return doc


class _NotFinite(ValueError):
    """A number no reader can use: NaN, an infinity, or one beyond float range."""


def _refuse_constant(name: str) -> float:
    raise _NotFinite(f"not a result document ({name} is not a finite number)")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e400 parses as inf
        raise _NotFinite(f"not a result document ({text[:40]} is beyond the range of a number)")
    return value


def _finite_int(text: str) -> int:
    # Refused here, not by the first float() of a reader (10**400 crashed compare and the GUI library).
    digits = len(text.lstrip("-"))
    try:
        if digits > MAX_INT_DIGITS:
            raise OverflowError
        value = int(text)
        float(value)
    except OverflowError:
        raise _NotFinite(f"not a result document (an integer of {digits} digits is beyond the range of a "
                         "number)") from None
    return value


def read_document_text(path: str | os.PathLike, max_bytes: int = MAX_FILE_BYTES) -> str:
    """The text of ``path`` if it is a regular file of at most ``max_bytes``, read with a bound
    (:func:`hwbench_gui.engine.foreign.read_regular`: a FIFO, a device, a folder or a link to one
    named ``*.json`` is refused, not read)."""
    path = Path(path)
    try:
        data = read_regular(path, max_bytes, "a result document")
    except ForeignFileError as exc:
        raise ResultFileError(path, exc.reason) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ResultFileError(path, f"cannot be read: {exc}") from exc


def _nested_deeper_than(value: Any, limit: int) -> bool:
    """Whether lists/objects in ``value`` nest more than ``limit`` levels (walked without recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        for child in children:
            if isinstance(child, (dict, list)):
                if depth + 1 > limit:
                    return True
                stack.append((child, depth + 1))
    return False

