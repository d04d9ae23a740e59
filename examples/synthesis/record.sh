#!/usr/bin/env bash
# Re-records examples/synthesis/recording/: a real run of
# examples/synthesis/synthesis.sql against SmolLM2-135M-Instruct (see
# examples/tools/record.sh).
PORT="${PORT:-8091}" exec "$(dirname "$0")/../tools/record.sh" examples/synthesis/recording -f examples/synthesis/synthesis.sql
