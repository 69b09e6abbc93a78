"""Per-GPU details and the GPU system (driver, topology, P2P), NVML first.

NVML answers without creating a CUDA context, so it is safe in the GUI process. What NVML cannot
tell on a given driver (the SM count on many boards, the L2 size) comes from the torch probe's
report, which ran in a child process. Every field is a value or ``None`` plus a reason.
"""

from __future__ import annotations

from typing import Any

from hwbench_gui.engine import nvml
from hwbench_gui.engine.inventory import gpu_arch
from hwbench_gui.engine.inventory.fields import new_section, put

#: nvmlDeviceGetTopologyCommonAncestor levels (NVML_TOPOLOGY_*), named as nvidia-smi topo explains them.
TOPOLOGY_NAMES = {
    0: "same board",      # NVML_TOPOLOGY_INTERNAL
    10: "PCIe switch",    # SINGLE: one PCIe switch (nvidia-smi PIX)
    20: "PCIe switches",  # MULTIPLE: several PCIe switches, no host bridge (PXB)
    30: "host bridge",    # HOSTBRIDGE: through the CPU's PCIe host bridge (PHB)
    40: "NUMA",           # NODE: between host bridges within one NUMA node (NODE)
    50: "system",         # SYSTEM: across NUMA nodes over the CPU interconnect (SYS)
}

#: nvmlDeviceGetP2PStatus results (NVML_P2P_STATUS_*).
P2P_STATUS_NAMES = {
    0: "OK",
    1: "chipset not supported",
    2: "GPU not supported",
    3: "IOH topology not supported",
    4: "disabled by regkey",
    5: "not supported",
    6: "unknown",
}

# pynvml's NVML_P2P_CAPS_INDEX_READ is the tuple (0,) (a stray comma in nvidia-ml-py), so pass literals.
P2P_CAPS_INDEX_READ = 0
P2P_CAPS_INDEX_NVLINK = 2

_NVLINK_REMOTE_TYPES = {0: "GPU", 1: "IBM NPU", 2: "NVSwitch", 0xFF: "unknown"}


def _call(pynvml: Any, name: str, *args: Any) -> tuple[Any, str | None]:
    """``(value, None)`` or ``(None, reason)`` with NVML's own error text (:func:`nvml.call`)."""
    return nvml.call(pynvml, name, *args)


def _text(value: Any) -> Any:
    return value.decode(errors="replace") if isinstance(value, bytes) else value


def normalize_bus_id(bus_id: str | None) -> str | None:
    """``00000000:18:00.0`` and ``0000:18:00.0`` both become ``0000:18:00.0`` (lower case)."""
    if not bus_id:
        return None
    try:
        domain, bus, rest = bus_id.strip().lower().split(":")
        device, function = rest.split(".")
        return f"{int(domain, 16):04x}:{int(bus, 16):02x}:{int(device, 16):02x}.{int(function, 16)}"
    except ValueError:
        return bus_id.strip().lower()


def _normalize_uuid(uuid: str | None) -> str | None:
    if not uuid:
        return None
    text = uuid.strip().lower()
    for prefix in ("gpu-", "mig-"):
        if text.startswith(prefix):
            text = text[len(prefix):]
    return text


def _cuda_version_text(value: int | None) -> str | None:
    # NVML encodes CUDA 13.0 as 13000 and 12.4 as 12040.
    if not value:
        return None
    return f"{value // 1000}.{value % 1000 // 10}"


def _match_torch_device(gpu: dict[str, Any], torch_devices: list[dict[str, Any]]) -> dict[str, Any] | None:
    uuid = _normalize_uuid(gpu.get("uuid"))
    bus = normalize_bus_id(gpu.get("pci_bus_id"))
    for device in torch_devices:
        if uuid and _normalize_uuid(device.get("uuid")) == uuid:
            return device
        if bus and normalize_bus_id(device.get("pci_bus_id")) == bus:
            return device
    return None


def collect(torch_report: dict[str, Any] | None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Return ``(gpus, gpu_system)``; never raises.

    ``torch_report`` is :func:`torch_probe.run_probe`'s dict or ``None`` when the probe was skipped.
    """
    system = new_section(available=False, reason=None, device_count=0, driver_version=None,
                         cuda_driver_version=None, nvml_version=None, topology=None, p2p=None,
                         nvlink_p2p=None, torch_probe=torch_report)
    torch_devices = [d for d in (torch_report or {}).get("devices", []) if "error" not in d]
    try:
        pynvml = nvml.init()
    except nvml.NvmlUnavailable as exc:
        system["reason"] = str(exc)
        gpus = [_gpu_from_torch_only(device, str(exc)) for device in torch_devices]
        if gpus:
            system["warnings"].append("NVML is unavailable but torch sees GPUs: only torch's figures are shown")
        system["device_count"] = len(gpus)
        return gpus, system

    value, why = _call(pynvml, "nvmlSystemGetDriverVersion")
    put(system, "driver_version", value, why)
    value, why = _call(pynvml, "nvmlSystemGetCudaDriverVersion_v2")
    if value is None:
        value, why = _call(pynvml, "nvmlSystemGetCudaDriverVersion")
    put(system, "cuda_driver_version", _cuda_version_text(value), why)
    value, why = _call(pynvml, "nvmlSystemGetNVMLVersion")
    put(system, "nvml_version", value, why)

    count, why = _call(pynvml, "nvmlDeviceGetCount")
    if count is None:
        system["reason"] = why
        return [], system
    system["device_count"] = count
    if count == 0:
        system["reason"] = "NVML is running but reports no GPUs"
        return [], system
    system["available"] = True

    handles = []
    gpus = []
    for index in range(count):
        handle, why = _call(pynvml, "nvmlDeviceGetHandleByIndex", index)
        handles.append(handle)
        if handle is None:
            gpu = new_section(index=index, error=why)
        else:
            try:
                gpu = _gpu_from_nvml(pynvml, index, handle, torch_devices)
            except Exception as exc:  # every read is guarded; this keeps one GPU's surprise from hiding the rest
                gpu = new_section(index=index, error=f"GPU {index} could not be read: {type(exc).__name__}: {exc}")
        gpus.append(gpu)
    if count > 1:
        try:
            _topology(pynvml, system, gpus, handles)
        except Exception as exc:
            system["reasons"]["topology"] = f"topology could not be read: {type(exc).__name__}: {exc}"
    return gpus, system


def _gpu_from_torch_only(device: dict[str, Any], nvml_reason: str) -> dict[str, Any]:
    gpu = new_section(index=device.get("index"), name=device.get("name"), source="torch")
    major, minor = device.get("major"), device.get("minor")
    gpu["compute_capability"] = f"{major}.{minor}" if major is not None else None
    put(gpu, "architecture", gpu_arch.arch_name_from_cc(major, minor) if major is not None else None,
        "compute capability not in hwbench's table")
    gpu["architecture_source"] = "compute capability"
    sm_count = device.get("multi_processor_count")
    put(gpu, "sm_count", sm_count, "torch did not report it")
    gpu["sm_count_source"] = "torch" if sm_count else None
    put(gpu, "vram_total_bytes", device.get("total_memory_bytes"), "torch did not report it")
    put(gpu, "l2_cache_bytes", device.get("l2_cache_bytes"), "torch did not report it")
    _derived_units(gpu, major, minor, None)
    gpu["reasons"]["nvml"] = nvml_reason
    return gpu


def _gpu_from_nvml(pynvml: Any, index: int, handle: Any, torch_devices: list[dict[str, Any]]) -> dict[str, Any]:
    gpu = new_section(index=index, source="nvml")

    def read(key: str, func: str, *args: Any, convert=None) -> Any:
        value, why = _call(pynvml, func, handle, *args)
        if value is not None and convert is not None:
            try:
                value = convert(value)
            except Exception as exc:
                value, why = None, f"{func}: unexpected value {value!r} ({exc})"
        return put(gpu, key, value, why)

    read("name", "nvmlDeviceGetName")
    read("uuid", "nvmlDeviceGetUUID")
    read("pci_bus_id", "nvmlDeviceGetPciInfo", convert=lambda info: normalize_bus_id(_text(info.busId)))
    read("vbios_version", "nvmlDeviceGetVbiosVersion")
    torch_device = _match_torch_device(gpu, torch_devices) if torch_devices else None

    cc = read("compute_capability", "nvmlDeviceGetCudaComputeCapability", convert=lambda v: f"{v[0]}.{v[1]}")
    if cc is None and torch_device is not None:
        put(gpu, "compute_capability", f"{torch_device['major']}.{torch_device['minor']}")
    major = minor = None
    if gpu["compute_capability"]:
        major, minor = (int(part) for part in gpu["compute_capability"].split("."))

    arch_id, why = _call(pynvml, "nvmlDeviceGetArchitecture", handle)
    arch = gpu_arch.NVML_ARCH_NAMES.get(arch_id) if arch_id is not None else None
    gpu["architecture_source"] = "nvml" if arch else None
    if arch is None and major is not None:
        arch = gpu_arch.arch_name_from_cc(major, minor)
        gpu["architecture_source"] = "compute capability" if arch else None
    put(gpu, "architecture", arch, why or (f"NVML architecture id {arch_id} and compute capability "
                                           f"{gpu['compute_capability']} are not in hwbench's table"))

    # SM count: NVML attributes where the driver has them, else torch, else NVML's cores / cores per SM.
    attrs, attrs_why = _call(pynvml, "nvmlDeviceGetAttributes_v2", handle)
    sm_count = getattr(attrs, "multiprocessorCount", None) or None
    sm_source = "nvml attributes" if sm_count else None
    if sm_count is None and torch_device is not None and torch_device.get("multi_processor_count"):
        sm_count, sm_source = torch_device["multi_processor_count"], "torch"
    nvml_cores, cores_why = _call(pynvml, "nvmlDeviceGetNumGpuCores", handle)
    per_sm = gpu_arch.cores_per_sm(major, minor) if major is not None else None
    if sm_count is None and nvml_cores and per_sm:
        sm_count, sm_source = nvml_cores // per_sm, "nvml cores / cores per SM"
    sm_why = f"{attrs_why or 'NVML attributes report no SM count'}; torch probe: " + (
        "no matching device" if torch_devices else "no devices reported")
    put(gpu, "sm_count", sm_count, sm_why)
    gpu["sm_count_source"] = sm_source

    put(gpu, "cuda_cores_per_sm", per_sm, f"compute capability {gpu['compute_capability']} is not in the "
                                          "helper_cuda.h cores-per-SM table")
    if nvml_cores:
        put(gpu, "cuda_cores", nvml_cores)
        gpu["cuda_cores_source"] = "nvml"
    elif sm_count and per_sm:
        put(gpu, "cuda_cores", sm_count * per_sm)
        gpu["cuda_cores_source"] = "table"
    else:
        put(gpu, "cuda_cores", None, f"{cores_why}; SM count or cores per SM unknown")
        gpu["cuda_cores_source"] = None

    info, why = _call(pynvml, "nvmlDeviceGetMemoryInfo", handle)
    for key, field in (("vram_total_bytes", "total"), ("vram_used_bytes", "used"), ("vram_free_bytes", "free")):
        put(gpu, key, int(getattr(info, field)) if info is not None else None, why)
    put(gpu, "l2_cache_bytes", torch_device.get("l2_cache_bytes") if torch_device else None,
        "NVML does not report it; comes from the torch probe" if not torch_device else "torch did not report it")

    bus = read("memory_bus_width_bits", "nvmlDeviceGetMemoryBusWidth")
    mem_clock = read("memory_clock_max_mhz", "nvmlDeviceGetMaxClockInfo", pynvml.NVML_CLOCK_MEM)
    sm_clock = read("sm_clock_max_mhz", "nvmlDeviceGetMaxClockInfo", pynvml.NVML_CLOCK_SM)
    read("graphics_clock_max_mhz", "nvmlDeviceGetMaxClockInfo", pynvml.NVML_CLOCK_GRAPHICS)
    put(gpu, "memory_kind", gpu_arch.memory_kind(bus), "memory bus width unknown")
    if major is not None:
        factor = gpu_arch.memory_data_rate_factor(major, minor, bus)
    else:
        factor = gpu_arch.Counted(None, "compute capability unknown")
    put(gpu, "memory_data_rate_factor", factor.value, factor.reason)
    bandwidth = gpu_arch.memory_bandwidth_gb_per_s(bus, mem_clock, factor.value)
    put(gpu, "memory_bandwidth_gb_per_s", bandwidth.value, bandwidth.reason)

    _power(pynvml, gpu, handle)
    _pcie(gpu, read)
    gpu["nvlink"] = _nvlink(pynvml, handle)
    read("ecc_enabled", "nvmlDeviceGetEccMode", convert=lambda modes: bool(modes[0]))
    read("mig_enabled", "nvmlDeviceGetMigMode", convert=lambda modes: bool(modes[0]))
    read("persistence_mode", "nvmlDeviceGetPersistenceMode", convert=bool)

    _derived_units(gpu, major, minor, sm_clock)
    return gpu


def _derived_units(gpu: dict[str, Any], major: int | None, minor: int | None, sm_clock_mhz: float | None) -> None:
    """Tensor/RT cores and peak rates from the architecture tables."""
    name = gpu.get("name")
    sm_count = gpu.get("sm_count")
    peaks = new_section(clock_mhz=sm_clock_mhz, notes=[])
    gpu["peaks"] = peaks
    if major is None:
        reason = "compute capability unknown"
        for key in ("tensor_cores", "rt_cores"):
            put(gpu, key, None, reason)
        for key in ("fp32_tflops", "fp16_tflops", "tensor_fp16_dense_tflops"):
            put(peaks, key, None, reason)
        return
    tensor = gpu_arch.tensor_cores(major, minor, sm_count, name)
    put(gpu, "tensor_cores", tensor.value, tensor.reason)
    gpu["tensor_cores_per_sm"] = tensor.per_sm
    gpu["tensor_core_generation"] = tensor.generation
    rt = gpu_arch.rt_cores(major, minor, sm_count, name)
    put(gpu, "rt_cores", rt.value, rt.reason)
    gpu["rt_cores_per_sm"] = rt.per_sm
    gpu["rt_core_generation"] = rt.generation

    if not sm_clock_mhz:
        peaks["reasons"]["clock_mhz"] = "maximum SM clock unknown"
    fp32 = gpu_arch.peak_fp32_tflops(gpu.get("cuda_cores"), sm_clock_mhz)
    put(peaks, "fp32_tflops", fp32.value, fp32.reason)
    fp16 = gpu_arch.peak_fp16_tflops(major, minor, fp32.value)
    put(peaks, "fp16_tflops", fp16.value, fp16.reason)
    dense = gpu_arch.peak_tensor_fp16_dense_tflops(major, minor, sm_count, sm_clock_mhz, name)
    put(peaks, "tensor_fp16_dense_tflops", dense.value, dense.reason)
    peaks["tensor_fp16_flops_per_clock_per_sm"] = dense.per_sm
    peaks["notes"].append("theoretical, at the maximum SM clock NVML reports; sustained clocks under load "
                          "are often lower (datasheets quote H100/H200 FP16 tensor at 1830 MHz)")
    if dense.value and name and "GeForce" in name:
        peaks["notes"].append("GeForce boards run FP16 tensor math with FP32 accumulate at half this rate")


def _power(pynvml: Any, gpu: dict[str, Any], handle: Any) -> None:
    for key, func in (("power_limit_w", "nvmlDeviceGetEnforcedPowerLimit"),
                      ("power_default_limit_w", "nvmlDeviceGetPowerManagementDefaultLimit")):
        value, why = _call(pynvml, func, handle)
        put(gpu, key, value / 1000.0 if value is not None else None, why)
    value, why = _call(pynvml, "nvmlDeviceGetPowerManagementLimitConstraints", handle)
    put(gpu, "power_max_limit_w", value[1] / 1000.0 if value is not None else None, why)


def _pcie(gpu: dict[str, Any], read) -> None:
    gen = read("pcie_gen_current", "nvmlDeviceGetCurrPcieLinkGeneration")
    gen_max = read("pcie_gen_max", "nvmlDeviceGetMaxPcieLinkGeneration")
    gen_gpu = read("pcie_gen_gpu_max", "nvmlDeviceGetGpuMaxPcieLinkGeneration")
    width = read("pcie_width_current", "nvmlDeviceGetCurrPcieLinkWidth")
    width_max = read("pcie_width_max", "nvmlDeviceGetMaxPcieLinkWidth")
    current = gpu_arch.pcie_bandwidth_gb_per_s(gen, width)
    put(gpu, "pcie_bandwidth_current_gb_per_s", current.value, current.reason)
    best = gpu_arch.pcie_bandwidth_gb_per_s(gen_max, width_max)
    put(gpu, "pcie_bandwidth_max_gb_per_s", best.value, best.reason)
    if gen and gen_max and gen < gen_max:
        gpu["warnings"].append(f"PCIe link runs at Gen {gen}, below its maximum Gen {gen_max} (an idle GPU "
                               "lowers its link generation to save power: check again under load)")
    if width and width_max and width < width_max:
        gpu["warnings"].append(f"PCIe link runs at x{width}, below its maximum x{width_max} (lane count does "
                               "not drop to save power: check the slot, riser or BIOS lane split)")
    if gen_max and gen_gpu and gen_max < gen_gpu:
        gpu["warnings"].append(f"the slot or platform limits the link to Gen {gen_max}; the GPU supports "
                               f"Gen {gen_gpu}")


def _nvlink(pynvml: Any, handle: Any) -> dict[str, Any]:
    links = []
    first_reason = None
    answered = 0
    max_links = getattr(pynvml, "NVML_NVLINK_MAX_LINKS", 18)
    for link in range(max_links):
        state, why = _call(pynvml, "nvmlDeviceGetNvLinkState", handle, link)
        if state is None:
            first_reason = first_reason or why
            continue
        answered += 1
        if not state:
            continue
        version, _ = _call(pynvml, "nvmlDeviceGetNvLinkVersion", handle, link)
        remote, _ = _call(pynvml, "nvmlDeviceGetNvLinkRemotePciInfo", handle, link)
        remote_type, _ = _call(pynvml, "nvmlDeviceGetNvLinkRemoteDeviceType", handle, link)
        links.append({
            "link": link,
            "version_raw": version,
            "version": gpu_arch.NVLINK_VERSIONS.get(version) if version is not None else None,
            "remote_pci_bus_id": normalize_bus_id(_text(remote.busId)) if remote is not None else None,
            "remote_device_type": _NVLINK_REMOTE_TYPES.get(remote_type) if remote_type is not None else None,
        })
    versions = sorted({link["version"] for link in links if link["version"]})
    return {
        "supported": answered > 0,
        "links_active": len(links),
        "links_reporting": answered,
        "version": ", ".join(versions) if versions else None,
        "version_raw": links[0]["version_raw"] if links else None,
        "reason": None if answered else first_reason,
        "links": links,
    }


def _topology(pynvml: Any, system: dict[str, Any], gpus: list[dict[str, Any]], handles: list[Any]) -> None:
    count = len(handles)
    topology = [["self" if i == j else None for j in range(count)] for i in range(count)]
    p2p = [["self" if i == j else None for j in range(count)] for i in range(count)]
    nvlink_p2p = [["self" if i == j else None for j in range(count)] for i in range(count)]
    for i in range(count):
        for j in range(count):
            if i == j or handles[i] is None or handles[j] is None:
                continue
            status, why = _call(pynvml, "nvmlDeviceGetP2PStatus", handles[i], handles[j], P2P_CAPS_INDEX_READ)
            p2p[i][j] = P2P_STATUS_NAMES.get(status, f"status {status}") if status is not None else why
            status, why = _call(pynvml, "nvmlDeviceGetP2PStatus", handles[i], handles[j], P2P_CAPS_INDEX_NVLINK)
            nvlink_p2p[i][j] = P2P_STATUS_NAMES.get(status, f"status {status}") if status is not None else why
            topology[i][j] = _link_name(pynvml, gpus[i], gpus[j], handles[i], handles[j], nvlink_p2p[i][j] == "OK")
    system["topology"] = topology
    system["p2p"] = p2p
    system["nvlink_p2p"] = nvlink_p2p


def _link_name(pynvml: Any, gpu_a: dict[str, Any], gpu_b: dict[str, Any], handle_a: Any, handle_b: Any,
               nvlink_p2p_ok: bool) -> str:
    links = (gpu_a.get("nvlink") or {}).get("links", [])
    direct = sum(1 for link in links if link["remote_pci_bus_id"] and link["remote_pci_bus_id"] == gpu_b.get(
        "pci_bus_id") and link["remote_device_type"] in ("GPU", None))
    if direct:
        return f"NVLink x{direct}"
    switched = sum(1 for link in links if link["remote_device_type"] == "NVSwitch")
    if switched and nvlink_p2p_ok:
        return f"NVLink x{switched} via NVSwitch"
    level, why = _call(pynvml, "nvmlDeviceGetTopologyCommonAncestor", handle_a, handle_b)
    if level is None:
        return f"unknown ({why})"
    return TOPOLOGY_NAMES.get(level, f"level {level}")
