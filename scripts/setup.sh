#!/usr/bin/env bash
# Installs what sliceflow needs on a fresh Debian/Ubuntu machine and installs sliceflow into a
# virtual environment. Idempotent: the README's commands call it first.
#
#   bash scripts/setup.sh                 # the test command's tool set: clang + sanitizer
#                                         # runtimes for the fuzz run; .venv
#                                         # with `.[test]`
#   bash scripts/setup.sh --demo          # only what the demo runs: .venv with `.[spark]`
#   bash scripts/setup.sh --system        # only the apt packages
#   bash scripts/setup.sh --min-versions  # .venv-min: the lowest declared Python, each
#                                         # dependency pinned to its declared lower bound
#
# `pip install .` rebuilds the C++ core from scratch (minutes), so it runs only when the
# sources differ from the last install: a hash of cpp/, python/, CMakeLists.txt,
# pyproject.toml and the interpreter's version is kept in the environment
# (.sliceflow-install, with what was installed), and a re-run with nothing changed takes about
# a second. Progress lines say what is being installed or built and about how long it takes;
# apt's and pip's output go to a log per run (build/setup.log points at the newest,
# build/setup-min.log for --min-versions); on failure its tail is printed.
#
# --min-versions reads the bounds from pyproject.toml, so the tested versions are the
# declared ones: Python = requires-python's lower bound (found as pythonX.Y on the PATH or
# under pyenv; SLICEFLOW_MIN_PYTHON=/path/to/python overrides), and every `name>=v` of
# `dependencies` and of the `spark` extra pinned as `name==v` in
# .venv-min/requirements-{core,spark}.txt. The core's pyarrow bound is below the spark
# extra's, so .venv-min is made with the core list and `bash scripts/test.sh --min-versions`
# installs the spark list between its two runs.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=test
case "${1:-}" in
  "") ;;
  --demo) mode=demo ;;
  --system) mode=system ;;
  --min-versions) mode=min ;;
  *) echo "usage: bash scripts/setup.sh [--demo | --system | --min-versions]" >&2; exit 2 ;;
esac

# One log per run, build/logs/setup[-min|-system]-<time>-<pid>.log (the 20 newest of each are
# kept), and build/setup.log (build/setup-min.log, build/setup-system.log) pointing at the
# newest.
mkdir -p build/logs
name=setup
[ "$mode" = min ] && name=setup-min
[ "$mode" = system ] && name=setup-system
log=build/logs/$name-$(date +%Y%m%d-%H%M%S)-$$.log
: >"$log"
ln -sfn "logs/$(basename "$log")" "build/$name.log"
# shellcheck disable=SC2012
ls -1t build/logs/"$name"-*.log 2>/dev/null | tail -n +21 | xargs -r rm -f
start=$SECONDS
say() {  # a progress line: what is being done, roughly how long it takes
  echo "set-up: $*"
}
fail() {
  echo "set-up failed: $1 (last lines of $log below)" >&2
  tail -n 40 "$log" >&2
  exit 1
}

need_apt=()
dpkg -s libsimdjson-dev >/dev/null 2>&1 || need_apt+=(libsimdjson-dev)
command -v java >/dev/null 2>&1 || need_apt+=(openjdk-17-jre-headless)
command -v g++ >/dev/null 2>&1 || need_apt+=(g++)
command -v cmake >/dev/null 2>&1 || need_apt+=(cmake)
dpkg -s python3-venv >/dev/null 2>&1 || python3 -m venv --help >/dev/null 2>&1 || need_apt+=(python3-venv)
if [ "$mode" = test ] && [ "${SLICEFLOW_FUZZ_TOOLS:-1}" = 1 ]; then
  # clang's libFuzzer and sanitizer runtimes, for the fuzz run and the ASan+UBSan suite.
  command -v clang++ >/dev/null 2>&1 || need_apt+=(clang)
  dpkg -s libclang-rt-14-dev >/dev/null 2>&1 || need_apt+=(libclang-rt-14-dev)
fi
did=()
if [ ${#need_apt[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO=sudo
  echo "apt-get install ${need_apt[*]}" >>"$log"
  say "apt-get install ${need_apt[*]} (about a minute; log: $log)"
  { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
      "${need_apt[@]}"; } >>"$log" 2>&1 || fail "apt-get install ${need_apt[*]}"
  did+=("apt: ${need_apt[*]}")
fi
if [ "$mode" = system ]; then
  echo "set-up: system packages ready (${did[*]:-nothing to install}; $((SECONDS - start)) s)"
  exit 0
fi

# The lowest declared versions, read from pyproject.toml (any Python 3 reads it: no tomllib).
declared() {
  python3 - "$1" <<'EOF'
import re
import sys

text = open("pyproject.toml").read()


def array(key: str) -> list[str]:
    match = re.search(r"^" + key + r"\s*=\s*\[(.*?)\]", text, re.S | re.M)
    if not match:
        sys.exit(f"pyproject.toml: no {key} list")
    return re.findall(r'"([^"]+)"', match.group(1))


def lowest(reqs: list[str]) -> list[str]:
    out = []
    for req in reqs:
        bound = re.match(r"([A-Za-z0-9_.-]+)\s*>=\s*([0-9][0-9.]*)", req)
        out.append(f"{bound[1]}=={bound[2]}" if bound else req)
    return out


what = sys.argv[1]
if what == "python":
    print(re.search(r'^requires-python\s*=\s*">=\s*([0-9.]+)"', text, re.M)[1])
else:
    print(" ".join(lowest(array("dependencies" if what == "core" else what))))
EOF
}

venv=.venv
python=python3
if [ "$mode" = min ]; then
  venv=.venv-min
  want=$(declared python)
  python=${SLICEFLOW_MIN_PYTHON:-}
  if [ -z "$python" ]; then
    root=$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")
    for candidate in "python$want" "$root"/versions/"$want".*/bin/python; do
      if "$candidate" -c 'import sys' >/dev/null 2>&1; then python=$candidate; break; fi
    done
  fi
  if [ -z "$python" ]; then
    echo "set-up failed: --min-versions needs Python $want (pyproject.toml's requires-python)," \
      "and no python$want was found on the PATH or under pyenv. Install one (pyenv, uv" \
      "python install $want, deadsnakes) or set SLICEFLOW_MIN_PYTHON=/path/to/python$want." >&2
    exit 1
  fi
  have=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  if [ "$have" != "$want" ]; then
    echo "set-up: warning: $python is Python $have, not the declared lowest $want" >&2
  fi
fi

if [ -x "$venv/bin/python" ] && [ "$mode" = min ] &&
    [ "$("$venv/bin/python" -c 'import sys; print(sys.version)')" != "$("$python" -c 'import sys; print(sys.version)')" ]; then
  rm -rf "$venv"
fi
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv" >>"$log" 2>&1 || fail "$python -m venv $venv"
  did+=("new $venv")
fi

# What to install, and the installed sources' hash: paths and contents of what
# `pip install .` builds from, the interpreter's version, and the requirement list.
if [ "$mode" = min ]; then
  # The core's bounds, numpy's and pyspark's from the spark extra (older pyarrow needs numpy 1,
  # and the decoder's tests read pyspark schemas); then the spark extra's bounds. The test
  # command installs each list before the tests that need it.
  spark=$(declared spark)
  # shellcheck disable=SC2046,SC2086
  printf '%s\n' $(declared core) $(printf '%s\n' $spark | grep -E '^(numpy|pyspark)==') \
    >"$venv/requirements-core.txt"
  # shellcheck disable=SC2086
  printf '%s\n' $spark >"$venv/requirements-spark.txt"
  what=". -r $venv/requirements-core.txt pytest>=8 pytest-timeout pytest-benchmark hypothesis"
else
  what=".[test]"
  [ "$mode" = demo ] && what=".[spark]"
fi
# What pip installs: the wheel built into $venv/.sliceflow-wheel (kept: the wheel test installs
# that same build in fresh environments instead of compiling the core again), with the
# extra and the other requirements of $what.
extra=${what#.}
extra=${extra%% *}
rest=${what#*.}
rest=${rest#"$extra"}
sources_hash() {
  {
    find cpp python CMakeLists.txt pyproject.toml -type f \
      ! -name '*.so' ! -name '*.pyc' ! -path '*/__pycache__/*' ! -path '*.egg-info/*' -print0 |
      LC_ALL=C sort -z | xargs -0 sha256sum
    "$venv/bin/python" -c 'import sys; print(sys.version)'
  } | sha256sum | cut -d' ' -f1
}
stamp=$venv/.sliceflow-install
hash=$(sources_hash)
installed=""
[ -f "$stamp" ] && installed=$(cat "$stamp")
# The demo takes an install with either extra (`.[test]` holds `.[spark]`).
if [ "$installed" = "$hash $what" ] || { [ "$mode" = demo ] && [ "$installed" = "$hash .[test]" ]; }; then
  echo "set-up: sliceflow in $venv is up to date with the sources${did:+ (${did[*]})} ($((SECONDS - start)) s)"
  exit 0
fi
rm -f "$stamp"
echo "pip install $what" >>"$log"
if [ -n "$installed" ]; then
  say "the sources changed since the last install: rebuilding sliceflow's C++ core" \
    "(about 1 to 4 minutes on 2 cores, incremental) and installing $what into $venv" \
    "(log: $log)"
else
  say "building sliceflow's C++ core and installing $what with its dependencies into $venv" \
    "(about 4 to 6 minutes on 2 cores, most of it compiling; log: $log)"
fi
wheels=$venv/.sliceflow-wheel
rm -rf "$wheels"
{ "$venv/bin/python" -m pip wheel --no-deps -w "$wheels" . &&
  wheel=$(ls "$wheels"/sliceflow-*.whl) &&
  # shellcheck disable=SC2086
  "$venv/bin/python" -m pip install --force-reinstall --no-deps "$wheel" &&
  "$venv/bin/python" -m pip install "$wheel$extra" $rest; } >>"$log" 2>&1 ||
  fail "pip install $what"
echo "$hash $what" >"$stamp"
echo "set-up: installed sliceflow with $what into $venv${did:+ (${did[*]})} ($((SECONDS - start)) s; log: $log)"
