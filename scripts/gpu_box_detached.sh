#!/usr/bin/env bash
# Work longer than one device call (10 minutes) as one uninterrupted run on a GPU box: `start` launches
# a command in a session of its own (setsid), so it outlives the call that started it; `wait`, in the
# same call or a later one on the same machine, waits up to S seconds for it and brings back what it
# kept so far. The command's output goes to /tmp/hwbench-detached/NAME/log; it keeps its files under
# $KEEP (/tmp/hwbench-detached/NAME/keep), which `wait` tars into $OUT/NAME.tgz, done or not.
#   bash scripts/gpu_box_detached.sh start NAME COMMAND...
#   bash scripts/gpu_box_detached.sh wait NAME SECONDS
# `wait` exits 0 once the command has ended (its exit status is in the log's last line), 3 while it runs.
set -u
cd "$(dirname "$0")/.."
verb=${1:?start or wait} name=${2:?name}
dir=/tmp/hwbench-detached/$name
case $verb in
start)
  shift 2
  mkdir -p "$dir/keep"
  KEEP=$dir/keep setsid nohup bash -c '"$@"; echo "=== ended with exit status $? ($(date +%T))"' _ "$@" \
    >"$dir/log" 2>&1 </dev/null &
  echo "started $name (pid $!): $*" ;;
wait)
  limit=${3:?seconds}
  start=$(date +%s)
  while ! grep -q '^=== ended with exit status' "$dir/log" 2>/dev/null; do
    [ $(($(date +%s) - start)) -ge "$limit" ] && break
    sleep 5
  done
  cp "$dir/log" "$dir/keep/log.txt" 2>/dev/null
  if [ -n "${OUT:-}" ]; then tar czf "$OUT/$name.tgz" -C "$dir" keep; fi
  tail -n 40 "$dir/log"
  grep -q '^=== ended with exit status' "$dir/log" || { echo "=== $name still running after ${limit} s"; exit 3; } ;;
*) echo "unknown verb $verb (start, wait)" >&2; exit 2 ;;
esac
