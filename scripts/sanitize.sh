#!/usr/bin/env bash
# The C++ core under ASan+UBSan, from one clang build tree (build/sanitize/fuzz: the core's
# objects are compiled once, for the fuzzers, the C++ test programs and the Python extension
# alike): bounded libFuzzer runs of the JSON decoder, JSON schema inference, the window kernel
# (batch and streaming steps), the changelog kernel, the deduplicate kernel, the join kernel,
# the Top-N ranker (from its Arrow batch), Arrow input validation (forged C Data Interface
# structs) and the state format (forged or damaged state values); the date/time and JSON option
# programs; then the decoder's, schema inference's, the window, changelog, deduplicate, join
# and Top-N kernels' and Spark's hash()'s Python tests against the sanitized extension.
#
# Fuzzing budget: FUZZ_SECONDS is the total over all the fuzzers (default 240), split evenly
# between them (at least 1 s each) and run in two lanes side by side (130 s of wall time by
# default); every run also stops an input that takes longer than
# FUZZ_INPUT_TIMEOUT seconds (default 10: libFuzzer's -timeout), so that a hang fails with its
# input saved instead of stalling CI.
#   FUZZ_SECONDS=2700 bash scripts/sanitize.sh   # a longer fuzz run (5 min per fuzzer)
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZ_SECONDS="${FUZZ_SECONDS:-240}"
FUZZ_INPUT_TIMEOUT="${FUZZ_INPUT_TIMEOUT:-10}"
fuzzers=(fuzz_json_decode fuzz_window fuzz_changelog fuzz_dedup fuzz_join fuzz_arrow_input
  fuzz_state fuzz_topn fuzz_json_infer)
per_fuzzer=$((FUZZ_SECONDS / ${#fuzzers[@]}))
if ((per_fuzzer < 1)); then per_fuzzer=1; fi
build=build/sanitize
mkdir -p "$build" "$build/corpus"

if command -v clang++ >/dev/null 2>&1; then
  # One clang build tree for everything sanitized: the fuzzers, the C++ test programs and the
  # Python extension share the objects of sliceflow_core (compiled once, with coverage
  # feedback for the fuzzers; the ASan runtime answers the coverage hooks outside them).
  # -O1 with line tables (ASan's recommended build: stack traces keep file and line) compiles
  # much faster than RelWithDebInfo's -O2 -g; the fuzzing budget is in seconds either way.
  # The binding sources (pybind11 glue, checked by the sanitized Python tests, not fuzzed)
  # at -O0: their optimisation was half the tree's compile time, and the tests take as long.
  cmake -S . -B "$build/fuzz" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
    -DSLICEFLOW_FUZZ=ON -DSLICEFLOW_CPP_TESTS=ON -DSLICEFLOW_SANITIZE=address,undefined \
    -DSLICEFLOW_PYTHON=ON -DSLICEFLOW_BINDING_FLAGS=-O0 \
    -DPython_EXECUTABLE="$PWD/.venv/bin/python" \
    -Dpybind11_DIR="$(.venv/bin/python -m pybind11 --cmakedir)" >/dev/null
  cmake --build "$build/fuzz" -j2 --target "${fuzzers[@]}" test_datetime test_json_options \
    _core >/dev/null
  cp -n tests/data/fuzz_seeds/* "$build/corpus/" 2>/dev/null || true
  mkdir -p "$build/window_corpus" "$build/changelog_corpus" "$build/arrow_input_corpus" \
    "$build/state_corpus" "$build/topn_corpus"
  cp -n fuzz/corpus_changelog/* "$build/changelog_corpus/" 2>/dev/null || true
  cp -n fuzz/corpus_arrow_input/* "$build/arrow_input_corpus/" 2>/dev/null || true
  cp -n fuzz/corpus_state/* "$build/state_corpus/" 2>/dev/null || true
  fuzz() {  # name, corpus, max_len: one bounded run; its report is printed when it ends
    local out="$build/$1.out"
    {
      echo "fuzzing $1 for ${per_fuzzer}s (of FUZZ_SECONDS=${FUZZ_SECONDS})"
      if ! "$build/fuzz/$1" -max_total_time="$per_fuzzer" -timeout="$FUZZ_INPUT_TIMEOUT" \
          -max_len="$3" -print_final_stats=1 -artifact_prefix="$build/$1-" "$2" \
          >"$build/$1.log" 2>&1; then
        grep -A30 -E "ERROR|runtime error|deadly signal|ALARM" "$build/$1.log" | head -60
        echo "the fuzzer found a crash or a hang: $(ls "$build/$1"-{crash,timeout}-* 2>/dev/null)"
        return 1
      fi
      grep -E "^stat::(number_of_executed_units|peak_rss_mb)" "$build/$1.log" || true
    } >"$out" 2>&1
  }
  mkdir -p "$build/dedup_corpus" "$build/join_corpus" "$build/infer_corpus"
  rm -f "$build"/fuzz_*.out
  cp -n tests/data/fuzz_seeds/* "$build/infer_corpus/" 2>/dev/null || true
  # Two lanes, one fuzzer each at a time (libFuzzer runs on one core; the machine has two):
  # the budget per fuzzer is unchanged, the wall time is half the sequential one.
  lane() {  # runs its fuzzers in turn; fails at the first that fails
    while [ $# -gt 0 ]; do fuzz "$1" "$2" "$3" || return 1; shift 3; done
  }
  lane fuzz_json_decode "$build/corpus" 4096 fuzz_changelog "$build/changelog_corpus" 512 \
    fuzz_arrow_input "$build/arrow_input_corpus" 1024 fuzz_topn "$build/topn_corpus" 1024 &
  first=$!
  lane fuzz_window "$build/window_corpus" 512 fuzz_dedup "$build/dedup_corpus" 512 \
    fuzz_join "$build/join_corpus" 1024 fuzz_state "$build/state_corpus" 1024 \
    fuzz_json_infer "$build/infer_corpus" 4096 &
  second=$!
  failed=0
  wait "$first" || failed=1
  wait "$second" || failed=1
  for name in "${fuzzers[@]}"; do
    if [ -f "$build/$name.out" ]; then cat "$build/$name.out"; fi
  done
  if [ "$failed" = 1 ]; then
    echo "a fuzzer failed: its report is above" >&2
    exit 1
  fi
else
  echo "clang++ not found: skipping the libFuzzer run" >&2
  exit 1
fi

# Date/time parsing against Spark's answers (tests/data/datetime_cases.json) and the JSON
# option parser the binding and the fuzzer share, sanitized.
ASAN_OPTIONS=detect_leaks=1 "$build/fuzz/test_datetime" tests/data/datetime_cases.json | tail -3
ASAN_OPTIONS=detect_leaks=1 "$build/fuzz/test_json_options"

# The kernels' Python tests with the sanitized extension of that build tree: the package's
# sources with it, put first on the path, and clang's ASan runtime (UBSan's handlers and the
# coverage hooks included) preloaded into the interpreter (tests/conftest.py adds tests/
# itself, for the tests' shared helpers in tests/support/).
rm -rf "$build/site"
mkdir -p "$build/site"
cp -r python/sliceflow "$build/site/"
rm -f "$build"/site/sliceflow/_core*.so
cp "$build"/fuzz/_core*.so "$build/site/sliceflow/"
asan=$(clang++ -print-file-name=libclang_rt.asan-x86_64.so)
root=$PWD
# Hypothesis' dev budget here: these tests run with the larger one, unsanitized, in the fast
# tier, and the fuzzers above are the sanitized run's search for inputs. A sanitized test runs
# several times slower than in the fast tier, and at the lowest CPU priority beside the Spark
# tier in scripts/test.sh: 600 s per test instead of the fast tier's 120 s. Two groups of
# cases run in the fast tier only, as each repeats sanitized code paths with more input: the
# 3 MB inference runs with 30 % malformed lines (77 of the 226 CPU-seconds of these tests; the
# 0.2 % runs take the same batch and malformed-line paths) and the every-split-point reads with
# blocks of 7 and 65,536 bytes (38 CPU-seconds; the 1-byte blocks cut at every byte).
(cd "$build" && PYTHONPATH="$root/$build/site" LD_PRELOAD="$asan" HYPOTHESIS_PROFILE=dev \
  ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  "$root/.venv/bin/python" -m pytest -q -p no:cacheprovider -n 2 --timeout 600 \
  -k "not (over_many_batches and 0.3) and not (every_split_point and (7 or 65536))" \
  "$root/tests/json/test_json_decode.py" \
  "$root/tests/json/test_fast_path.py" "$root/tests/window/test_window_kernel.py" \
  "$root/tests/window/test_window_stream_steps.py" "$root/tests/changelog/test_changelog_kernel.py" \
  "$root/tests/dedup/test_dedup_kernel.py" "$root/tests/join/test_join_kernel.py" \
  "$root/tests/topn/test_topn_kernel.py" \
  "$root/tests/runtime/test_untrusted_input.py" \
  "$root/tests/json/test_json_infer.py" "$root/tests/json/test_json_infer_batches.py" \
  "$root/tests/runtime/test_spark_hash.py")
