#!/usr/bin/env bash
# Installs everything sliceflow needs on a fresh Debian/Ubuntu machine and builds it into
# .venv. Idempotent: the README's commands call it first.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
dpkg -s libsimdjson-dev >/dev/null 2>&1 || need_apt+=(libsimdjson-dev)
command -v java >/dev/null 2>&1 || need_apt+=(openjdk-17-jre-headless)
command -v g++ >/dev/null 2>&1 || need_apt+=(g++)
command -v cmake >/dev/null 2>&1 || need_apt+=(cmake)
dpkg -s python3-venv >/dev/null 2>&1 || python3 -m venv --help >/dev/null 2>&1 || need_apt+=(python3-venv)
if [ "${SLICEFLOW_FUZZ_TOOLS:-1}" = 1 ]; then
  # clang's libFuzzer and sanitizer runtimes, for the fuzz run and the ASan+UBSan suite.
  command -v clang++ >/dev/null 2>&1 || need_apt+=(clang)
  dpkg -s libclang-rt-14-dev >/dev/null 2>&1 || need_apt+=(libclang-rt-14-dev)
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}"
fi

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q ".[test]"
