"""The machine's hardware and software inventory, as one JSON-serialisable dict.

``collect()`` is what the ``hwbench inventory`` command, the Inventory tab and result documents use.
Layout (``schema_version`` 1)::

    schema_version, collected_at (ISO UTC), hostname, warnings (all sections' warnings, prefixed),
    gpus:       [per-GPU dict: index, name, uuid, pci_bus_id, architecture, compute_capability, sm_count,
                 cuda_cores (+ _source), tensor_cores, rt_cores, vram_*_bytes, memory_bus_width_bits,
                 memory_clock_max_mhz, memory_bandwidth_gb_per_s, pcie_gen_*/pcie_width_*, nvlink{},
                 power_limit_w, sm_clock_max_mhz, peaks{fp32_tflops, fp16_tflops, tensor_fp16_dense_tflops},
                 warnings, reasons]
    gpu_system: {available, reason, driver_version, cuda_driver_version, nvml_version, device_count,
                 topology (GPU x GPU link names), p2p (GPU x GPU P2P read status), nvlink_p2p, torch_probe,
                 warnings, reasons}
    cpu, memory, disks, software: sections with their own ``reasons`` and ``warnings``
    system:     {board_id, machine_id}: digests of the board's and the OS install's identity (see .system)

Every section survives failures of its parts: an unreadable field is ``None`` and the section's
``reasons[field]`` says why. Nothing here raises, and nothing imports torch (the torch probe runs
in a child process).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import socket
import threading
from pathlib import Path
from typing import Any

from hwbench_gui.engine.atomic import atomic_open
from hwbench_gui.engine.inventory import cpu as _cpu
from hwbench_gui.engine.inventory import disks as _disks
from hwbench_gui.engine.inventory import gpus as _gpus
from hwbench_gui.engine.inventory import memory as _memory
from hwbench_gui.engine.inventory import system as _system
from hwbench_gui.engine.inventory.fields import run_section
from hwbench_gui.engine.inventory.software import software_versions
from hwbench_gui.engine.inventory.text import all_warnings, render_text
from hwbench_gui.engine.inventory.torch_probe import DEFAULT_TIMEOUT_S, run_probe

SCHEMA_VERSION = 1

__all__ = ["SCHEMA_VERSION", "collect", "render_text", "software_versions", "write_json"]


def collect(use_torch_probe: bool = True, python_argv: list[str] | None = None,
            probe_timeout_s: float = DEFAULT_TIMEOUT_S, cancel: threading.Event | None = None) -> dict[str, Any]:
    """Collect the whole inventory; never raises.

    ``use_torch_probe`` runs the torch child process (up to ``probe_timeout_s``; several seconds
    while torch imports) for the SM count, L2 size and torch's CUDA/cuDNN versions.
    ``python_argv`` is the probe's command (default: ``[sys.executable, "-m", ...torch_probe]``, or
    the frozen executable with its flag). Setting ``cancel`` from another thread stops the probe.
    """
    torch_report = run_probe(python_argv, probe_timeout_s, cancel) if use_torch_probe else None

    def gpu_part() -> tuple[list[dict[str, Any]], dict[str, Any]]:
        try:
            return _gpus.collect(torch_report)
        except Exception as exc:  # gpus.collect guards each read; this is a bug's last line of defence
            return [], {"available": False, "reason": f"GPU inventory failed: {type(exc).__name__}: {exc}",
                        "warnings": [], "reasons": {}, "torch_probe": torch_report}

    gpus, gpu_system = gpu_part()
    software = run_section("software", software_versions)
    if torch_report and torch_report.get("torch_version"):
        # What torch itself reports, which can differ from the wheels' metadata (e.g. a system cuDNN).
        software["torch_cuda"] = torch_report.get("torch_cuda")
        software["torch_cudnn"] = torch_report.get("cudnn_version")
    inv: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "collected_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "hostname": socket.gethostname(),
        "gpus": gpus,
        "gpu_system": gpu_system,
        "cpu": run_section("cpu", _cpu.collect),
        "memory": run_section("memory", _memory.collect),
        "disks": run_section("disks", _disks.collect),
        "software": software,
        "system": run_section("system", _system.collect),
    }
    inv["warnings"] = all_warnings(inv)
    return inv


def write_json(inv: dict[str, Any], path: str | os.PathLike) -> Path:
    """Write ``inv`` as indented JSON atomically (temp file in the same folder, then rename)."""
    target = Path(path)
    with atomic_open(target) as handle:
        json.dump(inv, handle, indent=2, sort_keys=False)
        handle.write("\n")
    return target
