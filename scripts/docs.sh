#!/usr/bin/env bash
# The API reference: Sphinx (autodoc + napoleon, the docstrings' Google style) renders the
# docstrings of sliceflow's public modules (docs/api/: conf.py, index.rst, one page per module)
# into build/docs/html (open build/docs/html/index.html). Warnings are errors (-W, all of them
# reported first with --keep-going): a docstring that is not valid reStructuredText, or an object
# described twice, fails the build, as in scripts/test.sh.
#
#   bash scripts/docs.sh                            # the installed build's docstrings
#   PYTHONPATH=$PWD/python bash scripts/docs.sh     # the working tree's (after dev_build.sh)
#
# The reference describes whichever sliceflow the interpreter imports ($PYTHON, default
# .venv/bin/python), as scripts/stubs.sh does; autodoc imports it, so it needs sliceflow._core
# and pyspark. No network (no intersphinx). Each run rebuilds every page (-E: Sphinx does not
# see a docstring change). Measured: 8-14 s on the shared 2-core machine (load average 6-10),
# about 5 CPU-seconds, nearly all of it Sphinx itself.
# Needs sphinx (in the `test` extra).
set -euo pipefail
cd "$(dirname "$0")/.."
py=${PYTHON:-.venv/bin/python}
if ! "$py" -c 'import sphinx' 2>/dev/null; then
  echo "docs: sphinx is missing from $py; install it with \`$py -m pip install sphinx\`" \
    "(it is in the \`test\` extra)" >&2
  exit 1
fi
out=build/docs
"$py" -m sphinx -E -W --keep-going -q -b html -d "$out/doctrees" docs/api "$out/html"
echo "docs: $out/html/index.html"
