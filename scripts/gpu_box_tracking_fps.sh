#!/usr/bin/env bash
# YOLOv3-416 + Deep SORT frames per second on a GPU box, through `hwbench demo track` (random weights:
# the timing is real, the detections are noise), against the 60 FPS the tracking demo should keep.
# A generated 640x480 clip of 300 frames with walking figures (no footage needed); FP32 and FP16, with
# and without a CUDA graph; each run's printed summary and result document are written under $OUT as they
# come. About 2 minutes on an H100 (a minute of it the first cuDNN autotuning), each run limited to 150 s.
#   OUT=/tmp/out bash scripts/gpu_box_tracking_fps.sh
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/hwbench-tracking-fps}
mkdir -p "$OUT/results"
export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}. PYTHONUNBUFFERED=1
export HWBENCH_DATA_DIR=/tmp/hwbench-data
LOG="$OUT/log.txt"
say() { echo "=== $* ($(date +%T))" | tee -a "$LOG"; }

say "clip: 300 generated frames, 640x480"
python3 - <<'PY' >>"$LOG" 2>&1
from hwbench_gui.demos.tracking import synthetic
spec = synthetic.random_spec(n_frames=300, width=640, height=480, n_objects=12, seed=7)
synthetic.write_sequence(spec, "/tmp/tracking_fps.mp4", "/tmp/tracking_fps_gt.txt")
PY
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee -a "$LOG"
for precision in fp32 fp16; do
  for graph in "" "--cuda-graph"; do
    say "YOLOv3-416 $precision ${graph:-eager} + Deep SORT"
    timeout 150 python3 -m hwbench_gui.cli demo track --source /tmp/tracking_fps.mp4 --detector yolov3 \
      --random-weights --device cuda --size 416 --precision "$precision" $graph --max-det 20 --conf 0 \
      --out "$OUT/tracks_${precision}${graph:+_graph}.txt" --results-dir "$OUT/results" 2>&1 | tee -a "$LOG"
    echo "exit ${PIPESTATUS[0]}" | tee -a "$LOG"
  done
done
say "steady FPS per run (target: 60 or more)"
grep -E "^=== YOLOv3|^steady:" "$LOG" | tee "$OUT/summary.txt"
