#!/usr/bin/env bash
# Static type check of the package: mypy, strict, on python/sliceflow (the source tree; the
# compiled module through its stubs python/sliceflow/_core/*.pyi). The settings and the
# per-module exceptions are in pyproject.toml ([tool.mypy]). Arguments go to mypy:
#
#   bash scripts/typecheck.sh                          # the whole package
#   bash scripts/typecheck.sh python/sliceflow/json.py # one file (its imports are followed)
#
# Needs mypy (in the `test` extra). A few seconds, less with a warm .mypy_cache/.
set -euo pipefail
cd "$(dirname "$0")/.."
py=${PYTHON:-.venv/bin/python}
if ! "$py" -c 'import mypy' 2>/dev/null; then
  echo "typecheck: mypy is missing from $py; install it with \`$py -m pip install mypy\`" \
    "(it is in the \`test\` extra)" >&2
  exit 1
fi
exec "$py" -m mypy "$@"
