"""What PyTorch sees of the GPUs, asked in a child process.

Why a child: the GUI must not import torch at start-up, and must not create a CUDA context in its own
process (that costs VRAM, and a driver crash there would take the window down). The child imports
torch, prints one JSON line and exits; :func:`run_probe` starts it with a timeout and never raises.

Run by hand: ``python -m hwbench_gui.engine.inventory.torch_probe``. A frozen build has no ``-m``:
it starts ``sys.executable`` with :data:`TORCH_PROBE_FLAG`, and its entry point must hand that flag
to :func:`main`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from typing import Any

from hwbench_gui.engine.child import TORCH_PROBE_FLAG

#: The probe's budget in CPU seconds of its child: importing torch is work, and a loaded machine gives the
#: child a fraction of a core, so wall-clock seconds would time a healthy probe out there.
DEFAULT_TIMEOUT_S = 20.0
#: A child that uses no CPU (stuck in a driver call) is stopped after this many wall-clock seconds per CPU second
#: of budget: 6 × 20 s = 2 minutes.
WALL_PER_CPU_S = 6.0
#: What a timed-out probe tells the user to do.
RETRY_HINT = "press Retry in the Inventory tab (or run `hwbench inventory` again) once the machine is quieter"


def default_python_argv() -> list[str]:
    """The command that runs the probe: ``python -m ...``, or the frozen executable with a flag."""
    if getattr(sys, "frozen", False):
        return [sys.executable, TORCH_PROBE_FLAG]
    return [sys.executable, "-m", "hwbench_gui.engine.inventory.torch_probe"]


def probe() -> dict[str, Any]:
    """Import torch here and describe every CUDA device it sees (runs in the child)."""
    out: dict[str, Any] = {"ok": False, "reason": None, "torch_version": None, "torch_cuda": None,
                           "cudnn_version": None, "cuda_available": False, "device_count": 0, "devices": []}
    try:
        import torch
    except Exception as exc:  # ImportError, or a broken install raising OSError on its libraries
        out["reason"] = f"torch could not be imported: {type(exc).__name__}: {exc}"
        return out
    out["torch_version"] = str(torch.__version__)
    out["torch_cuda"] = getattr(torch.version, "cuda", None)
    out["torchvision_ops"] = torchvision_ops()
    try:
        cudnn = torch.backends.cudnn.version()
        out["cudnn_version"] = _cudnn_text(cudnn) if cudnn else None
    except Exception as exc:
        out["cudnn_reason"] = f"{type(exc).__name__}: {exc}"
    try:
        out["cuda_available"] = bool(torch.cuda.is_available())
        out["device_count"] = int(torch.cuda.device_count()) if out["cuda_available"] else 0
    except Exception as exc:
        out["reason"] = f"torch.cuda failed: {type(exc).__name__}: {exc}"
        return out
    if not out["cuda_available"]:
        build = f"torch {out['torch_version']}" + (f" built for CUDA {out['torch_cuda']}" if out["torch_cuda"]
                                                   else " built without CUDA")
        out["reason"] = f"torch.cuda.is_available() is False ({build})"
        return out
    for index in range(out["device_count"]):
        try:
            props = torch.cuda.get_device_properties(index)
        except Exception as exc:
            out["devices"].append({"index": index, "error": f"{type(exc).__name__}: {exc}"})
            continue
        device = {
            "index": index,
            "name": props.name,
            "major": props.major,
            "minor": props.minor,
            "multi_processor_count": props.multi_processor_count,
            "total_memory_bytes": int(props.total_memory),
            "l2_cache_bytes": _int_or_none(getattr(props, "L2_cache_size", None)),
            "uuid": _text_or_none(getattr(props, "uuid", None)),
            # CUDA 13 dropped the clock fields from cudaDeviceProp: 0 there means "not reported".
            "clock_rate_khz": _int_or_none(getattr(props, "clock_rate", None)) or None,
            "memory_clock_rate_khz": _int_or_none(getattr(props, "memory_clock_rate", None)) or None,
            "memory_bus_width_bits": _int_or_none(getattr(props, "memory_bus_width", None)) or None,
        }
        pci = [getattr(props, name, None) for name in ("pci_domain_id", "pci_bus_id", "pci_device_id")]
        if all(isinstance(part, int) for part in pci):
            device["pci_bus_id"] = f"{pci[0]:08x}:{pci[1]:02x}:{pci[2]:02x}.0"
        out["devices"].append(device)
    out["ok"] = True
    return out


def torchvision_ops() -> dict[str, Any]:
    """Whether torchvision's compiled operators run with this torch: ``{"ok", "version", "reason"}``.

    torchvision's C++ operators are built for one torch build: PyPI's torchvision beside a torch from
    PyTorch's CPU index fails with "operator torchvision::nms does not exist", at import or at the first
    detection step. nms on two identical boxes must keep the higher-scored one only.
    """
    try:
        import torch
        import torchvision
        from torchvision.ops import nms

        boxes = torch.tensor([[0.0, 0.0, 1.0, 1.0], [0.0, 0.0, 1.0, 1.0]])
        kept = nms(boxes, torch.tensor([0.5, 1.0]), 0.5).tolist()
    except Exception as exc:  # ImportError, or RuntimeError "operator torchvision::nms does not exist"
        return {"ok": False, "version": None, "reason": f"{type(exc).__name__}: {exc}"}
    if kept != [1]:
        return {"ok": False, "version": torchvision.__version__,
                "reason": f"torchvision.ops.nms kept {kept} of two identical boxes (expected [1])"}
    return {"ok": True, "version": torchvision.__version__, "reason": None}


def _cudnn_text(version: int) -> str:
    # cuDNN 9 encodes 9.24.0 as 92400; cuDNN 8 encoded 8.9.7 as 8907.
    if version >= 90000:
        return f"{version // 10000}.{version % 10000 // 100}.{version % 100}"
    return f"{version // 1000}.{version % 1000 // 100}.{version % 100}"


def _int_or_none(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _text_or_none(value: Any) -> str | None:
    return None if value is None else str(value)


def run_probe(python_argv: list[str] | None = None, timeout_s: float = DEFAULT_TIMEOUT_S,
              cancel: threading.Event | None = None) -> dict[str, Any]:
    """Run the probe in a child and return its report; never raises.

    On failure the dict has ``ok: False`` and ``reason`` (not installed, timed out, crashed, cancelled); a
    timeout also has ``timed_out: True`` and its reason says how to retry. ``timeout_s`` is counted in CPU
    seconds of the child (a busy machine slows the probe without timing it out), with
    :data:`WALL_PER_CPU_S` wall-clock seconds per CPU second for a child that does nothing. ``cancel`` set by
    another thread kills the child within 0.1 s. The child sees ``CUDA_DEVICE_ORDER=PCI_BUS_ID`` so its
    indices follow NVML's order.
    """
    argv = list(python_argv or default_python_argv())
    env = dict(os.environ)
    env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
    env.setdefault("PYTHONUNBUFFERED", "1")
    started = time.monotonic()
    try:
        child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                 env=env, text=True)
    except OSError as exc:
        return {"ok": False, "reason": f"could not start the torch probe {argv!r}: {exc}"}
    result: dict[str, Any] = {}
    reader = threading.Thread(target=lambda: result.update(zip(("stdout", "stderr"), child.communicate())),
                              daemon=True)
    reader.start()
    while reader.is_alive():
        reader.join(0.1)
        if cancel is not None and cancel.is_set():
            child.kill()
            reader.join(5)
            return {"ok": False, "reason": "torch probe cancelled"}
        if not reader.is_alive():  # it ended: its report is read below, however long it took
            break
        # a child whose CPU time cannot be read (ending, or psutil missing) has the wall-clock ceiling only
        wall_s, cpu_s = time.monotonic() - started, _cpu_s(child.pid)
        if (cpu_s is not None and cpu_s > timeout_s) or wall_s > WALL_PER_CPU_S * timeout_s:
            child.kill()
            reader.join(5)
            return {"ok": False, "timed_out": True, "reason": timeout_reason(wall_s, cpu_s)}
    elapsed_s = time.monotonic() - started
    report = _last_json_line(result.get("stdout") or "")
    if report is None:
        tail = (result.get("stderr") or "").strip().splitlines()[-3:]
        return {"ok": False, "reason": f"torch probe exited with code {child.returncode} without a report"
                                       + (f": {' | '.join(tail)}" if tail else "")}
    report["elapsed_s"] = round(elapsed_s, 2)
    return report


def _cpu_s(pid: int) -> float | None:
    """CPU seconds ``pid`` and its reaped children have used, or None where that cannot be read."""
    try:
        import psutil

        times = psutil.Process(pid).cpu_times()
    except Exception:  # psutil missing, the child gone or not readable: wall-clock time decides then
        return None
    return times.user + times.system + times.children_user + times.children_system


def timeout_reason(wall_s: float, cpu_s: float | None) -> str:
    """Why the probe was stopped, how busy the machine was, and how to retry."""
    used = f" ({cpu_s:.0f} s of CPU)" if cpu_s is not None else ""
    try:
        load = f"; load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    except (AttributeError, OSError):
        load = ""
    return f"torch probe timed out after {wall_s:.0f} s{used}{load}: {RETRY_HINT}"


def _last_json_line(text: str) -> dict[str, Any] | None:
    for line in reversed(text.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, dict):
                return value
    return None


def main(argv: list[str] | None = None) -> int:
    """Child entry point: print the probe's JSON on one line."""
    try:
        report = probe()
    except Exception as exc:  # the parent must always get a line it can read
        report = {"ok": False, "reason": f"torch probe failed: {type(exc).__name__}: {exc}"}
    sys.stdout.write(json.dumps(report) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
