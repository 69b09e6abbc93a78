"""NVML access that gives "not available" plus NVML's reason instead of raising into callers.

Every call goes through :func:`call` (``(value, None)`` or ``(None, reason)``) or :func:`query`
(the value or a default), the nvitop ``nvmlQuery`` habit: what the driver lacks, the GPU does not
support, or NVML refuses becomes ``None`` with NVML's own message as the reason; callers store
``None`` plus a reason, never a string in a numeric field. Only ``pynvml.NVMLError`` is caught: any
other exception is a bug in hwbench and propagates. A function this driver or nvidia-ml-py lacks
(``NVMLError_FunctionNotFound``, ``NVMLError_NotSupported``, or no such attribute in an old
pynvml) is logged once per function, not at every sample.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Callable

log = logging.getLogger(__name__)

_lock = threading.Lock()
_state: dict[str, Any] = {"initialized": False, "error": None, "module": None}
#: Functions already logged as missing or unsupported (logged once per process).
_logged_missing: set[str] = set()
_MISSING_ERRORS = ("NVMLError_FunctionNotFound", "NVMLError_NotSupported")


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
        except NvmlUnavailable as exc:
            _state["error"] = str(exc)
            raise
        try:
            pynvml.nvmlInit()
        except pynvml.NVMLError as exc:  # NVMLError_LibraryNotFound, DriverNotLoaded, ...
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


#: NVML's start-up errors in words for people; the error class name is how a stored reason says which.
_PLAIN_START_ERRORS = {
    "NVMLError_LibraryNotFound": "No NVIDIA GPU or driver found",
    "NVMLError_DriverNotLoaded": "No NVIDIA GPU or driver found",
    "NVMLError_NoPermission": "The NVIDIA driver refused access (no permission)",
    "NVMLError_LibRmVersionMismatch": "The NVIDIA driver was updated: restart the computer to use the GPU",
    "NVMLError_GpuIsLost": "The NVIDIA GPU stopped responding",
}
#: The start of every reason :func:`init` gives; a reason that starts otherwise is already plain.
_START_PREFIXES = ("NVML could not start: ", "nvidia-ml-py is not installed")


def plain_reason(reason: str) -> str:
    """The reason NVML did not start (as :func:`unavailable_reason` or a stored document gives it),
    in a few plain words; a reason that is not one of NVML's start-up errors comes back as it is."""
    if reason.startswith("nvidia-ml-py is not installed"):
        return "GPU readings need nvidia-ml-py, which is not installed"
    if not reason.startswith(_START_PREFIXES[0]):
        return reason
    for error, text in _PLAIN_START_ERRORS.items():
        if f"({error})" in reason:
            return text
    return "The NVIDIA driver could not be reached"


def is_start_failure(reason: str | None) -> bool:
    """Whether ``reason`` is one of the reasons :func:`init` gives (NVML did not start at all)."""
    return bool(reason) and reason.startswith(_START_PREFIXES)


def unavailable_summary() -> tuple[str, str] | None:
    """``None`` when NVML works, else ``(plain words, technical detail)``: "No NVIDIA GPU or driver
    found" for the user, and NVML's own message for a detail line or a tooltip."""
    reason = unavailable_reason()
    return None if reason is None else (plain_reason(reason), reason)


def _log_missing_once(name: str, reason: str) -> None:
    with _lock:
        if name in _logged_missing:
            return
        _logged_missing.add(name)
    log.info("NVML: %s (reported once)", reason)


def call(pynvml: Any, func: Callable[..., Any] | str, *args: Any) -> tuple[Any, str | None]:
    """``(value, None)``, or ``(None, reason)`` when NVML refuses: the reason is NVML's own message.

    ``func`` is a function of the ``pynvml`` module ``pynvml`` or its name there (a name the module
    lacks, as in an older nvidia-ml-py, gives ``(None, "... is not in this nvidia-ml-py")``).
    Bytes are decoded. Exceptions other than ``pynvml.NVMLError`` propagate.
    """
    if isinstance(func, str):
        name = func
        func = getattr(pynvml, name, None)
        if func is None:
            reason = f"{name} is not in this nvidia-ml-py"
            _log_missing_once(name, reason)
            return None, reason
    else:
        name = getattr(func, "__name__", repr(func))
    # A module without NVMLError (a stand-in that never fails) has no NVML errors to catch.
    nvml_error = getattr(pynvml, "NVMLError", ())
    try:
        value = func(*args)
    except nvml_error as exc:
        reason = f"{name}: {exc}"
        if type(exc).__name__ in _MISSING_ERRORS:
            _log_missing_once(name, reason)
        return None, reason
    if isinstance(value, bytes):
        value = value.decode(errors="replace")
    return value, None


def query(func: Callable[..., Any] | str, *args: Any, default: Any = None) -> Any:
    """The value of an NVML call (see :func:`call`), or ``default`` when NVML is unavailable or
    refuses it. Exceptions other than ``pynvml.NVMLError`` propagate."""
    try:
        pynvml = init()
    except NvmlUnavailable:
        return default
    value, reason = call(pynvml, func, *args)
    return default if reason is not None else value


def device_count() -> int:
    """Number of GPUs NVML sees; 0 when NVML is unavailable."""
    return query("nvmlDeviceGetCount", default=0) or 0


def handle(index: int) -> Any:
    """The NVML handle of GPU ``index``, or ``None``."""
    return query("nvmlDeviceGetHandleByIndex", index)
