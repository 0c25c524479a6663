#!/usr/bin/env bash
# Creates .flink-venv with Apache Flink (PyFlink) 2.3.0: the optional reference that
# tests/test_changelog_flink.py (pytest marker `flink`) compares the changelog model with.
# Needs Java 17 and PyPI; takes a few minutes. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

PY="${FLINK_PYTHON:-python3}"
if [ ! -x .flink-venv/bin/python ]; then
  "$PY" -m venv .flink-venv
fi
.flink-venv/bin/python -m pip install -q --upgrade pip
.flink-venv/bin/python -m pip install -q "apache-flink==2.3.0"
.flink-venv/bin/python -c "import pyflink, sys; print('pyflink', pyflink.__file__, sys.version)"
