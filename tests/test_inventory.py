"""Inventory engine and ``hwbench inventory``: the real CLI on this machine, the tables, the NVML paths.

The NVML paths run against ``FakeNvml``, a test double that answers like the driver does for the
H200 figures NVIDIA publishes (and raises NVML-style errors where a call is unsupported), so the code
that only a GPU machine reaches is exercised here too. Real H200 output arrives as a fixture later.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from hwbench_gui.engine import nvml
from hwbench_gui.engine.inventory import gpu_arch, gpus, memory, text, torch_probe

REPO_ROOT = Path(__file__).resolve().parent.parent


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


# --- the real CLI on this machine --------------------------------------------------------------
@pytest.fixture(scope="module")
def cli_inventory():
    result = subprocess.run([sys.executable, "-m", "hwbench_gui.cli", "inventory", "--json"], env=_env(),
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_cli_json_cpu_cores_match_os(cli_inventory):
    assert cli_inventory["schema_version"] == 1
    assert cli_inventory["cpu"]["logical_cores"] == os.cpu_count()


@pytest.mark.skipif(not Path("/proc/meminfo").exists(), reason="Linux /proc/meminfo needed")
def test_cli_json_memory_matches_meminfo(cli_inventory):
    line = next(row for row in Path("/proc/meminfo").read_text().splitlines() if row.startswith("MemTotal:"))
    meminfo_bytes = int(line.split()[1]) * 1024
    assert abs(cli_inventory["memory"]["total_bytes"] - meminfo_bytes) <= 0.01 * meminfo_bytes


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="sysfs disks")
def test_cli_json_lists_the_root_disk(cli_inventory):
    disks = cli_inventory["disks"]
    root_dev = os.stat("/").st_dev
    expected = Path(os.path.realpath(f"/sys/dev/block/{os.major(root_dev)}:{os.minor(root_dev)}"))
    expected_disk = expected.parent.name if (expected / "partition").exists() else expected.name
    names = [d["name"] for d in disks["devices"]]
    assert expected_disk in names
    assert disks["root_disk"] == expected_disk
    root = next(d for d in disks["devices"] if d["name"] == expected_disk)
    assert "/" in [m["mountpoint"] for m in root["mounts"]]
    assert root["size_bytes"] and root["size_bytes"] > 0


@pytest.mark.skipif(nvml.unavailable_reason() is None, reason="this machine has a working NVIDIA driver")
def test_cli_json_says_why_there_is_no_gpu(cli_inventory):
    system = cli_inventory["gpu_system"]
    assert system["available"] is False
    assert isinstance(system["reason"], str) and system["reason"]
    assert cli_inventory["gpus"] == [] or all(g.get("source") == "torch" for g in cli_inventory["gpus"])
    assert system["torch_probe"] is not None and "reason" in system["torch_probe"]


def test_cli_text_mode_no_torch():
    result = subprocess.run([sys.executable, "-m", "hwbench_gui.cli", "inventory", "--no-torch"], env=_env(),
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    for heading in ("GPUs", "GPU system", "CPU", "Memory", "Disks", "Software"):
        assert f"\n{heading}" in result.stdout
    assert "Torch probe: skipped" in result.stdout


def test_inventory_needs_no_qt_platformdirs_opencv_or_torch_in_process(tmp_path):
    # Blocking an import in sys.modules makes it raise ImportError; torch must simply stay unimported.
    code = (
        "import sys, json, argparse\n"
        "for name in ('PySide6', 'platformdirs', 'cv2', 'pyqtgraph'): sys.modules[name] = None\n"
        "from hwbench_gui.commands import inventory\n"
        "parser = argparse.ArgumentParser(); sub = parser.add_subparsers()\n"
        "inventory.add_parser(sub)\n"
        f"args = parser.parse_args(['inventory', '--json', '-o', {str(tmp_path / 'inv.json')!r}])\n"
        "assert args.handler(args) == 0\n"
        "assert 'torch' not in sys.modules, 'torch was imported in the parent process'\n"
    )
    result = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    saved = json.loads((tmp_path / "inv.json").read_text())
    assert saved == json.loads(result.stdout)


# --- architecture tables --------------------------------------------------------------------------
def test_cuda_cores_sm90_h200():
    assert gpu_arch.cores_per_sm(9, 0) == 128
    assert 132 * gpu_arch.cores_per_sm(9, 0) == 16896


@pytest.mark.parametrize("cc, cores", [((7, 0), 64), ((7, 5), 64), ((8, 0), 64), ((8, 6), 128), ((8, 9), 128),
                                       ((6, 1), 128), ((12, 0), 128)])
def test_cores_per_sm_follow_helper_cuda(cc, cores):
    assert gpu_arch.cores_per_sm(*cc) == cores


@pytest.mark.parametrize("cc, sms, name, count, generation", [
    ((9, 0), 132, "NVIDIA H200", 528, "4th"),
    ((7, 0), 80, "Tesla V100-SXM2-16GB", 640, "1st"),
    ((7, 5), 68, "NVIDIA GeForce RTX 2080 Ti", 544, "2nd"),
    ((8, 0), 108, "NVIDIA A100-SXM4-40GB", 432, "3rd"),
    ((8, 9), 128, "NVIDIA GeForce RTX 4090", 512, "4th"),
    ((12, 0), 170, "NVIDIA GeForce RTX 5090", 680, "5th"),
])
def test_tensor_cores(cc, sms, name, count, generation):
    result = gpu_arch.tensor_cores(*cc, sms, name)
    assert (result.value, result.generation) == (count, generation)


def test_turing_without_tensor_cores():
    assert gpu_arch.tensor_cores(7, 5, 22, "NVIDIA GeForce GTX 1660 Ti").value == 0
    assert gpu_arch.rt_cores(7, 5, 22, "NVIDIA GeForce GTX 1660 Ti").value == 0


@pytest.mark.parametrize("cc, sms, count, generation", [
    ((9, 0), 132, 0, None),      # Hopper: none
    ((8, 0), 108, 0, None),      # GA100: none
    ((8, 6), 82, 82, "2nd"),     # GA102
    ((8, 9), 128, 128, "3rd"),   # AD102
    ((7, 5), 72, 72, "1st"),     # TU102
    ((10, 0), 148, 0, None),     # B200: none
    ((12, 0), 170, 170, "4th"),  # GB202
])
def test_rt_cores(cc, sms, count, generation):
    result = gpu_arch.rt_cores(*cc, sms)
    assert (result.value, result.generation) == (count, generation)


def test_unknown_architecture_is_null_with_reason():
    for result in (gpu_arch.tensor_cores(99, 9, 100), gpu_arch.rt_cores(99, 9, 100),
                   gpu_arch.peak_tensor_fp16_dense_tflops(99, 9, 100, 2000.0),
                   gpu_arch.peak_fp16_tflops(99, 9, 50.0)):
        assert result.value is None
        assert "99.9" in result.reason
    assert gpu_arch.cores_per_sm(99, 9) is None
    assert gpu_arch.arch_name_from_cc(99, 9) is None


def test_blackwell_tensor_rate_not_guessed():
    result = gpu_arch.peak_tensor_fp16_dense_tflops(10, 0, 148, 1965.0)
    assert result.value is None and result.reason


@pytest.mark.parametrize("bits, mhz, expected_gb_s", [
    (6016, 3201, 4814.3),  # H200 (HBM3e)
    (5120, 2619, 3352.3),  # H100 SXM (HBM3)
    (4096, 877, 898.0),    # V100 (HBM2)
    (384, 9751, 936.1),    # RTX 3090 (GDDR6X)
    (352, 7000, 616.0),    # RTX 2080 Ti (GDDR6)
])
def test_bandwidth_formula(bits, mhz, expected_gb_s):
    factor = gpu_arch.memory_data_rate_factor(8, 6, bits).value
    assert factor == 2
    result = gpu_arch.memory_bandwidth_gb_per_s(bits, mhz, factor)
    assert result.value == pytest.approx(expected_gb_s, abs=0.1)


def test_gddr7_data_rate_is_not_guessed():
    factor = gpu_arch.memory_data_rate_factor(12, 0, 512)
    assert factor.value is None and "GDDR7" in factor.reason
    assert gpu_arch.memory_bandwidth_gb_per_s(512, 14001, factor.value).value is None


def test_peak_rates_match_datasheets():
    assert gpu_arch.peak_tensor_fp16_dense_tflops(9, 0, 132, 1830).value == pytest.approx(989.4, abs=0.1)
    assert gpu_arch.peak_tensor_fp16_dense_tflops(8, 0, 108, 1410).value == pytest.approx(311.9, abs=0.1)
    assert gpu_arch.peak_fp32_tflops(6912, 1410).value == pytest.approx(19.49, abs=0.01)
    assert gpu_arch.peak_fp16_tflops(8, 0, 19.49).value == pytest.approx(77.96, abs=0.01)
    assert gpu_arch.peak_fp32_tflops(None, 1410).value is None


def test_pcie_bandwidth():
    assert gpu_arch.pcie_bandwidth_gb_per_s(3, 16).value == pytest.approx(15.75, abs=0.01)
    assert gpu_arch.pcie_bandwidth_gb_per_s(5, 16).value == pytest.approx(63.0, abs=0.05)
    assert gpu_arch.pcie_bandwidth_gb_per_s(7, 16).value is None


# --- NVML paths against a test double -------------------------------------------------------------
class FakeNvmlError(Exception):
    pass


class _Struct:
    def __init__(self, **fields):
        self.__dict__.update(fields)


class FakeNvml:
    """Answers like pynvml on an HGX H200 pair behind NVSwitch; unsupported calls raise like NVML."""

    NVML_CLOCK_GRAPHICS, NVML_CLOCK_SM, NVML_CLOCK_MEM = 0, 1, 2
    NVML_NVLINK_MAX_LINKS = 36
    MIB = 2**20
    NVMLError = FakeNvmlError

    def __init__(self, count=2, attributes=False, num_cores=True, pcie_gen=1):
        self.count = count
        self.attributes = attributes
        self.num_cores = num_cores
        self.pcie_gen = pcie_gen
        self.p2p_indices = []
        self.bus_ids = ["00000000:18:00.0", "00000000:2A:00.0", "00000000:3A:00.0", "00000000:5D:00.0"][:count]

    def _not_supported(self, *args):
        raise FakeNvmlError("Not Supported")

    def nvmlSystemGetDriverVersion(self):
        return "580.95.05"

    def nvmlSystemGetCudaDriverVersion_v2(self):
        return 13000

    def nvmlSystemGetNVMLVersion(self):
        return "13.580.95.05"

    def nvmlDeviceGetCount(self):
        return self.count

    def nvmlDeviceGetHandleByIndex(self, index):
        return index

    def nvmlDeviceGetName(self, h):
        return "NVIDIA H200"

    def nvmlDeviceGetUUID(self, h):
        return f"GPU-0000000{h}-1111-2222-3333-444444444444"

    def nvmlDeviceGetPciInfo(self, h):
        return _Struct(busId=self.bus_ids[h].encode())

    def nvmlDeviceGetVbiosVersion(self, h):
        return "96.00.AF.00.01"

    def nvmlDeviceGetCudaComputeCapability(self, h):
        return (9, 0)

    def nvmlDeviceGetArchitecture(self, h):
        return 9

    def nvmlDeviceGetAttributes_v2(self, h):
        if not self.attributes:
            raise FakeNvmlError("Not Supported")
        return _Struct(multiprocessorCount=132)

    def nvmlDeviceGetNumGpuCores(self, h):
        if not self.num_cores:
            raise FakeNvmlError("Not Supported")
        return 16896

    def nvmlDeviceGetMemoryInfo(self, h):
        total = 143771 * self.MIB
        return _Struct(total=total, used=self.MIB, free=total - self.MIB)

    def nvmlDeviceGetMemoryBusWidth(self, h):
        return 6016

    def nvmlDeviceGetMaxClockInfo(self, h, clock):
        return {0: 1980, 1: 1980, 2: 3201}[clock]

    def nvmlDeviceGetEnforcedPowerLimit(self, h):
        return 700000

    def nvmlDeviceGetPowerManagementDefaultLimit(self, h):
        return 700000

    def nvmlDeviceGetPowerManagementLimitConstraints(self, h):
        return (200000, 700000)

    def nvmlDeviceGetCurrPcieLinkGeneration(self, h):
        return self.pcie_gen

    def nvmlDeviceGetMaxPcieLinkGeneration(self, h):
        return 5

    def nvmlDeviceGetGpuMaxPcieLinkGeneration(self, h):
        return 5

    def nvmlDeviceGetCurrPcieLinkWidth(self, h):
        return 16

    def nvmlDeviceGetMaxPcieLinkWidth(self, h):
        return 16

    def nvmlDeviceGetNvLinkState(self, h, link):
        if link >= 18:
            raise FakeNvmlError("Invalid Argument")
        return 1

    def nvmlDeviceGetNvLinkVersion(self, h, link):
        return 6

    def nvmlDeviceGetNvLinkRemotePciInfo(self, h, link):
        return _Struct(busId=b"00000000:C0:00.0")

    def nvmlDeviceGetNvLinkRemoteDeviceType(self, h, link):
        return 2

    def nvmlDeviceGetEccMode(self, h):
        return (1, 1)

    def nvmlDeviceGetMigMode(self, h):
        return (0, 0)

    def nvmlDeviceGetPersistenceMode(self, h):
        return 1

    def nvmlDeviceGetP2PStatus(self, a, b, index):
        if not isinstance(index, int):
            raise TypeError(f"caps index must be an int, got {index!r}")
        self.p2p_indices.append(index)
        return 0

    def nvmlDeviceGetTopologyCommonAncestor(self, a, b):
        return 50


@pytest.fixture
def fake_nvml(monkeypatch):
    def install(**kwargs):
        fake = FakeNvml(**kwargs)
        monkeypatch.setattr(nvml, "init", lambda: fake)
        return fake
    return install


def _torch_report(sm=132):
    return {"ok": True, "torch_version": "2.14.1+cu130", "torch_cuda": "13.0", "cudnn_version": "9.24.0",
            "device_count": 1, "devices": [{"index": 0, "name": "NVIDIA H200", "major": 9, "minor": 0,
                                            "multi_processor_count": sm, "total_memory_bytes": 150754820096,
                                            "l2_cache_bytes": 62914560,
                                            "uuid": "00000000-1111-2222-3333-444444444444"}]}


def test_h200_figures_from_nvml(fake_nvml):
    fake = fake_nvml()
    gpu_list, system = gpus.collect(None)
    assert system["available"] is True and system["reason"] is None
    assert system["driver_version"] == "580.95.05"
    assert system["cuda_driver_version"] == "13.0"
    gpu = gpu_list[0]
    assert gpu["name"] == "NVIDIA H200"
    assert gpu["architecture"] == "Hopper" and gpu["compute_capability"] == "9.0"
    assert gpu["sm_count"] == 132 and gpu["sm_count_source"] == "nvml cores / cores per SM"
    assert gpu["cuda_cores"] == 16896 and gpu["cuda_cores_source"] == "nvml"
    assert (gpu["tensor_cores"], gpu["tensor_core_generation"], gpu["tensor_cores_per_sm"]) == (528, "4th", 4)
    assert gpu["rt_cores"] == 0
    assert gpu["vram_total_bytes"] == 143771 * 2**20
    assert gpu["memory_bus_width_bits"] == 6016 and gpu["memory_clock_max_mhz"] == 3201
    assert gpu["memory_kind"] == "HBM"
    assert gpu["memory_bandwidth_gb_per_s"] == pytest.approx(4814.3, abs=0.1)
    assert (gpu["pcie_gen_max"], gpu["pcie_width_current"], gpu["pcie_width_max"]) == (5, 16, 16)
    assert gpu["nvlink"]["links_active"] == 18 and gpu["nvlink"]["version"] == "4.0"
    assert gpu["power_limit_w"] == 700.0
    assert gpu["peaks"]["fp32_tflops"] == pytest.approx(16896 * 2 * 1980e6 / 1e12)
    assert gpu["peaks"]["tensor_fp16_dense_tflops"] == pytest.approx(132 * 4096 * 1980e6 / 1e12)
    assert gpu["l2_cache_bytes"] is None and gpu["reasons"]["l2_cache_bytes"]
    # Idle downshift: warned, with the power-saving explanation.
    assert any("Gen 1, below its maximum Gen 5" in w and "idle" in w for w in gpu["warnings"])
    # P2P was asked with literal int caps indices (READ = 0, NVLINK = 2), never pynvml's tuple.
    assert set(fake.p2p_indices) == {0, 2}
    assert system["p2p"] == [["self", "OK"], ["OK", "self"]]
    assert system["topology"][0][1] == "NVLink x18 via NVSwitch"
    json.dumps(gpu_list), json.dumps(system)


def test_sm_count_from_torch_probe_when_nvml_lacks_it(fake_nvml):
    fake_nvml(count=1, num_cores=False)
    gpu_list, _ = gpus.collect(_torch_report())
    gpu = gpu_list[0]
    assert gpu["sm_count"] == 132 and gpu["sm_count_source"] == "torch"
    assert gpu["cuda_cores"] == 16896 and gpu["cuda_cores_source"] == "table"
    assert gpu["l2_cache_bytes"] == 62914560
    assert gpu["warnings"]  # the PCIe downshift


def test_sm_count_from_nvml_attributes(fake_nvml):
    fake_nvml(count=1, attributes=True, num_cores=False, pcie_gen=5)
    gpu = gpus.collect(None)[0][0]
    assert gpu["sm_count"] == 132 and gpu["sm_count_source"] == "nvml attributes"
    assert gpu["warnings"] == []


def test_no_sm_count_anywhere_gives_reasons(fake_nvml):
    fake_nvml(count=1, num_cores=False)
    gpu = gpus.collect(None)[0][0]
    assert gpu["sm_count"] is None and "Not Supported" in gpu["reasons"]["sm_count"]
    assert gpu["cuda_cores"] is None and gpu["reasons"]["cuda_cores"]
    assert gpu["tensor_cores"] is None and gpu["peaks"]["tensor_fp16_dense_tflops"] is None
    assert "unknown (" in "\n".join(r.text for r in text.gpu_rows(gpu))


def test_no_driver_keeps_exact_reason(monkeypatch):
    def refuse():
        raise nvml.NvmlUnavailable("NVML could not start: Driver Not Loaded (NVMLError_DriverNotLoaded)")
    monkeypatch.setattr(nvml, "init", refuse)
    gpu_list, system = gpus.collect(None)
    assert gpu_list == [] and system["available"] is False
    assert system["reason"] == "NVML could not start: Driver Not Loaded (NVMLError_DriverNotLoaded)"


def test_without_a_driver_the_text_says_it_once_in_plain_words_with_the_detail():
    """`hwbench inventory` on a machine without an NVIDIA driver: one plain line, one detail line."""
    inv = json.loads((Path(__file__).parent / "fixtures" / "inventory_cpu_only.json").read_text())
    detail = inv["gpu_system"]["reason"]
    assert "NVMLError_LibraryNotFound" in detail
    rendered = text.render_text(inv)
    assert "  none: No NVIDIA GPU or driver found\n  detail: " + detail + "\n" in rendered
    assert rendered.count("No NVIDIA GPU or driver found") == 1 and rendered.count(detail) == 1
    assert "NVIDIA driver: unknown (no GPU: see GPUs above)" in rendered


def test_render_text_marks_warnings(fake_nvml):
    fake_nvml(count=2)
    gpu_list, system = gpus.collect(None)
    inv = {"hostname": "h", "collected_at": "t", "gpus": gpu_list, "gpu_system": system, "cpu": {}, "memory": {},
           "disks": {}, "software": {}}
    rendered = text.render_text(inv)
    assert f"{text.WARNING_MARK} GPU 0: PCIe link runs at Gen 1" in rendered
    assert "16896" in rendered and "528" in rendered and "143771 MiB" in rendered and "4.81 TB/s" in rendered
    assert "NVLink x18 via NVSwitch" in rendered


# --- torch probe ----------------------------------------------------------------------------------
def test_probe_parses_child_json():
    report = torch_probe.run_probe([sys.executable, "-c", "print('noise'); print('{\"ok\": true, \"devices\": []}')"])
    assert report["ok"] is True and "elapsed_s" in report


def test_probe_timeout_and_garbage_and_missing_program():
    slow = torch_probe.run_probe([sys.executable, "-c", "import time; time.sleep(30)"], timeout_s=0.5)
    assert slow["ok"] is False and "timed out" in slow["reason"]
    garbage = torch_probe.run_probe([sys.executable, "-c", "import sys; print('x'); sys.exit(3)"])
    assert garbage["ok"] is False and "code 3" in garbage["reason"]
    missing = torch_probe.run_probe(["/nonexistent/python"])
    assert missing["ok"] is False and "could not start" in missing["reason"]


def test_probe_cancel():
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    started = time.monotonic()
    report = torch_probe.run_probe([sys.executable, "-c", "import time; time.sleep(30)"], cancel=cancel)
    assert report == {"ok": False, "reason": "torch probe cancelled"}
    assert time.monotonic() - started < 10


def test_probe_default_argv_is_module_run():
    assert torch_probe.default_python_argv() == [sys.executable, "-m", "hwbench_gui.engine.inventory.torch_probe"]


# --- memory, disks, software ----------------------------------------------------------------------
DMIDECODE_SAMPLE = """\
# dmidecode 3.4
Handle 0x0040, DMI type 17, 92 bytes
Memory Device
\tTotal Width: 72 bits
\tSize: 32 GB
\tLocator: DIMM_A1
\tBank Locator: P0 CHANNEL A
\tType: DDR5
\tSpeed: 4800 MT/s
\tManufacturer: Samsung
\tPart Number: M321R4GA3BB6-CQKET
\tRank: 2
\tConfigured Memory Speed: 4400 MT/s

Handle 0x0041, DMI type 17, 92 bytes
Memory Device
\tSize: No Module Installed
\tLocator: DIMM_A2
\tBank Locator: P0 CHANNEL A
\tType: Unknown
\tSpeed: Unknown

Handle 0x0042, DMI type 17, 92 bytes
Memory Device
\tSize: 32768 MB
\tLocator: DIMM_B1
\tBank Locator: P0 CHANNEL B
\tType: DDR5
\tSpeed: 4800 MT/s
\tConfigured Memory Speed: 4400 MT/s
"""


def test_dmidecode_parser_and_channels():
    slots = memory.parse_dmidecode_memory(DMIDECODE_SAMPLE)
    assert len(slots) == 3
    assert slots[0]["size_bytes"] == 32 * 2**30 and slots[2]["size_bytes"] == 32 * 2**30
    assert slots[1]["size_bytes"] is None and slots[1]["type"] is None
    assert slots[0]["speed_mts"] == 4800 and slots[0]["configured_speed_mts"] == 4400
    section = {"reasons": {}, "warnings": []}
    memory._dimms(section, slots)
    assert (section["dimms_populated"], section["slots_total"], section["channels"]) == (2, 3, 2)
    assert section["dimm_type"] == "DDR5"
    assert any("below its rated 4800" in w for w in section["warnings"])
    assert memory.channels_from_locators([{"locator": "Slot 1", "bank_locator": "Bank 0"}]) is None


def test_memory_dimm_reason_is_specific():
    section = memory.collect()
    if section["dimm_type"] is None:
        reason = section["reasons"]["dimm_type"]
        assert reason == "dmidecode not installed" or "root" in reason or "SMBIOS" in reason or "Linux" in reason


def test_software_versions_are_metadata_only():
    code = ("import sys\nfrom hwbench_gui.engine.inventory import software_versions\n"
            "sw = software_versions()\nassert 'torch' not in sys.modules\n"
            "import importlib.metadata as m\nassert sw['torch'] == m.version('torch')\nassert sw['python']\n"
            "assert sw['tensorflow'] is None or isinstance(sw['tensorflow'], str)\n")
    result = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


def test_cuda_from_torch_version():
    from hwbench_gui.engine.inventory.software import cuda_from_torch_version

    assert cuda_from_torch_version("2.14.1+cu130") == "13.0"
    assert cuda_from_torch_version("2.5.1+cu124") == "12.4"
    assert cuda_from_torch_version("2.5.1+cu118") == "11.8"
    assert cuda_from_torch_version("2.5.1+cpu") is None
    assert cuda_from_torch_version(None) is None


def test_write_json_is_atomic(tmp_path):
    from hwbench_gui.engine.inventory import write_json

    target = write_json({"schema_version": 1, "x": [1, 2]}, tmp_path / "sub" / "inv.json")
    assert json.loads(target.read_text()) == {"schema_version": 1, "x": [1, 2]}
    assert [p.name for p in target.parent.iterdir()] == ["inv.json"]


def test_wheel_versions_are_looked_up_by_name_not_by_reading_every_package(tmp_path, monkeypatch):
    """The cuDNN and CUDA-runtime wheels are found by their names: walking every installed distribution
    parsed hundreds of METADATA files, 2.4 s of CPU at the end of each run's first document."""
    import importlib.metadata

    from hwbench_gui.engine.inventory import software

    info = tmp_path / "nvidia_cudnn_cu11-8.9.7.29.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: nvidia-cudnn-cu11\nVersion: 8.9.7.29\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    read = []
    real_read = importlib.metadata.PathDistribution.read_text
    monkeypatch.setattr(importlib.metadata.PathDistribution, "read_text",
                        lambda self, name: (read.append(name), real_read(self, name))[1])
    sw = software.software_versions(use_nvml=False)
    assert sw["cudnn"] == "8.9.7" and sw["sources"]["cudnn"] == "nvidia-cudnn-cu11"
    assert read.count("METADATA") < 30  # the packages asked for, not every one installed
