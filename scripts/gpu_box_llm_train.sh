#!/usr/bin/env bash
# llm.train's three target runs on a GPU box through hwbench's own CLI, each followed by the peer (a plain
# transformers + torch.compile training loop, scripts/llm_train_peer.py) at the same settings: the same model,
# method, sequence and the micro-batch hwbench found. About 8 minutes in all; the groups can be run as separate
# calls when one call may last at most 10 minutes:
#   bash scripts/gpu_box_llm_train.sh                      (groups: gpt2 llama1b llama8b summary)
#   bash scripts/gpu_box_llm_train.sh gpt2 llama1b         then: llama8b summary
#   bash scripts/gpu_box_llm_train.sh fp8 summary          gpt2-124m and llama-3.2-1b with precision=fp8 (FP8 block
#                                                          matmuls; no peer: the box has no torchao to build one)
#   PEER=0 bash scripts/gpu_box_llm_train.sh               (hwbench only)
# Targets (issue #35): gpt2-124m BF16 seq 1024 MFU >= 0.40; llama-3.2-1b BF16 seq 2048 MFU >= 0.40;
# llama-3.1-8b LoRA seq 2048 runs on one GPU with MFU >= 0.35; each >= 1.0 x the peer; peak memory within
# 10 % of the estimate. Documents go to $HWBENCH_RESULTS_DIR (default /tmp/hwbench-llm-train); with $OUT set,
# the log, the peers' JSON and the documents are copied there as they come.
set -u
cd "$(dirname "$0")/.."
export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}. PYTHONUNBUFFERED=1
export HWBENCH_RESULTS_DIR=${HWBENCH_RESULTS_DIR:-/tmp/hwbench-llm-train}
mkdir -p "$HWBENCH_RESULTS_DIR"
LOG=${OUT:+$OUT/llm_train_log.txt}
LOG=${LOG:-$HWBENCH_RESULTS_DIR/log.txt}
mkdir -p "$(dirname "$LOG")"
PEER=${PEER:-1}

say() { echo "=== $* ($(date +%T))" | tee -a "$LOG"; }
copy_out() { [ -n "${OUT:-}" ] && cp "$@" "$OUT"/ 2>/dev/null; true; }

# train NAME LIMIT_S PARAMS...: one llm.train run, then the peer at the micro-batch it used.
train() {
  local name=$1 limit=$2; shift 2
  local args=()
  for p in "$@"; do args+=(--param "$p"); done
  say "llm.train $*"
  python3 -m hwbench_gui.cli run llm.train "${args[@]}" --timeout "$limit" --quiet 2>&1 | tee -a "$LOG"
  echo "exit ${PIPESTATUS[0]}" | tee -a "$LOG"
  local doc
  doc=$(ls -t "$HWBENCH_RESULTS_DIR"/*llm.train*.json 2>/dev/null | head -1)
  [ -n "$doc" ] && cp "$doc" "$HWBENCH_RESULTS_DIR/$name.hwbench.json" && copy_out "$HWBENCH_RESULTS_DIR/$name.hwbench.json"
  [ "$PEER" = 1 ] || return 0
  local peer_args
  peer_args=$(python3 - "$HWBENCH_RESULTS_DIR/$name.hwbench.json" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
p = doc["params"]
print(f"--model {p['model']} --method {p['method']} --seq {p['seq']} --micro-batch {p['micro_batch'] or 1} "
      f"--grad-accum {p['grad_accum']} --lora-rank {p['lora_rank']} --lora-alpha {p['lora_alpha']}")
EOF
)
  say "peer (transformers) $peer_args"
  # shellcheck disable=SC2086  # $peer_args is meant to split into arguments
  timeout "$limit" python3 scripts/llm_train_peer.py $peer_args --steps 3 --windows 5 --warmup 3 \
    --out "$HWBENCH_RESULTS_DIR/$name.peer.json" 2>&1 | grep -v Warning | tee -a "$LOG"
  copy_out "$HWBENCH_RESULTS_DIR/$name.peer.json"
}

groups=${*:-gpt2 llama1b llama8b summary}
for group in $groups; do
case $group in
gpt2)
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv | tee -a "$LOG"
  python3 -c "import torch, sys; print('torch', torch.__version__); import transformers; print('transformers', transformers.__version__)" 2>&1 | tee -a "$LOG"
  train gpt2 240 model=gpt2-124m method=full precision=bf16-amp seq=1024 ;;
llama1b)
  train llama1b 300 model=llama-3.2-1b method=full precision=bf16-amp seq=2048 ;;
llama8b)
  train llama8b 360 model=llama-3.1-8b method=lora precision=bf16-amp seq=2048 ;;
fp8)
  PEER=0 train gpt2_fp8 240 model=gpt2-124m method=full precision=fp8 seq=1024
  PEER=0 train llama1b_fp8 300 model=llama-3.2-1b method=full precision=fp8 seq=2048 ;;
summary)
  say "summary: MFU against the datasheet and the measured matmul, peak vs estimate, hwbench / peer"
  python3 - "$HWBENCH_RESULTS_DIR" <<'EOF' 2>&1 | tee -a "$LOG"
import json, os, sys
folder = sys.argv[1]
targets = {"gpt2": 0.40, "llama1b": 0.40, "llama8b": 0.35, "gpt2_fp8": None, "llama1b_fp8": None}
for name, target in targets.items():
    path = os.path.join(folder, f"{name}.hwbench.json")
    if not os.path.exists(path):
        print(f"{name}: no document"); continue
    doc = json.load(open(path))
    if doc.get("status") != "ok":
        print(f"{name}: {doc.get('status')}: {doc.get('reason')}"); continue
    f = doc["figures"]
    rate = doc["figure"]["value"]
    mfu = f["mfu_datasheet"].get("value")
    line = (f"{name}: {rate:,.0f} tokens/s, micro-batch {doc['params']['micro_batch']}, MFU {mfu if mfu is None else round(mfu, 3)} "
            f"(target {target}) vs measured matmul {f['mfu_measured_matmul'].get('value') and round(f['mfu_measured_matmul']['value'], 3)}, "
            f"peak {f['peak_allocated_gib']['value'] and round(f['peak_allocated_gib']['value'], 1)} GiB / estimate "
            f"{round(f['memory_estimate_gib']['value'], 1)} GiB")
    peer = os.path.join(folder, f"{name}.peer.json")
    if os.path.exists(peer):
        p = json.load(open(peer))
        if p.get("tokens_per_s"):
            line += (f"; peer {p['tokens_per_s']:,.0f} tokens/s at micro-batch {p['micro_batch']} "
                     f"(OOM at {p['out_of_memory_at']}): hwbench / peer = {rate / p['tokens_per_s']:.2f}")
        else:
            line += f"; peer failed: {p.get('error')} (OOM at {p.get('out_of_memory_at')})"
    bf16 = os.path.join(folder, f"{name.removesuffix('_fp8')}.hwbench.json")
    if name.endswith("_fp8") and os.path.exists(bf16):
        other = json.load(open(bf16))
        if other.get("status") == "ok":
            line += f"; FP8 / BF16-AMP tokens/s = {rate / other['figure']['value']:.2f}"
    print(line)
EOF
  copy_out "$LOG" ;;
*)
  echo "unknown group $group (gpt2 llama1b llama8b fp8 summary)" >&2 ;;
esac
done
