#!/usr/bin/env bash
# One GPU-box session's measurements in one uninterrupted run (start it with gpu_box_detached.sh when
# it outlasts a device call): the data-path analyzer with its defaults (the first run generates the
# dataset), the seed suite (`hwbench run --suite seed`: every PyTorch cell, timed as a whole), then
# more default data-path runs while the session's deadline allows. Everything under $KEEP.
#   bash scripts/gpu_box_session.sh [DEADLINE_S [DATAPATH_RUNS]]   (default 1600 s, 3 runs)
set -u
cd "$(dirname "$0")/.."
KEEP=${KEEP:-/tmp/hwbench-session}
DEADLINE_S=${1:-1600}
RUNS=${2:-3}
DATAPATH_MIN_LEFT_S=300  # a default data-path run with a generated dataset already there: about 5 minutes
mkdir -p "$KEEP"
export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}. PYTHONUNBUFFERED=1 HWBENCH_DATA_DIR=/tmp/hwbench-data
start=$(date +%s)
left() { echo $((DEADLINE_S - ($(date +%s) - start))); }
say() { echo "=== $* ($(date +%T), $(left) s left)"; }

nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm,power.limit --format=csv
nproc
say "data-path analyzer, default run 1"
OUT=$KEEP bash scripts/gpu_box_datapath.sh 1 "$(left)" 0 >/dev/null
tail -n 30 "$KEEP/datapath_summary.txt"

say "seed suite"
suite_start=$(date +%s)
python3 -m hwbench_gui.cli run --suite seed --out "$KEEP/suite" >"$KEEP/suite_log.txt" 2>&1
echo "exit $?; the suite took $(($(date +%s) - suite_start)) s" | tee -a "$KEEP/suite_log.txt"
grep -v "\[ *[0-9.?]*%\]" "$KEEP/suite_log.txt" | tail -n 40

for i in $(seq 2 "$RUNS"); do
  if [ "$(left)" -lt "$DATAPATH_MIN_LEFT_S" ]; then say "data-path run $i not started"; break; fi
  say "data-path analyzer, default run $i"
  OUT=$KEEP bash scripts/gpu_box_datapath.sh 1 "$(left)" 0 >/dev/null
done
say "summary"
cat "$KEEP/datapath_summary.txt"
