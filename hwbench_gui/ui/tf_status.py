"""Whether TensorFlow will see a GPU here, judged from what is installed (TensorFlow is not imported:
that takes seconds and, on a GPU, reserves its memory). Qt-free; Inventory and Benchmarks show it.
"""

from __future__ import annotations

from typing import Any


def tensorflow_gpu_note(software: dict[str, Any] | None, gpu_reason: str | None) -> str | None:
    """Why TensorFlow will see no GPU here, or None when it should see one (or is not installed).

    ``software`` is an inventory's software section, or None to look at this environment.
    """
    import importlib.metadata
    import importlib.util
    import platform
    import sys

    if software is None:  # no inventory at hand: is it installed at all?
        if importlib.util.find_spec("tensorflow") is None:
            return None
    elif not software.get("tensorflow"):
        return None
    if gpu_reason:
        return ("TensorFlow will see no GPU: no NVIDIA GPU here (see Inventory → GPUs); TF model benchmarks "
                "run on the CPU.")
    if sys.platform == "win32":
        return "TensorFlow will see no GPU: it has no CUDA build for native Windows since 2.11 (use WSL2)."
    if sys.platform == "darwin":
        return "TensorFlow will see no NVIDIA GPU on macOS."
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return f"TensorFlow has no CUDA wheels for {platform.machine()}; it will run on the CPU."
    try:
        importlib.metadata.version("nvidia-cudnn-cu12")
    except importlib.metadata.PackageNotFoundError:
        return ("TensorFlow will see no GPU: its CUDA 12 libraries are not installed "
                "(pip install 'tensorflow[and-cuda]', which the tf extra installs on Linux x86_64).")
    return None
