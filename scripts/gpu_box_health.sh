#!/usr/bin/env bash
# The health burn-in on a GPU box through hwbench's CLI, within about 6 minutes:
#   1. health.burnin for 2 minutes (every GPU and the host, results checked)     -> $OUT/burnin.json
#   2. the same load for 1 minute with check=false (what checking costs)          -> $OUT/burnin_unchecked.json
#   3. gpu.matmul mode=sustained at the burn-in's precision and size (>= 0.95 x)  -> $OUT/matmul_sustained.json
#   4. the check kernels timed one by one beside the GEMMs (scripts/health_check_cost.py) -> $OUT/log.txt
# then a summary against issue #36's targets (scripts/health_summary.py) and the evaluation report of the three.
#   OUT=/tmp/out bash scripts/gpu_box_health.sh        (MINUTES=2 and UNCHECKED_MINUTES=1 by default)
set -u
MINUTES=${MINUTES:-2} UNCHECKED_MINUTES=${UNCHECKED_MINUTES:-1}
OUT=${OUT:-/tmp/hwbench-health}
mkdir -p "$OUT/docs"
export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}. PYTHONUNBUFFERED=1
export HWBENCH_DATA_DIR=/tmp/hwbench-data HWBENCH_RESULTS_DIR="$OUT/docs"
LOG="$OUT/log.txt"
hw() { python3 -m hwbench_gui.cli "$@"; }
say() { echo "=== $* ($(date +%T))" | tee -a "$LOG"; }

say "health.burnin, $MINUTES minutes, checked"
hw run health.burnin -p minutes="$MINUTES" --json >"$OUT/burnin.json" 2>>"$LOG"
echo "exit $? (0 PASS/WARN, 3 FAIL)" | tee -a "$LOG"
precision=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1])).get('precision') or 'bf16')" "$OUT/burnin.json" 2>>"$LOG")
precision=${precision:-bf16}
say "health.burnin, $UNCHECKED_MINUTES minutes, check=false (the load alone)"
hw run health.burnin -p minutes="$UNCHECKED_MINUTES" -p check=false --json >"$OUT/burnin_unchecked.json" 2>>"$LOG"
echo "exit $?" | tee -a "$LOG"
say "gpu.matmul sustained ${precision} 16384"
hw run gpu.matmul -p mode=sustained -p precision="${precision,,}" -p sizes=16384 -p repeats=100 --json \
  >"$OUT/matmul_sustained.json" 2>>"$LOG"
echo "exit $?" | tee -a "$LOG"
say "check kernels, one by one (${precision} 16384)"
python3 scripts/health_check_cost.py --precision "${precision,,}" 2>&1 | tee -a "$LOG"
say summary
python3 scripts/health_summary.py "$OUT/burnin.json" --unchecked "$OUT/burnin_unchecked.json" \
  --matmul "$OUT/matmul_sustained.json" 2>&1 | tee -a "$LOG"
hw report "$OUT/docs" --layout evaluation --html "$OUT/evaluation.html" >>"$LOG" 2>&1
hw report "$OUT/docs" --layout evaluation 2>&1 | sed -n '/^Health burn-in/,/^Micro-benchmarks/p' | tee -a "$LOG"
