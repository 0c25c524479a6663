#!/usr/bin/env bash
# Formats the sources: ruff format on the Python files (settings: pyproject.toml), clang-format
# on the C++ of cpp/, fuzz/ and tests/cpp/ (settings: .clang-format; generated *.inc tables
# are left as generated).
#
#   bash scripts/format.sh          # rewrite the files in place
#   bash scripts/format.sh --check  # change nothing; list what would change and fail if any
#
# Needs ruff and clang-format from .venv (the `test` extra pins clang-format from PyPI, so every
# machine lays the code out alike; scripts/setup.sh installs it).
set -euo pipefail
cd "$(dirname "$0")/.."

. scripts/check_mode.sh
check_mode "$@"
ruff_in .venv/bin/python
clang_format=${CLANG_FORMAT:-.venv/bin/clang-format}
if ! command -v "$clang_format" >/dev/null 2>&1; then
  echo "format: $clang_format not found; bash scripts/setup.sh installs it (the test extra)" >&2
  exit 1
fi
mapfile -d '' cxx < <(find cpp fuzz tests/cpp -type f \
  \( -name '*.cpp' -o -name '*.cc' -o -name '*.h' -o -name '*.hpp' \) -print0 | LC_ALL=C sort -z)

if [ "$check" = 1 ]; then
  rc=0
  "$ruff" format --check . || rc=1
  # --dry-run -Werror: one warning per place that would change, and a failing exit status.
  if ! "$clang_format" --dry-run -Werror "${cxx[@]}" 2>"${TMPDIR:-/tmp}/clang-format.$$"; then
    grep -oE '^[^: ]+\.(cpp|cc|h|hpp):[0-9]+:[0-9]+: (error|warning)' \
      "${TMPDIR:-/tmp}/clang-format.$$" | cut -d: -f1 | sort | uniq -c |
      awk '{print "would reformat " $2 " (" $1 " places)"}' >&2
    rc=1
  fi
  rm -f "${TMPDIR:-/tmp}/clang-format.$$"
  [ "$rc" = 0 ] && echo "format: ruff format and clang-format leave everything as it is"
  [ "$rc" = 0 ] || echo "format: run \`bash scripts/format.sh\` to format" >&2
  exit "$rc"
fi
"$ruff" format .
"$clang_format" -i "${cxx[@]}"
echo "format: ruff format on the Python files, clang-format on ${#cxx[@]} C++ files"
