#!/usr/bin/env bash
# One GPU kind's reference set in one sitting, made like another kind's so that `hwbench compare` of the
# two folders pairs every row: each document of LIKE_DIR again here (`hwbench run --like FILE`: its
# benchmark and the parameters that decide comparability, timing at the defaults), then the seed suite
# (`hwbench run --suite seed`, every parameter at its default), then a one-minute burn-in, while the
# deadline allows. Start it with gpu_box_detached.sh (it outlasts a device call); documents under $KEEP/ref.
#   bash scripts/gpu_box_reference.sh LIKE_DIR [DEADLINE_S]      (default 1300 s)
# Measured 2026-12-07 on one H100 80GB HBM3: see resources/reference/README.md.
set -u
cd "$(dirname "$0")/.."
LIKE_DIR=${1:?folder of documents to run like}
DEADLINE_S=${2:-1300}
KEEP=${KEEP:-/tmp/hwbench-reference}
REF=$KEEP/ref
mkdir -p "$REF"
export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}. PYTHONUNBUFFERED=1 HWBENCH_DATA_DIR=/tmp/hwbench-data
start=$(date +%s)
left() { echo $((DEADLINE_S - ($(date +%s) - start))); }
say() { echo "=== $* ($(date +%T), $(left) s left)"; }
hw() { python3 -m hwbench_gui.cli "$@"; }

nvidia-smi --query-gpu=name,memory.total,driver_version,power.limit,pcie.link.gen.max,pcie.link.width.max --format=csv
nproc; free -g | head -2
git log -1 --format='hwbench at %h %s' 2>/dev/null || true

# Each like-run is given the seconds it took on the other kind plus a margin, and skipped when fewer are left.
# One document per configuration (the newest); no demos, and no model benchmarks (the seed suite runs
# those at their defaults).
like_list() {
  python3 - "$LIKE_DIR" <<'PY'
import json, pathlib, sys
seen, out = set(), []
files = sorted(pathlib.Path(sys.argv[1]).rglob("*.json"), key=lambda p: p.name, reverse=True)
for path in files:
    doc = json.loads(path.read_text())
    bench = (doc.get("benchmark") or {}).get("id", "")
    if not bench or bench.startswith(("demo.", "model.")) or doc.get("status") != "ok":
        continue
    asked = {**(doc.get("params") or {}), **(doc.get("params_requested") or {})}
    key = (bench, json.dumps({k: v for k, v in asked.items() if k not in ("repeats", "steps", "warmup", "min_time_s")},
                             sort_keys=True))
    if key not in seen:
        seen.add(key)
        out.append((not bench.startswith("llm."), bench != "llm.train", int(float(doc.get("duration_s") or 60)), path))
# the shortest first: the most rows when the deadline cuts the list
for _, _, seconds, path in sorted(out, key=lambda o: o[2]):
    print("first" if "llama-3.1-8b" in path.read_text()[:4000] and "llm.train" in path.name else "rest", seconds, path)
PY
}
run_like() {  # the like-runs whose first field is $1
  like_list | while read -r first took doc; do
    [ "$first" = "$1" ] || continue
    need=$((took * 3 / 2 + 30))
    if [ "$(left)" -lt "$need" ]; then say "skipped (needs about $need s): $doc"; continue; fi
    say "like $doc"
    hw run --like "$doc" --out "$REF" --quiet 2>&1 | tail -n 4
  done
}
# The 8B LoRA first (the comparison a buyer wants), then the seed suite (about 750 s on one H100 or H200:
# PyTorch's 16 runs; TensorFlow is not on the box), then the other like-runs while time is left.
run_like first
if [ "$(left)" -gt 800 ]; then
  say "seed suite"
  hw run --suite seed --out "$REF/seed-suite" >"$KEEP/suite_log.txt" 2>&1
  echo "exit $?" >>"$KEEP/suite_log.txt"
  grep -v "\[ *[0-9.?]*%\]" "$KEEP/suite_log.txt" | tail -n 24
else
  say "seed suite skipped"
fi
run_like rest
if [ "$(left)" -gt 100 ]; then
  say "burn-in, one minute"
  hw run health.burnin -p minutes=1 --out "$REF" --quiet 2>&1 | tail -n 6
fi
say "done"
ls -la "$REF" "$REF/seed-suite" 2>/dev/null | wc -l
