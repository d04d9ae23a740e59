#!/usr/bin/env bash
# Re-records examples/recording/: a real run of examples/quickstart.sql
# (examples/protocol.toml over examples/corpus/) against SmolLM2-135M-Instruct
# (see examples/tools/record.sh).
exec "$(dirname "$0")/tools/record.sh" examples/recording -f examples/quickstart.sql
