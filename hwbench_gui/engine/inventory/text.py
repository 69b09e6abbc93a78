"""Readable rows for an inventory dict, shared by ``hwbench inventory`` and the GUI's Inventory tab.

Each ``*_rows`` function turns a section into ``Row(label, text, missing)`` tuples; ``render_text``
lays them out like ``lscpu``, and the Inventory tab puts the same rows into its cards, so the two
always agree. A missing value reads "unknown (reason)".
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

from hwbench_gui.engine.nvml import plain_reason


class Row(NamedTuple):
    label: str
    text: str
    missing: bool = False


WARNING_MARK = "!!"
#: What a row says in place of the GPUs section's "no GPU" reason, which is said once, under GPUs.
SEE_GPUS = "unknown (no GPU: see GPUs above)"


# --- formatting ------------------------------------------------------------------------------------
def fmt_size(n_bytes: float | None) -> str:
    """Binary units, as memory and file systems count: ``1.5 GiB``."""
    if n_bytes is None:
        return "unknown"
    value = float(n_bytes)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} PiB"


def fmt_mib(n_bytes: float | None) -> str:
    """Whole MiB, the unit nvidia-smi and GPU-Z show VRAM in: ``143771 MiB``."""
    return "unknown" if n_bytes is None else f"{round(n_bytes / 2**20)} MiB"


def fmt_gb_per_s(value: float | None) -> str:
    if value is None:
        return "unknown"
    return f"{value / 1000:.2f} TB/s" if value >= 1000 else f"{value:.1f} GB/s"


def fmt_tflops(value: float | None) -> str:
    return "unknown" if value is None else f"{value:.1f} TFLOP/s"


def _value(section: dict[str, Any], key: str, render: Callable[[Any], str] = str) -> tuple[str, bool]:
    value = section.get(key)
    if value is None:
        reason = (section.get("reasons") or {}).get(key)
        return (f"unknown ({reason})" if reason else "unknown"), True
    return render(value), False


def _row(label: str, section: dict[str, Any], key: str, render: Callable[[Any], str] = str) -> Row:
    text, missing = _value(section, key, render)
    return Row(label, text, missing)


# --- GPUs ------------------------------------------------------------------------------------------
def no_gpu_reason(inv: dict[str, Any]) -> str | None:
    """Why the inventory lists no GPU (its stored, technical reason); None when it lists some."""
    if inv.get("gpus"):
        return None
    return (inv.get("gpu_system") or {}).get("reason") or "no GPU reported"


def no_gpu_text(reason: str) -> tuple[str, str | None]:
    """``(plain words, technical detail or None)`` for a "no GPU" reason: NVML's start-up error
    becomes "No NVIDIA GPU or driver found" and its own message the detail."""
    plain = plain_reason(reason)
    return plain, (reason if plain != reason else None)


def without_repeated_reason(rows: list[Row], reason: str | None) -> list[Row]:
    """Rows whose text only repeats ``reason`` (said once, under GPUs) point there instead; the
    GPU system's status row, which would say nothing else, is left out."""
    if not reason:
        return rows
    return [Row(row.label, SEE_GPUS, True) if reason in row.text else row for row in rows
            if not (row.label == "Status" and reason in row.text)]


def gpu_title(gpu: dict[str, Any]) -> str:
    return f"GPU {gpu.get('index')}: {gpu.get('name') or 'unknown name'}"


def gpu_rows(gpu: dict[str, Any]) -> list[Row]:
    """Key figures of one GPU, GPU-Z style."""
    if gpu.get("error"):
        return [Row("Error", gpu["error"], True)]
    rows = []
    arch, missing = _value(gpu, "architecture")
    if gpu.get("compute_capability"):
        arch += f" (compute capability {gpu['compute_capability']})"
    rows.append(Row("Architecture", arch, missing))
    sm = _row("SMs", gpu, "sm_count")
    if not sm.missing and gpu.get("sm_count_source"):
        sm = sm._replace(text=f"{sm.text}  (from {gpu['sm_count_source']})")
    rows.append(sm)
    cores = _row("CUDA cores", gpu, "cuda_cores")
    if not cores.missing:
        detail = [f"from {gpu['cuda_cores_source']}"] if gpu.get("cuda_cores_source") else []
        if gpu.get("cuda_cores_per_sm"):
            detail.append(f"{gpu['cuda_cores_per_sm']}/SM")
        cores = cores._replace(text=f"{cores.text}  ({', '.join(detail)})" if detail else cores.text)
    rows.append(cores)
    rows.append(_units_row("Tensor Cores", gpu, "tensor_cores", "tensor_core_generation", "tensor_cores_per_sm"))
    rows.append(_units_row("RT cores", gpu, "rt_cores", "rt_core_generation", "rt_cores_per_sm"))
    vram = _row("VRAM", gpu, "vram_total_bytes", fmt_mib)
    if not vram.missing and gpu.get("vram_used_bytes") is not None:
        vram = vram._replace(text=f"{vram.text} total, {fmt_mib(gpu['vram_used_bytes'])} used, "
                                  f"{fmt_mib(gpu.get('vram_free_bytes'))} free")
    rows.append(vram)
    bus = _row("Memory bus", gpu, "memory_bus_width_bits", lambda bits: f"{bits}-bit")
    if not bus.missing and gpu.get("memory_kind"):
        bus = bus._replace(text=f"{bus.text} {gpu['memory_kind']}")
    rows.append(bus)
    rows.append(_row("Memory clock (max)", gpu, "memory_clock_max_mhz", lambda mhz: f"{mhz} MHz"))
    bandwidth = _row("Memory bandwidth", gpu, "memory_bandwidth_gb_per_s", fmt_gb_per_s)
    if not bandwidth.missing:
        bandwidth = bandwidth._replace(text=f"{bandwidth.text} theoretical")
    rows.append(bandwidth)
    if "l2_cache_bytes" in gpu:
        rows.append(_row("L2 cache", gpu, "l2_cache_bytes", fmt_size))
    if gpu.get("source") == "nvml":
        rows.append(_pcie_row(gpu))
        rows.append(_nvlink_row(gpu.get("nvlink") or {}))
        rows.append(_row("SM clock (max)", gpu, "sm_clock_max_mhz", lambda mhz: f"{mhz} MHz"))
        rows.append(_row("Power limit", gpu, "power_limit_w", lambda w: f"{w:.0f} W"))
        modes = [f"{label} {'on' if gpu[key] else 'off'}" for key, label in
                 (("ecc_enabled", "ECC"), ("mig_enabled", "MIG"), ("persistence_mode", "persistence"))
                 if gpu.get(key) is not None]
        if modes:
            rows.append(Row("Modes", ", ".join(modes)))
    peaks = gpu.get("peaks") or {}
    rows.append(_row("Peak FP32", peaks, "fp32_tflops", fmt_tflops))
    rows.append(_row("Peak FP16 (non-tensor)", peaks, "fp16_tflops", fmt_tflops))
    tensor = _row("Peak FP16 tensor (dense)", peaks, "tensor_fp16_dense_tflops", fmt_tflops)
    rows.append(tensor)
    if peaks.get("clock_mhz"):
        rows.append(Row("Peaks computed at", f"{peaks['clock_mhz']} MHz SM clock"))
    return rows


def _units_row(label: str, gpu: dict[str, Any], key: str, generation_key: str, per_sm_key: str) -> Row:
    row = _row(label, gpu, key)
    if row.missing:
        return row
    if gpu[key] == 0:
        return row._replace(text="none")
    detail = [f"{gpu[generation_key]} gen"] if gpu.get(generation_key) else []
    if gpu.get(per_sm_key):
        detail.append(f"{gpu[per_sm_key]}/SM")
    return row._replace(text=f"{row.text}  ({', '.join(detail)})" if detail else row.text)


def _pcie_row(gpu: dict[str, Any]) -> Row:
    gen, width = gpu.get("pcie_gen_current"), gpu.get("pcie_width_current")
    if gen is None and width is None:
        return _row("PCIe", gpu, "pcie_gen_current")
    text = f"Gen {gen if gen is not None else '?'} x{width if width is not None else '?'}"
    gen_max, width_max = gpu.get("pcie_gen_max"), gpu.get("pcie_width_max")
    if gen_max is not None or width_max is not None:
        text += f" (max Gen {gen_max if gen_max is not None else '?'} x{width_max if width_max is not None else '?'})"
    if gpu.get("pcie_bandwidth_max_gb_per_s") is not None:
        text += f", {fmt_gb_per_s(gpu['pcie_bandwidth_max_gb_per_s'])} per direction at max"
    return Row("PCIe", text)


def _nvlink_row(nvlink: dict[str, Any]) -> Row:
    if not nvlink.get("supported"):
        return Row("NVLink", f"not supported ({nvlink['reason']})" if nvlink.get("reason") else "not supported")
    text = f"{nvlink.get('links_active', 0)} links active"
    if nvlink.get("version"):
        text += f", version {nvlink['version']}"
    return Row("NVLink", text)


def gpu_system_rows(system: dict[str, Any]) -> list[Row]:
    if not system.get("available"):
        rows = [Row("Status", f"no GPU available: {system.get('reason') or 'unknown reason'}", True)]
    else:
        rows = [Row("GPUs", str(system.get("device_count")))]
    for label, key in (("Driver", "driver_version"), ("CUDA (driver)", "cuda_driver_version"),
                       ("NVML", "nvml_version")):
        if system.get("available") or system.get(key) is not None:
            rows.append(_row(label, system, key))
    probe = system.get("torch_probe")
    if probe is None:
        rows.append(Row("Torch probe", "skipped"))
    elif probe.get("ok"):
        rows.append(Row("Torch probe", f"torch {probe.get('torch_version')} sees {probe.get('device_count')} "
                                       f"GPU(s) (CUDA {probe.get('torch_cuda')}, cuDNN {probe.get('cudnn_version')})"))
    else:
        rows.append(Row("Torch probe", probe.get("reason") or "failed", True))
    return rows


def matrix_text(matrix: list[list[str | None]], labels: list[str] | None = None) -> list[str]:
    """A GPU-by-GPU matrix as aligned text lines (nvidia-smi topo -m style)."""
    labels = labels or [f"GPU{i}" for i in range(len(matrix))]
    cells = [[str(cell) if cell is not None else "?" for cell in row] for row in matrix]
    width = max([len(label) for label in labels] + [len(cell) for row in cells for cell in row]) + 2
    lines = [" " * width + "".join(label.ljust(width) for label in labels)]
    for label, row in zip(labels, cells):
        lines.append(label.ljust(width) + "".join(cell.ljust(width) for cell in row))
    return lines


# --- CPU, memory, disks, software -------------------------------------------------------------------
def cpu_rows(cpu: dict[str, Any]) -> list[Row]:
    if cpu.get("error"):
        return [Row("Error", cpu["error"], True)]
    rows = [_row("Model", cpu, "model"), _row("Vendor", cpu, "vendor"), _row("Architecture", cpu, "architecture"),
            _row("Sockets", cpu, "sockets"), _row("Physical cores", cpu, "physical_cores"),
            _row("Logical cores", cpu, "logical_cores"), _row("NUMA nodes", cpu, "numa_nodes")]
    base = _row("Base clock", cpu, "base_clock_mhz", lambda mhz: f"{mhz:.0f} MHz")
    if not base.missing and cpu.get("base_clock_source"):
        base = base._replace(text=f"{base.text}  (from {cpu['base_clock_source']})")
    rows += [base, _row("Max clock", cpu, "max_clock_mhz", lambda mhz: f"{mhz:.0f} MHz")]
    caches = cpu.get("caches")
    if caches:
        for key, label in (("l1d", "L1d cache"), ("l1i", "L1i cache"), ("l2", "L2 cache"), ("l3", "L3 cache")):
            if key in caches:
                cache = caches[key]
                rows.append(Row(label, f"{fmt_size(cache['total_bytes'])} ({cache['instances']} x "
                                       f"{fmt_size(cache['size_bytes'])})"))
    else:
        rows.append(_row("Caches", cpu, "caches"))
    flags = cpu.get("isa_flags")
    if flags:
        have = [flag for flag, present in flags.items() if present]
        lack = [flag for flag, present in flags.items() if not present]
        rows.append(Row("ISA (DL)", " ".join(have) or "none of the tracked flags"))
        if lack:
            rows.append(Row("ISA missing", " ".join(lack)))
    else:
        rows.append(_row("ISA (DL)", cpu, "isa_flags"))
    return rows


def memory_rows(mem: dict[str, Any]) -> list[Row]:
    if mem.get("error"):
        return [Row("Error", mem["error"], True)]
    rows = [_row("Total", mem, "total_bytes", fmt_size), _row("Available", mem, "available_bytes", fmt_size),
            _row("Swap", mem, "swap_total_bytes", fmt_size)]
    rows.append(_row("Type", mem, "dimm_type"))
    rows.append(_row("Speed", mem, "configured_speed_mts", lambda v: f"{v} MT/s"
                     + (f" (rated {mem['speed_mts']} MT/s)" if mem.get("speed_mts") else "")))
    if mem.get("dimms_populated") is not None:
        rows.append(Row("DIMMs", f"{mem['dimms_populated']} of {mem.get('slots_total') or '?'} slots"))
    rows.append(_row("Channels", mem, "channels"))
    return rows


def disk_title(disk: dict[str, Any]) -> str:
    return f"{disk.get('path')}: {disk.get('kind')}"


def disk_rows(disk: dict[str, Any]) -> list[Row]:
    rows = [_row("Model", disk, "model"), _row("Size", disk, "size_bytes", fmt_size)]
    for mount in disk.get("mounts") or []:
        text = f"{mount['mountpoint']} ({mount.get('fstype') or '?'}"
        if mount.get("free_bytes") is not None:
            text += f", {fmt_size(mount['free_bytes'])} free"
        rows.append(Row("Mounted", text + ")"))
    if not disk.get("mounts"):
        rows.append(Row("Mounted", "not mounted"))
    return rows


def software_rows(sw: dict[str, Any]) -> list[Row]:
    if sw.get("error"):
        return [Row("Error", sw["error"], True)]
    labels = (("OS", "os"), ("Kernel", "kernel"), ("Python", "python"), ("NVIDIA driver", "driver"),
              ("CUDA (driver)", "cuda_driver"), ("CUDA runtime", "cuda_runtime"), ("cuDNN", "cudnn"),
              ("PyTorch", "torch"), ("CUDA (torch)", "torch_cuda"), ("cuDNN (torch)", "torch_cudnn"),
              ("torchvision", "torchvision"), ("TensorFlow", "tensorflow"),
              ("OpenCV", "opencv"), ("NumPy", "numpy"), ("PySide6", "pyside6"), ("nvidia-ml-py", "nvidia_ml_py"))
    rows = []
    for label, key in labels:
        if key in ("torch_cuda", "torch_cudnn") and key not in sw:
            continue  # only present when the torch probe ran
        row = _row(label, sw, key)
        source = (sw.get("sources") or {}).get(key)
        if not row.missing and source and key in ("cuda_runtime", "cudnn"):
            row = row._replace(text=f"{row.text}  (from {source})")
        rows.append(row)
    return rows


def all_warnings(inv: dict[str, Any]) -> list[str]:
    """Every warning in the inventory, prefixed with where it comes from."""
    found = []
    for gpu in inv.get("gpus") or []:
        found += [f"GPU {gpu.get('index')}: {w}" for w in gpu.get("warnings") or []]
    for key, label in (("gpu_system", "GPU system"), ("cpu", "CPU"), ("memory", "Memory"), ("disks", "Disks"),
                       ("software", "Software")):
        found += [f"{label}: {w}" for w in (inv.get(key) or {}).get("warnings") or []]
    return found


# --- the whole inventory ---------------------------------------------------------------------------
def render_text(inv: dict[str, Any]) -> str:
    """The inventory as text, ``lscpu``-style; warnings marked with ``!!``."""
    lines = [f"hwbench inventory: {inv.get('hostname', '?')} (collected {inv.get('collected_at', '?')})", ""]

    def block(title: str, rows: list[Row], level: int = 0) -> None:
        lines.append("  " * level + title)
        indent = "  " * (level + 1)
        width = max((len(row.label) for row in rows), default=0) + 2
        for row in rows:
            lines.append(f"{indent}{(row.label + ':').ljust(width)}{row.text}")

    system = inv.get("gpu_system") or {}
    gpus = inv.get("gpus") or []
    lines.append("GPUs")
    no_gpu = no_gpu_reason(inv)
    if no_gpu:
        plain, detail = no_gpu_text(no_gpu)
        lines.append(f"  none: {plain}")
        if detail:
            lines.append(f"  detail: {detail}")
    for gpu in gpus:
        block(gpu_title(gpu), gpu_rows(gpu), 1)
        for warning in gpu.get("warnings") or []:
            lines.append(f"    {WARNING_MARK} {warning}")
        for note in (gpu.get("peaks") or {}).get("notes") or []:
            lines.append(f"    note: {note}")
    lines.append("")
    block("GPU system", without_repeated_reason(gpu_system_rows(system), no_gpu))
    if system.get("topology"):
        lines.append("  Topology:")
        lines += [f"    {line}" for line in matrix_text(system["topology"])]
    if system.get("p2p"):
        lines.append("  P2P read:")
        lines += [f"    {line}" for line in matrix_text(system["p2p"])]
    lines.append("")
    block("CPU", cpu_rows(inv.get("cpu") or {}))
    lines.append("")
    block("Memory", memory_rows(inv.get("memory") or {}))
    lines.append("")
    disks = inv.get("disks") or {}
    lines.append("Disks" + (f" (\"/\" is on {disks['root_disk']})" if disks.get("root_disk") else ""))
    for disk in disks.get("devices") or []:
        block(disk_title(disk), disk_rows(disk), 1)
    if not disks.get("root_disk") and (disks.get("reasons") or {}).get("root_disk"):
        lines.append(f"  root disk unknown: {disks['reasons']['root_disk']}")
    lines.append("")
    block("Software", without_repeated_reason(software_rows(inv.get("software") or {}), no_gpu))
    warnings = all_warnings(inv)
    if warnings:
        lines += ["", "Warnings"]
        lines += [f"  {WARNING_MARK} {warning}" for warning in warnings]
    return "\n".join(lines) + "\n"
