#!/bin/sh
# Creates .venv here and installs hwbench with the frameworks this machine can use.
#
# With an NVIDIA GPU (nvidia-smi lists one): the `tf` extra (TensorFlow with its CUDA 12 libraries)
# and PyTorch from PyPI (its Linux wheels bring their CUDA libraries). Without one, on Linux: PyTorch
# from PyTorch's CPU wheel index and the `tf-cpu` extra, so none of the several GB of CUDA libraries
# a machine without an NVIDIA GPU cannot use are downloaded. macOS and Windows wheels hold no CUDA
# libraries, so there PyPI's are used as they are.
#
#   sh install.sh              decide from nvidia-smi
#   HWBENCH_GPU=1 sh install.sh   install the GPU stack anyway (a driver to be installed later)
#   HWBENCH_GPU=0 sh install.sh   install the CPU stack on a machine with a GPU
#   sh install.sh --dry-run    print what it would run, run nothing
#
# Where PyTorch's CPU index cannot be reached (a proxy, a mirror of PyPI only, an offline network), torch
# and torchvision come from PyPI instead, with the CUDA libraries their Linux wheels bring; torch and
# torchvision always come from one index, as torchvision's operators are built for one torch build.
# The last step checks that torch runs torchvision's operators, and remembers the answer for the window.
#
# PYTHON names the interpreter (default python3); PIP_ARGS are passed to every pip install;
# TORCH_CPU_INDEX names another CPU wheel index (a mirror of PyTorch's).
set -eu

TORCH_CPU_INDEX="${TORCH_CPU_INDEX:-https://download.pytorch.org/whl/cpu}"
# Measured (Python 3.11, Linux x86_64): PyPI's torch 2.14.1 and torchvision 0.29.1 download 3.05 GB and take
# 5.3 GB in the venv (torch, torchvision, nvidia, triton); the CPU index's torch wheel is 0.19 GB and 0.76 GB
# installed.
PYPI_TORCH_COST="about 2.9 GB more to download and 4.5 GB more on disk than the CPU builds"
python="${PYTHON:-python3}"
dry_run=""
[ "${1:-}" = "--dry-run" ] && dry_run=1

run() {
    echo "+ $*"
    [ -n "$dry_run" ] || "$@"
}

gpu="${HWBENCH_GPU:-}"
if [ -z "$gpu" ]; then
    # `nvidia-smi -L` prints "GPU 0: <name> (UUID: ...)" per GPU; without a driver it is missing or fails.
    if nvidia-smi -L 2>/dev/null | grep -q '^GPU [0-9]'; then gpu=1; else gpu=0; fi
fi

run "$python" -m venv .venv
pip=".venv/bin/pip"
[ -x .venv/Scripts/pip.exe ] && pip=".venv/Scripts/pip.exe"
if [ "$gpu" = 1 ]; then
    echo "hwbench: NVIDIA GPU found: installing the CUDA builds of PyTorch and TensorFlow"
    run $pip install ${PIP_ARGS:-} -e ".[tf,demos,gen,serve]"
elif [ "$(uname -s)" = Linux ]; then
    echo "hwbench: no NVIDIA GPU found: installing the CPU builds of PyTorch and TensorFlow (no CUDA libraries)"
    # First, so that hwbench's own torch and torchvision requirements are already met by the CPU builds.
    # One retry and a short timeout: an index that cannot be reached should cost seconds, not minutes.
    if ! run $pip install --retries 1 --timeout 20 ${PIP_ARGS:-} --index-url "$TORCH_CPU_INDEX" torch torchvision
    then
        echo "hwbench: PyTorch's CPU index ($TORCH_CPU_INDEX) could not be used: installing torch and torchvision from PyPI instead, whose Linux wheels bring NVIDIA's CUDA libraries ($PYPI_TORCH_COST)"
        # A CPU torch left by an earlier install would satisfy PyPI torchvision's torch pin (the +cpu label
        # does not count), and that pair fails with "operator torchvision::nms does not exist".
        run $pip uninstall -q -y torch torchvision 2>/dev/null || true
        run $pip install ${PIP_ARGS:-} torch torchvision
    fi
    run $pip install ${PIP_ARGS:-} -e ".[tf-cpu,demos,gen,serve]"
else
    echo "hwbench: no NVIDIA GPU found: installing PyTorch and TensorFlow from PyPI (CPU builds here)"
    run $pip install ${PIP_ARGS:-} -e ".[tf-cpu,demos,gen,serve]"
fi
python_in_venv=".venv/bin/python"
[ -x .venv/Scripts/python.exe ] && python_in_venv=".venv/Scripts/python.exe"
run $python_in_venv -m hwbench_gui.engine.models.torch_ops
