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
# PYTHON names the interpreter (default python3); PIP_ARGS are passed to every pip install.
set -eu

TORCH_CPU_INDEX="https://download.pytorch.org/whl/cpu"
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
    run $pip install ${PIP_ARGS:-} -e ".[tf,demos]"
elif [ "$(uname -s)" = Linux ]; then
    echo "hwbench: no NVIDIA GPU found: installing the CPU builds of PyTorch and TensorFlow (no CUDA libraries)"
    # First, so that hwbench's own torch and torchvision requirements are already met by the CPU builds.
    run $pip install ${PIP_ARGS:-} --index-url "$TORCH_CPU_INDEX" torch torchvision
    run $pip install ${PIP_ARGS:-} -e ".[tf-cpu,demos]"
else
    echo "hwbench: no NVIDIA GPU found: installing PyTorch and TensorFlow from PyPI (CPU builds here)"
    run $pip install ${PIP_ARGS:-} -e ".[tf-cpu,demos]"
fi
