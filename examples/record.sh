#!/usr/bin/env bash
# Re-records examples/recording/: a real run of examples/quickstart.sql
# (examples/protocol.toml over examples/corpus/) against SmolLM2-135M-Instruct
# served by llama.cpp (installed as .ci/run installs it). Only the trace
# (calls/*.parquet) is kept; `--replay examples/recording` answers from it.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${QUARRY_VENV:-$HOME/.cache/quarry/venv}"
PORT="${PORT:-8089}"
"$VENV/bin/python" tests/support/llama_server.py "$PORT" "${THREADS:-2}" &
server=$!
trap 'kill $server 2>/dev/null' EXIT
until curl -sf "http://127.0.0.1:$PORT/health" >/dev/null; do sleep 0.5; done
rm -rf examples/recording
OPENAI_BASE_URL="http://127.0.0.1:$PORT/v1" cargo run --quiet -- sql --store examples/recording -f examples/quickstart.sql
find examples/recording -mindepth 1 -maxdepth 1 ! -name calls -exec rm -rf {} +
echo "recorded $(ls examples/recording/calls | wc -l) trace file(s) in examples/recording/calls/"
