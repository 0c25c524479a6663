#!/usr/bin/env bash
# The whole test suite: set-up (with .flink-venv), lint and layout (ruff, clang-format), the
# type check (mypy), the _core stubs' check, C++ fuzz run and sanitizer build, then every pytest
# tier (`pytest -m ""`: unit, doctests, differential against Spark and Apache Flink, local[*],
# local-cluster and Connect Spark, the wheel, microbenchmarks run once as checks).
#
#   bash scripts/test.sh                 # everything, on .venv (the newest releases)
#   bash scripts/test.sh --fast          # the inner loop: the fast tier (plain `pytest`: no
#                                        # Spark, Flink, cluster, Connect or slow tests) on the
#                                        # installed build; no set-up, lint or sanitizers
#   bash scripts/test.sh -k window -x    # a selection: set-up, then pytest on every tier with
#                                        # these arguments; no lint, types, stubs or sanitizers
#                                        # (a question about some tests, not about the tree)
#   bash scripts/test.sh --min-versions  # the entry points on the lowest declared versions
#   bash scripts/test.sh --entry-points  # the same tests on .venv (CI's other Pythons)
#
# Further arguments go to pytest in every form (`--fast -k json`, `--entry-points -x`); a `-m`
# among them replaces the tier's marker filter (`-m spark`, `--fast -m slow`).
#
# --min-versions builds .venv-min (scripts/setup.sh --min-versions: the lowest Python of
# requires-python, every `>=` bound of pyproject.toml installed as `==`) and runs, in two
# steps, the tests that touch every entry point:
#   1. core bounds (pyarrow 14): sliceflow.json.decode / read_ndjson / infer_schema, the
#      window, changelog, Top-N and deduplicate kernels and the window API on Arrow data;
#   2. the spark extra's bounds (pyspark 4.1, pyarrow 16, pandas 2.2, numpy 1.22.4): from_json,
#      the sliceflow.json data source (with a schema, inferring one, and as a stream source:
#      spark.readStream.format("sliceflow.json")), window_agg, changelog_agg, deduplicate,
#      from_changelog and topn on batch and streaming DataFrames, and the demo pipeline
#      (building .venv-min takes 3 to 5 minutes more when the sources changed).
set -euo pipefail
cd "$(dirname "$0")/.."

# The tests that touch every entry point, without Spark and with it (a new public entry point
# adds its test file here; the Spark list leaves out the `slow` killed-and-restarted stream).
CORE_TESTS=(-m "not spark" tests/json/test_json_decode.py tests/json/test_fast_path.py
  tests/json/test_json_infer.py tests/window/test_window_kernel.py
  tests/changelog/test_changelog_kernel.py tests/window/test_window_api.py
  tests/window/test_window_stream_steps.py tests/topn/test_topn_kernel.py
  tests/dedup/test_dedup_kernel.py)
SPARK_TESTS=(-m "not slow" tests/json/test_spark_json.py tests/json/test_spark_json_infer_listing.py
  tests/json/test_json_stream_source.py tests/json/test_spark_json_stream.py
  tests/window/test_spark_window.py tests/window/test_spark_window_stream.py
  tests/changelog/test_spark_changelog.py tests/dedup/test_spark_dedup.py
  tests/topn/test_spark_topn.py tests/package/test_demo.py tests/json/test_spark_json_session.py)
run_pytest() {  # pytest on $py; "no tests collected" (a -k that selects none) is no failure
  local rc=0
  "$py" -m pytest "$@" || rc=$?
  [ "$rc" = 0 ] || [ "$rc" = 5 ] || exit "$rc"
}

if [ "${1:-}" = --min-versions ]; then
  shift
  bash scripts/setup.sh --min-versions
  py=.venv-min/bin/python
  export PYSPARK_PYTHON="$PWD/$py"
  export PYSPARK_DRIVER_PYTHON="$PWD/$py"
  log=build/setup-min.log
  pins() {  # installs one list of pins quietly, or shows why not
    if ! "$py" -m pip install -r "$1" >>"$log" 2>&1 || ! "$py" -m pip check >>"$log" 2>&1; then
      echo "installing $1 into .venv-min failed (last lines of $log below)" >&2
      tail -n 40 "$log" >&2
      exit 1
    fi
    "$py" -c 'import sys, importlib.metadata as m
print("versions:", "Python %d.%d.%d" % sys.version_info[:3], *(
    f"{n} {m.version(n)}" for n in ("pyarrow", "pyspark", "pandas", "numpy")
    if any(d.metadata["Name"].lower() == n for d in m.distributions())))'
  }
  pins .venv-min/requirements-core.txt
  run_pytest "${CORE_TESTS[@]}" "$@"
  pins .venv-min/requirements-spark.txt
  run_pytest "${SPARK_TESTS[@]}" "$@"
  exit 0
fi

if [ "${1:-}" = --fast ]; then
  shift
  exec .venv/bin/python -m pytest tests "$@"
fi

if [ "${1:-}" = --entry-points ]; then
  shift
  SLICEFLOW_FUZZ_TOOLS=0 bash scripts/setup.sh
  py=.venv/bin/python
  export PYSPARK_PYTHON="$PWD/$py"
  export PYSPARK_DRIVER_PYTHON="$PWD/$py"
  run_pytest "${CORE_TESTS[@]}" "$@"
  run_pytest "${SPARK_TESTS[@]}" "$@"
  exit 0
fi

# Each stage's wall time goes to the log (`stage: <name> took N s`), and the total at the end.
began=$SECONDS
stage_start=$SECONDS
stage() {  # ends the running stage: prints its time, starts the next
  echo "stage: $1 took $((SECONDS - stage_start)) s (total $((SECONDS - began)) s)"
  stage_start=$SECONDS
}

# Apache Flink for the `flink` tests (tests/*/test_*_flink.py), so the changelog, Top-N and
# deduplicate models are compared with Flink on every run (first run: a minute or two; then
# under a second), is installed while setup.sh builds sliceflow: one is downloads, the other
# compiles. The system packages come first, as both need them.
bash scripts/setup.sh --system >/dev/null
mkdir -p build
bash scripts/flink_venv.sh >build/flink-venv.out 2>&1 &
flink=$!
bash scripts/setup.sh
if ! wait "$flink"; then
  cat build/flink-venv.out >&2
  exit 1
fi
cat build/flink-venv.out
stage "set-up (with the Flink venv alongside)"
export PYSPARK_PYTHON="$PWD/.venv/bin/python"
export PYSPARK_DRIVER_PYTHON="$PWD/.venv/bin/python"
# The whole suite takes hypothesis' larger budget (tests/conftest.py), here as in CI.
export HYPOTHESIS_PROFILE="${HYPOTHESIS_PROFILE:-ci}"

if [ $# = 0 ]; then
  .venv/bin/ruff check .
  bash scripts/format.sh --check  # ruff format and clang-format (pinned in the test extra)
  bash scripts/typecheck.sh  # mypy, strict, on python/sliceflow (pyproject.toml [tool.mypy])
  bash scripts/stubs.sh --check
  bash scripts/docs.sh  # the API reference (Sphinx, warnings are errors)
  stage "lint, format, types, stubs, API reference"
fi
# The package source lives in python/, so the tests import the installed build. Every tier:
# the fast one (pyproject.toml's addopts) on every core (pytest-xdist: its tests are CPU-bound
# and share nothing), then the Spark, Flink, cluster, Connect and slow tiers on two workers
# (each with its own SparkSession, a test file on one worker: much of a Spark test is waiting
# on the JVM, job scheduling and Python workers, so two share the two cores); the 30
# slowest of each in the log.
if [ $# = 0 ]; then
  .venv/bin/python -m pytest tests -n auto --durations=30
  stage "fast tier"
  # The sanitizers (clang build, fuzzing, C++ tests, sanitized Python tests: about 10 minutes
  # of two cores) run beside the Spark tier at the lowest CPU priority: they take the cores it
  # leaves idle while it waits on JVMs, schedulers and Python workers (test_changelog_flink.py
  # used 180 CPU-seconds in 460 s, test_wheel.py 83 in 352 s). Not beside the fast tier, which
  # is CPU-bound (217 s beside them against 101 s alone). Their report is printed when they
  # end; a failure fails the run, and an early exit stops them. setsid gives them a session
  # (a process group to stop), and so, where the kernel's autogroup scheduling is on, a CPU
  # share equal to the tiers' whatever their nice. That is the faster order: with the group
  # itself at nice 19 they ran almost only after the tiers (a fresh clone: tiers 1,684 s, then
  # 345 s of sanitizers; 2,415 s in all), with the equal share they end within the tiers.
  setsid nice -n 19 bash scripts/sanitize.sh >build/sanitize.out 2>&1 &
  sanitizers=$!
  trap 'kill -- -"$sanitizers" 2>/dev/null || true' EXIT
  .venv/bin/python -m pytest tests -m "spark or flink or cluster or connect or slow" \
    -n 2 --dist loadfile --durations=30
  stage "Spark, Flink, cluster, Connect and slow tiers"
  sanitized=0
  wait "$sanitizers" || sanitized=$?
  cat build/sanitize.out
  [ "$sanitized" = 0 ] || { echo "the sanitizer stage failed: its report is above" >&2; exit 1; }
  stage "sanitizers (fuzzing, C++ tests, sanitized Python tests), after the tiers they ran beside"
else
  .venv/bin/python -m pytest tests -m "" --durations=30 "$@"
  stage "pytest $*"
fi
