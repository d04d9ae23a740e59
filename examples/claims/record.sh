#!/usr/bin/env bash
# Re-records examples/claims/recording/: a real run of claims() over
# examples/claims/corpus/ with examples/claims/claims.toml against
# SmolLM2-135M-Instruct (see examples/tools/record.sh).
exec "$(dirname "$0")/../tools/record.sh" examples/claims/recording \
  -c "SELECT count(*) AS claims FROM claims('examples/claims/corpus/', 'examples/claims/claims.toml')" \
  -c "SELECT count(*) AS rejections FROM rejections('examples/claims/corpus/', 'examples/claims/claims.toml')"
