#!/usr/bin/env bash
# Creates .flink-venv with Apache Flink (PyFlink) 2.3.0 from PyPI: the reference that
# tests/changelog/test_changelog_flink.py (pytest marker `flink`) compares the changelog model with.
# scripts/test.sh calls it before pytest, so the Flink comparisons run on every test run.
#
# Needs Java 17 (the tests start Flink's JVM) and a Python that apache-flink 2.3.0 has
# wheels for (FLINK_PYTHON, default python3). The first run downloads and installs PyFlink
# (850 MB installed, most of it Flink's jars and Apache Beam; 2 to 3 minutes). Idempotent:
# .flink-venv/.sliceflow-flink records the interpreter's version and what was installed, and
# a re-run that finds both unchanged returns at once. pip's output goes to
# build/flink-venv.log; on failure its tail is printed.
set -euo pipefail
cd "$(dirname "$0")/.."

REQUIREMENT="apache-flink==2.3.0"
PY="${FLINK_PYTHON:-python3}"
venv=.flink-venv
stamp=$venv/.sliceflow-flink
mkdir -p build
log=build/flink-venv.log
start=$SECONDS

version() { "$1" -c 'import sys; print(sys.version.split()[0])'; }
want="$(version "$PY") $REQUIREMENT"
if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  echo "flink-venv: $venv is up to date ($want; $((SECONDS - start)) s)"
  exit 0
fi

fail() {
  echo "flink-venv: $1 failed (last lines of $log below)" >&2
  tail -n 40 "$log" >&2
  exit 1
}
: >"$log"
# A venv from another interpreter is made anew; otherwise pip installs over what is there.
if [ -x "$venv/bin/python" ] && [ "$(version "$venv/bin/python")" != "${want%% *}" ]; then
  rm -rf "$venv"
fi
rm -f "$stamp"
if [ ! -x "$venv/bin/python" ]; then
  "$PY" -m venv "$venv" >>"$log" 2>&1 || fail "$PY -m venv $venv"
fi
"$venv/bin/python" -m pip install --upgrade pip >>"$log" 2>&1 || fail "pip install --upgrade pip"
"$venv/bin/python" -m pip install "$REQUIREMENT" >>"$log" 2>&1 || fail "pip install $REQUIREMENT"
"$venv/bin/python" -c 'import pyflink, sys; print("pyflink", pyflink.__file__, sys.version)' \
  >>"$log" 2>&1 || fail "import pyflink"
echo "$want" >"$stamp"
echo "flink-venv: installed $REQUIREMENT into $venv ($((SECONDS - start)) s; log: $log)"
