"""Where a Spark Connect DataFrame's columns come from: a ``sliceflow.json`` read through
column references only, or not (:func:`sliceflow.spark.json.lineage.json_source_read` for a
Connect session).

A Connect client holds the user's plan unresolved (names, not attributes), so the plan is read
in two parts. On the client, the nodes between the DataFrame and the scan must be projections
(``select``, ``withColumn``, ``withColumnsRenamed``, ``alias``) and, on a stream, one
``withWatermark``, over the ``sliceflow.json`` source read as a batch or a stream. The server
then resolves the names, as it would for the query: the same plan over the same read, whose
schema carries on each field (nested struct fields too) a tag naming it, is analysed once;
Spark keeps a field's metadata through exactly the expressions that pass its values on
unchanged (a column or nested field reference, an alias, a rename), so each column of the
analysed plan that carries a tag is that field. Anything else (a filter, a join, an expression,
a cast, a column without a tag) gives ``None``, and the operator reads its input as any
DataFrame.

Invariant: a column is matched to a field only if its tag carries this call's random nonce, and
its name and type equal the real plan's column's.

Cost: on the client one walk of the plan's nodes; on the server two schema requests (the
source's schema, which infers it when the read gives none, and the tagged plan's), when the
query is built.
"""

from __future__ import annotations

import copy
import json
import secrets
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql.types import DataType, StructField, StructType

from sliceflow.spark.json.lineage import SourceColumn, SourceRead

__all__ = ["connect_source_read"]

#: The metadata key of a field's tag in the tagged plan: ``<nonce>:<field>:<ordinals>``.
_TAG = "sliceflow.lineage"


def connect_source_read(df: DataFrame) -> SourceRead | None:
    """The ``sliceflow.json`` read whose fields ``df``'s columns are (module doc), or None."""
    from pyspark.sql.connect import plan as cp
    from pyspark.sql.connect.dataframe import DataFrame as ConnectDataFrame

    if not isinstance(df, ConnectDataFrame):
        return None
    chain: list[Any] = []
    node: Any = df._plan
    while not isinstance(node, cp.DataSource):
        passes = (cp.Project, cp.WithColumns, cp.WithColumnsRenamed, cp.SubqueryAlias)
        if not isinstance(node, (*passes, cp.WithWatermark)) or node._references:
            return None
        chain.append(node)
        node = node._child
        if node is None:
            return None
    source: cp.DataSource = node
    if (source._format or "").lower() != "sliceflow.json" or source._predicates:
        return None
    streaming = bool(source._is_streaming)
    watermarks = sum(isinstance(n, cp.WithWatermark) for n in chain)
    if watermarks > 1 or (watermarks and not streaming):
        return None
    session = df.sparkSession
    try:
        schema = ConnectDataFrame(source, session).schema
        nonce = secrets.token_hex(8)
        tagged = copy.copy(source)
        tagged._schema = _tagged(schema, nonce).json()
        top = tagged
        for plan_node in reversed(chain):  # the same nodes (plan ids too) over the tagged read
            above = copy.copy(plan_node)
            above._child = top
            top = above
        probe = ConnectDataFrame(top, session).schema
        real = df.schema
    except Exception:  # a plan the server cannot analyse is not one to fuse
        return None
    if len(set(schema.names)) != len(schema.names) or probe.names != real.names:
        return None
    columns = []
    for seen, want in zip(probe.fields, real.fields, strict=True):
        ref = _untag(seen, nonce)
        if ref is None or seen.dataType != want.dataType or _type_at(schema, ref) != want.dataType:
            return None
        columns.append(SourceColumn(want.name, ref[0], ref[1]))
    options = dict(source._options or {})
    paths = list(source._paths or [])
    if len(paths) == 1:
        options["path"] = paths[0]
    elif paths:
        options["paths"] = json.dumps(paths)
    watermarked = watermarks == 1
    return SourceRead(options, schema, tuple(columns), streaming, watermarked)


def _tagged(schema: StructType, nonce: str) -> StructType:
    """``schema`` with every field, and every struct field under it, tagged by its path."""

    def tag(field: StructField, top: str, path: tuple[int, ...]) -> StructField:
        data_type: DataType = field.dataType
        if isinstance(data_type, StructType):
            data_type = StructType(
                [tag(f, top, (*path, i)) for i, f in enumerate(data_type.fields)]
            )
        value = f"{nonce}:{top}:{','.join(map(str, path))}"
        metadata = {**(field.metadata or {}), _TAG: value}
        return StructField(field.name, data_type, field.nullable, metadata)

    return StructType([tag(f, f.name, ()) for f in schema.fields])


def _untag(field: StructField, nonce: str) -> tuple[str, tuple[int, ...]] | None:
    """The (top-level field, path) a column's tag names, or None without this nonce's tag."""
    value = (field.metadata or {}).get(_TAG)
    if not isinstance(value, str) or not value.startswith(nonce + ":"):
        return None
    top, _, path = value[len(nonce) + 1 :].rpartition(":")
    return top, tuple(int(p) for p in path.split(",") if p)


def _type_at(schema: StructType, ref: tuple[str, tuple[int, ...]]) -> DataType | None:
    """The type of the field ``ref`` names in ``schema``, or None if it names none."""
    if ref[0] not in schema.names:
        return None
    data_type: DataType = schema[ref[0]].dataType
    for ordinal in ref[1]:
        if not isinstance(data_type, StructType) or ordinal >= len(data_type.fields):
            return None
        data_type = data_type.fields[ordinal].dataType
    return data_type
