#!/usr/bin/env bash
# Incremental developer build: compiles sliceflow._core with CMake into build/dev and copies
# it next to the sources, so `PYTHONPATH=python .venv/bin/python ...` runs the working tree
# without a reinstall. (Users and CI install with `pip install .`; see scripts/setup.sh.)
set -euo pipefail
cd "$(dirname "$0")/.."
py=.venv/bin/python
# pip builds the wheel in an isolated env; a developer build needs pybind11 in the venv itself.
$py -c "import pybind11" 2>/dev/null || $py -m pip install -q "pybind11>=2.12"
cmake -S . -B build/dev -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -Dpybind11_DIR="$($py -c 'import pybind11; print(pybind11.get_cmake_dir())')" \
  -DPython_EXECUTABLE="$PWD/$py" >/dev/null
cmake --build build/dev -j2 --target _core
# Replace by rename, so that processes that have the old module loaded keep a valid file.
for so in build/dev/_core*.so; do
  cp "$so" "python/sliceflow/$(basename "$so").tmp"
  mv -f "python/sliceflow/$(basename "$so").tmp" "python/sliceflow/$(basename "$so")"
done
