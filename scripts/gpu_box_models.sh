#!/usr/bin/env bash
# The model benchmarks on a GPU box (measured on an H200 without TensorFlow), through hwbench's own CLI,
# then a summary table against the figures hwbench was built to reach. About 8 minutes in all; the groups can be run as
# separate calls when one call may last at most 10 minutes:
#   bash scripts/gpu_box_models.sh                 (groups: eager compiled oom summary)
#   bash scripts/gpu_box_models.sh eager           then: compiled oom summary
#   bash scripts/gpu_box_models.sh multi summary   (on a machine with 2+ GPUs: DDP scaling)
#   bash scripts/gpu_box_models.sh maxbatch        (largest ResNet-50 BF16-AMP batch; ~2 minutes)
# Documents go to $HWBENCH_RESULTS_DIR (default /tmp/hwbench-model-results); with $OUT set, the log,
# the summary and a tarball of the documents are copied there too.
set -u
cd "$(dirname "$0")/.."
export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}. PYTHONUNBUFFERED=1
export HWBENCH_DATA_DIR=${HWBENCH_DATA_DIR:-/tmp/hwbench-data}
export HWBENCH_RESULTS_DIR=${HWBENCH_RESULTS_DIR:-/tmp/hwbench-model-results}
mkdir -p "$HWBENCH_RESULTS_DIR"
LOG=${OUT:+$OUT/model_suite_log.txt}
LOG=${LOG:-$HWBENCH_RESULTS_DIR/log.txt}
mkdir -p "$(dirname "$LOG")"

say() { echo "=== $* ($(date +%T))" | tee -a "$LOG"; }
# bench LIMIT_S ID PARAMS...: one run; its figure line and any failure reason go to the log and the screen.
bench() {
  local limit=$1 id=$2; shift 2
  local args=()
  for p in "$@"; do args+=(--param "$p"); done
  say "$id $*"
  python3 -m hwbench_gui.cli run "$id" "${args[@]}" --timeout "$limit" --quiet 2>&1 | tee -a "$LOG"
  echo "exit ${PIPESTATUS[0]}" | tee -a "$LOG"
}

R50=model.resnet50
BF16="precision=bf16-amp channels_last=true"
groups=${*:-eager compiled oom summary}
for group in $groups; do
case $group in
eager)
  say "eager runs"
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv | tee -a "$LOG"
  # shellcheck disable=SC2086  # $BF16 is meant to split into two parameters
  bench 240 $R50 mode=train $BF16 batch=256 steps=30 warmup=10
  bench 240 $R50 mode=train precision=tf32 batch=128 steps=30 warmup=5
  bench 240 $R50 mode=train precision=fp32 batch=128 steps=20 warmup=5          # the seed's default, TF32 off
  # shellcheck disable=SC2086
  bench 240 $R50 mode=infer $BF16 batch=256 steps=50 warmup=10                  # + latency at batch 1
  # shellcheck disable=SC2086
  bench 240 model.vgg16 mode=train $BF16 batch=256 steps=30 warmup=10
  bench 240 model.fasterrcnn mode=train precision=bf16-amp batch=16 steps=10 warmup=5
  # shellcheck disable=SC2086
  bench 240 model.unet mode=train $BF16 batch=32 steps=10 warmup=5 ;;
compiled)
  say "torch.compile (default mode) runs: the first warm-up step holds the compile time"
  # shellcheck disable=SC2086
  bench 360 $R50 mode=train $BF16 batch=256 steps=30 warmup=10 compile=true
  # shellcheck disable=SC2086
  bench 300 $R50 mode=infer $BF16 batch=256 steps=50 warmup=10 compile=true ;;
oom)
  say "forced out-of-memory: FP32 training at batch 2048 needs about 190 GB (expected: failed, out_of_memory)"
  bench 240 $R50 mode=train precision=fp32 batch=2048 steps=2 warmup=0 ;;
multi)
  say "DDP over every GPU of this machine (NCCL), with the one-GPU run for the scaling efficiency"
  n=$(nvidia-smi --list-gpus | wc -l)
  # shellcheck disable=SC2086
  bench 500 $R50 mode=train $BF16 batch=256 steps=30 warmup=10 gpus="$n" ;;
maxbatch)
  say "largest ResNet-50 BF16-AMP training batch (doubling from 256, then bisect to 64)"
  python3 -m hwbench_gui.cli maxbatch $R50 -p precision=bf16-amp -p channels_last=true --start 256 --limit 8192 \
    --step 64 2>&1 | tee -a "$LOG" ;;
summary)
  say summary
  python3 - "$HWBENCH_RESULTS_DIR" 2>&1 <<'PY' | tee -a "$LOG" | tee "${OUT:-$HWBENCH_RESULTS_DIR}/model_summary.txt"
import glob, json, os, sys

# Goals from the issue (images/s); compared against the best run of each kind.
GOALS = {("resnet50", "train", "BF16-AMP"): 6500, ("resnet50", "train", "TF32"): 2300,
         ("resnet50", "infer", "BF16-AMP"): 15000, ("vgg16", "train", "BF16-AMP"): 3500}
docs = []
for path in glob.glob(os.path.join(sys.argv[1], "*.json")):
    with open(path) as f:
        doc = json.load(f)
    if doc.get("benchmark", {}).get("id", "").startswith("model."):
        docs.append(doc)
docs.sort(key=lambda d: d["started_at"])

def num(value, fmt="{:.0f}"):
    return "-" if value is None else fmt.format(value)

def fig(doc, name, key="value"):
    return ((doc.get("figures") or {}).get(name) or {}).get(key)

header = ("model", "fw", "gpus", "mode", "precision", "batch", "CL", "compile", "status", "images/s", "step p50 ms", "p99 ms",
          "b1 p50 ms", "peak GiB", "1st step s", "GPU util %", "CPU util %")
rows, best = [], {}
for d in docs:
    p = d["params"]
    model, label = d["benchmark"]["id"].split(".", 1)[1], d.get("precision") or "-"
    value = (d.get("figure") or {}).get("value")
    seed = (d.get("telemetry") or {}).get("seed") or {}
    util_mean = (seed.get("gpu_util_percent") or {}).get("mean")
    cpu_mean = (seed.get("cpu_util_percent") or {}).get("mean")
    rows.append((model, p["framework"], str(p["gpus"]), p["mode"], label, str(p["batch"]), "y" if p["channels_last"] else "n",
                 "y" if p["compile"] else "n", d["status"], num(value), num(fig(d, "step_time", "p50"), "{:.1f}"),
                 num(fig(d, "step_time", "p99"), "{:.1f}"), num(fig(d, "latency_batch1", "p50"), "{:.2f}"),
                 num(fig(d, "peak_reserved_gib"), "{:.1f}"), num(fig(d, "first_step_s"), "{:.1f}"),
                 num(util_mean), num(cpu_mean)))
    if value is not None:
        key = (model, p["mode"], label)
        best[key] = max(best.get(key, 0), value)
widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
for r in [header, *rows]:
    print("  ".join(c.ljust(w) for c, w in zip(r, widths)))
print()
for (model, mode, label), goal in GOALS.items():
    got = best.get((model, mode, label))
    verdict = "not run" if got is None else ("MET" if got >= goal else "MISSED")
    print(f"goal {model} {mode} {label} >= {goal} images/s: best {num(got)} -> {verdict}")
for d in docs:
    if d["status"] != "ok":
        print(f"\n{d['benchmark']['id']} batch {d['params']['batch']} {d['status']} ({d.get('error_kind')}): {d.get('reason')}")
    for w in d.get("warnings") or []:
        print(f"warning ({d['benchmark']['id']} batch {d['params']['batch']}): {w}")
PY
  if [ -n "${OUT:-}" ]; then tar -C "$(dirname "$HWBENCH_RESULTS_DIR")" -czf "$OUT/model_results.tar.gz" \
    "$(basename "$HWBENCH_RESULTS_DIR")"; fi ;;
*) echo "unknown group $group (eager compiled oom multi maxbatch summary)" >&2; exit 2 ;;
esac
done
say done
