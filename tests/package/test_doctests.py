"""The docstring examples of the sliceflow package, run against the build the tests import.

Every docstring of every module of the package (found by walking ``sliceflow.__path__``,
so the installed build under ``scripts/test.sh``, the source tree with
``PYTHONPATH=python``) that holds ``>>>`` examples is one test, named by the docstring's
dotted name. An example that uses the name ``spark`` runs with the session's SparkSession
(the ``spark`` fixture; the test carries the ``spark`` marker); an example that cannot run
here (a file path, a cluster) says ``# doctest: +SKIP`` in its docstring. Options: ELLIPSIS
and NORMALIZE_WHITESPACE, as the examples are written for readers.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import re

import pytest

import sliceflow

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
# The name `spark` itself, not `sliceflow.spark` or `pyspark`.
USES_SPARK = re.compile(r"(?<![.\w])spark\b")


def _module_names() -> list[str]:
    names = ["sliceflow"]
    names += [m.name for m in pkgutil.walk_packages(sliceflow.__path__, "sliceflow.")]
    return sorted(names)


def _doctests() -> list[object]:
    finder = doctest.DocTestFinder(exclude_empty=True)
    params = []
    for name in _module_names():
        module = importlib.import_module(name)
        for test in finder.find(module, name):
            if not test.examples:
                continue
            runnable = [ex for ex in test.examples if not ex.options.get(doctest.SKIP)]
            spark = any(USES_SPARK.search(ex.source) for ex in runnable)
            marks = [pytest.mark.spark] if spark else []
            params.append(pytest.param(test, spark, id=test.name, marks=marks))
    return params


DOCTESTS = _doctests()


def test_doctests_found() -> None:
    # The walk imports every module: an empty list would mean it found none.
    names = {p.id for p in DOCTESTS}
    assert "sliceflow.json" in names and "sliceflow.window.spec.tumble" in names, sorted(names)


@pytest.mark.parametrize(("test", "uses_spark"), DOCTESTS)
def test_docstring_examples(
    test: doctest.DocTest, uses_spark: bool, request: pytest.FixtureRequest
) -> None:
    if uses_spark:
        test.globs["spark"] = request.getfixturevalue("spark")
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    report: list[str] = []
    runner.run(test, out=report.append, clear_globs=True)
    if runner.failures:
        pytest.fail(f"{test.name} ({test.filename}:{test.lineno}):\n" + "".join(report), False)
