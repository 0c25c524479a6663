#!/usr/bin/env bash
# The main job: set-up, then the PySpark demo on local Spark (see examples/json_demo.py).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PYSPARK_PYTHON="$PWD/.venv/bin/python"
export PYSPARK_DRIVER_PYTHON="$PWD/.venv/bin/python"
exec .venv/bin/python examples/json_demo.py "$@"
