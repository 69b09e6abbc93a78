"""What tells this machine from another of the same name: the board's identity and the OS install's.

Host names such as "vm" or "localhost" are shared by many machines, and identical cloud instances share
their hardware model too. The board's serial or the system UUID (DMI, readable by root on most Linux
systems) and systemd's machine id (``/etc/machine-id``, readable by everyone, made at install) are
unique to a machine. Documents are shared with others, so only a digest of each is kept: enough to tell
two machines apart, nothing that names the hardware.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from hwbench_gui.engine.inventory.fields import new_section

#: Where the board's identity is read, best first; a value made of one repeated digit or "To Be Filled"
#: placeholders identifies nothing.
DMI_FILES = ("/sys/class/dmi/id/product_uuid", "/sys/class/dmi/id/board_serial", "/sys/class/dmi/id/product_serial")
MACHINE_ID_FILES = ("/etc/machine-id", "/var/lib/dbus/machine-id")
_PLACEHOLDERS = ("to be filled", "default string", "not specified", "none", "system serial number", "0123456789")
MAX_ID_BYTES = 256


def digest(text: str) -> str:
    """The first 16 hex digits of the SHA-256 of ``text``: a stable identity that reveals nothing."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _read_id(paths: tuple[str, ...]) -> tuple[str | None, str | None]:
    """(digest of the first meaningful id in ``paths``, why none was read)."""
    reasons = []
    for name in paths:
        path = Path(name)
        try:
            if not path.is_file():
                reasons.append(f"{name} does not exist")
                continue
            with path.open("rb") as handle:
                text = handle.read(MAX_ID_BYTES).decode("ascii", "replace").strip()
        except OSError as exc:
            reasons.append(f"{name}: {exc.strerror or exc}")
            continue
        plain = text.replace("-", "").lower()
        if not plain or len(set(plain)) == 1 or text.lower() in _PLACEHOLDERS:
            reasons.append(f"{name} holds no identity ({text!r})")
            continue
        return digest(text), None
    return None, "; ".join(reasons)


def collect(dmi_files: tuple[str, ...] = DMI_FILES, machine_id_files: tuple[str, ...] = MACHINE_ID_FILES
            ) -> dict[str, Any]:
    """``{"board_id", "machine_id", "reasons", "warnings"}``: digests, None where unreadable (reason kept)."""
    section = new_section()
    for key, paths in (("board_id", dmi_files), ("machine_id", machine_id_files)):
        section[key], reason = _read_id(paths)
        if reason:
            section["reasons"][key] = reason
    return section
