"""install.sh, which the README's first command runs, installs CUDA builds only where nvidia-smi lists
an NVIDIA GPU. Checked with --dry-run (the commands it would run) and stand-in nvidia-smi programs;
what pip then downloads from PyTorch's CPU index is not checked here (no network)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO_ROOT

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="install.sh is a POSIX shell script")

GPU_LISTING = "GPU 0: NVIDIA H200 (UUID: GPU-6f1c0c9e-0000-0000-0000-000000000000)"
NO_DRIVER = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."


def _install_dry_run(tmp_path: Path, nvidia_smi: tuple[str, int] | None, **env: str) -> str:
    """What install.sh would run, with a stand-in nvidia-smi printing ``(text, exit status)`` or none at all."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("grep", "uname"):  # all the script needs besides sh; no real nvidia-smi can be found
        (bin_dir / tool).symlink_to(shutil.which(tool))
    if nvidia_smi is not None:
        text, status = nvidia_smi
        fake = bin_dir / "nvidia-smi"
        fake.write_text(f"#!{shutil.which('sh')}\necho '{text}'\nexit {status}\n")
        fake.chmod(0o755)
    result = subprocess.run([shutil.which("sh"), str(REPO_ROOT / "install.sh"), "--dry-run"], cwd=tmp_path,
                            env={"PATH": str(bin_dir), "HOME": str(tmp_path), **env},
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    assert not (tmp_path / ".venv").exists()  # a dry run runs nothing
    return result.stdout


def _pip_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("+ ") and " install " in line]


def test_with_an_nvidia_gpu_it_installs_the_cuda_builds(tmp_path):
    lines = _pip_lines(_install_dry_run(tmp_path, (GPU_LISTING, 0)))
    assert lines == ['+ .venv/bin/pip install -e .[tf,demos]']


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the CPU wheel index is used on Linux")
@pytest.mark.parametrize("nvidia_smi", [None, (NO_DRIVER, 9), ("No devices were found", 6)],
                         ids=["no nvidia-smi", "no driver", "no device"])
def test_without_one_it_installs_cpu_builds_and_no_cuda_libraries(tmp_path, nvidia_smi):
    lines = _pip_lines(_install_dry_run(tmp_path, nvidia_smi))
    assert lines == ["+ .venv/bin/pip install --retries 1 --timeout 20 --index-url "
                     "https://download.pytorch.org/whl/cpu torch torchvision",
                     "+ .venv/bin/pip install -e .[tf-cpu,demos]"]


def test_the_guess_can_be_overridden(tmp_path):
    assert "[tf,demos]" in _install_dry_run(tmp_path, (NO_DRIVER, 9), HWBENCH_GPU="1")


def test_the_readmes_first_command_runs_install_sh_and_ci_runs_its_test_command():
    blocks = re.findall(r"```bash\n(.*?)\n```", (REPO_ROOT / "README.md").read_text(), flags=re.S)
    first, tests = blocks[0], blocks[1]
    assert "&& sh install.sh && .venv/bin/hwbench-gui" in first and "[tf," not in first
    ci_command = [line for line in (REPO_ROOT / ".ci" / "run").read_text().splitlines()
                  if line.startswith("python3 -m venv")]
    assert ci_command == [tests]  # CI runs exactly the README's test command
    assert '-e ".[dev,demos,eval,gen,tf-cpu]"' in tests and "[tf," not in tests
    assert ".venv/bin/ruff check ." in tests and "pytest -q --durations=" in tests
    assert os.access(REPO_ROOT / "install.sh", os.R_OK)


def _stand_ins(bin_dir: Path, uid: int, with_sudo: bool) -> Path:
    """``id``, ``apt-get`` (and ``sudo``) that log how they were called to ``calls``."""
    bin_dir.mkdir()
    calls = bin_dir / "calls"
    sh = shutil.which("sh")
    (bin_dir / "id").write_text(f"#!{sh}\necho {uid}\n")
    (bin_dir / "apt-get").write_text(f'#!{sh}\necho "apt-get $*" >> {calls}\n')
    if with_sudo:
        (bin_dir / "sudo").write_text(f'#!{sh}\necho "sudo $1" >> {calls}\nexec "$@"\n')
    for tool in bin_dir.iterdir():
        tool.chmod(0o755)
    return calls


@pytest.mark.parametrize("uid, with_sudo, expected", [(0, False, ["apt-get update", "apt-get install"]),
                                                      (1000, True, ["sudo apt-get", "apt-get update",
                                                                    "sudo apt-get", "apt-get install"])],
                         ids=["root on a minimal Debian (no sudo)", "a user with sudo"])
def test_the_readmes_first_command_uses_sudo_only_for_a_user(tmp_path, uid, with_sudo, expected):
    first = re.findall(r"```bash\n(.*?)\n```", (REPO_ROOT / "README.md").read_text(), flags=re.S)[0]
    system_part = first.split(" && sh install.sh")[0]
    calls = _stand_ins(tmp_path / "bin", uid, with_sudo)
    result = subprocess.run([shutil.which("sh"), "-c", system_part], env={"PATH": str(tmp_path / "bin")},
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    assert [" ".join(line.split()[:2]) for line in calls.read_text().splitlines()] == expected


def _install_with_stand_in_pip(tmp_path: Path, cpu_index_reachable: bool) -> tuple[str, list[str]]:
    """install.sh run for real on a GPU-less Linux box whose python makes a ``.venv`` with a stand-in pip
    that logs its arguments and fails when asked PyTorch's CPU index, as an unreachable index does."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("grep", "uname", "mkdir", "chmod", "cat"):
        (bin_dir / tool).symlink_to(shutil.which(tool))
    sh = shutil.which("sh")
    log = tmp_path / "pip.log"
    fail = "" if cpu_index_reachable else 'case "$*" in *--index-url*) echo "ERROR: no index" >&2; exit 1;; esac\n'
    pip = f'#!{sh}\necho "pip $*" >> {log}\n{fail}exit 0\n'
    python = (f'#!{sh}\nmkdir -p .venv/bin\ncat > .venv/bin/pip <<"PIP"\n{pip}PIP\n'
              f'printf "#!{sh}\\necho \\"python \\$*\\" >> {log}\\n" > .venv/bin/python\n'
              f"chmod +x .venv/bin/pip .venv/bin/python\n")
    (bin_dir / "python3").write_text(python)
    (bin_dir / "python3").chmod(0o755)
    result = subprocess.run([sh, str(REPO_ROOT / "install.sh")], cwd=tmp_path,
                            env={"PATH": str(bin_dir), "HOME": str(tmp_path)},
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    return result.stdout, log.read_text().splitlines()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the CPU wheel index is used on Linux")
def test_where_the_cpu_index_cannot_be_reached_torch_and_torchvision_come_from_pypi_as_a_pair(tmp_path):
    out, pip_calls = _install_with_stand_in_pip(tmp_path, cpu_index_reachable=False)
    fallback = [line for line in out.splitlines() if "could not be used" in line]
    assert len(fallback) == 1 and "from PyPI" in fallback[0] and "GB more to download" in fallback[0]
    assert [" ".join(call.split()[:3]) for call in pip_calls] == [
        "pip install --retries", "pip uninstall -q", "pip install torch", "pip install -e",
        "python -m hwbench_gui.engine.models.torch_ops"]
    assert pip_calls[1].endswith("torch torchvision") and pip_calls[2] == "pip install torch torchvision"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the CPU wheel index is used on Linux")
def test_where_it_can_be_reached_nothing_comes_from_pypis_torch(tmp_path):
    out, pip_calls = _install_with_stand_in_pip(tmp_path, cpu_index_reachable=True)
    assert "could not be used" not in out
    assert "--index-url https://download.pytorch.org/whl/cpu torch torchvision" in pip_calls[0]
    assert [call.split()[1] for call in pip_calls] == ["install", "install", "-m"]


@pytest.mark.parametrize("text, status", [
    ("Failed to initialize NVML: GPU access blocked by the operating system", 0),
    ("Unable to determine the device handle for GPU0000:01:00.0: Unknown Error", 0),
    ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. GPU 0 missing", 9),
], ids=["blocked, exit 0", "lost handle, exit 0", "no driver"])
def test_nvidia_smis_error_text_naming_a_gpu_is_no_gpu(tmp_path, text, status):
    """The guess reads nvidia-smi's listing lines ("GPU 0: <name> (UUID: ...)"), not its exit status nor
    any line that mentions a GPU: these error texts come with exit status 0 on some drivers."""
    lines = _pip_lines(_install_dry_run(tmp_path, (text, status)))
    assert all("[tf," not in line for line in lines) and any("--index-url" in line for line in lines)
