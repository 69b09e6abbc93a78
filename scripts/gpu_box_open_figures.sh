#!/usr/bin/env bash
# Every GPU figure the open work still needs, in one uninterrupted run, most needed first, while the deadline
# allows (start it with gpu_box_detached.sh: it outlasts a device call). Each part writes under $KEEP/<part> as it
# goes, so what a cut run leaves still comes back:
#   gemv       scripts/llm_quant_layers.py and llm_quant_gemv.py: each quantized layer alone (prompt TFLOP/s,
#              one-token GB/s) and the FP8 conversion variants against the copy rate (about 3 minutes)
#   diffusion  scripts/gpu_diffusion.sh: SDXL and Flux BF16 with diffusers' defaults and fast settings (FAST_MODE
#              default: torch.compile's default mode, not max-autotune), then FP8
#   speech     scripts/gpu_speech.sh: Whisper large-v3 and turbo beside transformers' generate
#   quant      scripts/gpu_llm_quant.sh: llama-3.1-8b weights bf16/int8/int4/fp8 beside gpt-fast
#   tracking   scripts/gpu_box_tracking_fps.sh: YOLOv3-416 + Deep SORT frames per second
#   burnin     the shipped H100 burn-ins (one minute, with and without the result check) run --like here, so
#              the reference folder of this GPU kind holds a burn-in beside its other runs (about 2.5 minutes;
#              --like takes only what decides comparability, and the length does not: it is given again)
#   serve      scripts/gpu_llm_serve.sh: the serving sweep over HTTP against in-process
# diffusers must travel as a wheel (see gpu_diffusion.sh's header): name .whl in the call's carry.
#   bash scripts/gpu_box_detached.sh start open bash scripts/gpu_box_open_figures.sh [DEADLINE_S [PARTS]]
#   bash scripts/gpu_box_detached.sh wait open 540          (then again, within 30 s of the last call's end)
# Default deadline 1500 s; PARTS default "gemv diffusion speech quant tracking burnin serve".
set -u
cd "$(dirname "$0")/.."
KEEP=${KEEP:-/tmp/hwbench-open-figures}
DEADLINE_S=${1:-1500}
PARTS=${2:-gemv diffusion speech quant tracking burnin serve}
START=$(date +%s)
mkdir -p "$KEEP"
left() { echo $(( DEADLINE_S - ($(date +%s) - START) )); }
part() {  # part NAME BUDGET_S COMMAND...: run when BUDGET_S fit in what is left, with at most that long
  local name=$1 budget=$2; shift 2
  if (( $(left) < budget )); then echo "=== $name skipped: $(left) s left, it takes up to $budget s"; return; fi
  echo "=== $name (up to $budget s, $(date +%T), $(left) s left)"
  mkdir -p "$KEEP/$name"
  BUDGET_S=$budget OUT=$KEEP/$name timeout -k 10 $(( budget + 30 )) "$@" "$KEEP/$name" >"$KEEP/$name/part_log.txt" 2>&1
  echo "exit $?"
  tail -n 25 "$KEEP/$name/part_log.txt"
}
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm,power.limit --format=csv
for name in $PARTS; do
  case $name in
  gemv) part gemv 240 bash -c 'python3 scripts/llm_quant_layers.py | tee "$0/layers.txt"; python3 scripts/llm_quant_gemv.py | tee "$0/gemv.txt"' ;;
  diffusion) FAST_MODE=${FAST_MODE:-default} part diffusion 450 bash scripts/gpu_diffusion.sh ;;
  speech) part speech 290 bash scripts/gpu_speech.sh ;;
  quant) part quant 470 bash scripts/gpu_llm_quant.sh ;;
  tracking) part tracking 150 bash -c 'OUT="$0" bash scripts/gpu_box_tracking_fps.sh' ;;
  burnin) part burnin 170 bash -c 'for like in resources/reference/h100/health-2026-12-05/*health.burnin*.json; do
      HWBENCH_DATA_DIR=/tmp/hwbench-data HWBENCH_RESULTS_DIR="$0" PYTHONPATH=. python3 -m hwbench_gui.cli run --like "$like" -p minutes=1
    done' ;;
  serve) part serve 340 bash scripts/gpu_llm_serve.sh ;;
  *) echo "=== unknown part $name (gemv diffusion speech quant tracking burnin serve)" ;;
  esac
done
echo "=== all parts done ($(left) s left)"
