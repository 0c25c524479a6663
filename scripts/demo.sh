#!/usr/bin/env bash
# The main job: set-up, then the streaming pipeline demo on local Spark (see
# examples/pipeline_demo.py; arguments go to it, e.g. `bash scripts/demo.sh 2000000`).
# The set-up installs only what the demo runs and says what it builds (apt's and pip's output go
# to build/setup.log); with unchanged sources it takes about a second.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --demo
export PYSPARK_PYTHON="$PWD/.venv/bin/python"
export PYSPARK_DRIVER_PYTHON="$PWD/.venv/bin/python"
# PySpark's transformWithStateInPandas driver worker prints five debugging messages, each
# followed by a blank line, to stderr per stateful query: leave them (and blank lines) out.
exec .venv/bin/python examples/pipeline_demo.py "$@" \
    2> >(grep -v --line-buffered -e '^Streaming TransformWithStateInPandas Python worker' \
        -e '^Starting Streaming TransformWithStateInPandas Python worker' -e '^$' >&2)
