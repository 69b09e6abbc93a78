#!/usr/bin/env bash
# Whisper on a GPU box through hwbench's own CLI, with transformers' generate as the peer in the same call, then a
# summary against the targets (encoder MFU >= 0.40; decoding >= 0.70 of its bandwidth bound at batch 1; real-time
# factor >= 1.5 x transformers' defaults at the same batch). One call of at most BUDGET_S seconds (default 290:
# under 5 minutes on an H100); each group gets what is left of it, capped, so the summary always runs:
#   bash scripts/gpu_speech.sh [FOLDER]
#   SPEECH_GROUPS="large turbo summary" bash scripts/gpu_speech.sh     (some of them)
# large:  speech.transcribe large-v3, BF16, batches 1 and 16, 128 tokens per window, step=graph
# turbo:  the same for large-v3-turbo
# peer:   scripts/speech_peer.py: transformers' WhisperForConditionalGeneration.generate at its defaults, each model
#         at batch 1 and 16 (same architecture, random weights, BF16, 128 tokens per window)
# fused:  large-v3 batch 1 with step=fused (torch.compile'd blocks in CUDA graphs), if budget remains
# Documents go to FOLDER (default $OUT, else /tmp/hwbench-speech-results) as they come, with the log and summary.
set -u
cd "$(dirname "$0")/.."
export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}. PYTHONUNBUFFERED=1
DIR=${1:-${OUT:-/tmp/hwbench-speech-results}}
export HWBENCH_RESULTS_DIR=$DIR
mkdir -p "$DIR"
LOG=$DIR/speech_log.txt
BUDGET_S=${BUDGET_S:-290}
BATCHED=${BATCHED:-16}
TOKENS=${TOKENS:-128}
SUMMARY_S=10
START=$(date +%s)

BENCH_FLAGS=  # the run's own lines are the log
. scripts/gpu_lib.sh
bench() { bench_run speech.transcribe "$1" 25 "${@:2}"; }
peer() {
  local limit; limit=$(allow "$1"); shift
  if (( limit < 20 )); then say "peer skipped (budget spent): $*"; return; fi
  say "peer: transformers generate $* (at most $limit s)"
  timeout "$limit" python3 scripts/speech_peer.py "$@" 2>&1 | grep -v -i "warn" | tee -a "$LOG"
}

for group in ${SPEECH_GROUPS:-large turbo peer fused summary}; do
case $group in
large)
  nvidia-smi --query-gpu=name,memory.total,memory.used,driver_version,clocks.max.sm --format=csv | tee -a "$LOG"
  python3 -c "import torch, transformers; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'transformers', transformers.__version__)" | tee -a "$LOG"
  bench 100 model=large-v3 precision=bf16 batches=1,$BATCHED tokens=$TOKENS step=graph ;;
turbo)
  bench 70 model=large-v3-turbo precision=bf16 batches=1,$BATCHED tokens=$TOKENS step=graph ;;
peer)
  for model in large-v3 large-v3-turbo; do
    for batch in 1 $BATCHED; do
      peer 45 --model $model --batch $batch --tokens $TOKENS --precision bf16 --out "$DIR/speech_peer_${model}_b${batch}.json"
    done
  done ;;
fused)
  bench 90 model=large-v3 precision=bf16 batches=1 tokens=$TOKENS step=fused ;;
summary)
  say summary
  python3 - "$DIR" 2>&1 <<'PY' | tee -a "$LOG" | tee "$DIR/speech_summary.txt"
import glob, json, os, statistics, sys

folder = sys.argv[1]
ours = {}
for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError):
        continue
    if not isinstance(doc, dict) or doc.get("benchmark", {}).get("id") != "speech.transcribe":
        continue
    if doc.get("status") != "ok":
        print(f"{os.path.basename(path)}: {doc.get('status')}: {doc.get('reason')}")
        continue
    p = doc["params"]
    for row in doc["details"]["rows"]:
        key = (p["model"], row["batch"], p["step"])
        ours[key] = row
        enc = statistics.median(row["encoder_seconds_per_window"])
        mfu = row["encoder_mfu"]
        frac = row["decoder_fraction_of_bound"]
        print(f"hwbench {p['model']} step={p['step']} batch {row['batch']}: RTF {statistics.median(row['real_time_factor']):.1f}, "
              f"encoder {enc * 1e3:.1f} ms/window MFU {mfu if mfu is None else f'{mfu:.2f}'} "
              f"(of measured matmul {row['encoder_fraction_of_matmul']}), decoding "
              f"{statistics.median(row['decoder_tokens_per_s']):.0f} tokens/s = {frac if frac is None else f'{frac:.2f}'} of bound")
for path in sorted(glob.glob(os.path.join(folder, "speech_peer_*.json"))):
    with open(path) as f:
        peer = json.load(f)
    if "error" in peer:
        print(f"peer {peer['model']} batch {peer['batch']}: failed: {peer['error']}")
        continue
    mine = ours.get((peer["model"], peer["batch"], "graph"))
    ratio = (statistics.median(mine["real_time_factor"]) / peer["real_time_factor_median"]) if mine else None
    print(f"peer {peer['model']} batch {peer['batch']}: RTF {peer['real_time_factor_median']:.1f}"
          + (f"; hwbench step=graph / peer = {ratio:.2f} (target >= 1.5)" if ratio else ""))
PY
  ;;
esac
done
say "done"
