#!/usr/bin/env bash
# The data-path analyzer on one H200 box (16 cores, PyTorch only, no Qt), through hwbench's own CLI:
# generated 500×375 JPEGs (16384, about 1 GB, written once to $DATASET_DISK and reused; 64 batches per
# epoch, so epoch restarts stay rare) into ResNet-50 BF16-AMP channels-last training at batch 256, first
# with 2 loader workers, then with all 16, then with 16 in FP32 without channels-last (the GPU is
# then the limit, and the analyzer measures BF16 and channels-last as what-ifs); then a table of every
# stage's rate, the verdict and the advice of each run. About 5 minutes in all:
#   bash scripts/h200_datapath.sh                  (the three runs, then the summary)
#   bash scripts/h200_datapath.sh 2 summary        (one worker count; any of: 2 16 <N> <N>fp32 summary)
# Documents go to $HWBENCH_RESULTS_DIR (default /tmp/hwbench-datapath-results); with $OUT set, the log, the
# summary and the documents are copied there too.
set -u
cd "$(dirname "$0")/.."
export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}. PYTHONUNBUFFERED=1
export HWBENCH_DATA_DIR=${HWBENCH_DATA_DIR:-/tmp/hwbench-data}
export HWBENCH_RESULTS_DIR=${HWBENCH_RESULTS_DIR:-/tmp/hwbench-datapath-results}
DATASET_DISK=${DATASET_DISK:-/tmp}
mkdir -p "$HWBENCH_RESULTS_DIR" "$DATASET_DISK"
LOG=${OUT:+$OUT/datapath_log.txt}
LOG=${LOG:-$HWBENCH_RESULTS_DIR/log.txt}
mkdir -p "$(dirname "$LOG")"

say() { echo "=== $* ($(date +%T))" | tee -a "$LOG"; }

analyze() {
  local workers=$1 precision=${2:-bf16-amp} channels_last=${3:-true}
  say "datapath.analyze, $workers loader workers, $precision, channels_last=$channels_last"
  python3 -m hwbench_gui.cli run datapath.analyze \
    --param width=500 --param height=375 --param count=16384 --param dataset_disk="$DATASET_DISK" \
    --param model=resnet50 --param precision="$precision" --param channels_last="$channels_last" --param batch=256 \
    --param workers="$workers" --param device=cuda:0 --param steps=40 --param warmup=10 \
    --timeout 300 2>&1 | tee -a "$LOG"
  echo "exit ${PIPESTATUS[0]}" | tee -a "$LOG"
}

for step in ${*:-2 16 16fp32 summary}; do
case $step in
summary)
  say summary
  python3 - "$HWBENCH_RESULTS_DIR" <<'PY' 2>&1 | tee -a "$LOG" | tee "${OUT:-$HWBENCH_RESULTS_DIR}/datapath_summary.txt"
import glob, json, os, sys

docs = []
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    with open(path) as f:
        doc = json.load(f)
    if (doc.get("benchmark") or {}).get("id") == "datapath.analyze":
        docs.append(doc)
for doc in sorted(docs, key=lambda d: d.get("started_at") or ""):
    p, d = doc.get("params") or {}, doc.get("details") or {}
    print(f"\n## {p.get('workers')} workers, {p.get('model')} {doc.get('precision')} batch {p.get('batch')}: "
          f"{doc.get('status')} {doc.get('reason') or ''} on {doc.get('device')}")
    if doc.get("status") != "ok":
        print("\n".join((doc.get("log_tail") or [])[-15:]))
        continue
    for s in d.get("stages", []):
        rate = s.get("rate_images_per_s")
        print(f"  {s.get('name', s.get('key')):36s} {'%10.0f' % rate if rate is not None else '         -'} images/s"
              + (f"   ({s['reason']})" if rate is None and s.get("reason") else ""))
    wait, util = d.get("data_wait_fraction"), d.get("gpu_util_percent")
    print(f"  data wait {wait:.0%}" if wait is not None else "  data wait -",
          f"| GPU util {util:.0f} %" if util is not None else f"| GPU util - ({d.get('gpu_util_reason')})")
    e2e = next((s for s in d.get("stages", []) if s.get("key") == "end_to_end"), {}).get("extra") or {}
    print(f"  loader drain: {e2e.get('drain_steps')} extra warm-up steps, drained {e2e.get('drained')}; epoch-start "
          f"waits {[round(w, 2) for w in e2e.get('epoch_start_waits_s') or []]} s, refill share "
          f"{d.get('epoch_refill_fraction')}")
    print(f"  VERDICT [{d.get('bottleneck')}]: {d.get('verdict')}")
    for a in d.get("advice", []):
        gain = f" -> {a['expected_images_per_s']:.0f} images/s (x{a['expected_gain']:.2f})" \
            if a.get("expected_images_per_s") and a.get("expected_gain") else ""
        print(f"  ADVICE {a['action']}{gain}: {a['detail']} [{a['basis']}]")
    for w in doc.get("warnings") or []:
        print(f"  WARNING {w}")
PY
  if [ -n "${OUT:-}" ]; then
    mkdir -p "$OUT/datapath_results" && cp "$HWBENCH_RESULTS_DIR"/*.json "$OUT/datapath_results/" 2>/dev/null
  fi ;;
*fp32)
  analyze "${step%fp32}" fp32 false ;;
*)
  analyze "$step" ;;
esac
done
