"""Software versions, read cheaply: package metadata only, never importing torch or TensorFlow.

Results documents embed this, so it must cost milliseconds: versions come from
``importlib.metadata``; the CUDA runtime from torch's build suffix (``2.5.1+cu124`` -> 12.4) or the
``nvidia-cuda-runtime*`` wheel; cuDNN from the ``nvidia-cudnn-cu*`` wheel; the driver from NVML.
"""

from __future__ import annotations

import importlib.metadata
import platform
import re
import sys
from pathlib import Path
from typing import Any

from hwbench_gui.engine import nvml
from hwbench_gui.engine.inventory.fields import new_section, put

#: Field -> distributions that provide it, first installed wins.
PACKAGES = {
    "torch": ("torch",),
    "torchvision": ("torchvision",),
    "tensorflow": ("tensorflow", "tensorflow-cpu", "tensorflow-gpu", "tf-nightly", "tensorflow-macos"),
    "opencv": ("opencv-python", "opencv-python-headless", "opencv-contrib-python",
               "opencv-contrib-python-headless"),
    "numpy": ("numpy",),
    "pyside6": ("PySide6", "PySide6-Essentials"),
    "nvidia_ml_py": ("nvidia-ml-py",),
}


def _dist_version(names: tuple[str, ...]) -> tuple[str | None, str | None]:
    for name in names:
        try:
            return importlib.metadata.version(name), name
        except importlib.metadata.PackageNotFoundError:
            continue
    return None, None


def _os_name() -> str:
    if sys.platform.startswith("linux"):
        try:
            for line in Path("/etc/os-release").read_text().splitlines():
                if line.startswith("PRETTY_NAME="):
                    return line.split("=", 1)[1].strip().strip('"')
        except OSError:
            pass
    return platform.platform(terse=True)


def cuda_from_torch_version(torch_version: str | None) -> str | None:
    """``2.14.1+cu130`` -> ``13.0``; ``None`` for CPU or ROCm builds."""
    match = re.search(r"\+cu(\d+)(\d)$", torch_version or "")
    return f"{match.group(1)}.{match.group(2)}" if match else None


#: CUDA major versions a wheel's ``-cuNN`` suffix is looked for with (NVIDIA names wheels per major).
CUDA_MAJORS = range(10, 20)


def _wheel_version(stem: str, unsuffixed: bool = False) -> tuple[str | None, str | None]:
    """Version and name of the first installed ``{stem}-cuNN`` wheel (or ``stem`` itself when
    ``unsuffixed``). Each name is looked up directly: walking every installed distribution parsed
    hundreds of METADATA files (2.4 s of CPU at the end of a run, which stalled the window)."""
    names = ((stem,) if unsuffixed else ()) + tuple(f"{stem}-cu{major}" for major in CUDA_MAJORS)
    return _dist_version(names)


def software_versions(use_nvml: bool = True) -> dict[str, Any]:
    """OS, Python and library versions; a package that is not installed is ``None`` with a reason."""
    sw = new_section(os=_os_name(), kernel=platform.release() or None, python=platform.python_version(),
                     python_implementation=platform.python_implementation(), sources={})
    for field, names in PACKAGES.items():
        version, dist = _dist_version(names)
        put(sw, field, version, "not installed")
        if dist:
            sw["sources"][field] = dist
    cuda = cuda_from_torch_version(sw["torch"])
    if cuda:
        put(sw, "cuda_runtime", cuda)
        sw["sources"]["cuda_runtime"] = "torch build suffix"
    else:
        version, dist = _wheel_version("nvidia-cuda-runtime", unsuffixed=True)
        put(sw, "cuda_runtime", ".".join(version.split(".")[:2]) if version else None,
            "no CUDA build of torch and no nvidia-cuda-runtime wheel")
        if dist:
            sw["sources"]["cuda_runtime"] = dist
    version, dist = _wheel_version("nvidia-cudnn")
    put(sw, "cudnn", ".".join(version.split(".")[:3]) if version else None, "no nvidia-cudnn wheel installed")
    if dist:
        sw["sources"]["cudnn"] = dist

    reason = nvml.unavailable_reason() if use_nvml else "NVML not asked"
    if reason is None:
        put(sw, "driver", nvml.query("nvmlSystemGetDriverVersion"), "NVML did not report it")
        raw = nvml.query("nvmlSystemGetCudaDriverVersion_v2") or nvml.query("nvmlSystemGetCudaDriverVersion")
        put(sw, "cuda_driver", f"{raw // 1000}.{raw % 1000 // 10}" if raw else None, "NVML did not report it")
    else:
        put(sw, "driver", None, reason)
        put(sw, "cuda_driver", None, reason)
    return sw
