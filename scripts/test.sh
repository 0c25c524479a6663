#!/usr/bin/env bash
# The whole test suite: set-up, lint, C++ fuzz run and sanitizer build, then pytest
# (unit, differential against Spark, local[*] and local-cluster Spark, microbenchmarks).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PYSPARK_PYTHON="$PWD/.venv/bin/python"
export PYSPARK_DRIVER_PYTHON="$PWD/.venv/bin/python"

.venv/bin/ruff check .
.venv/bin/ruff format --check .
bash scripts/sanitize.sh
# The package source lives in python/, so the tests import the installed build.
.venv/bin/python -m pytest tests "$@"
