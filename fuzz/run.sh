#!/usr/bin/env bash
# Runs the fuzz targets (all, or those named) over their corpora and prints
# one line per target: executions, the slowest input, peak memory. Stops at
# the first target that finds a crash, a slow input (over 2 s) or one that
# needs over 1 GiB (libFuzzer writes it under fuzz/artifacts/<target>/).
#   FUZZ_SECONDS=20 fuzz/run.sh          # the smoke run CI makes
#   FUZZ_RUNS=1000000 fuzz/run.sh pdf    # a run of 10^6 executions
#   FUZZ_ARGS="-max_len=65536" fuzz/run.sh pdf   # more libFuzzer flags
set -euo pipefail
cd "$(dirname "$0")"
TARGET_DIR="${QUARRY_FUZZ_TARGET:-/var/cache/quarry-fuzz-target}"
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(pdf docx html jats protocol parse_reply numbers exports)
[ -d corpus ] || ./seed.sh >/dev/null
LIMIT="-max_total_time=${FUZZ_SECONDS:-20}"
[ -n "${FUZZ_RUNS:-}" ] && LIMIT="-runs=$FUZZ_RUNS"
for t in "${TARGETS[@]}"; do
  log="$(mktemp)"
  if ! cargo +nightly fuzz run -s none --target-dir "$TARGET_DIR" "$t" "corpus/$t" -- \
      "$LIMIT" -timeout=2 -rss_limit_mb=1024 -malloc_limit_mb=1024 -print_final_stats=1 \
      -close_fd_mask=3 ${FUZZ_ARGS:-} >"$log" 2>&1; then
    tail -40 "$log"
    echo "fuzz $t: FAILED (the input is under fuzz/artifacts/$t/)" >&2
    exit 1
  fi
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  slow=$(grep -o 'stat::slowest_unit_time_sec: *[0-9.]*' "$log" | grep -o '[0-9.]*$' || echo "?")
  rss=$(grep -o 'stat::peak_rss_mb: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo "?")
  echo "fuzz $t: $runs executions, slowest input ${slow} s, peak ${rss} MB, coverage $cov edges, no crash"
  rm -f "$log"
done
