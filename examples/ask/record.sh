#!/usr/bin/env bash
# Re-records examples/ask/recording/: a real run of examples/ask/ask.sql
# against SmolLM2-135M-Instruct (see examples/tools/record.sh).
PORT="${PORT:-8093}" exec "$(dirname "$0")/../tools/record.sh" examples/ask/recording -f examples/ask/ask.sql
