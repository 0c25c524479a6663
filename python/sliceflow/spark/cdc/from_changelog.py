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

from collections.abc import Mapping

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from sliceflow._runtime.change_kinds import CHANGE_KINDS
from sliceflow.spark._runtime.columns import quote

__all__ = ["from_changelog"]

#: The change kinds of sliceflow's changelog rows.

_ROW = "__sliceflow_row"
_CHANGES = "__sliceflow_changes"


def from_changelog(
    df: DataFrame,
    *,
    format: str | None = None,
    op_col: str | None = None,
    mapping: Mapping[str | None, str] | None = None,
) -> DataFrame:
    """CDC rows as a changelog: ``op`` (``+I``, ``-U``, ``+U``, ``-D``) then the row's columns.

    Args:
        df: a batch or streaming DataFrame.
        format: ``"debezium"``: ``df`` holds Debezium envelopes, either at the top level
            (columns ``before``, ``after``, ``op``, and others such as ``source`` and ``ts_ms``,
            which are dropped) or inside a struct column ``payload`` (the JSON converter with
            schemas). The output columns are the fields of ``after`` (``before`` has the same).
        op_col: (without ``format``) the column that holds each row's change kind; the other
            columns, in their order, are the row.
        mapping: with ``op_col``: the op column's values mapped to ``+I``/``-U``/``+U``/``-D``
            (a ``None`` key maps a null op); ``None``: the column holds those four already.
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
        for b, a in zip(before.fields, after.fields, strict=True):
            if b.dataType.simpleString() != a.dataType.simpleString():
                raise ValueError(
                    f"from_changelog(format='debezium'): {prefix}before.{b.name} is "
                    f"{b.dataType.simpleString().upper()} but {prefix}after.{a.name} is "
                    f"{a.dataType.simpleString().upper()}: a row's columns have one type "
                    "before and after a change (cast one of them first)"
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


def _mapped(df: DataFrame, op_col: str, mapping: Mapping[str | None, str] | None) -> DataFrame:
    if not isinstance(op_col, str):
        raise TypeError(f"op_col must be a column name (str), not {type(op_col).__name__}")
    matches = [n for n in df.columns if n == op_col] or [
        n for n in df.columns if n.lower() == op_col.lower()
    ]
    if len(matches) != 1:
        raise ValueError(f"op column {op_col!r} is not a column of the DataFrame: {df.columns}")
    name = matches[0]
    dt = df.schema[name].dataType
    if mapping is None:
        mapping = {kind: kind for kind in CHANGE_KINDS}
        if not isinstance(dt, T.StringType):
            raise ValueError(
                f"op column {name!r} must be a STRING column of +I, -U, +U, -D (or pass a "
                f"mapping), not {dt.simpleString()}"
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
    source = F.col(quote(name))
    known = ", ".join(repr(v) for v in mapping)
    mapped: Column | None = None
    for value, kind in mapping.items():
        test = source.isNull() if value is None else source == F.lit(value)
        mapped = F.when(test, F.lit(kind)) if mapped is None else mapped.when(test, F.lit(kind))
    assert mapped is not None
    shown = F.coalesce(F.concat(F.lit("'"), source.cast("string"), F.lit("'")), F.lit("null"))
    mapped = mapped.otherwise(
        F.raise_error(
            F.concat(
                F.lit(f"from_changelog: op column {name!r} holds "),
                shown,
                F.lit(f", which the mapping does not map (it maps {known})"),
            )
        )
    )
    rest = [F.col(quote(c)) for c in df.columns if c != name]
    return df.select(mapped.alias("op"), *rest)
