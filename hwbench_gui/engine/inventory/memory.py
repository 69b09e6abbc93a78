"""System memory: totals from psutil; DIMM type, speed and channels from ``dmidecode -t memory``.

dmidecode needs root to read the SMBIOS tables; without it (or without dmidecode) the DIMM fields
are ``None`` and ``reasons`` says exactly which of the two was missing.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from typing import Any

import psutil

from hwbench_gui.engine.inventory.fields import new_section, put

_DIMM_FIELDS = ("dimm_type", "speed_mts", "configured_speed_mts", "dimms_populated", "slots_total", "channels",
                "modules")


def parse_dmidecode_memory(text: str) -> list[dict[str, Any]]:
    """The "Memory Device" blocks of ``dmidecode -t memory`` output, one dict per slot."""
    devices = []
    for block in re.split(r"\n(?=Handle )", text):
        if "\nMemory Device" not in block:
            continue
        fields: dict[str, str] = {}
        for line in block.splitlines():
            if line.startswith("\t") and not line.startswith("\t\t") and ":" in line:
                key, _, value = line.strip().partition(":")
                fields[key.strip()] = value.strip()
        devices.append({
            "locator": fields.get("Locator"),
            "bank_locator": fields.get("Bank Locator"),
            "size_bytes": _size_bytes(fields.get("Size")),
            "type": _known(fields.get("Type")),
            "speed_mts": _speed(fields.get("Speed")),
            "configured_speed_mts": _speed(fields.get("Configured Memory Speed")
                                           or fields.get("Configured Clock Speed")),
            "manufacturer": _known(fields.get("Manufacturer")),
            "part_number": _known(fields.get("Part Number")),
            "rank": _known(fields.get("Rank")),
        })
    return devices


def _known(value: str | None) -> str | None:
    if not value or value.lower() in ("unknown", "not specified", "none", "other", "<out of spec>"):
        return None
    return value


def _size_bytes(value: str | None) -> int | None:
    match = re.fullmatch(r"(\d+)\s*(kB|KB|MB|GB|TB)", (value or "").strip())
    if not match:
        return None  # "No Module Installed", "Unknown"
    scale = {"kB": 1024, "KB": 1024, "MB": 1024**2, "GB": 1024**3, "TB": 1024**4}[match.group(2)]
    return int(match.group(1)) * scale


def _speed(value: str | None) -> int | None:
    # Newer dmidecode prints MT/s; older ones printed the same number as "MHz".
    match = re.match(r"(\d+)\s*(MT/s|MHz)", (value or "").strip())
    return int(match.group(1)) if match else None


def channels_from_locators(modules: list[dict[str, Any]]) -> int | None:
    """Distinct memory channels among populated DIMMs, when the board names them ("CHANNEL A", "ChannelB",
    "DIMM_A1"/"DIMM_B1", "P0_Node0_Channel2_Dimm0"); ``None`` when the locators do not say."""
    channels = set()
    for module in modules:
        text = " ".join(filter(None, (module.get("bank_locator"), module.get("locator"))))
        match = (re.search(r"(P\d+|Node\d+|CPU\d+)?[ _]*Channel[ _]?([A-Z0-9]+)", text, re.IGNORECASE)
                 or re.search(r"(CPU\d+[ _]?)?DIMM[ _]?([A-Z])\d", text, re.IGNORECASE))
        if not match:
            return None
        channels.add(((match.group(1) or "").upper(), match.group(2).upper()))
    return len(channels) or None


def _dmidecode() -> tuple[str | None, str | None]:
    exe = shutil.which("dmidecode")
    if exe is None:
        return None, "dmidecode not installed"
    try:
        result = subprocess.run([exe, "-t", "memory"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"dmidecode failed: {exc}"
    if result.returncode != 0 or "Memory Device" not in result.stdout:
        message = (result.stderr.strip().splitlines() or ["no Memory Device entries"])[-1]
        root = hasattr(os, "geteuid") and os.geteuid() == 0
        prefix = "dmidecode could not read the SMBIOS tables" if root else "dmidecode needs root"
        return None, f"{prefix} ({message})"
    return result.stdout, None


def collect() -> dict[str, Any]:
    """The memory section; never raises."""
    mem = new_section()
    try:
        virtual = psutil.virtual_memory()
        put(mem, "total_bytes", int(virtual.total))
        put(mem, "available_bytes", int(virtual.available))
    except Exception as exc:
        put(mem, "total_bytes", None, f"psutil: {exc}")
        put(mem, "available_bytes", None, f"psutil: {exc}")
    try:
        swap = psutil.swap_memory()
        put(mem, "swap_total_bytes", int(swap.total))
        put(mem, "swap_used_bytes", int(swap.used))
    except Exception as exc:
        put(mem, "swap_total_bytes", None, f"psutil: {exc}")
        put(mem, "swap_used_bytes", None, f"psutil: {exc}")

    if not sys.platform.startswith("linux"):
        reason = f"DIMM details come from dmidecode on Linux; not read on {sys.platform}"
    else:
        text, reason = _dmidecode()
        if text is not None:
            _dimms(mem, parse_dmidecode_memory(text))
            return mem
    for key in _DIMM_FIELDS:
        put(mem, key, None, reason)
    return mem


def _dimms(mem: dict[str, Any], slots: list[dict[str, Any]]) -> None:
    populated = [slot for slot in slots if slot["size_bytes"]]
    put(mem, "slots_total", len(slots) or None, "dmidecode lists no memory slots")
    put(mem, "dimms_populated", len(populated), None)
    mem["modules"] = populated

    def most_common(key: str) -> Any:
        values = Counter(slot[key] for slot in populated if slot[key] is not None)
        return values.most_common(1)[0][0] if values else None

    put(mem, "dimm_type", most_common("type"), "dmidecode gives no memory type")
    put(mem, "speed_mts", most_common("speed_mts"), "dmidecode gives no rated speed")
    put(mem, "configured_speed_mts", most_common("configured_speed_mts"), "dmidecode gives no configured speed")
    put(mem, "channels", channels_from_locators(populated),
        "the DIMM locators do not name channels (dmidecode lists slots, not channels)")
    speeds = {slot["configured_speed_mts"] for slot in populated if slot["configured_speed_mts"]}
    if len(speeds) > 1:
        mem["warnings"].append(f"DIMMs run at different speeds: {sorted(speeds)} MT/s")
    rated, configured = mem["speed_mts"], mem["configured_speed_mts"]
    if rated and configured and configured < rated:
        mem["warnings"].append(f"memory runs at {configured} MT/s, below its rated {rated} MT/s "
                               "(XMP/EXPO off, or the platform's limit for this DIMM count)")


#: Bytes one memory channel moves per transfer: 64 data bits (DDR4; DDR5's two 32-bit subchannels).
CHANNEL_BYTES = 8


def theoretical_peak_gb_per_s(memory: dict[str, Any]) -> tuple[float | None, str]:
    """(the RAM's theoretical peak in GB/s, how it was derived) from an inventory's memory section:
    the faster of the rated and configured speeds (MT/s) × 8 bytes × channels; with channels
    unknown, the populated DIMMs stand for them (never fewer DIMMs than channels in use, so the
    bound stays above the real peak). (None, reason) when the speed or both counts are unknown."""
    speeds = [s for s in (memory.get("speed_mts"), memory.get("configured_speed_mts"))
              if isinstance(s, (int, float)) and not isinstance(s, bool) and s > 0]
    if not speeds:
        return None, "RAM speed unknown"
    for key, label in (("channels", "channels"), ("dimms_populated", "DIMMs, at most one channel each")):
        count = memory.get(key)
        if isinstance(count, int) and not isinstance(count, bool) and count > 0:
            kind = memory.get("dimm_type") or "RAM"
            return (max(speeds) * CHANNEL_BYTES * count / 1000,
                    f"{kind} at {max(speeds):g} MT/s × {CHANNEL_BYTES} bytes × {count} {label}")
    return None, "RAM channel and DIMM counts unknown"
