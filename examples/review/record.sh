#!/usr/bin/env bash
# Re-records examples/review/recording/: a real run of
# examples/review/review.sql against SmolLM2-135M-Instruct served by
# llama.cpp (installed as .ci/run installs it). Only the trace
# (calls/*.parquet) is kept; `--replay examples/review/recording` answers
# from it. QUARRY_BIN names a built quarry (else `cargo run`).
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV="${QUARRY_VENV:-$HOME/.cache/quarry/venv}"
PORT="${PORT:-8090}"
"$VENV/bin/python" tests/support/llama_server.py "$PORT" "${THREADS:-2}" &
server=$!
trap 'kill $server 2>/dev/null' EXIT
until curl -sf "http://127.0.0.1:$PORT/health" >/dev/null; do sleep 0.5; done
rm -rf examples/review/recording
if [ -n "${QUARRY_BIN:-}" ]; then run=("$QUARRY_BIN"); else run=(cargo run --quiet --); fi
OPENAI_BASE_URL="http://127.0.0.1:$PORT/v1" "${run[@]}" sql --store examples/review/recording -f examples/review/review.sql
find examples/review/recording -mindepth 1 -maxdepth 1 ! -name calls -exec rm -rf {} +
echo "recorded $(ls examples/review/recording/calls | wc -l) trace file(s) in examples/review/recording/calls/"
