#!/usr/bin/env bash
# Re-records examples/review/recording/: a real run of
# examples/review/review.sql against SmolLM2-135M-Instruct (see
# examples/tools/record.sh).
PORT="${PORT:-8090}" exec "$(dirname "$0")/../tools/record.sh" examples/review/recording -f examples/review/review.sql
