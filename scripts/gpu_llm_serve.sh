#!/usr/bin/env bash
# hwbench's own engine served over HTTP, beside the same engine's in-process serving sweep, on one GPU: at most about
# 6 minutes on an H100 (BUDGET_S, default 340 s; each step gets what is left of it, capped).
#   bash scripts/gpu_llm_serve.sh [FOLDER]          (documents, logs and the summary under FOLDER, default $OUT)
# 1. llm.infer MODEL (default llama-3.1-8b) BF16, depth 0 only, its serving sweep at 1,4,16,64 sequences of 512 prompt +
#    128 output tokens (a closed batch each, 4 timed scenarios): the in-process figures.
# 2. hwbench serve MODEL on 127.0.0.1:PORT (random weights, BF16, the one-token step as llm.infer runs it).
# 3. llm.endpoint against it: the same requests over HTTP (/v1/completions, stream, token-id prompts), 1,4,16,64
#    concurrent, 4 timed scenarios each, and the largest concurrency within each preset from the measured levels.
# 4. The summary: HTTP output tokens/s against in-process at each concurrency, the HTTP overhead (1 - ratio) and the
#    TTFT added, from the two documents.
set -u
cd "$(dirname "$0")/.."
export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}. PYTHONUNBUFFERED=1
DIR=${1:-${OUT:-/tmp/hwbench-serve-results}}
mkdir -p "$DIR/infer" "$DIR/endpoint"
LOG=$DIR/serve_log.txt
MODEL=${MODEL:-llama-3.1-8b}
PORT=${PORT:-8123}
CONC=${CONC:-1,4,16,64}
BUDGET_S=${BUDGET_S:-340}
SUMMARY_S=10
START=$(date +%s)
. scripts/gpu_lib.sh

nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee -a "$LOG"
# hwbench serve and llm.endpoint need aiohttp (the serve extra); an offline box gets it from WHEELS, a folder of wheels
# (pip download aiohttp -d WHEELS --python-version 3.X --only-binary=:all: on a machine with internet)
if ! python3 -c "import aiohttp" 2>/dev/null && [ -n "${WHEELS:-}" ]; then
  python3 -m pip install -q --no-index --find-links "$WHEELS" aiohttp 2>&1 | tail -2 | tee -a "$LOG"
fi
python3 -c "import aiohttp, torch; print('aiohttp', aiohttp.__version__, 'torch', torch.__version__)" 2>&1 | tee -a "$LOG"

limit=$(allow 160)
say "llm.infer $MODEL in-process serving sweep at $CONC (at most $limit s)"
python3 -m hwbench_gui.cli run llm.infer -p model="$MODEL" -p precision=bf16 -p depths=0 -p concurrency="$CONC" \
  -p serve_prompt=512 -p serve_output=128 -p serve_repeats=4 -p repeats=3 --out "$DIR/infer" --timeout "$limit" \
  --quiet 2>&1 | tee -a "$LOG"

say "hwbench serve $MODEL on port $PORT"
python3 -m hwbench_gui.cli serve --model "$MODEL" --precision bf16 --port "$PORT" --context 1024 --max-batch 64 --gather-ms 50 \
  > "$DIR/serve_stdout.txt" 2> "$DIR/serve_stderr.txt" &
SERVER=$!
trap 'kill $SERVER 2>/dev/null; wait $SERVER 2>/dev/null' EXIT
for _ in $(seq 1 120); do
  grep -q "^serving" "$DIR/serve_stdout.txt" 2>/dev/null && break
  kill -0 $SERVER 2>/dev/null || break
  sleep 1
done
cat "$DIR/serve_stdout.txt" "$DIR/serve_stderr.txt" | tee -a "$LOG"

limit=$(allow 240)
say "llm.endpoint against http://127.0.0.1:$PORT/v1 at $CONC (at most $limit s)"
python3 -m hwbench_gui.cli run llm.endpoint -p url="http://127.0.0.1:$PORT/v1" -p concurrency="$CONC" \
  -p prompt_tokens=512 -p output_tokens=128 -p repeats=4 --out "$DIR/endpoint" --timeout "$limit" 2>&1 | tee -a "$LOG"
kill $SERVER 2>/dev/null; wait $SERVER 2>/dev/null
tail -5 "$DIR/serve_stderr.txt" >> "$LOG"

say "summary"
python3 - "$DIR" <<'PY' 2>&1 | tee "$DIR/serve_summary.txt" | tee -a "$LOG"
import glob, json, statistics, sys
folder = sys.argv[1]
def newest(pattern):
    paths = sorted(glob.glob(f"{folder}/{pattern}"))
    return json.load(open(paths[-1])) if paths else None
infer, http = newest("infer/*llm.infer*.json"), newest("endpoint/*llm.endpoint*.json")
for name, doc in (("llm.infer", infer), ("llm.endpoint", http)):
    if doc is None or doc.get("status") != "ok":
        print(f"{name}: no result ({doc.get('reason') if doc else 'no document'})")
if not (infer and http and infer.get("status") == "ok" and http.get("status") == "ok"):
    sys.exit(0)
print(f"device: {infer['device']}; endpoint {http['details']['endpoint']['url']}")
inproc = {p["concurrency"]: p for p in infer["details"]["serving"]}
print("sequences  in-process tok/s  HTTP tok/s  HTTP/in-process  TTFT p50 in-process / HTTP  TPOT p50 in-process / HTTP")
for p in http["details"]["serving"]:
    c, q = p["concurrency"], inproc.get(p["concurrency"])
    if q is None:
        continue
    a, b = statistics.median(q["output_tokens_per_s"]), statistics.median(p["output_tokens_per_s"])
    print(f"{c:9d}  {a:16,.0f}  {b:10,.0f}  {b / a:15.3f}  {q['ttft']['p50'] * 1e3:10.0f} / {p['ttft']['p50'] * 1e3:.0f} ms"
          f"  {q['tpot']['p50'] * 1e3:10.1f} / {p['tpot']['p50'] * 1e3:.1f} ms")
    if c == max(inproc):
        print(f"HTTP overhead at {c} sequences: {1 - b / a:+.1%} of the in-process output tokens/s "
              f"(target: within 10 %: {'met' if b >= 0.9 * a else 'NOT met'})")
for line in http["details"]["summary"]:
    print("HTTP:", line)
PY
say "done"
