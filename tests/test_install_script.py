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
    assert lines == ["+ .venv/bin/pip install --retries 1 --timeout 20 --index-url https://download.pytorch.org/whl/cpu "
                     "torch torchvision",
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
    assert '-e ".[dev,demos,eval,tf-cpu]"' in tests and "[tf," not in tests
    assert ".venv/bin/ruff check ." in tests and "pytest -q --durations=" in tests
    assert os.access(REPO_ROOT / "install.sh", os.R_OK)
