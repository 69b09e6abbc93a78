"""The NVML wrapper: NVML's refusals become None plus NVML's own message, a function the driver lacks
is logged once, and an exception that is not an NVMLError (a bug in hwbench) is never swallowed.

The driver is a small stand-in module (NVML itself is absent here); what is tested is the wrapper.
"""

from __future__ import annotations

import logging
import sys
import types

import pytest

from hwbench_gui.engine import nvml


class NVMLError(Exception):
    pass


class NVMLError_FunctionNotFound(NVMLError):  # noqa: N801 (pynvml's own class names)
    pass


class NVMLError_NotSupported(NVMLError):  # noqa: N801
    pass


class NVMLError_DriverNotLoaded(NVMLError):  # noqa: N801
    pass


class NVMLError_LibraryNotFound(NVMLError):  # noqa: N801
    pass


class NVMLError_NoPermission(NVMLError):  # noqa: N801
    pass


def fake_pynvml(init_error: Exception | None = None) -> types.ModuleType:
    module = types.ModuleType("pynvml")
    module.NVMLError = NVMLError
    module.NVMLError_FunctionNotFound = NVMLError_FunctionNotFound
    module.NVMLError_NotSupported = NVMLError_NotSupported

    def nvmlInit():
        if init_error is not None:
            raise init_error

    def nvmlDeviceGetHandleByIndex(index):
        return ("gpu", index)

    def nvmlDeviceGetName(handle):
        return b"Test GPU " + str(handle[1]).encode()

    def nvmlDeviceGetPowerUsage(handle):
        raise NVMLError("Insufficient Permissions")

    def nvmlDeviceGetNumGpuCores(handle):
        raise NVMLError_FunctionNotFound("Function Not Found")

    def nvmlDeviceGetMemoryBusWidth(handle):
        raise NVMLError_NotSupported("Not Supported")

    for func in (nvmlInit, nvmlDeviceGetHandleByIndex, nvmlDeviceGetName, nvmlDeviceGetPowerUsage,
                 nvmlDeviceGetNumGpuCores, nvmlDeviceGetMemoryBusWidth):
        setattr(module, func.__name__, func)
    return module


@pytest.fixture
def driver(monkeypatch):
    """Installs a stand-in ``pynvml`` and a fresh NVML state; returns a function that installs one."""
    def install(**kwargs) -> types.ModuleType:
        module = fake_pynvml(**kwargs)
        monkeypatch.setitem(sys.modules, "pynvml", module)
        monkeypatch.setattr(nvml, "_state", {"initialized": False, "error": None, "module": None})
        monkeypatch.setattr(nvml, "_logged_missing", set())
        return module

    return install


def test_an_nvml_error_keeps_its_message_as_the_reason(driver):
    pynvml = driver()
    handle = nvml.handle(0)
    assert handle == ("gpu", 0)
    assert nvml.call(pynvml, "nvmlDeviceGetName", handle) == ("Test GPU 0", None)
    assert nvml.call(pynvml, "nvmlDeviceGetPowerUsage", handle) == (
        None, "nvmlDeviceGetPowerUsage: Insufficient Permissions")
    assert nvml.call(pynvml, pynvml.nvmlDeviceGetPowerUsage, handle)[1] == (
        "nvmlDeviceGetPowerUsage: Insufficient Permissions")
    assert nvml.query("nvmlDeviceGetPowerUsage", handle, default=-1) == -1
    assert nvml.call(pynvml, "nvmlDeviceGetNvLinkState", handle, 0) == (
        None, "nvmlDeviceGetNvLinkState is not in this nvidia-ml-py")


def test_nvml_that_does_not_start_gives_the_drivers_reason(driver):
    driver(init_error=NVMLError_DriverNotLoaded("Driver Not Loaded"))
    assert nvml.unavailable_reason() == "NVML could not start: Driver Not Loaded (NVMLError_DriverNotLoaded)"
    assert nvml.query("nvmlDeviceGetName", ("gpu", 0), default="none") == "none"
    assert nvml.device_count() == 0


@pytest.mark.parametrize("error, plain", [
    (NVMLError_DriverNotLoaded("Driver Not Loaded"), "No NVIDIA GPU or driver found"),
    (NVMLError_LibraryNotFound("NVML Shared Library Not Found"), "No NVIDIA GPU or driver found"),
    (NVMLError_NoPermission("Insufficient Permissions"), "The NVIDIA driver refused access (no permission)"),
])
def test_nvml_that_does_not_start_is_said_in_plain_words_with_the_detail_kept(driver, error, plain):
    driver(init_error=error)
    detail = f"NVML could not start: {error} ({type(error).__name__})"
    assert nvml.unavailable_summary() == (plain, detail)
    assert nvml.plain_reason(detail) == plain
    assert nvml.plain_reason("nvmlDeviceGetPowerUsage: Not Supported") == "nvmlDeviceGetPowerUsage: Not Supported"


def test_a_working_nvml_has_no_summary(driver):
    driver()
    assert nvml.unavailable_summary() is None


def test_a_function_the_driver_lacks_is_logged_once_over_many_calls(driver, caplog):
    pynvml = driver()
    caplog.set_level(logging.INFO, logger="hwbench_gui.engine.nvml")
    for _ in range(50):
        assert nvml.query("nvmlDeviceGetNumGpuCores", ("gpu", 0)) is None
        assert nvml.query("nvmlDeviceGetMemoryBusWidth", ("gpu", 0)) is None
        assert nvml.call(pynvml, "nvmlDeviceGetNvLinkState", ("gpu", 0), 0)[0] is None
        assert nvml.call(pynvml, "nvmlDeviceGetPowerUsage", ("gpu", 0))[0] is None
    messages = [r.getMessage() for r in caplog.records if r.name == "hwbench_gui.engine.nvml"]
    assert sorted(messages) == sorted([
        "NVML: nvmlDeviceGetNumGpuCores: Function Not Found (reported once)",
        "NVML: nvmlDeviceGetMemoryBusWidth: Not Supported (reported once)",
        "NVML: nvmlDeviceGetNvLinkState is not in this nvidia-ml-py (reported once)",
    ])  # a permission refusal is a state of this GPU, not a missing function: it is not logged


def test_a_bug_in_our_own_code_is_not_swallowed(driver):
    pynvml = driver()
    with pytest.raises(TypeError):  # the handle was forgotten: hwbench's bug, not "not available"
        nvml.query("nvmlDeviceGetName")
    with pytest.raises(TypeError):
        nvml.call(pynvml, "nvmlDeviceGetName")

    def convert_badly(handle):
        return handle["name"]  # a tuple indexed by a string

    with pytest.raises(TypeError):
        nvml.query(convert_badly, ("gpu", 0))
