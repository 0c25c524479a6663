"""Run Spark's real ``from_json`` over a list of documents and compare Arrow tables.

Usage from a test::

    from support.spark_reference import make_spark, spark_from_json, assert_tables_equal
    spark = make_spark()                       # local[2], session time zone UTC
    expected = spark_from_json(spark, docs, ddl, options)
    actual = sliceflow_decode(docs, ddl, options)      # must have the same layout
    assert_tables_equal(expected, actual, docs)

Layout of the table returned by :func:`spark_from_json` (row order = ``docs`` order):

``__row`` (int64)
    index of the document in ``docs``.
``__struct_is_null`` (bool)
    ``from_json(...) IS NULL`` -- true for a NULL input, an empty / whitespace-only
    input; false for every malformed record in PERMISSIVE mode (those give a
    struct whose fields are null, or partially filled, see docs/json-semantics.md).
one column per top-level field of ``ddl``
    exactly as Spark's ``toArrow()`` produces them: TIMESTAMP -> ``timestamp[us, tz=UTC]``,
    TIMESTAMP_NTZ -> ``timestamp[us]``, DATE -> ``date32``, DECIMAL -> ``decimal128``,
    MAP -> ``map`` (Spark keeps duplicate keys, in input order), STRING -> ``string``.
    A STRING column can hold bytes that are not valid UTF-8: ``_corrupt_record`` is
    the raw input, which may be invalid UTF-8 (decoded string *values* never are).

Documents may be ``str``, ``bytes`` (raw bytes, e.g. invalid UTF-8) or ``None``.
They reach Spark as a BINARY column cast to STRING, which copies the bytes
unchanged into Spark's UTF8String.

Run ``PYTHONPATH=tests python -m support.spark_reference --bench`` for the timing figure quoted in
docs/json-semantics.md, or ``--selftest`` to check the comparison helper.
"""

from __future__ import annotations

import decimal
import hashlib
import json
import math
import os
import sys
import time
from collections.abc import Iterable, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

Doc = str | bytes | None

ROW_COL = "__row"
NULL_COL = "__struct_is_null"


# ---------------------------------------------------------------------------
# Spark side
# ---------------------------------------------------------------------------


def make_spark(
    master: str = "local[2]", app: str = "sliceflow-spark-reference", conf: dict | None = None
):
    """A SparkSession configured like the reference runs (UTC, no UI, quiet logs)."""
    from sliceflow.testing.spark import local_session

    settings = {
        "spark.sql.shuffle.partitions": "2",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.driver.memory": os.environ.get("SLICEFLOW_SPARK_DRIVER_MEMORY", "2g"),
        **(conf or {}),
    }
    return local_session(master, app, settings)


def to_bytes(d: Doc) -> bytes | None:
    if d is None:
        return None
    if isinstance(d, (bytes, bytearray, memoryview)):
        return bytes(d)
    # surrogatepass: a str holding a raw lone surrogate is encoded as CESU-like bytes
    # (invalid UTF-8) instead of raising; the corpus never does this on purpose.
    return d.encode("utf-8", "surrogatepass")


def docs_to_arrow(docs: Sequence[Doc]) -> pa.Table:
    return pa.table(
        {
            ROW_COL: pa.array(range(len(docs)), pa.int64()),
            "raw": pa.array([to_bytes(d) for d in docs], pa.binary()),
        }
    )


def docs_to_dataframe(spark, docs: Sequence[Doc], num_partitions: int | None = None):
    """DataFrame ``(__row BIGINT, value STRING)``; ``value`` holds the raw bytes of each doc."""
    from pyspark.sql import functions as F

    df = spark.createDataFrame(docs_to_arrow(docs))
    if num_partitions:
        df = df.repartitionByRange(num_partitions, ROW_COL)
    return df.select(ROW_COL, F.col("raw").cast("string").alias("value"))


def spark_from_json(spark, docs: Sequence[Doc], ddl: str, options: dict | None = None) -> pa.Table:
    """Spark's ``from_json(value, ddl, options)`` over ``docs`` as an Arrow table
    (layout in the module docstring), sorted by ``__row``."""
    from pyspark.sql import functions as F

    df = docs_to_dataframe(spark, docs)
    parsed = df.select(ROW_COL, F.from_json("value", ddl, dict(options or {})).alias("__j"))
    out = parsed.select(ROW_COL, F.col("__j").isNull().alias(NULL_COL), "__j.*")
    table = out.toArrow()
    table = table.take(pc.sort_indices(table, [(ROW_COL, "ascending")]))
    if table.num_rows != len(docs):
        raise AssertionError(f"Spark returned {table.num_rows} rows for {len(docs)} docs")
    return table.combine_chunks()


def cached_spark_from_json(
    spark_factory,
    docs: Sequence[Doc],
    ddl: str,
    options: dict | None = None,
    cache_dir: str | None = None,
) -> pa.Table:
    """Like :func:`spark_from_json` but memoised on disk (Arrow IPC) by a hash of
    (docs, ddl, options, pyspark version).  ``spark_factory`` is only called on a miss,
    so a warm cache never starts a JVM.  Cache dir: ``$SLICEFLOW_SPARK_CACHE`` or
    ``/tmp/sliceflow-spark-cache``."""
    import pyspark

    cache_dir = cache_dir or os.environ.get("SLICEFLOW_SPARK_CACHE", "/tmp/sliceflow-spark-cache")
    h = hashlib.sha256()
    h.update(json.dumps([ddl, sorted((options or {}).items()), pyspark.__version__]).encode())
    for d in docs:
        b = to_bytes(d)
        h.update(b"N" if b is None else b"D%d:" % len(b) + b)
    path = os.path.join(cache_dir, h.hexdigest()[:32] + ".arrow")
    return disk_cached(path, lambda: spark_from_json(spark_factory(), docs, ddl, options))


def disk_cached(path: str, compute) -> pa.Table:
    """The Arrow IPC file at ``path``, or ``compute()`` written there first (atomically)."""
    if os.path.exists(path):
        with pa.memory_map(path) as src:
            return pa.ipc.open_file(src).read_all()
    table = compute()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + f".tmp{os.getpid()}"
    with pa.OSFile(tmp, "wb") as sink, pa.ipc.new_file(sink, table.schema) as w:
        w.write_table(table)
    os.replace(tmp, path)
    return table


# ---------------------------------------------------------------------------
# comparison
# ---------------------------------------------------------------------------

_TS_SCALE = {"s": 1_000_000, "ms": 1_000, "us": 1, "ns": None}


def _norm_array(arr: pa.Array) -> list:
    """Arrow array -> Python values in a canonical form:
    strings -> bytes (no UTF-8 validation), timestamps -> int64 microseconds,
    dates -> int days, maps -> list of (key, value) tuples in stored order,
    structs -> dict, lists -> list, decimals -> Decimal, floats -> float."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    t = arr.type
    n = len(arr)
    valid = arr.is_valid().to_pylist() if arr.null_count else [True] * n
    if pa.types.is_string(t):
        return arr.view(pa.binary()).to_pylist()
    if pa.types.is_large_string(t):
        return arr.view(pa.large_binary()).to_pylist()
    if hasattr(pa.types, "is_string_view") and pa.types.is_string_view(t):
        return pc.cast(arr, pa.binary()).to_pylist()
    if pa.types.is_timestamp(t):
        raw = arr.view(pa.int64()).to_pylist()
        scale = _TS_SCALE[t.unit]
        if scale is None:  # ns -> us (floor)
            return [None if v is None else v // 1000 for v in raw]
        return [None if v is None else v * scale for v in raw]
    if pa.types.is_date32(t):
        return arr.view(pa.int32()).to_pylist()
    if pa.types.is_date64(t):
        return [None if v is None else v // 86_400_000 for v in arr.view(pa.int64()).to_pylist()]
    if pa.types.is_struct(t):
        names = [t.field(i).name for i in range(t.num_fields)]
        cols = [_norm_array(arr.field(i)) for i in range(t.num_fields)]
        return [
            dict(zip(names, (c[i] for c in cols), strict=False)) if valid[i] else None
            for i in range(n)
        ]
    if pa.types.is_map(t):
        offs = arr.offsets.to_pylist()
        keys, items = _norm_array(arr.keys), _norm_array(arr.items)
        return [
            list(zip(keys[offs[i] : offs[i + 1]], items[offs[i] : offs[i + 1]], strict=False))
            if valid[i]
            else None
            for i in range(n)
        ]
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        offs = arr.offsets.to_pylist()
        vals = _norm_array(arr.values)
        return [vals[offs[i] : offs[i + 1]] if valid[i] else None for i in range(n)]
    if pa.types.is_dictionary(t):
        return _norm_array(arr.dictionary_decode())
    return arr.to_pylist()


def values_equal(a: Any, b: Any, signed_zero: bool = True) -> bool:
    """Deep equality with NaN == NaN (and -0.0 != 0.0 unless ``signed_zero`` is False)."""
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, float) or isinstance(b, float):
        if (
            not isinstance(a, (float, int))
            or not isinstance(b, (float, int))
            or isinstance(a, bool)
            or isinstance(b, bool)
        ):
            return False
        a, b = float(a), float(b)
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        if a == 0.0 and b == 0.0 and signed_zero:
            return math.copysign(1, a) == math.copysign(1, b)
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(values_equal(a[k], b[k], signed_zero) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(
            values_equal(x, y, signed_zero) for x, y in zip(a, b, strict=False)
        )
    if isinstance(a, decimal.Decimal) or isinstance(b, decimal.Decimal):
        try:
            return decimal.Decimal(a) == decimal.Decimal(b)
        except (TypeError, ValueError):
            return False
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return a == b


def _flatten_single_struct(t: pa.Table) -> pa.Table:
    """Accept an 'actual' table that is a single struct column: flatten it and derive
    ``__struct_is_null`` from its validity."""
    if NULL_COL in t.column_names or t.num_columns - (ROW_COL in t.column_names) != 1:
        return t
    name = [c for c in t.column_names if c != ROW_COL][0]
    col = t.column(name).combine_chunks()
    if not pa.types.is_struct(col.type):
        return t
    cols = {ROW_COL: t.column(ROW_COL)} if ROW_COL in t.column_names else {}
    cols[NULL_COL] = col.is_null()
    for i in range(col.type.num_fields):
        cols[col.type.field(i).name] = col.field(i)
    return pa.table(cols)


def _short(v: Any, limit: int = 160) -> str:
    s = repr(v)
    return s if len(s) <= limit else s[:limit] + f"…(+{len(s) - limit})"


def compare_tables(
    expected: pa.Table,
    actual: pa.Table,
    *,
    signed_zero: bool = True,
    columns: Iterable[str] | None = None,
) -> tuple[list, list[str]]:
    """Return ``(mismatches, notes)``.  ``mismatches`` is a list of
    ``(row, {column: (expected, actual)})``; ``notes`` lists schema differences.
    Field values of rows where both sides say the struct is null are not compared."""
    actual = _flatten_single_struct(actual)
    notes: list[str] = []
    if expected.num_rows != actual.num_rows:
        notes.append(f"row count differs: expected {expected.num_rows}, actual {actual.num_rows}")
    if ROW_COL in actual.column_names:
        actual = actual.take(pc.sort_indices(actual, [(ROW_COL, "ascending")]))
    cols = (
        list(columns) if columns is not None else [c for c in expected.column_names if c != ROW_COL]
    )
    missing = [c for c in cols if c not in actual.column_names]
    if missing:
        notes.append(f"columns missing from actual: {missing}")
    extra = [c for c in actual.column_names if c not in expected.column_names]
    if extra:
        notes.append(f"extra columns in actual (ignored): {extra}")
    for c in cols:
        if (
            c in actual.column_names
            and expected.schema.field(c).type != actual.schema.field(c).type
        ):
            notes.append(
                f"type of {c!r}: expected {expected.schema.field(c).type}, "
                f"actual {actual.schema.field(c).type}"
            )
    n = min(expected.num_rows, actual.num_rows)
    exp = {c: _norm_array(expected.column(c))[:n] for c in cols}
    act = {c: _norm_array(actual.column(c))[:n] for c in cols if c in actual.column_names}
    e_null = exp.get(NULL_COL, [False] * n)
    a_null = act.get(NULL_COL, [False] * n)
    mism = []
    for i in range(n):
        bad = {}
        both_null = bool(e_null[i]) and bool(a_null[i])
        for c in cols:
            if c not in act:
                continue
            if both_null and c != NULL_COL:
                continue
            if not values_equal(exp[c][i], act[c][i], signed_zero):
                bad[c] = (exp[c][i], act[c][i])
        if bad:
            mism.append((i, bad))
    return mism, notes


def format_report(
    mism: list,
    notes: list[str],
    docs: Sequence[Doc],
    *,
    max_rows: int = 20,
    categories: Sequence[str] | None = None,
    total_rows: int = 0,
) -> str:
    from collections import Counter

    lines = [f"{len(mism)} of {total_rows} rows differ"]
    lines += [f"NOTE: {x}" for x in notes]
    by_col = Counter(c for _, bad in mism for c in bad)
    if by_col:
        lines.append(
            "mismatching rows per column: " + ", ".join(f"{c}={k}" for c, k in by_col.most_common())
        )
    if categories is not None and mism:
        by_cat = Counter(categories[i] for i, _ in mism)
        lines.append(
            "mismatching rows per category: "
            + ", ".join(f"{c}={k}" for c, k in by_cat.most_common())
        )
    for i, bad in mism[:max_rows]:
        cat = f" [{categories[i]}]" if categories is not None else ""
        lines.append(f"--- row {i}{cat}: doc = {_short(docs[i] if i < len(docs) else '?', 300)}")
        for c, (e, a) in bad.items():
            lines.append(f"    {c}: expected {_short(e)}")
            lines.append(f"    {' ' * len(c)}  actual   {_short(a)}")
    if len(mism) > max_rows:
        lines.append(f"... {len(mism) - max_rows} more mismatching rows")
    return "\n".join(lines)


def assert_tables_equal(
    expected: pa.Table,
    actual: pa.Table,
    docs: Sequence[Doc],
    *,
    max_rows: int = 20,
    categories: Sequence[str] | None = None,
    signed_zero: bool = True,
    check_types: bool = False,
) -> None:
    """Raise ``AssertionError`` listing the first ``max_rows`` mismatching rows (with the
    document text) if ``actual`` differs from ``expected``.  NaN equals NaN; timestamps
    are compared as int64 microseconds (any Arrow unit / time zone), strings as raw
    bytes, maps as ordered entry lists.  ``categories`` (e.g. from
    ``json_corpus.corpus_with_categories``) adds per-category counts to the report."""
    mism, notes = compare_tables(expected, actual, signed_zero=signed_zero)
    fatal_notes = [
        x
        for x in notes
        if x.startswith(("row count", "columns missing"))
        or (check_types and x.startswith("type of"))
    ]
    if mism or fatal_notes:
        raise AssertionError(
            "\n"
            + format_report(
                mism,
                notes,
                docs,
                max_rows=max_rows,
                categories=categories,
                total_rows=expected.num_rows,
            )
        )


# ---------------------------------------------------------------------------
# command line: benchmark and self-test
# ---------------------------------------------------------------------------


def _bench(n: int, seed: int, master: str) -> None:
    from support import json_corpus as jc

    t0 = time.time()
    docs = jc.corpus(n, seed)
    print(
        f"corpus({n}, {seed}): {time.time() - t0:.1f}s, "
        f"{sum(len(to_bytes(d) or b'') for d in docs) / 1e6:.1f} MB"
    )
    t0 = time.time()
    spark = make_spark(master)
    print(f"SparkSession start ({master}): {time.time() - t0:.1f}s")
    nex = [d for c, d in jc.corpus_with_categories(n, seed) if c == "nexmark"]
    runs = [
        ("nexmark-only docs", nex, jc.ddl_for("nexmark"), {}),
        ("nexmark", docs, jc.ddl_for("nexmark"), {}),
    ]
    for s, o in jc.TEST_MATRIX:
        if (s, o) != ("nexmark", "default"):
            runs.append((f"{s}/{o}", docs, jc.ddl_for(s, o), jc.OPTION_SETS[o]))
    spark_from_json(spark, docs[:1000], jc.ddl_for("all_types"))  # warm-up (JIT, codegen)
    for name, dd, ddl, opts in runs:
        t0 = time.time()
        tab = spark_from_json(spark, dd, ddl, opts)
        t1 = time.time() - t0
        from pyspark.sql import functions as F

        t0 = time.time()
        (
            docs_to_dataframe(spark, dd)
            .select(F.from_json("value", ddl, opts).alias("j"))
            .write.format("noop")
            .mode("overwrite")
            .save()
        )
        t2 = time.time() - t0
        print(
            f"{name:28s} {len(dd):7d} docs: spark_from_json (incl. transfer + toArrow) "
            f"{t1:6.1f}s = {len(dd) / t1:8.0f} docs/s; from_json only (noop sink) {t2:6.1f}s; "
            f"{tab.nbytes / 1e6:.1f} MB arrow"
        )
    spark.stop()


def _selftest() -> None:
    from support import json_corpus as jc

    spark = make_spark("local[2]")
    cats_docs = jc.corpus_with_categories(3000, 7)
    docs = [d for _, d in cats_docs]
    cats = [c for c, _ in cats_docs]
    for s, o in jc.TEST_MATRIX:
        exp = spark_from_json(spark, docs, jc.ddl_for(s, o), jc.OPTION_SETS[o])
        assert_tables_equal(exp, exp, docs, categories=cats)
    # perturb one value of a struct-typed reference and make sure it is caught
    exp = spark_from_json(
        spark, docs, jc.ddl_for("all_types", "corrupt"), jc.OPTION_SETS["corrupt"]
    )
    d = exp.column("d").to_pylist()
    k = next(i for i, v in enumerate(d) if v is not None and not math.isnan(v))
    d[k] = d[k] + 1.0
    bad = exp.set_column(exp.column_names.index("d"), "d", pa.array(d, pa.float64()))
    try:
        assert_tables_equal(exp, bad, docs, categories=cats)
        raise SystemExit("self-test failed: perturbation not detected")
    except AssertionError as e:
        print(str(e)[:800])
    # the single-struct-column form is accepted too
    cols = [c for c in exp.column_names if c not in (ROW_COL, NULL_COL)]
    st = pa.StructArray.from_arrays(
        [exp.column(c).combine_chunks() for c in cols],
        names=cols,
        mask=exp.column(NULL_COL).combine_chunks(),
    )
    assert_tables_equal(exp, pa.table({"parsed": st}), docs)
    print("self-test OK")
    spark.stop()


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", action="store_true")
    ap.add_argument("--selftest", action="store_true")
    ap.add_argument("-n", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--master", default="local[2]")
    a = ap.parse_args()
    if a.selftest:
        _selftest()
    if a.bench:
        _bench(a.n, a.seed, a.master)
