"""NVML access that never raises into callers.

Every query goes through :func:`query`, which returns ``None`` when the driver lacks the call,
the GPU does not support it, or NVML is missing altogether (the nvitop ``nvmlQuery`` habit).
Callers store ``None`` plus a reason, never a string in a numeric field.
"""

from __future__ import annotations

import threading
from typing import Any, Callable

_lock = threading.Lock()
_state: dict[str, Any] = {"initialized": False, "error": None, "module": None}


class NvmlUnavailable(RuntimeError):
    """NVML could not be loaded or initialised; the message says why."""


def _load():
    try:
        import pynvml  # nvidia-ml-py
    except ImportError as exc:  # the package itself is missing
        raise NvmlUnavailable(f"nvidia-ml-py is not installed ({exc})") from exc
    return pynvml


def init() -> Any:
    """Initialise NVML once per process and return the ``pynvml`` module.

    Raises :class:`NvmlUnavailable` with the driver's own message when there is no NVIDIA driver.
    The failure is remembered so a machine without a GPU pays for the attempt once.
    """
    with _lock:
        if _state["initialized"]:
            return _state["module"]
        if _state["error"] is not None:
            raise NvmlUnavailable(_state["error"])
        try:
            pynvml = _load()
            pynvml.nvmlInit()
        except NvmlUnavailable as exc:
            _state["error"] = str(exc)
            raise
        except Exception as exc:  # NVMLError_LibraryNotFound, DriverNotLoaded, ...
            _state["error"] = f"NVML could not start: {exc} ({type(exc).__name__})"
            raise NvmlUnavailable(_state["error"]) from exc
        _state["initialized"] = True
        _state["module"] = pynvml
        return pynvml


def unavailable_reason() -> str | None:
    """``None`` when NVML works, else the reason it does not."""
    try:
        init()
    except NvmlUnavailable as exc:
        return str(exc)
    return None


def query(func: Callable[..., Any] | str, *args: Any, default: Any = None) -> Any:
    """Call an NVML function, returning ``default`` on any NVML error.

    ``func`` may be the function or its name in ``pynvml`` (handy when a driver's bindings lack
    a newer call: the missing attribute also gives ``default``).
    """
    try:
        pynvml = init()
    except NvmlUnavailable:
        return default
    if isinstance(func, str):
        func = getattr(pynvml, func, None)
        if func is None:
            return default
    try:
        value = func(*args)
    except Exception:  # NVMLError_NotSupported, NoPermission, FunctionNotFound, GpuIsLost...
        return default
    if isinstance(value, bytes):
        value = value.decode(errors="replace")
    return value


def device_count() -> int:
    """Number of GPUs NVML sees; 0 when NVML is unavailable."""
    return query("nvmlDeviceGetCount", default=0) or 0


def handle(index: int) -> Any:
    """The NVML handle of GPU ``index``, or ``None``."""
    return query("nvmlDeviceGetHandleByIndex", index)
