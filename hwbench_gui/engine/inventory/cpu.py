"""CPU: model, cores, clocks, caches and the instruction-set flags that matter for deep learning.

Linux reads /proc/cpuinfo and /sys/devices/system/cpu (lscpu as a fallback for the model); Windows and
macOS get what psutil and platform tell, with a reason for the rest. py-cpuinfo is not a dependency.
"""

from __future__ import annotations

import os
import platform
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import psutil

from hwbench_gui.engine.inventory.fields import guarded, new_section, put

#: x86 flags that change which kernels oneDNN/PyTorch/OpenCV can use.
X86_DL_FLAGS = ("sse4_2", "avx", "avx2", "fma", "f16c", "avx_vnni", "avx512f", "avx512bw", "avx512_vnni",
                "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16", "amx_int8")
#: The Arm equivalents (/proc/cpuinfo "Features").
ARM_DL_FLAGS = ("asimd", "asimdhp", "asimddp", "sve", "sve2", "bf16", "i8mm", "sme")

SYS_CPU = Path("/sys/devices/system/cpu")


def read_cpuinfo(path: str | os.PathLike = "/proc/cpuinfo") -> list[dict[str, str]]:
    """/proc/cpuinfo as one dict per logical CPU block (Arm adds a trailing block with the model)."""
    blocks: list[dict[str, str]] = []
    current: dict[str, str] = {}
    for line in Path(path).read_text(errors="replace").splitlines():
        if not line.strip():
            if current:
                blocks.append(current)
                current = {}
            continue
        key, _, value = line.partition(":")
        current[key.strip()] = value.strip()
    if current:
        blocks.append(current)
    return blocks


def _lscpu() -> dict[str, str]:
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=5,
                             env={**os.environ, "LC_ALL": "C"}).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    fields = {}
    for line in out.splitlines():
        key, _, value = line.partition(":")
        if value:
            fields[key.strip()] = value.strip()
    return fields


def parse_size_bytes(text: str) -> int | None:
    """"32K" / "1024K" / "32 MiB" / "2 MB" -> bytes (binary multiples, as the kernel and lscpu mean them)."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?\s*", text or "", re.IGNORECASE)
    if not match:
        return None
    scale = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}[match.group(2).upper()]
    return int(float(match.group(1)) * scale)


def read_caches(sys_cpu: Path = SYS_CPU) -> dict[str, dict[str, int]]:
    """Caches from sysfs: per level, size of one instance, how many instances, and the total."""
    seen: dict[str, set[str]] = {}
    sizes: dict[str, int] = {}
    for cache_dir in sorted(sys_cpu.glob("cpu[0-9]*/cache/index[0-9]*")):
        try:
            level = (cache_dir / "level").read_text().strip()
            kind = (cache_dir / "type").read_text().strip()
            size = parse_size_bytes((cache_dir / "size").read_text())
            shared = (cache_dir / "shared_cpu_list").read_text().strip()
        except OSError:
            continue
        if size is None:
            continue
        key = f"l{level}" + {"Data": "d", "Instruction": "i"}.get(kind, "")
        seen.setdefault(key, set()).add(shared)
        sizes[key] = size
    return {key: {"size_bytes": sizes[key], "instances": len(seen[key]),
                  "total_bytes": sizes[key] * len(seen[key])} for key in sorted(sizes)}


def _read_khz_as_mhz(path: Path) -> float | None:
    try:
        return int(path.read_text().strip()) / 1000.0
    except (OSError, ValueError):
        return None


def _model_clock_mhz(model: str | None) -> float | None:
    match = re.search(r"@\s*(\d+(?:\.\d+)?)\s*GHz", model or "")
    return float(match.group(1)) * 1000 if match else None


def collect() -> dict[str, Any]:
    """The CPU section; never raises (a failing read leaves its field ``None`` with a reason)."""
    cpu = new_section(architecture=platform.machine() or None)
    guarded(cpu, "logical_cores", lambda: psutil.cpu_count(logical=True), "psutil could not count them")
    guarded(cpu, "physical_cores", lambda: psutil.cpu_count(logical=False), "psutil could not count them")
    if sys.platform.startswith("linux"):
        _linux(cpu)
    else:
        _other_os(cpu)
    return cpu


def _linux(cpu: dict[str, Any]) -> None:
    try:
        blocks = read_cpuinfo()
    except OSError as exc:
        blocks = []
        cpu["reasons"]["cpuinfo"] = f"/proc/cpuinfo unreadable: {exc}"
    first = blocks[0] if blocks else {}
    lscpu: dict[str, str] | None = None

    def from_lscpu(key: str) -> str | None:
        nonlocal lscpu
        if lscpu is None:
            lscpu = _lscpu()
        return lscpu.get(key)

    model = first.get("model name") or from_lscpu("Model name")
    put(cpu, "model", model, "neither /proc/cpuinfo nor lscpu names the model")
    vendor = first.get("vendor_id") or from_lscpu("Vendor ID")
    put(cpu, "vendor", vendor, "neither /proc/cpuinfo nor lscpu names the vendor")

    packages = set()
    for path in SYS_CPU.glob("cpu[0-9]*/topology/physical_package_id"):
        try:
            packages.add(path.read_text().strip())
        except OSError:
            pass
    if not packages:
        packages = {block["physical id"] for block in blocks if "physical id" in block}
    put(cpu, "sockets", len(packages) or None, "no package ids in sysfs or /proc/cpuinfo")
    nodes = [p for p in Path("/sys/devices/system/node").glob("node[0-9]*")]
    put(cpu, "numa_nodes", len(nodes) or None, "no NUMA nodes in /sys/devices/system/node")

    cpufreq = SYS_CPU / "cpu0" / "cpufreq"
    base = _read_khz_as_mhz(cpufreq / "base_frequency")
    base_source = "cpufreq base_frequency" if base else None
    if base is None and _model_clock_mhz(model):
        base, base_source = _model_clock_mhz(model), "model name"
    put(cpu, "base_clock_mhz", base, "no cpufreq base_frequency and no clock in the model name")
    cpu["base_clock_source"] = base_source
    top = _read_khz_as_mhz(cpufreq / "cpuinfo_max_freq")
    put(cpu, "max_clock_mhz", top, "no cpufreq in this kernel, VM or container (/sys/devices/system/cpu/cpu0/"
                                   "cpufreq is missing)")
    current = None
    try:
        freq = psutil.cpu_freq()
        current = freq.current if freq and freq.current else None
    except Exception:
        pass
    if current is None and first.get("cpu MHz"):
        current = float(first["cpu MHz"])
    put(cpu, "current_clock_mhz", current, "neither psutil nor /proc/cpuinfo reports it")

    caches = read_caches()
    put(cpu, "caches", caches or None, "no cache information under /sys/devices/system/cpu/cpu0/cache")

    flags_text = first.get("flags") or first.get("Features")
    if flags_text is None:
        put(cpu, "isa_flags", None, "/proc/cpuinfo lists no flags")
        return
    present = set(flags_text.split())
    wanted = ARM_DL_FLAGS if "Features" in first and "flags" not in first else X86_DL_FLAGS
    cpu["isa_flags"] = {flag: flag in present for flag in wanted}


def _other_os(cpu: dict[str, Any]) -> None:
    model = None
    if sys.platform == "darwin":
        try:
            model = subprocess.run(["sysctl", "-n", "machdep.cpu.brand_string"], capture_output=True, text=True,
                                   timeout=5).stdout.strip() or None
        except (OSError, subprocess.SubprocessError):
            model = None
    elif sys.platform == "win32":
        try:
            import winreg

            key = winreg.OpenKey(winreg.HKEY_LOCAL_MACHINE, r"HARDWARE\DESCRIPTION\System\CentralProcessor\0")
            model = str(winreg.QueryValueEx(key, "ProcessorNameString")[0]).strip()
        except OSError:
            model = None
    put(cpu, "model", model or platform.processor() or None, "the platform does not name the CPU")
    put(cpu, "vendor", None, f"not read on {sys.platform}")
    put(cpu, "sockets", None, f"not read on {sys.platform}")
    put(cpu, "numa_nodes", None, f"not read on {sys.platform}")
    freq = None
    try:
        freq = psutil.cpu_freq()
    except Exception:
        pass
    put(cpu, "base_clock_mhz", _model_clock_mhz(model), "no clock in the model name")
    cpu["base_clock_source"] = "model name" if cpu["base_clock_mhz"] else None
    put(cpu, "max_clock_mhz", freq.max if freq and freq.max else None, "psutil reports no maximum clock")
    put(cpu, "current_clock_mhz", freq.current if freq and freq.current else None, "psutil reports no clock")
    put(cpu, "caches", None, f"cache sizes are read from Linux sysfs only (this is {sys.platform})")
    put(cpu, "isa_flags", None, f"ISA flags are read from /proc/cpuinfo, Linux only (this is {sys.platform})")

