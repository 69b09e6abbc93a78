#!/usr/bin/env bash
# Why does YOLO detect slow down when CPU appearance features run between frames? A matrix of
# thread settings and appearance on/off, each with nvidia-smi sampling the SM clock. Found: idle
# OpenBLAS threads spinning (31.5 vs 68.6 FPS); the pipeline now caps BLAS itself, so today the first
# two rows should agree. Stages run one after the other here (--no-overlap) to isolate the effect.
#   OUT=/tmp/out bash scripts/tracking_blas_threads.sh
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/hwbench-device}; mkdir -p "$OUT"
export PYTHONPATH=. PYTHONUNBUFFERED=1
LOG="$OUT/tracking_blas_threads.txt"
python3 -c "import numpy, torch, os; print('numpy', numpy.__version__, 'torch', torch.__version__, 'threads', torch.get_num_threads(), 'cores', os.cpu_count()); numpy.show_config()" >>"$LOG" 2>&1
python3 -c "import threadpoolctl, pprint; pprint.pprint(threadpoolctl.threadpool_info())" >>"$LOG" 2>&1
common="--detector yolov3 --device cuda --random-weights --size 416 --precision fp16 --cuda-graph --frames 200 --repeats 2 --no-overlap"
run() { name=$1; shift; echo "=== $name ($(date +%T))" >>"$LOG"
  nvidia-smi --query-gpu=timestamp,clocks.sm,utilization.gpu,power.draw --format=csv -lms 200 >"$OUT/smi_$name.csv" 2>&1 & smi=$!
  env "$@" python3 scripts/tracking_speed.py $common --json "$OUT/$name.json" >>"$LOG" 2>&1; kill $smi; }
run base_app
run blas1_app OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
echo "=== noapp" >>"$LOG"; python3 scripts/tracking_speed.py $common --no-appearance --json "$OUT/noapp.json" >>"$LOG" 2>&1
