#!/usr/bin/env bash
# Everything hwbench checks on a GPU box, through its own CLI, writing as it goes under $OUT.
#   OUT=/tmp/out bash scripts/gpu_box_check.sh [steps...]     (steps: inventory monitor bench matmul cancel overhead track snake)
set -u
OUT=${OUT:-/tmp/hwbench-device}
mkdir -p "$OUT"
export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}. PYTHONUNBUFFERED=1
export HWBENCH_DATA_DIR=/tmp/hwbench-data HWBENCH_RESULTS_DIR=/tmp/hwbench-results
LOG="$OUT/log.txt"
hw() { python3 -m hwbench_gui.cli "$@"; }
say() { echo "=== $* ($(date +%T))" | tee -a "$LOG"; }
steps=${*:-inventory monitor bench cancel overhead}

for step in $steps; do
case $step in
inventory)
  say inventory
  nvidia-smi --query-gpu=name,memory.total,pcie.link.gen.max,pcie.link.width.max,clocks.max.sm,clocks.max.mem --format=csv >>"$LOG" 2>&1
  hw inventory --json >"$OUT/inventory_h200.json" 2>>"$LOG"
  hw inventory >>"$LOG" 2>&1 ;;
monitor)
  say "monitor while a bf16 matmul loop runs (5 s idle, 15 s load, 5 s idle)"
  hw monitor --interval 0.5 --duration 26 --csv "$OUT/monitor_h200.csv" >/dev/null 2>>"$LOG" &
  mon=$!
  sleep 5; python3 scripts/gpu_load.py --seconds 15 >>"$LOG" 2>&1; wait $mon ;;
bench)
  for b in gpu.pcie gpu.d2d gpu.matmul host.membw cpu.decode disk.read; do
    say "run $b"
    hw run "$b" --quiet >>"$LOG" 2>&1; echo "exit $?" >>"$LOG"
  done
  hw run gpu.p2p >>"$LOG" 2>&1; echo "gpu.p2p exit $? (one GPU: expected to refuse with a reason)" >>"$LOG"
  hw compare /tmp/hwbench-results/*.json >>"$LOG" 2>&1
  tar -C /tmp -czf "$OUT/results.tar.gz" hwbench-results ;;
cancel)
  say "cancel a GPU run with SIGINT, then check the GPU memory is freed"
  python3 -m hwbench_gui.cli run gpu.matmul --param precision=bf16 --param sizes=16384 --param repeats=1000 \
    --param mode=sustained >>"$LOG" 2>&1 &
  pid=$!
  sleep 12; nvidia-smi --query-gpu=memory.used --format=csv,noheader >>"$LOG"
  kill -INT $pid; wait $pid; echo "exit $? (130 = cancelled)" >>"$LOG"
  sleep 1; nvidia-smi --query-gpu=memory.used --format=csv >>"$LOG"; nvidia-smi --query-compute-apps=pid,used_memory --format=csv >>"$LOG"
  ps -eo pid,args | grep -c "[h]wbench-worker" | sed 's/^/worker processes left: /' >>"$LOG" ;;
tf32)
  say "ResNet-50 TF32 training: channels_last at batch 128 and 256"
  hw run model.resnet50 --param precision=tf32 --param channels_last=true --param batch=128 --param steps=30 --param warmup=5 --quiet >>"$LOG" 2>&1
  hw run model.resnet50 --param precision=tf32 --param channels_last=true --param batch=256 --param steps=30 --param warmup=5 --quiet >>"$LOG" 2>&1
  hw compare /tmp/hwbench-results/*model.resnet50*.json >>"$LOG" 2>&1 ;;
overhead)
  say "sampler overhead"
  python3 scripts/telemetry_overhead.py --seconds 20 >>"$LOG" 2>&1 ;;
matmul)
  say "gpu.matmul burst (default) and sustained"
  hw run gpu.matmul --quiet --json >"$OUT/matmul_burst.json" 2>>"$LOG"; echo "exit $?" >>"$LOG"
  hw run gpu.matmul --param mode=sustained --param precision=bf16 --param sizes=8192 --quiet --json >"$OUT/matmul_sustained.json" 2>>"$LOG"
  hw compare "$OUT/matmul_burst.json" "$OUT/matmul_sustained.json" >>"$LOG" 2>&1 ;;
track)
  say "tracking: YOLOv3 416 on CUDA with random weights (speed only) + Deep SORT"
  python3 scripts/tracking_speed.py --detector yolov3 --device cuda --random-weights --size 416 --json "$OUT/track_h200.json" >>"$LOG" 2>&1
  python3 scripts/tracking_speed.py --detector yolov3 --device cuda --random-weights --size 416 --precision fp16 >>"$LOG" 2>&1 ;;
snake)
  say "snake training speed on CUDA"
  hw demo snake train --minutes 1 --device cuda --out /tmp/snake_cuda.pt >>"$LOG" 2>&1
  hw demo snake eval /tmp/snake_cuda.pt --episodes 100 >>"$LOG" 2>&1 ;;
esac
done
say done
