"""Differential run of sliceflow.json against Spark's from_json over the generated corpus.

    PYTHONPATH=tests python -m support.differential [n] [schema option_set ...]   # a report

The test suite calls :func:`run` for every pair of ``json_corpus.TEST_MATRIX``.
"""

from __future__ import annotations

import codecs
import sys
from collections.abc import Sequence

import pyarrow as pa

from sliceflow import json as sj
from support import json_corpus, spark_reference


def docs_array(docs: Sequence[spark_reference.Doc]) -> pa.Array:
    return pa.array([spark_reference.to_bytes(d) for d in docs], pa.binary())


def sliceflow_table(docs: Sequence[spark_reference.Doc], ddl: str, options: dict) -> pa.Table:
    struct = sj.decode_to_struct(docs_array(docs), ddl, options=options)
    columns = {
        spark_reference.ROW_COL: pa.array(range(len(docs)), pa.int64()),
        spark_reference.NULL_COL: struct.is_null(),
    }
    for field, column in zip(struct.type, struct.flatten(), strict=False):
        columns[field.name] = column
    return pa.table(columns)


def _java_replace(error: UnicodeDecodeError) -> tuple[str, int]:
    """Python's "replace" with Java's lengths for an encoded surrogate: Java's decoder takes
    ED A0..BF as the start of a 3-byte sequence (one U+FFFD for ED A0..BF and a continuation
    byte after it, if any), where Python gives one U+FFFD per byte."""
    data, start = error.object, error.start
    if data[start] == 0xED and start + 1 < len(data) and 0xA0 <= data[start + 1] <= 0xBF:
        if start + 2 < len(data) and 0x80 <= data[start + 2] <= 0xBF:
            return "\ufffd", start + 3
        return "\ufffd", start + 2
    return "\ufffd", error.end


codecs.register_error("sliceflow_java_replace", _java_replace)


def as_python_sees_it(table: pa.Table, column: str) -> pa.Table:
    """Spark's ``toArrow()`` copies a corrupt record's bytes as they are, invalid UTF-8 too;
    Python (``collect()``) and sliceflow, whose output is always valid Arrow, show each
    malformed sequence as U+FFFD, as Java's decoder does."""
    if column not in table.column_names:
        return table
    raw = table.column(column).combine_chunks().view(pa.binary()).to_pylist()
    text = [None if b is None else b.decode("utf-8", "sliceflow_java_replace") for b in raw]
    at = table.column_names.index(column)
    return table.set_column(at, column, pa.array(text, pa.string()))


def run(
    spark_factory, n: int, seed: int, schema: str, option_set: str, max_rows: int = 20
) -> str | None:
    """Returns None when sliceflow equals Spark on the corpus, else the mismatch report."""
    labelled = json_corpus.corpus_with_categories(n, seed)
    docs = [d for _, d in labelled]
    categories = [c for c, _ in labelled]
    ddl = json_corpus.ddl_for(schema, option_set)
    options = dict(json_corpus.OPTION_SETS[option_set])
    expected = spark_reference.cached_spark_from_json(spark_factory, docs, ddl, options)
    corrupt = next(
        (str(v) for k, v in options.items() if k.lower() == "columnnameofcorruptrecord"),
        "_corrupt_record",
    )
    expected = as_python_sees_it(expected, corrupt)
    actual = sliceflow_table(docs, ddl, options)
    mism, notes = spark_reference.compare_tables(expected, actual)
    if not mism and not notes:
        return None
    return spark_reference.format_report(
        mism, notes, docs, max_rows=max_rows, categories=categories, total_rows=expected.num_rows
    )


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    pairs = list(zip(sys.argv[2::2], sys.argv[3::2], strict=False)) or json_corpus.TEST_MATRIX
    session = []

    def factory():
        if not session:
            session.append(spark_reference.make_spark())
        return session[0]

    for schema, option_set in pairs:
        report = run(
            factory,
            n,
            7,
            schema,
            option_set,
            max_rows=int(__import__("os").environ.get("MAX_ROWS", 15)),
        )
        print(f"== {schema} / {option_set}: {'OK' if report is None else ''}")
        if report:
            print(report)
