"""``from_changelog``: CDC rows (Debezium envelopes, or rows with an op column of any vocabulary)
as sliceflow's changelog: an ``op`` column of ``+I``/``-U``/``+U``/``-D`` then the row's columns.

Everything is Spark's own expressions (a ``when`` over the op, an ``explode`` of the one or two
rows a change carries), so batch and streaming DataFrames both work, no row goes through
Python, and the output feeds ``changelog_agg``, ``topn`` and ``deduplicate`` with
``op_col="op"``. A bad op value fails the query (batch or stream) with Spark's ``raise_error``,
naming the column and the value.

Debezium (``format="debezium"``), as Flink's ``debezium-json`` format reads it:

====================  =======================================================
``op``                changes
====================  =======================================================
``c`` (create)        ``+I`` after
``r`` (snapshot read) ``+I`` after
``u`` (update)        ``-U`` before, ``+U`` after
``d`` (delete)        ``-D`` before
tombstone             none: a row whose value (or ``op``) is null is dropped
====================  =======================================================

An update or delete whose ``before`` is null (Postgres without ``REPLICA IDENTITY FULL``) fails
the query, as it does in Flink: the retraction it needs is not in the message.
"""

from __future__ import annotations

import decimal
from collections.abc import Mapping
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from sliceflow._runtime.change_kinds import CHANGE_KINDS
from sliceflow.aggregates import ColumnArg
from sliceflow.spark._runtime.columns import quote, resolve_columns, shown, with_columns

__all__ = ["from_changelog"]

#: The change kinds of sliceflow's changelog rows.

_ROW = "__sliceflow_row"
_CHANGES = "__sliceflow_changes"


def from_changelog(
    df: DataFrame,
    *,
    format: str | None = None,
    op_col: ColumnArg | None = None,
    mapping: Mapping[Any, str] | None = None,
) -> DataFrame:
    """CDC rows as a changelog: ``op`` (``+I``, ``-U``, ``+U``, ``-D``) then the row's columns.

    Args:
        df: a batch or streaming DataFrame.
        format: ``"debezium"``: ``df`` holds Debezium envelopes, either at the top level
            (columns ``before``, ``after``, ``op``, and others such as ``source`` and ``ts_ms``,
            which are dropped) or inside a struct column ``payload`` (the JSON converter with
            schemas). The output columns are the fields of ``after`` (``before`` has the same).
        op_col: (without ``format``) the column that holds each row's change kind: a name, a
            nested field (``"meta.op"``) or a pyspark Column (``F.col("kind")``, ``df.kind``);
            the other columns, in their order, are the row (all of them when the op is a nested
            field or an expression).
        mapping: with ``op_col``: the op column's values mapped to ``+I``/``-U``/``+U``/``-D``
            (a ``None`` key maps a null op), its keys values of the column's type (``{1: "+I",
            ...}`` for an INT column); ``None``: the column is a STRING column of those four.
            A value the mapping lacks fails the query with an error naming the column and the
            value.

    Returns:
        ``op`` (STRING, never null) and the row's columns, ready for ``changelog_agg``,
        ``topn`` and ``deduplicate`` with ``op_col="op"``.

    Example:
        >>> changes = from_changelog(
        ...     df, op_col="kind",
        ...     mapping={"INSERT": "+I", "DELETE": "-D", "UPDATE_BEFORE": "-U",
        ...              "UPDATE_AFTER": "+U"})  # doctest: +SKIP
        >>> rows = from_changelog(debezium, format="debezium")  # doctest: +SKIP
        >>> rows.columns  # doctest: +SKIP
        ['op', 'id', 'name', 'price']
    """
    if not isinstance(df, DataFrame):
        raise TypeError(f"from_changelog takes a pyspark DataFrame, not {type(df).__name__}")
    if format is not None:
        if format != "debezium":
            raise ValueError(f"format must be None or 'debezium', not {format!r}")
        if op_col is not None or mapping is not None:
            raise ValueError("format='debezium' takes neither op_col nor mapping")
        return _debezium(df)
    if op_col is None:
        raise ValueError("from_changelog needs format='debezium' or an op_col")
    return _mapped(df, op_col, mapping)


def _field_names(dt: T.DataType) -> list[str]:
    return [f.name for f in dt.fields] if isinstance(dt, T.StructType) else []


def _type_clash(b: T.DataType, a: T.DataType, path: str) -> tuple[str, str, str] | None:
    """The first place (a path of fields, ``[]`` for array elements, ``{}`` for map values)
    where types ``b`` and ``a`` differ as Spark's ``array()`` tells types apart (nullability
    aside), with the two types there; None when they are the same."""
    if isinstance(b, T.StructType) and isinstance(a, T.StructType):
        if [f.name for f in b.fields] == [f.name for f in a.fields]:
            for fb, fa in zip(b.fields, a.fields, strict=True):
                clash = _type_clash(fb.dataType, fa.dataType, f"{path}.{fb.name}")
                if clash is not None:
                    return clash
            return None
    elif isinstance(b, T.ArrayType) and isinstance(a, T.ArrayType):
        return _type_clash(b.elementType, a.elementType, path + "[]")
    elif isinstance(b, T.MapType) and isinstance(a, T.MapType):
        return _type_clash(b.keyType, a.keyType, path + "{key}") or _type_clash(
            b.valueType, a.valueType, path + "{}"
        )
    elif b == a:
        return None
    return path, _type_text(b), _type_text(a)


def _type_text(dt: T.DataType) -> str:
    """A type as an error shows it: ``INT``; a nested type as Spark prints it, so that its field
    names keep their case (``struct<Id:int>``)."""
    nested = isinstance(dt, (T.StructType, T.ArrayType, T.MapType))
    return dt.simpleString() if nested else dt.simpleString().upper()


def _debezium(df: DataFrame) -> DataFrame:
    fields = {f.name: f.dataType for f in df.schema.fields}
    payload = fields.get("payload")
    # The envelope is the struct `payload` when it holds an op (the JSON converter with
    # schemas), else the top level; a `payload` struct is named in the error when neither has
    # an op.
    if isinstance(payload, T.StructType) and ("op" in _field_names(payload) or "op" not in fields):
        envelope = {f.name: f.dataType for f in payload.fields}
        prefix = "payload."
        part: Column | None = F.col("payload")
    else:
        envelope, prefix, part = fields, "", None
    missing = [name for name in ("op", "before", "after") if name not in envelope]
    if missing:
        present = [prefix + name for name in envelope] if part is not None else df.columns
        raise ValueError(
            "from_changelog(format='debezium'): the DataFrame has no "
            + " and no ".join(repr(prefix + name) for name in missing)
            + " field (a Debezium envelope has op, before and after; "
            + ("fields of 'payload'" if part is not None else "columns")
            + f": {present})"
        )
    after, before = envelope["after"], envelope["before"]
    if not isinstance(after, T.StructType):
        raise ValueError(
            f"from_changelog(format='debezium'): {prefix}after must be a struct of the row's "
            f"columns, not {after.simpleString()}"
        )
    if not isinstance(before, (T.StructType, T.NullType)) or (
        isinstance(before, T.StructType) and _field_names(before) != _field_names(after)
    ):
        raise ValueError(
            f"from_changelog(format='debezium'): {prefix}before and {prefix}after must be "
            f"structs of the same columns: {before.simpleString()} vs {after.simpleString()}"
        )
    if isinstance(before, T.StructType):
        clash = _type_clash(before, after, "")
        if clash is not None:
            path, b_type, a_type = clash
            raise ValueError(
                f"from_changelog(format='debezium'): {prefix}before{path} is {b_type} but "
                f"{prefix}after{path} is {a_type}: a row's columns have one type before and "
                "after a change (cast one of them first)"
            )
    repeated = sorted({n for n in _field_names(after) if _field_names(after).count(n) > 1})
    if repeated:
        raise ValueError(
            f"from_changelog(format='debezium'): {prefix}after has the field(s) {repeated} more "
            "than once; a row's columns need names of their own"
        )

    def field(name: str) -> Column:
        return part.getField(name) if part is not None else F.col(quote(name))

    op, after_row = field("op"), field("after")
    before_row = field("before") if isinstance(before, T.StructType) else F.lit(None).cast(after)

    def change(kind: str, row: Column) -> Column:
        return F.struct(F.lit(kind).alias("op"), row.alias(_ROW))

    # The message an error shows: the envelope's op, before and after as JSON, cut at 300
    # characters.
    record = F.substring(
        F.to_json(F.struct(op.alias("op"), before_row.alias("before"), after_row.alias("after"))),
        1,
        300,
    )

    def needs_before(kind: str) -> Column:
        return F.when(
            before_row.isNull(),
            F.raise_error(
                F.concat(
                    F.lit(
                        f"from_changelog(format='debezium'): an {kind!r} message has a null "
                        f"{prefix}before, so its retraction is unknown (Postgres: set the "
                        "table's REPLICA IDENTITY to FULL). The message: "
                    ),
                    record,
                )
            ),
        )

    def needs_after() -> Column:
        return F.when(
            after_row.isNull(),
            F.raise_error(
                F.concat(
                    F.lit("from_changelog(format='debezium'): an '"),
                    op,
                    F.lit(
                        f"' message has a null {prefix}after, so the row it writes is "
                        "unknown. The message: "
                    ),
                    record,
                )
            ),
        )

    changes = (
        F.when(op.isin("c", "r"), F.coalesce(needs_after(), F.array(change("+I", after_row))))
        .when(
            op == "u",
            F.coalesce(
                needs_before("u"),
                needs_after(),
                F.array(change("-U", before_row), change("+U", after_row)),
            ),
        )
        .when(op == "d", F.coalesce(needs_before("d"), F.array(change("-D", before_row))))
        .otherwise(
            F.raise_error(
                F.concat(
                    F.lit(f"from_changelog(format='debezium'): {prefix}op holds '"),
                    op,
                    F.lit("', which is not a Debezium change (c, r, u or d)"),
                )
            )
        )
    )
    # A tombstone (the Kafka value is null: no envelope, or no op) carries no change.
    rows = df.where(op.isNotNull()).select(F.explode(changes).alias(_CHANGES))
    columns = [
        F.col(_CHANGES).getField(_ROW).getField(name).alias(name) for name in _field_names(after)
    ]
    return rows.select(F.col(_CHANGES).getField("op").alias("op"), *columns)


def _mapped(df: DataFrame, op_col: ColumnArg, mapping: Mapping[object, str] | None) -> DataFrame:
    if not isinstance(op_col, (str, Column)):
        raise TypeError(
            f"op_col must be a column name or a pyspark Column, not {type(op_col).__name__}"
        )
    case_sensitive = str(df.sparkSession.conf.get("spark.sql.caseSensitive", "false")) == "true"
    resolved = resolve_columns(df, [op_col], case_sensitive, "from_changelog")
    name = resolved.names[0]
    frame = with_columns(df, resolved.added)
    if name not in frame.columns:
        raise ValueError(
            f"from_changelog: op column {shown(op_col)!r} is not a column of the DataFrame "
            f"(columns: {', '.join(df.columns)})"
        )
    dt = frame.schema[name].dataType
    type_name = dt.simpleString().upper()
    if mapping is None:
        mapping = {kind: kind for kind in CHANGE_KINDS}
        if not isinstance(dt, T.StringType):
            example = (
                "{1: '+I', 2: '-U', 3: '+U', 4: '-D'}"
                if isinstance(dt, T.IntegralType)
                else "{<value>: '+I', <value>: '-U', <value>: '+U', <value>: '-D'}"
            )
            raise ValueError(
                f"from_changelog: op column {shown(op_col)!r} has type {type_name}; without a "
                "mapping it must be a STRING column of +I, -U, +U, -D. Pass mapping= with its "
                f"values, e.g. mapping={example}"
            )
    given: object = mapping
    if not isinstance(given, Mapping) or not given:
        raise ValueError("mapping must be a non-empty dict of op values to +I, -U, +U or -D")
    for value, kind in mapping.items():
        if kind not in CHANGE_KINDS:
            raise ValueError(
                f"mapping maps {value!r} to {kind!r}, which is not a change kind: expected "
                "+I, -U, +U or -D"
            )
    _check_mapping_keys(shown(op_col), dt, mapping)
    source = F.col(quote(name))
    known = ", ".join(repr(v) for v in mapping)
    mapped: Column | None = None
    for value, kind in mapping.items():
        test = source.isNull() if value is None else source == F.lit(value)
        mapped = F.when(test, F.lit(kind)) if mapped is None else mapped.when(test, F.lit(kind))
    assert mapped is not None
    value = F.coalesce(F.concat(F.lit("'"), source.cast("string"), F.lit("'")), F.lit("null"))
    mapped = mapped.otherwise(
        F.raise_error(
            F.concat(
                F.lit(f"from_changelog: op column {shown(op_col)!r} holds "),
                value,
                F.lit(f", which the mapping does not map (it maps {known})"),
            )
        )
    )
    # The other columns of the DataFrame are the row (a nested op field leaves them all).
    rest = [F.col(quote(c)) for c in df.columns if c != name]
    return frame.select(mapped.alias("op"), *rest)


def _check_mapping_keys(op: str, dt: T.DataType, mapping: Mapping[object, str]) -> None:
    """A ``ValueError`` naming the op column, its type and the key when a mapping key is not a
    value of the column's type (Spark would cast it and fail every row, e.g. with
    CAST_INVALID_INPUT for a string key of an INT column)."""
    if isinstance(dt, T.StringType):
        expected: tuple[type, ...] = (str,)
    elif isinstance(dt, T.IntegralType):
        expected = (int,)
    elif isinstance(dt, (T.FractionalType, T.DecimalType)):
        expected = (int, float, decimal.Decimal)
    elif isinstance(dt, T.BooleanType):
        expected = (bool,)
    else:
        return
    for value in mapping:
        if value is None:
            continue
        ok = isinstance(value, expected) and (bool in expected or not isinstance(value, bool))
        if not ok:
            kinds = " or ".join(t.__name__ for t in expected)
            raise ValueError(
                f"from_changelog: op column {op!r} has type {dt.simpleString().upper()}, but the "
                f"mapping's key {value!r} is a {type(value).__name__}: map the column's own "
                f"values ({kinds}), e.g. mapping={{{_example(dt)}: '+I', ...}}, or cast the "
                "column first"
            )


def _example(dt: T.DataType) -> str:
    if isinstance(dt, T.StringType):
        return "'insert'"
    if isinstance(dt, T.BooleanType):
        return "True"
    return "1"
