#!/usr/bin/env bash
# Figures to trust, on a GPU box, through hwbench's own CLI, writing as it goes under $OUT:
#   dmon   a ResNet-50 BF16 training run with `nvidia-smi dmon` sampled beside it: the result's
#          timed-phase GPU utilisation against dmon's over the same windows (scripts/dmon_compare.py)
#   refs   the micro-benchmarks and ResNet-50 FP32 training with default parameters: the H200 reference
#          documents a default run elsewhere compares with
#   demo   a tracking demo run on the GPU leaves its result document
#   orphans  the CLI SIGKILLed during a GPU training run that reads a folder with 8 loader workers:
#          the worker, its loader workers and the GPU memory must be gone a second later
#   OUT=/tmp/out bash scripts/gpu_box_trust.sh [dmon refs demo]
set -u
OUT=${OUT:-/tmp/hwbench-trust}
mkdir -p "$OUT"
export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}. PYTHONUNBUFFERED=1
export HWBENCH_DATA_DIR=/tmp/hwbench-data HWBENCH_RESULTS_DIR=/tmp/hwbench-results
LOG="$OUT/log.txt"
hw() { python3 -m hwbench_gui.cli "$@"; }
say() { echo "=== $* ($(date +%T))" | tee -a "$LOG"; }
keep() { tar -C /tmp -czf "$OUT/results.tar.gz" hwbench-results 2>/dev/null; }
steps=${*:-dmon refs demo}

for step in $steps; do
case $step in
dmon)
  say "ResNet-50 BF16-AMP training, default repeats and timed windows, nvidia-smi dmon beside it"
  nvidia-smi dmon -s u -o DT -d 1 >"$OUT/dmon.txt" 2>&1 &
  dmon=$!
  hw run model.resnet50 -p precision=bf16-amp --json >"$OUT/resnet50_bf16.json" 2>>"$LOG"; echo "exit $?" >>"$LOG"
  kill $dmon; wait $dmon 2>/dev/null
  python3 scripts/dmon_compare.py "$OUT/resnet50_bf16.json" "$OUT/dmon.txt" | tee -a "$LOG"
  keep ;;
refs)
  for b in gpu.pcie gpu.d2d gpu.matmul host.membw cpu.decode disk.read model.resnet50; do
    say "run $b (defaults)"
    hw run "$b" --quiet >>"$LOG" 2>&1; echo "exit $?" >>"$LOG"
    keep
  done ;;
demo)
  say "tracking demo on the GPU (random weights: speed only)"
  python3 - <<'PY' >>"$LOG" 2>&1
from hwbench_gui.demos.tracking import synthetic
import cv2
spec = synthetic.crossing_spec(n_frames=150, width=640, height=480, seed=3)
out = cv2.VideoWriter("/tmp/scene.mp4", cv2.VideoWriter_fourcc(*"mp4v"), 25, (640, 480))
for _, frame, _ in synthetic.render(spec):
    out.write(frame)
out.release()
PY
  hw demo track --source /tmp/scene.mp4 --detector yolov3 --random-weights --device cuda --precision fp16 \
    --cuda-graph --max-det 20 --conf 0 --out /tmp/tracks.txt >>"$LOG" 2>&1; echo "exit $?" >>"$LOG"
  keep ;;
orphans)
  say "SIGKILL the CLI during a ResNet-50 run on a folder with 8 loader workers"
  python3 - <<'PY' >>"$LOG" 2>&1
import pathlib, cv2, numpy as np
rng = np.random.default_rng(0)
for c in range(2):
    d = pathlib.Path(f"/tmp/imgs/c{c}"); d.mkdir(parents=True, exist_ok=True)
    for i in range(256):
        cv2.imwrite(str(d / f"{i}.jpg"), rng.integers(0, 255, (240, 320, 3), dtype=np.uint8))
PY
  # python itself in the background (a shell function would put a subshell between $! and the CLI)
  python3 -m hwbench_gui.cli run model.resnet50 -p data=/tmp/imgs -p workers=8 -p repeats=1000 -p batch=64 \
    2>"$OUT/cli_stderr.txt" >/dev/null &
  cli=$!
  for i in $(seq 120); do
    nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader >"$OUT/apps_before.txt" 2>&1
    [ -s "$OUT/apps_before.txt" ] && [ "$(pgrep -c -f 'hwbench_gui|multiprocessing')" -ge 10 ] && break
    sleep 1
  done
  sleep 3
  ps -eo pid,ppid,pgid,stat,rss,args --forest | grep -E 'hwbench|multiprocessing' | grep -v grep >"$OUT/ps_before.txt"
  cat "$OUT/apps_before.txt" >>"$LOG"; echo "processes before: $(wc -l <"$OUT/ps_before.txt")" >>"$LOG"
  echo "kill -9 $cli ($(tr '\0' ' ' </proc/$cli/cmdline | cut -c1-60))" >>"$LOG"
  kill -9 $cli; wait $cli 2>/dev/null
  sleep 1
  nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader >"$OUT/apps_after.txt" 2>&1
  ps -eo pid,ppid,pgid,stat,rss,args --forest | grep -E 'hwbench|multiprocessing' | grep -v grep >"$OUT/ps_after.txt"
  echo "1 s after kill -9: GPU apps: $(wc -l <"$OUT/apps_after.txt"), processes: $(wc -l <"$OUT/ps_after.txt")" | tee -a "$LOG"
  nvidia-smi --query-gpu=memory.used --format=csv,noheader | tee -a "$LOG" ;;
esac
done
say done
