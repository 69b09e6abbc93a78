#!/usr/bin/env bash
# Weight-only quantized decoding on a GPU box, through hwbench's own CLI, beside gpt-fast: llm.infer on
# llama-3.1-8b with weights bf16, int8, int4 (int4_kernel=auto: packed; int4-compiled: the nibbles torch.compile fuses)
# and fp8 (tg128 at depth 0, batch 1, and pp512; step=auto: fused),
# each of bf16 and int8 followed by gpt-fast's generate.py --compile on random weights of the same kind
# (scripts/peers/gpt-fast), then a summary against the targets. One call of at most BUDGET_S seconds (default 470:
# under 8 minutes); each group gets what is left of it, capped, so the summary always runs:
#   bash scripts/gpu_llm_quant.sh [FOLDER]   (groups: bf16 gptfast-bf16 int8 gptfast-int8 int4 int4-compiled fp8 summary)
#   QUANT_GROUPS="int4 int4-compiled summary" bash scripts/gpu_llm_quant.sh     (some of them: both int4 routes)
# Documents go to FOLDER (default $OUT, else /tmp/hwbench-llm-quant) as they come, with the log and summary.
set -u
cd "$(dirname "$0")/.."
export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}. PYTHONUNBUFFERED=1
DIR=${1:-${OUT:-/tmp/hwbench-llm-quant}}
export HWBENCH_RESULTS_DIR=$DIR
mkdir -p "$DIR"
LOG=$DIR/quant_log.txt
MODEL=${MODEL:-llama-3.1-8b}
BUDGET_S=${BUDGET_S:-470}
SUMMARY_S=15  # kept back for the summary
START=$(date +%s)

. scripts/gpu_lib.sh
bench() { bench_run llm.infer "$1" 40 "${@:2}"; }
peer() {
  local limit; limit=$(allow "$1"); shift
  if (( limit < 40 )); then say "skipped (budget spent): gpt-fast $*"; return; fi
  say "gpt-fast generate.py --compile, random weights, $* (at most $limit s)"
  timeout "$limit" python3 scripts/peers/gpt-fast/random_weights.py --model "$MODEL" "$@" 2>>"$DIR/gptfast_stderr.txt" \
    | tee -a "$LOG" | grep '^{' >> "$DIR/gptfast.jsonl"
  echo "exit ${PIPESTATUS[0]}" | tee -a "$LOG"
}

COMMON=(model="$MODEL" precision=bf16 depths=0 batch=1 tg=128 pp=512 serve=false)
for group in ${QUANT_GROUPS:-bf16 gptfast-bf16 int8 gptfast-int8 int4 int4-compiled fp8 summary}; do
case $group in
bf16)
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv | tee -a "$LOG"
  python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)" | tee -a "$LOG"
  bench 100 "${COMMON[@]}" weights=bf16 ;;
int8|int4|fp8)
  bench 100 "${COMMON[@]}" weights="$group" ;;
int4-compiled)
  bench 100 "${COMMON[@]}" weights=int4 int4_kernel=compiled ;;
gptfast-bf16|gptfast-int8)
  peer 150 --weights "${group#gptfast-}" --max-new-tokens 128 ;;
summary)
  say summary
  python3 - "$DIR" 2>&1 <<'PY' | tee -a "$LOG" | tee "$DIR/quant_summary.txt"
import glob, json, os, sys
folder = sys.argv[1]
# Targets: tg128 at depth 0 of its own bandwidth bound (fp8, int8 >= 0.75; int4 >= 0.60), pp512 >= 0.60 of the
# measured matmul rate, and >= 1.0 x gpt-fast for bf16 and int8.
TG_TARGET = {"fp8": 0.75, "int8": 0.75, "int4": 0.60}
docs = []
for path in sorted(glob.glob(os.path.join(folder, "*llm.infer*.json"))):
    try:
        docs.append(json.load(open(path)))
    except (OSError, ValueError) as exc:
        print(f"{path}: unreadable ({exc})")
peers = {}
if os.path.exists(os.path.join(folder, "gptfast.jsonl")):
    for line in open(os.path.join(folder, "gptfast.jsonl")):
        row = json.loads(line)
        peers[row["weights"]] = row
print(f"{'weights':13} {'tg128 tok/s':>12} {'of bound':>9} {'bound':>8} {'pp512 tok/s':>12} {'of matmul':>10}  gpt-fast")
for doc in docs:
    if doc.get("status") != "ok":
        print(f"{doc.get('params', {}).get('weights')}: {doc.get('status')}: {doc.get('error') or doc.get('reason')}")
        continue
    d = doc["details"]
    weights = doc["params"].get("weights", "bf16")
    route = doc["params"].get("int4_kernel")  # auto resolved to the route the run took
    label = f"{weights}/{route}" if weights == "int4" and route else weights
    tg, pp = d["tg"][0], d["pp"][0]
    med = lambda xs: sorted(xs)[len(xs) // 2]
    tg_v, pp_v = med(tg["tokens_per_s"]), med(pp["tokens_per_s"])
    tg_f, pp_f = tg.get("fraction_of_bound"), pp.get("fraction_of_bound")
    peer = peers.get(weights)
    ratio = f"{peer['tokens_per_s_median']:.1f} tok/s ({tg_v / peer['tokens_per_s_median']:.2f}x)" if peer else "-"
    fmt = lambda f: f"{f:.2f}" if f is not None else "n/a"
    print(f"{label:13} {tg_v:12.1f} {fmt(tg_f):>9} {tg['bound_tokens_per_s']:8.1f} {pp_v:12.0f} {fmt(pp_f):>10}  {ratio}")
    print(f"  prompt pass prepared (compile, graph capture) in {pp.get('prompt_build_s', float('nan')):.1f} s, "
          f"one-token step in {tg.get('step_build_s', float('nan')):.1f} s")
    want = TG_TARGET.get(weights)
    if want is not None and tg_f is not None:
        print(f"  tg target {want:.2f} of bound: {'met' if tg_f >= want else 'MISSED'}; pp target 0.60: "
              f"{'met' if (pp_f or 0) >= 0.60 else 'MISSED'}")
    for line in d.get("summary", [])[:1]:
        print(f"  {line}")
for weights, peer in peers.items():
    print(f"gpt-fast {weights}: {peer['tokens_per_s_median']:.1f} tok/s (samples {[round(r, 1) for r in peer['tokens_per_s']]}, "
          f"compile run {peer['compile_run_s']:.0f} s, {peer['model_bytes'] / 1e9:.2f} GB of weights)")
PY
  ;;
esac
done
say done
