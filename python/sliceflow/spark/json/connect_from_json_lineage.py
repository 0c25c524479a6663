"""Where a Spark Connect DataFrame's columns come from, second kind: fields of one
``sliceflow.spark.from_json`` column over another DataFrame's text column, or not
(:func:`sliceflow.spark.json.from_json_lineage.from_json_read` for a Connect session).

A Connect client holds the user's plan unresolved (names, not attributes), so the plan is read
in two parts, as :mod:`sliceflow.spark.json.connect_lineage` reads a ``sliceflow.json`` scan.
On the client, from the top, every node must be a projection (``select``, ``withColumn``,
``withColumnsRenamed``, ``alias``) or one ``withWatermark``, down to the one whose columns hold
the ``from_json`` UDF, alone, under aliases (and the cast ``from_json`` adds for repeated field
names). What is below that projection is not looked at: it stays the user's plan. The server
then resolves the names: the same nodes over a tagged copy are analysed once, where the UDF's
struct (each nested field too) and each column of the DataFrame below carry a tag in their
metadata. Spark keeps a field's metadata through exactly the expressions that pass its values
on unchanged (a column or nested field reference, an alias, a rename), so each column of the
analysed copy that carries a tag is that decoded field or that column passed through. Anything
else (a filter, an expression, a cast, a second UDF, a column without a tag) gives ``None``,
and the operator reads its input as any DataFrame.

Invariant: a column is matched only if its tag carries this call's random nonce and its name
and type equal the real plan's column's; the decoding is the very :class:`JsonDecoding` the
UDF runs (found by the UDF's name).

Cost: on the client one walk of the plan's nodes above the decoding; on the server two schema
requests (the tagged copy's and the real plan's) and one for the DataFrame below, when the
query is built.
"""

from __future__ import annotations

import copy
import json
import secrets
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import DataType, StructField, StructType

from sliceflow.spark._runtime.analyzed_plan import type_at
from sliceflow.spark._runtime.columns import quote
from sliceflow.spark.json.from_json import JsonDecoding, decoding_of
from sliceflow.spark.json.from_json_lineage import DecodedColumn, FromJsonRead, crosses

__all__ = ["connect_from_json_read"]

#: The metadata key of a column's tag in the tagged copy: ``<nonce>:d:<ordinals>`` for a
#: decoded field, ``<nonce>:p:<name>`` for a column of the DataFrame below passed through.
_TAG = "sliceflow.from_json"


def connect_from_json_read(df: DataFrame) -> FromJsonRead | None:
    """The ``from_json`` decoding whose fields ``df``'s columns are (module doc), or None."""
    from pyspark.sql.connect import plan as cp
    from pyspark.sql.connect.dataframe import DataFrame as ConnectDataFrame

    if not isinstance(df, ConnectDataFrame):
        return None
    chain: list[Any] = []
    node: Any = df._plan
    while True:
        if isinstance(node, (cp.Project, cp.WithColumns)) and not node._references:
            found = _decoding_column(node)
            if found is None:
                return None
            if isinstance(found, tuple):
                break
        elif not isinstance(node, (cp.WithColumnsRenamed, cp.SubqueryAlias, cp.WithWatermark)):
            return None
        chain.append(node)
        node = node._child
        if node is None:
            return None
    index, decoding, text = found
    watermarks = sum(isinstance(n, cp.WithWatermark) for n in chain)
    if node._child is None or watermarks > 1:
        return None
    session = df.sparkSession
    below: DataFrame = ConnectDataFrame(node._child, session)
    try:
        nonce = secrets.token_hex(8)
        top = _tagged_decoding(node, index, decoding, below, nonce)
        for plan_node in reversed(chain):  # the same nodes (plan ids too) over the tagged copy
            above = copy.copy(plan_node)
            above._child = top
            top = above
        probe = ConnectDataFrame(top, session).schema
        real = df.schema
        names = below.columns
    except Exception:  # a plan the server cannot analyse is not one to fuse
        return None
    if probe.names != real.names or len(set(names)) != len(names):
        return None
    columns = []
    for seen, want in zip(probe.fields, real.fields, strict=True):
        column = _untagged(seen, want, nonce, decoding, names)
        if column is None:
            return None
        columns.append(column)
    return FromJsonRead(
        below, text, decoding, tuple(columns), _watermarked(node._child), watermarks == 1
    )


def _decoding_column(node: Any) -> tuple[int, JsonDecoding, Any] | str | None:
    """The index of a projection's ``from_json`` column, its decoding and its text column
    ("none": the projection has no UDF; None: it has one sliceflow cannot take apart)."""
    from pyspark.sql.connect.column import Column
    from pyspark.sql.connect.expressions import CommonInlineUserDefinedFunction

    found: tuple[int, JsonDecoding, Any] | None = None
    udfs = 0
    for index, column in enumerate(node._columns):
        expr = column._expr if isinstance(column, Column) else None
        if expr is None:
            continue
        udfs += sum(isinstance(e, CommonInlineUserDefinedFunction) for e in _subexpressions(expr))
        udf = _udf_under_aliases(expr)
        if udf is None:
            continue
        decoding = decoding_of(str(udf._function_name))
        text = _text_column(udf) if decoding is not None else None
        if decoding is None or text is None:
            return None
        found = (index, decoding, Column(text))
    if udfs == 0:
        return "none"
    if found is None or udfs != 1:
        return None
    return found


def _subexpressions(expr: Any) -> list[Any]:
    out, stack = [], [expr]
    while stack:
        e = stack.pop()
        out.append(e)
        stack.extend(getattr(e, "children", ()) or ())
    return out


def _udf_under_aliases(expr: Any) -> Any:
    """The UDF a column is, under aliases and from_json's renaming cast, or None."""
    from pyspark.sql.connect.expressions import (
        CastExpression,
        ColumnAlias,
        CommonInlineUserDefinedFunction,
    )

    while isinstance(expr, ColumnAlias) and len(expr._alias) == 1:
        expr = expr._child
    if isinstance(expr, CastExpression):
        expr = expr._expr
    return expr if isinstance(expr, CommonInlineUserDefinedFunction) else None


def _text_column(udf: Any) -> Any:
    """from_json's argument (``CASE WHEN true THEN <text> ELSE <Spark's check> END``): the
    text expression, or None."""
    from pyspark.sql.connect.expressions import CaseWhen, LiteralExpression

    arguments = list(udf._arguments)
    if len(arguments) != 1 or not isinstance(arguments[0], CaseWhen):
        return None
    branches = arguments[0]._branches
    if len(branches) != 1:
        return None
    condition, text = branches[0]
    if not isinstance(condition, LiteralExpression) or condition._value is not True:
        return None
    return text


def _tagged_decoding(
    node: Any, index: int, decoding: JsonDecoding, below: DataFrame, nonce: str
) -> Any:
    """A copy of the decoding projection whose ``from_json`` struct has every field tagged,
    over a copy of the DataFrame below whose columns are tagged."""
    from pyspark.sql.connect.column import Column
    from pyspark.sql.connect.expressions import CastExpression, ColumnAlias
    from pyspark.sql.connect.plan import WithColumns

    passed = below.select(
        *[F.col(quote(n)).alias(n, metadata={_TAG: f"{nonce}:p:{n}"}) for n in below.columns]
    )
    column = node._columns[index]
    aliases = []
    expr = column._expr
    while isinstance(expr, ColumnAlias):
        aliases.append(expr._alias[0])
        expr = expr._child
    tagged_type = _tagged(decoding.spark_schema, nonce)
    if isinstance(expr, CastExpression):  # cast to the user's schema: tag the cast's type
        expr = copy.copy(expr)
        expr._data_type = tagged_type
    else:
        expr = copy.copy(expr)
        expr._function = copy.copy(expr._function)
        expr._function._output_type = tagged_type
    name = aliases[0] if aliases else None
    tagged_column: Any = Column(expr)
    if name is not None:
        tagged_column = tagged_column.alias(name, metadata={_TAG: f"{nonce}:d:"})
    copied = copy.copy(node)
    copied._columns = [*node._columns[:index], tagged_column, *node._columns[index + 1 :]]
    if isinstance(node, WithColumns):  # withColumn names (and tags) the column itself
        metadata = list(node._metadata or [""] * len(node._columns))
        metadata[index] = json.dumps({_TAG: f"{nonce}:d:"})
        copied._metadata = metadata
    copied._child = passed._plan
    return copied


def _tagged(data_type: DataType, nonce: str, path: tuple[int, ...] = ()) -> DataType:
    if not isinstance(data_type, StructType):
        return data_type
    fields = []
    for i, field in enumerate(data_type.fields):
        at = (*path, i)
        metadata = {**(field.metadata or {}), _TAG: f"{nonce}:d:{','.join(map(str, at))}"}
        fields.append(
            StructField(field.name, _tagged(field.dataType, nonce, at), field.nullable, metadata)
        )
    return StructType(fields)


def _untagged(
    seen: StructField, want: StructField, nonce: str, decoding: JsonDecoding, names: list[str]
) -> DecodedColumn | None:
    """The decoded field or passed-through column a column of the tagged copy is, if its type
    is the real column's."""
    value = (seen.metadata or {}).get(_TAG)
    if not isinstance(value, str) or not value.startswith(nonce + ":"):
        return None
    kind, _, rest = value[len(nonce) + 1 :].partition(":")
    if kind == "p":
        if rest not in names:
            return None
        return DecodedColumn(want.name, None, rest)
    if kind != "d":
        return None
    path = tuple(int(p) for p in rest.split(",") if p)
    if path == () and not crosses(decoding.spark_schema):
        return None
    if type_at(decoding.spark_schema, path) != want.dataType:
        return None
    return DecodedColumn(want.name, path)


def _watermarked(plan: Any) -> bool:
    """Whether a Connect plan has a ``withWatermark`` anywhere."""
    from pyspark.sql.connect import plan as cp

    stack, seen = [plan], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, cp.WithWatermark):
            return True
        for value in vars(node).values():
            items = value if isinstance(value, (list, tuple)) else [value]
            stack.extend(v for v in items if isinstance(v, cp.LogicalPlan))
    return False
