"""Files hwbench did not write (datasets, videos, images, keypoints, weights, checkpoints, documents):
regular files only, their size bounded before anything is read, and images' pixel counts bounded
before anything is decoded.

Every refusal is a :class:`ForeignFileError` whose message is one line naming the file (escaped: a name
that is not UTF-8 or holds a line break still makes one printable line) and the reason.
A FIFO, a device or a link to one is refused without reading (its size reads 0 and a read of it
never ends or never stops); the file is opened without blocking and checked on the open file, so
a name swapped for a pipe between a check and the open cannot slip through.
"""

from __future__ import annotations

import errno
import io
import itertools
import json
import os
import re
import stat
import warnings
from pathlib import Path
from typing import Any

from hwbench_gui.engine.shown_text import shown_path

#: Decoded pixels one image may have. 120 megapixels passes a medium-format photo (100 MP, 360 MB
#: as RGB) and refuses a small file whose header claims 20000×20000 (400 MP, 1.2 GB as RGB).
MAX_IMAGE_PIXELS = 120_000_000


#: A bigger file is not one image (a 100-megapixel camera JPEG is about 50 MB): refused unread.
MAX_IMAGE_FILE_BYTES = 64 << 20

#: Deepest nesting of lists and objects a foreign JSON file may have: configs and documents nest under
#: ten; thousands of '[' would exhaust the parser's stack.
MAX_JSON_DEPTH = 64
#: An integer in a foreign JSON file with more digits is refused unparsed (Python refuses over 4300, with
#: a message about its own limit; no size any reader uses has more than 20).
MAX_JSON_INT_DIGITS = 100


class ForeignFileError(Exception):
    """A file hwbench will not use; ``path`` and ``reason`` say which and why (one line)."""

    def __init__(self, path: str | os.PathLike, reason: str):
        super().__init__(f"{shown_path(path)}: {reason}")
        self.path = Path(os.fsdecode(path))
        self.reason = reason


def _reason(exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "cannot be read: a loop of symbolic links"
    return f"cannot be read: {exc.strerror or exc}"


def _open_regular(path: Path, what: str) -> tuple[int, int]:
    """(an fd opened read-only without blocking, the file's size); the fd is closed on refusal.
    Links are followed (a Hugging Face cache links each file to its blob); what they end at is checked."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        raise ForeignFileError(path, _reason(exc)) from None
    try:
        info = os.fstat(fd)
    except OSError as exc:
        os.close(fd)
        raise ForeignFileError(path, _reason(exc)) from None
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        kind = "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file (a pipe, device or socket)"
        raise ForeignFileError(path, f"{kind}: not read as {what}")
    return fd, info.st_size


def check_regular(path: str | os.PathLike, max_bytes: int, what: str = "a file") -> int:
    """The size of ``path`` if it is a regular file of at most ``max_bytes`` (for readers that open
    the path themselves, such as a video decoder); :class:`ForeignFileError` otherwise."""
    path = Path(path)
    fd, size = _open_regular(path, what)
    os.close(fd)
    _check_size(path, size, max_bytes, what)
    return size


def open_regular(path: str | os.PathLike, max_bytes: int, what: str = "a file") -> io.BufferedReader:
    """``path`` opened for binary reading if it is a regular file of at most ``max_bytes`` (for readers
    that read in parts, such as a weights file); :class:`ForeignFileError` otherwise."""
    path = Path(path)
    fd, size = _open_regular(path, what)
    try:
        _check_size(path, size, max_bytes, what)
    except ForeignFileError:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def read_regular(path: str | os.PathLike, max_bytes: int, what: str = "a file") -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``max_bytes``, read with that bound
    (a file that grows while it is read is refused too); :class:`ForeignFileError` otherwise."""
    path = Path(path)
    fd, size = _open_regular(path, what)
    with os.fdopen(fd, "rb") as handle:
        _check_size(path, size, max_bytes, what)
        try:
            data = handle.read(max_bytes + 1)
        except OSError as exc:
            raise ForeignFileError(path, _reason(exc)) from None
    _check_size(path, len(data), max_bytes, what)
    return data


def read_json(path: str | os.PathLike, max_bytes: int, what: str = "a JSON file",
              max_depth: int = MAX_JSON_DEPTH) -> Any:
    """The JSON value in ``path``: a regular file of at most ``max_bytes`` (:func:`read_regular`), its
    nesting (at most ``max_depth``) counted before it is parsed, UTF-8, integers of at most
    :data:`MAX_JSON_INT_DIGITS` digits; :class:`ForeignFileError` naming the file otherwise. NaN and
    infinities parse as floats: the reader that knows the field refuses them by name."""
    path = Path(path)
    data = read_regular(path, max_bytes, what)
    depth = json_depth(data)
    if depth > max_depth:
        raise ForeignFileError(path, f"JSON nested {depth} levels deep (at most {max_depth}): not read as {what}")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ForeignFileError(path, f"not UTF-8 text (byte {exc.start}): not read as {what}") from None
    try:
        return json.loads(text, parse_int=_bounded_int)
    except ValueError as exc:
        raise ForeignFileError(path, f"not valid JSON ({exc}): not read as {what}") from None


def _bounded_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_JSON_INT_DIGITS:
        raise ValueError(f"an integer of {digits} digits")
    return int(text)


#: A JSON string (escapes included): its brackets are text, not nesting.
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


def json_depth(data: bytes) -> int:
    """How deep the lists and objects of the JSON text ``data`` nest, counted without parsing it."""
    brackets = _JSON_STRING.sub(b"", data).translate(None, _NOT_BRACKETS)
    if not brackets:
        return 0
    return max(0, max(itertools.accumulate(1 if b in b"[{" else -1 for b in brackets)))


def _check_size(path: Path, size: int, max_bytes: int, what: str) -> None:
    if size > max_bytes:
        raise ForeignFileError(path, f"too large for {what} ({size:,} bytes; at most {max_bytes:,})")


def image_size(data: bytes, path: str | os.PathLike, max_pixels: int = MAX_IMAGE_PIXELS) -> tuple[int, int]:
    """(width, height) from an image file's header, read before any pixel is decoded;
    :class:`ForeignFileError` when it is not an image PIL knows or it has more than ``max_pixels``."""
    from PIL import Image, UnidentifiedImageError

    if not data:
        raise ForeignFileError(path, "empty file: not an image")
    try:
        with warnings.catch_warnings():  # PIL warns above 89 MP; the limit that decides is ours
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as image:  # reads the header only
                width, height = image.size
    except Image.DecompressionBombError as exc:  # PIL's own limit (above ours), checked on the header too
        claimed = re.search(r"\((\d+) pixels\)", str(exc))
        size = f"{int(claimed.group(1)) / 1e6:.0f} megapixels" if claimed else "more pixels than PIL decodes"
        raise ForeignFileError(path, f"an image of {size} (at most {max_pixels / 1e6:.0f} are decoded)") from None
    except UnidentifiedImageError:
        raise ForeignFileError(path, "not an image (no image format PIL reads)") from None
    except (OSError, ValueError, SyntaxError) as exc:
        raise ForeignFileError(path, f"not an image ({str(exc).splitlines()[0] if str(exc) else 'unknown format'})") \
            from None
    check_pixels(width, height, path, max_pixels)
    return width, height


def check_pixels(width: int, height: int, path: str | os.PathLike, max_pixels: int = MAX_IMAGE_PIXELS) -> None:
    """:class:`ForeignFileError` unless ``width`` × ``height`` is between 1 and ``max_pixels``."""
    if width < 1 or height < 1:
        raise ForeignFileError(path, f"an image of {width}×{height} pixels")
    if width * height > max_pixels:
        raise ForeignFileError(path, f"an image of {width}×{height} pixels ({width * height / 1e6:.0f} megapixels; "
                                     f"at most {max_pixels / 1e6:.0f} are decoded)")
