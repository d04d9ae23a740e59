#!/usr/bin/env bash
# Records a real run into a store kept in the repository: starts
# SmolLM2-135M-Instruct on llama.cpp's server (installed as .ci/run installs
# it), runs `quarry sql --store RECORDING ARGS...` against it, and keeps only
# the trace (the Delta Lake table tables/calls/), which `--replay RECORDING`
# answers from. QUARRY_BIN names a built quarry (else `cargo run --release`);
# PORT and THREADS the server's.
#
#   examples/tools/record.sh RECORDING [quarry sql arguments...]
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 RECORDING [quarry sql arguments...]" >&2; exit 2; }
rec="$1"
shift
cd "$(dirname "$0")/../.."
VENV="${QUARRY_VENV:-$HOME/.cache/quarry/venv}"
PORT="${PORT:-8089}"
"$VENV/bin/python" tests/support/llama_server.py "$PORT" "${THREADS:-2}" &
server=$!
trap 'kill $server 2>/dev/null' EXIT
until curl -sf "http://127.0.0.1:$PORT/health" >/dev/null; do sleep 0.5; done
rm -rf "$rec"
if [ -n "${QUARRY_BIN:-}" ]; then run=("$QUARRY_BIN"); else run=(cargo run --quiet --release --); fi
OPENAI_BASE_URL="http://127.0.0.1:$PORT/v1" "${run[@]}" sql --store "$rec" "$@"
find "$rec" -mindepth 1 -maxdepth 1 ! -name tables -exec rm -rf {} +
find "$rec/tables" -mindepth 1 -maxdepth 1 ! -name calls -exec rm -rf {} +
echo "recorded $(find "$rec/tables/calls" -name '*.parquet' | wc -l) data file(s) in $rec/tables/calls/"
