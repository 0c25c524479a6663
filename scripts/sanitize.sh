#!/usr/bin/env bash
# The C++ core under ASan+UBSan: bounded libFuzzer runs of the JSON decoder, JSON schema
# inference, the window kernel (batch and streaming steps), the changelog kernel, the
# deduplicate kernel, the Top-N ranker (from its Arrow batch), Arrow input validation (forged C
# Data Interface structs) and the state format (forged or damaged state values), then the decoder's, schema inference's, the window,
# changelog and deduplicate kernels' Python tests against an extension built with the
# sanitizers.
#
# Fuzzing budget: FUZZ_SECONDS is the total over all the fuzzers (default 240), split evenly
# between them (at least 1 s each); every run also stops an input that takes longer than
# FUZZ_INPUT_TIMEOUT seconds (default 10: libFuzzer's -timeout), so that a hang fails with its
# input saved instead of stalling CI.
#   FUZZ_SECONDS=2400 bash scripts/sanitize.sh   # a longer fuzz run (5 min per fuzzer)
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZ_SECONDS="${FUZZ_SECONDS:-240}"
FUZZ_INPUT_TIMEOUT="${FUZZ_INPUT_TIMEOUT:-10}"
fuzzers=(fuzz_json_decode fuzz_window fuzz_changelog fuzz_dedup fuzz_arrow_input fuzz_state
  fuzz_topn fuzz_json_infer)
per_fuzzer=$((FUZZ_SECONDS / ${#fuzzers[@]}))
if ((per_fuzzer < 1)); then per_fuzzer=1; fi
build=build/sanitize
mkdir -p "$build" "$build/corpus"

if command -v clang++ >/dev/null 2>&1; then
  cmake -S . -B "$build/fuzz" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DSLICEFLOW_PYTHON=OFF -DSLICEFLOW_FUZZ=ON -DSLICEFLOW_SANITIZE=address,undefined >/dev/null
  cmake --build "$build/fuzz" -j2 --target "${fuzzers[@]}" >/dev/null
  cp -n tests/data/fuzz_seeds/* "$build/corpus/" 2>/dev/null || true
  mkdir -p "$build/window_corpus" "$build/changelog_corpus" "$build/arrow_input_corpus" \
    "$build/state_corpus" "$build/topn_corpus"
  cp -n fuzz/corpus_changelog/* "$build/changelog_corpus/" 2>/dev/null || true
  cp -n fuzz/corpus_arrow_input/* "$build/arrow_input_corpus/" 2>/dev/null || true
  cp -n fuzz/corpus_state/* "$build/state_corpus/" 2>/dev/null || true
  fuzz() {  # name, corpus, max_len
    echo "fuzzing $1 for ${per_fuzzer}s (of FUZZ_SECONDS=${FUZZ_SECONDS})"
    if ! "$build/fuzz/$1" -max_total_time="$per_fuzzer" -timeout="$FUZZ_INPUT_TIMEOUT" \
        -max_len="$3" -print_final_stats=1 -artifact_prefix="$build/$1-" "$2" \
        >"$build/$1.log" 2>&1; then
      grep -A30 -E "ERROR|runtime error|deadly signal|ALARM" "$build/$1.log" | head -60
      echo "the fuzzer found a crash or a hang: $(ls "$build/$1"-{crash,timeout}-* 2>/dev/null)" >&2
      exit 1
    fi
    grep -E "^stat::(number_of_executed_units|peak_rss_mb)" "$build/$1.log" || true
  }
  fuzz fuzz_json_decode "$build/corpus" 4096
  fuzz fuzz_window "$build/window_corpus" 512
  fuzz fuzz_changelog "$build/changelog_corpus" 512
  mkdir -p "$build/dedup_corpus"
  fuzz fuzz_dedup "$build/dedup_corpus" 512
  fuzz fuzz_arrow_input "$build/arrow_input_corpus" 1024
  fuzz fuzz_state "$build/state_corpus" 1024
  fuzz fuzz_topn "$build/topn_corpus" 1024
  mkdir -p "$build/infer_corpus"
  cp -n tests/data/fuzz_seeds/* "$build/infer_corpus/" 2>/dev/null || true
  fuzz fuzz_json_infer "$build/infer_corpus" 4096
else
  echo "clang++ not found: skipping the libFuzzer run" >&2
  exit 1
fi

# Date/time parsing against Spark's answers (tests/data/datetime_cases.json), sanitized.
g++ -std=c++17 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all \
  -fno-omit-frame-pointer -Icpp cpp/json/datetime/*.cpp tests/cpp/test_datetime.cpp -lsimdjson \
  -o "$build/test_datetime"
ASAN_OPTIONS=detect_leaks=1 "$build/test_datetime" tests/data/datetime_cases.json | tail -3
# The JSON option parser the binding and the fuzzer share, sanitized.
g++ -std=c++17 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all \
  -fno-omit-frame-pointer -Icpp cpp/json/options.cpp cpp/json/datetime/*.cpp \
  tests/cpp/test_json_options.cpp -o "$build/test_json_options"
ASAN_OPTIONS=detect_leaks=1 "$build/test_json_options"

# The decoder's and schema inference's Python tests with an ASan+UBSan build of the
# extension (gcc runtime), unpacked beside the installed package and put first on the path
# (the repository's root after it, for the tests' shared helpers in tests/).
rm -rf "$build/wheelhouse" "$build/site"
SLICEFLOW_SANITIZE=address,undefined .venv/bin/python -m pip wheel -q --no-deps \
  --config-settings=cmake.build-type=RelWithDebInfo --config-settings=build-dir="$build/wheel" \
  -w "$build/wheelhouse" .
.venv/bin/python -m zipfile -e "$build"/wheelhouse/sliceflow-*.whl "$build/site"
asan=$(g++ -print-file-name=libasan.so)
ubsan=$(g++ -print-file-name=libubsan.so)
root=$PWD
(cd "$build" && PYTHONPATH="$root/$build/site:$root" LD_PRELOAD="$asan:$ubsan" \
  ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  "$root/.venv/bin/python" -m pytest -q -p no:cacheprovider "$root/tests/test_json_decode.py" \
  "$root/tests/test_fast_path.py" "$root/tests/test_window_kernel.py" \
  "$root/tests/test_window_stream_steps.py" "$root/tests/test_changelog_kernel.py" \
  "$root/tests/test_dedup_kernel.py" "$root/tests/test_untrusted_input.py" \
  "$root/tests/test_json_infer.py" "$root/tests/test_json_infer_batches.py")
