#!/usr/bin/env bash
# The data-path analyzer on a GPU box (measured on an H200 with 16 cores, PyTorch only, no Qt) with its defaults, through
# hwbench's own CLI: RUNS default runs one after another (each: every stage alone, steady-state
# loader-fed ResNet-50 BF16 training with 15 workers, then its own advice tried end to end within
# its 180 s budget), then a summary of each run: stages, verdict, the what-ifs with their measured
# rates, the best configuration found (overall, with decode in the workers, with decode on the GPU)
# and the epoch-start cost. About 10 minutes for the first run on a fresh box (608 s on an H200 on 2026-12-04,
# with the 16,384 JPEGs generated), less for later ones:
#   bash scripts/gpu_box_datapath.sh [RUNS [DEADLINE_S [MIN_LEFT_S]]]   (default: 3 runs; none started after 1500 s
#                                                              or with less than 240 s left)
# PARAMS adds parameters to every run (e.g. PARAMS="-p budget_s=10": the same defaults with less time for the
# what-ifs). Documents go to $OUT/datapath_results (or /tmp/hwbench-datapath-results), tarred after each run into
# $OUT/datapath_results.tgz, so a killed call still brings back the runs it finished.
set -u
cd "$(dirname "$0")/.."
export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}. PYTHONUNBUFFERED=1
export HWBENCH_DATA_DIR=${HWBENCH_DATA_DIR:-/tmp/hwbench-data}
BASE=${OUT:-/tmp/hwbench-datapath-results}
RESULTS=$BASE/datapath_results
mkdir -p "$RESULTS"
LOG=$BASE/datapath_log.txt
RUNS=${1:-3}
DEADLINE_S=${2:-1500}
MIN_LEFT_S=${3:-240}  # a default run takes about 3 minutes: none is started with less left
start=$(date +%s)

say() { echo "=== $* ($(date +%T))" | tee -a "$LOG"; }

for i in $(seq 1 "$RUNS"); do
  left=$((DEADLINE_S - ($(date +%s) - start)))
  if [ "$left" -lt "$MIN_LEFT_S" ]; then say "run $i not started: $left s left"; break; fi
  say "datapath.analyze with its defaults, run $i of $RUNS ($left s left)"
  # shellcheck disable=SC2086  # PARAMS: extra '-p name=value' words, e.g. PARAMS="-p budget_s=10"
  timeout --signal=KILL $((left + 30)) python3 -m hwbench_gui.cli run datapath.analyze --out "$RESULTS" \
    --timeout "$left" ${PARAMS:-} 2>&1 | tee -a "$LOG"
  echo "exit ${PIPESTATUS[0]}" | tee -a "$LOG"
  if [ -n "${OUT:-}" ]; then tar czf "$OUT/datapath_results.tgz" -C "$BASE" datapath_results; fi
done

say summary
python3 - "$RESULTS" <<'PY' 2>&1 | tee -a "$LOG" | tee "$BASE/datapath_summary.txt"
import glob, json, os, sys

docs = []
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    with open(path) as f:
        doc = json.load(f)
    if (doc.get("benchmark") or {}).get("id") == "datapath.analyze":
        docs.append(doc)
for doc in sorted(docs, key=lambda d: d.get("started_at") or ""):
    d = doc.get("details") or {}
    print(f"\n## {doc.get('started_at')} {doc.get('status')} {doc.get('reason') or ''} on {doc.get('device')}, "
          f"{doc.get('duration_s', 0):.0f} s; auto: {', '.join(d.get('auto_params') or [])}")
    if doc.get("status") != "ok":
        print("\n".join((doc.get("log_tail") or [])[-15:]))
        continue
    for s in d.get("stages", []):
        rate = s.get("rate_images_per_s")
        print(f"  {s.get('name', s.get('key')):46s} {'%10.0f' % rate if rate is not None else '         -'} images/s"
              + (f"   ({s['reason']})" if rate is None and s.get("reason") else ""))
    c = d.get("consistency") or {}
    print(f"  headline (default configuration) {doc['figure']['value']:.0f} images/s = {c.get('ratio', 0):.2f} x "
          f"slowest stage alone ({c.get('slowest_stage')} {c.get('slowest_rate', 0):.0f})")
    wait, util = d.get("data_wait_fraction"), d.get("gpu_util_percent")
    print(f"  data wait {wait:.1%}" if wait is not None else "  data wait -",
          f"| GPU util {util:.0f} %" if util is not None else f"| GPU util - ({d.get('gpu_util_reason')})",
          f"| epoch starts in the timed windows: {d.get('epoch_refill_fraction')}")
    e = d.get("epoch_start") or {}
    print(f"  epoch start: {e.get('costs_s')} s, {e.get('fraction')} of an epoch of {e.get('epoch_batches')} batches")
    print(f"  BOTTLENECK [{d.get('bottleneck')}] {d.get('bottleneck_name')}")
    print(f"  VERDICT: {d.get('verdict')}")
    for t in d.get("tried", []):
        rate = t.get("rate_images_per_s")
        print(f"  TRIED {t['key']:22s} {'%8.0f' % rate if rate else '       -'} images/s  {t['seconds']:5.1f} s  "
              f"{t['describe']}" + (f"  ({t['reason']})" if t.get("reason") else ""))
    b = d.get("best_found") or {}
    for name, entry in (("best", b), ("best, decode in workers", b.get("cpu_decode")),
                        ("best, decode on the GPU", b.get("gpu_decode"))):
        if entry:
            print(f"  {name.upper()}: {entry.get('rate_images_per_s', 0):.0f} images/s ({entry.get('describe')}), "
                  f"x{entry.get('gain') or 0:.2f}; slowest stage alone {entry.get('slowest_stage_alone')} "
                  f"{entry.get('slowest_stage_rate') or 0:.0f} -> {entry.get('of_slowest_stage') or 0:.2f}")
    for a in d.get("advice", []):
        gain = f" -> {a['expected_images_per_s']:.0f} images/s (x{a['expected_gain']:.2f})" \
            if a.get("expected_images_per_s") and a.get("expected_gain") else ""
        print(f"  ADVICE {a['action']}{gain} [{a['basis']}]")
    for w in doc.get("warnings") or []:
        print(f"  WARNING {w}")
PY
