#!/usr/bin/env bash
# Image generation on a GPU box, through hwbench's own CLI, with its peers in the same call: diffusion.infer on
# SDXL's UNet and Flux.1-dev's MMDiT at 1024², BF16, batch 1 (FP8 after them where the budget allows), and
# scripts/diffusion_peer.py's diffusers-default and diffusers-fast runs of the same models; then a summary against
# the targets (MFU >= 0.50 of the datasheet peak, >= 1.3x diffusers' defaults and >= 1.0x its fast settings in
# images per minute). One call of at most BUDGET_S seconds (default 350: under 6 minutes); each group gets what
# is left of it, capped, so the summary always runs:
#   bash scripts/gpu_diffusion.sh [FOLDER]
#   DIFF_GROUPS="sdxl peer_sdxl_default summary" bash scripts/gpu_diffusion.sh     (some of them)
# Groups, in order of importance: sdxl, peer_sdxl_default, peer_sdxl_fast (max-autotune: its compile may not end
# within its cap; FAST_MODE=max-autotune-no-cudagraphs or default to shorten), flux, peer_flux_default, fp8, summary.
# Within 350 s the first three or four groups run (caps 130 + 45 + 110 + 120 s); a second call with
# DIFF_GROUPS="flux peer_flux_default fp8 summary" gives the rest (the summary reads every document in FOLDER).
# Not in the default list: sdxl_batch and flux_batch (batch=0: the largest batch that fits, searched with eager
# steps, then compiled and timed at it; about 3 minutes each), and mlperf (SDXL FP8 at MLPerf's 20 steps and the 32
# images a batch of NVIDIA's v4.1 submission, about 3 minutes): the run the published MLPerf figures in
# resources/reference pair with, as the sdxl group's run pairs with diffusers' tutorial figure; see them side by
# side with  python3 -m hwbench_gui.cli compare FOLDER --reference
# diffusers is not in the GPU image: carry its wheel (pure Python, no dependencies missing there) as .whl/:
#   python3 -m pip download --no-deps --only-binary=:all: -d .whl diffusers==0.42.1
# and name .whl in the call's carry; this script installs it into /tmp/site when diffusers is missing.
# Documents, peer JSON, the log and the summary go to FOLDER (default $OUT, else /tmp/hwbench-diffusion-results).
set -u
cd "$(dirname "$0")/.."
if ! python3 -c "import diffusers" 2>/dev/null && ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site
fi
export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}. PYTHONUNBUFFERED=1
DIR=${1:-${OUT:-/tmp/hwbench-diffusion-results}}
export HWBENCH_RESULTS_DIR=$DIR
mkdir -p "$DIR"
LOG=$DIR/diffusion_log.txt
BUDGET_S=${BUDGET_S:-350}
SUMMARY_S=10
FAST_MODE=${FAST_MODE:-max-autotune}
START=$(date +%s)

. scripts/gpu_lib.sh
bench() { bench_run diffusion.infer "$1" 30 "${@:2}"; }
peer() {
  local limit; limit=$(allow "$1"); shift
  local model=$1 variant=$2
  if (( limit < 20 )); then say "skipped (budget spent): peer $model $variant"; return; fi
  say "peer diffusers-$variant $model (at most $limit s)"
  timeout -k 5 "$limit" python3 scripts/diffusion_peer.py --model "$model" --variant "$variant" \
    --compile-mode "$FAST_MODE" --out "$DIR/peer_${model}_${variant}.json" 2>&1 | tail -3 | tee -a "$LOG"
  echo "exit ${PIPESTATUS[0]}" | tee -a "$LOG"
}

for group in ${DIFF_GROUPS:-sdxl peer_sdxl_default peer_sdxl_fast flux peer_flux_default fp8 summary}; do
case $group in
sdxl)
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv | tee -a "$LOG"
  python3 -c "import torch, diffusers; print('torch', torch.__version__, 'diffusers', diffusers.__version__)" 2>&1 | tee -a "$LOG"
  bench 130 model=sdxl precision=bf16 batch=1 ;;
peer_sdxl_default) peer 45 sdxl default ;;
peer_sdxl_fast) peer 110 sdxl fast ;;
flux) bench 120 model=flux-dev precision=bf16 batch=1 ;;
peer_flux_default) peer 50 flux-dev default ;;
fp8) bench 90 model=sdxl precision=fp8 batch=1 ;;
sdxl_batch) bench 200 model=sdxl precision=bf16 batch=0 ;;
flux_batch) bench 200 model=flux-dev precision=bf16 batch=0 ;;
mlperf) bench 200 model=sdxl precision=fp8 steps=20 batch=32 ;;
summary)
  python3 - "$DIR" <<'EOF' 2>&1 | tee "$DIR/diffusion_summary.txt"
import glob, json, os, sys
folder = sys.argv[1]
peers = {}
for path in glob.glob(os.path.join(folder, "peer_*.json")):
    p = json.load(open(path))
    peers[(p["model"], p["peer"])] = p
    print(f"{p['peer']:18} {p['model']:9} {p['status']:6} step {p.get('step_s_median', float('nan')):.4f} s  "
          f"{p.get('images_per_minute', float('nan')):.2f} images/min  {p.get('error', '')}")
for path in sorted(glob.glob(os.path.join(folder, "*diffusion.infer*.json"))):
    d = json.load(open(path))
    if d.get("status") != "ok":
        print(f"hwbench {d['params'].get('model')}: {d.get('status')} {d.get('reason')}")
        continue
    f, prm = d["figures"], d["params"]
    mfu = lambda k: f[k]["value"] if f.get(k, {}).get("value") is not None else float("nan")
    ipm = d["stats"]["median"]
    print(f"hwbench {prm['model']:9} {d['precision']:5} batch {prm['batch']}: step {f['step_time']['value']:.4f} s, "
          f"{ipm:.2f} images/min (bound {f['images_per_minute_bound']['value']:.2f}), MFU datasheet "
          f"{mfu('mfu_datasheet'):.3f} (target >= 0.50), MFU measured {mfu('mfu_measured_matmul'):.3f} "
          f"(target >= 0.70), peak {f.get('memory_peak_gib', {}).get('value', float('nan')):.1f} GiB "
          f"(estimate {f['memory_estimate_gib']['value']:.1f})")
    for variant, target in (("diffusers-default", 1.3), ("diffusers-fast", 1.0)):
        p = peers.get((prm["model"], variant))
        if p and p.get("status") == "ok" and d["precision"] == "BF16":
            print(f"   x{ipm / p['images_per_minute']:.2f} {variant} images/min (target >= {target}), "
                  f"step x{p['step_s_median'] / f['step_time']['value']:.2f}")
EOF
  ;;
esac
done
say "done"
