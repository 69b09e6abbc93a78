#!/usr/bin/env bash
# Language-model inference on a GPU box, through hwbench's own CLI, then the peer (transformers' generate)
# at the same settings, then a summary against the issue's targets. About 6-8 minutes in all; the groups can
# be run as separate calls when one call may last at most 10 minutes:
#   bash scripts/gpu_box_llm.sh [FOLDER]                 (groups: infer compiled eager peer summary)
#   LLM_GROUPS="infer summary" bash scripts/gpu_box_llm.sh   (some of them)
# infer:    llm.infer llama-3.1-8b BF16, defaults (pp512 / tg128 at depths 0, 4096, 16384; serving sweep 1..256)
# compiled: the same at depth 0 with step=compile (torch.compile's fused kernels in a CUDA graph), no serving
# eager:    the same at depth 0 with step=eager (no CUDA graphs): what the graphs buy, and a figure if capture fails
# peer:     scripts/llm_peer.py: generate eager and static cache + torch.compile (reduce-overhead), depth 0
#           (PEER_DEPTHS=0,4096 adds a depth; each costs about a minute more)
# Documents go to FOLDER (default $OUT, else /tmp/hwbench-llm-results) as they come, with the log and summary.
set -u
cd "$(dirname "$0")/.."
export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}. PYTHONUNBUFFERED=1
DIR=${1:-${OUT:-/tmp/hwbench-llm-results}}
export HWBENCH_RESULTS_DIR=$DIR
mkdir -p "$DIR"
LOG=$DIR/llm_log.txt
MODEL=${MODEL:-llama-3.1-8b}

say() { echo "=== $* ($(date +%T))" | tee -a "$LOG"; }
bench() {
  local limit=$1; shift
  local args=()
  for p in "$@"; do args+=(--param "$p"); done
  say "llm.infer $*"
  python3 -m hwbench_gui.cli run llm.infer "${args[@]}" --out "$DIR" --timeout "$limit" --quiet 2>&1 | tee -a "$LOG"
  echo "exit ${PIPESTATUS[0]}" | tee -a "$LOG"
}

for group in ${LLM_GROUPS:-infer compiled eager peer summary}; do
case $group in
infer)
  nvidia-smi --query-gpu=name,memory.total,memory.used,driver_version,clocks.max.sm --format=csv | tee -a "$LOG"
  python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)" | tee -a "$LOG"
  bench 420 model="$MODEL" precision=bf16 ;;
compiled)
  bench 300 model="$MODEL" precision=bf16 step=compile depths=0 serve=false ;;
eager)
  bench 240 model="$MODEL" precision=bf16 step=eager depths=0 serve=false ;;
peer)
  say "peer: transformers generate (eager; static cache + torch.compile reduce-overhead), depth 0"
  timeout 420 python3 scripts/llm_peer.py --model "$MODEL" --depths "${PEER_DEPTHS:-0}" --out "$DIR/llm_peer.json" 2>&1 \
    | grep -v -i "warn" | tee -a "$LOG"
  echo "exit ${PIPESTATUS[0]}" | tee -a "$LOG" ;;
summary)
  say summary
  python3 - "$DIR" 2>&1 <<'PY' | tee -a "$LOG" | tee "$DIR/llm_summary.txt"
import glob, json, os, sys

folder = sys.argv[1]
docs = []
for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
    with open(path) as f:
        doc = json.load(f)
    if isinstance(doc, dict) and doc.get("benchmark", {}).get("id") == "llm.infer":
        docs.append((os.path.basename(path), doc))
peer = None
if os.path.exists(os.path.join(folder, "llm_peer.json")):
    with open(os.path.join(folder, "llm_peer.json")) as f:
        peer = json.load(f)

# Targets of issue #34 (fractions of this GPU's own measured limits).
TARGETS = {"tg128 @ depth 0": 0.80, "tg128 @ depth 16384": 0.70, "pp512 @ depth 0": 0.60}
best = {}
for name, d in docs:
    p = d["params"]
    print(f"\n{name}: {d['status']} step={p.get('step')} {d.get('precision')} on {d.get('device')} "
          f"({d.get('duration_s', 0):.0f} s)")
    if d["status"] != "ok":
        print(f"  reason: {d.get('reason')}")
        continue
    det = d["details"]
    lim = det["limits"]
    print(f"  limits: copy {lim['bandwidth_gbps_median']:.0f} GB/s, matmul {lim['matmul_tflops_median']:.0f} TFLOP/s; "
          f"datasheet: {json.dumps(det['datasheet'])}")
    for key in ("pp", "tg"):
        for row in det[key]:
            fig = d["figures"][f"{key}{p[key]} @ depth {row['depth']}"]
            st = fig["stats"]
            spread = (st["p95"] - st["p5"]) / st["median"]
            print(f"  {key}{p[key]:<4} depth {row['depth']:>6}: {fig['value']:10.1f} tokens/s  p5 {st['p5']:.1f} "
                  f"p95 {st['p95']:.1f} (spread {spread:.1%})  bound {row['bound_tokens_per_s']:.1f}  "
                  f"-> {row['fraction_of_bound']:.3f} of bound")
            k = f"{key}{p[key]} @ depth {row['depth']}"
            best[k] = max(best.get(k, (0, 0, "")), (row["fraction_of_bound"], fig["value"], p.get("step")))
    for s in det.get("serving", []):
        print(f"  serving c={s['concurrency']:>4}: {sum(s['output_tokens_per_s'])/len(s['output_tokens_per_s']):9.0f} "
              f"output tokens/s  TTFT p50 {s['ttft']['p50']:.3f} s p99 {s['ttft']['p99']:.3f} s  TPOT p50 "
              f"{s['tpot']['p50']*1e3:.1f} ms p99 {s['tpot']['p99']*1e3:.1f} ms  within target: {s['meets_target']}")
    for c, why in det.get("serving_skipped", {}).items():
        print(f"  serving c={c} skipped: {why}")
    if det.get("serving") or det.get("serving_skipped"):
        print(f"  largest concurrency within target: {det['largest_concurrency_within_target']}")
    mem = det["memory"]
    print(f"  memory: plan {mem['plan']['total_bytes']/2**30:.2f} GiB, peak allocated "
          f"{(mem.get('peak_allocated_bytes') or 0)/2**30:.2f} GiB, free before {mem['free_before_bytes']/2**30:.2f} GiB")
    for w in d.get("warnings") or []:
        print(f"  warning: {w}")
print()
for name, goal in TARGETS.items():
    got = best.get(name)
    verdict = "not run" if got is None else ("MET" if got[0] >= goal else "MISSED")
    print(f"target {name} >= {goal} of bound: best {got and round(got[0], 3)} "
          f"({got and round(got[1], 1)} tokens/s, step={got and got[2]}) -> {verdict}")
if peer:
    print(f"\npeer: transformers {peer['transformers']}, torch {peer['torch']}, {peer['device_name']}")
    for variant, v in peer["variants"].items():
        if v["status"] != "ok":
            print(f"  {variant}: failed: {v['error']}")
            continue
        for name, f in v["figures"].items():
            ours = best.get(name)
            ratio = f" -> hwbench {ours[1] / f['median']:.2f}x" if ours else ""
            print(f"  {variant:15} {name}: {f['median']:.1f} tokens/s (p5 {f['p5']:.1f}, p95 {f['p95']:.1f}){ratio}")
PY
  ;;
*) echo "unknown group $group (infer compiled eager peer summary)" >&2; exit 2 ;;
esac
done
say done
