#!/usr/bin/env bash
# Re-records examples/claims/recording/: a real run of claims() over
# examples/claims/corpus/ with examples/claims/claims.toml against
# SmolLM2-135M-Instruct served by llama.cpp (installed as .ci/run installs
# it). Only the trace (calls/*.parquet) is kept; `--replay
# examples/claims/recording` answers from it.
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV="${QUARRY_VENV:-$HOME/.cache/quarry/venv}"
PORT="${PORT:-8089}"
"$VENV/bin/python" tests/support/llama_server.py "$PORT" "${THREADS:-2}" &
server=$!
trap 'kill $server 2>/dev/null' EXIT
until curl -sf "http://127.0.0.1:$PORT/health" >/dev/null; do sleep 0.5; done
rm -rf examples/claims/recording
OPENAI_BASE_URL="http://127.0.0.1:$PORT/v1" cargo run --quiet --release -- sql --store examples/claims/recording \
  -c "SELECT count(*) AS claims FROM claims('examples/claims/corpus/', 'examples/claims/claims.toml')" \
  -c "SELECT count(*) AS rejections FROM rejections('examples/claims/corpus/', 'examples/claims/claims.toml')"
find examples/claims/recording -mindepth 1 -maxdepth 1 ! -name calls -exec rm -rf {} +
echo "recorded $(ls examples/claims/recording/calls | wc -l) trace file(s) in examples/claims/recording/calls/"
