# Sourced, never run, by the GPU-box scripts that run groups of hwbench CLI runs within one call's budget:
# `say` logs a step with the seconds spent, `allow CAP` gives a group its cap or what is left of the budget (less the
# summary's share), whichever is smaller, and `bench_run BENCH_ID CAP LEAST PARAM...` runs `hwbench run` with those
# parameters for at most that long (skipped, and said, when less than LEAST seconds are left). The sourcing script
# sets LOG, DIR, BUDGET_S, SUMMARY_S and START first; BENCH_FLAGS (default --quiet) is passed to every run.

say() { echo "=== $* ($(date +%T), $(( $(date +%s) - START )) s in)" | tee -a "$LOG"; }

allow() {
  local left=$(( BUDGET_S - SUMMARY_S - ($(date +%s) - START) ))
  (( left < $1 )) && echo "$left" || echo "$1"
}

bench_run() {
  local bench=$1 limit least=$3
  limit=$(allow "$2"); shift 3
  if (( limit < least )); then say "skipped (budget spent): $bench $*"; return; fi
  local args=()
  for p in "$@"; do args+=(--param "$p"); done
  say "$bench $* (at most $limit s)"
  # shellcheck disable=SC2086  # BENCH_FLAGS is a list of flags, or empty
  python3 -m hwbench_gui.cli run "$bench" "${args[@]}" --out "$DIR" --timeout "$limit" ${BENCH_FLAGS---quiet} 2>&1 \
    | tee -a "$LOG"
  echo "exit ${PIPESTATUS[0]}" | tee -a "$LOG"
}
