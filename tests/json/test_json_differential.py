"""sliceflow.json against Spark's own from_json on a generated corpus of 100k documents.

Every (schema, option set) pair of ``json_corpus.TEST_MATRIX``: valid rows, wrong types, odd
and overflowing numbers, every escape, lone surrogates, control characters, truncated and
trailing-garbage documents, deep nesting, blank documents, top-level arrays and scalars,
duplicate keys, invalid UTF-8; default options, a corrupt-record column, custom formats.
Spark's answers are cached on disk by content hash (``$SLICEFLOW_SPARK_CACHE``).
"""

from __future__ import annotations

import os

import pytest
from support import differential, json_corpus

pytestmark = pytest.mark.spark

CORPUS_SIZE = int(os.environ.get("SLICEFLOW_CORPUS_SIZE", "100000"))


@pytest.mark.parametrize(("schema", "option_set"), json_corpus.TEST_MATRIX)
def test_zero_mismatches_against_spark(spark, schema, option_set):
    report = differential.run(lambda: spark, CORPUS_SIZE, 7, schema, option_set)
    assert report is None, report
