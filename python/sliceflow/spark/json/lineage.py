"""Where an operator's input columns come from: a ``sliceflow.json`` read (batch or stream),
through column references only, or not (then the operator reads its input as any DataFrame).

:func:`json_source_read` walks the analyzed plan of the DataFrame an operator is about to hand
to Python (its input columns, selected): every node between it and the scan must be a
projection (``select``, ``withColumn``, ``withColumnRenamed``, ``alias``, a temporary view)
whose expressions are column references, nested field references (``F.col("repo.name")``,
``GetStructField``), aliases, or casts that change nothing (``F.col("ts").cast("timestamp")``
on a TIMESTAMP), and on a stream one ``withWatermark``; the scan must be the ``sliceflow.json``
source, read as a batch or as a stream. Anything else (a filter, a join, a UDF, an expression, a
cast that converts, ``_metadata``) gives ``None``.

Invariant: each :class:`SourceColumn` names the field the column's values are, unchanged
(a nested field's null where its parent struct is null, as ``GetStructField`` gives), so a
reader that decodes those fields and extracts them gives the column's rows exactly.

Cost: one ``toJSON()`` of the analyzed plan on the driver (milliseconds), when the query is
built. Classic sessions only: a Spark Connect DataFrame has no analyzed plan on the client,
and gives ``None`` (:mod:`sliceflow.spark.json.connect_lineage` reads it).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql.types import DataType, StructField, StructType

from sliceflow.spark._runtime.analyzed_plan import (
    EXPR,
    PASS_THROUGH,
    PLAN,
    WATERMARK,
    data_type,
    expression_tree,
    expressions,
    type_at,
)

__all__ = ["SourceColumn", "SourceRead", "json_source_read"]

_RELATION = "org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation"
#: A stream's scan before the query starts (``spark.readStream...load()``).
_STREAM_RELATION = "org.apache.spark.sql.catalyst.streaming.StreamingRelationV2"


@dataclass(frozen=True)
class SourceColumn:
    """One input column of the operator: the source field it is, by position."""

    #: The column's name in the operator's input.
    name: str
    #: The top-level field of the source's schema.
    field: str
    #: The nested struct fields under it, by ordinal (empty: the top-level field itself).
    path: tuple[int, ...] = ()


@dataclass(frozen=True)
class SourceRead:
    """A batch ``sliceflow.json`` read and the operator's input columns as its fields."""

    #: The read's options as given (the path among them), names in their given case.
    options: dict[str, str]
    #: The source's schema (the relation's columns).
    schema: StructType
    #: The operator's input columns, in order.
    columns: tuple[SourceColumn, ...]
    #: A ``readStream`` read (a stream of micro-batches), not a batch one.
    streaming: bool = False
    #: A stream's: whether a ``withWatermark`` sits between the scan and the operator.
    watermarked: bool = False

    def required(self) -> StructType:
        """The part of :attr:`schema` the columns read: the fields they name, in the schema's
        order, each struct cut to the nested fields read (Spark's nested schema pruning)."""
        wanted: dict[str, list[tuple[int, ...]]] = {}
        for column in self.columns:
            wanted.setdefault(column.field, []).append(column.path)
        return StructType(
            [_prune(f, wanted[f.name]) for f in self.schema.fields if f.name in wanted]
        )

    def pruned_path(self, column: SourceColumn) -> tuple[int, ...]:
        """``column.path`` as ordinals into :meth:`required`'s field (pruning renumbers)."""
        out = []
        field: DataType = self.schema[column.field].dataType
        kept = self.required()[column.field].dataType
        for ordinal in column.path:
            assert isinstance(field, StructType) and isinstance(kept, StructType)
            name = field.fields[ordinal].name
            out.append(kept.names.index(name))
            field, kept = field.fields[ordinal].dataType, kept[name].dataType
        return tuple(out)


def _prune(field: StructField, paths: list[tuple[int, ...]]) -> StructField:
    """``field`` with only the nested fields some path reaches (a path that ends at a field
    keeps all of it)."""
    if any(not p for p in paths) or not isinstance(field.dataType, StructType):
        return field
    children: dict[int, list[tuple[int, ...]]] = {}
    for p in paths:
        children.setdefault(p[0], []).append(p[1:])
    kept = [_prune(f, children[i]) for i, f in enumerate(field.dataType.fields) if i in children]
    return StructField(field.name, StructType(kept), field.nullable, field.metadata)


def json_source_read(df: DataFrame) -> SourceRead | None:
    """The ``sliceflow.json`` read whose fields ``df``'s columns are (module doc), or None."""
    jdf = getattr(df, "_jdf", None)
    if jdf is None:  # Spark Connect: no plan on the client
        return None
    try:
        plan = jdf.queryExecution().analyzed()
        nodes = json.loads(plan.toJSON())
    except Exception:  # a plan toJSON cannot show is not one of ours
        return None
    streaming = df.isStreaming
    chain = _chain(nodes, streaming)
    if chain is None or chain[-1]["class"] != (_STREAM_RELATION if streaming else _RELATION):
        return None
    relation = plan
    while relation.children().size() > 0:
        relation = relation.children().apply(0)
    table = relation.table()
    if table.getClass().getSimpleName() != "PythonTable" or table.name() != "sliceflow.json":
        return None
    options = (relation.extraOptions() if streaming else relation.options()).asCaseSensitiveMap()
    read_options = {str(k): str(options.get(k)) for k in options.keySet().toArray()}
    attributes = [expression_tree(e)[0] for e in expressions(chain[-1]["output"])]
    schema = StructType(
        [
            StructField(a["name"], data_type(a["dataType"]), a.get("nullable", True))
            for a in attributes
        ]
    )
    if len(set(schema.names)) != len(schema.names):
        return None
    # Each attribute id → (top-level field, path); built up from the scan.
    env: dict[int, tuple[str, tuple[int, ...]]] = {
        a["exprId"]["id"]: (a["name"], ()) for a in attributes
    }
    for node in reversed(chain[:-1]):
        if node["class"] in PASS_THROUGH or node["class"] == WATERMARK:
            continue
        level: dict[int, tuple[str, tuple[int, ...]]] = {}
        for expr in expressions(node["projectList"]):
            tree = expression_tree(expr)[0]
            if tree["class"] == EXPR + "Alias":
                ref = _reference(tree["children"][0], env, schema)
            elif tree["class"] == EXPR + "AttributeReference":
                ref = env.get(tree["exprId"]["id"])
            else:
                ref = None
            if ref is None:
                continue  # a column the operator may not read: checked below
            level[tree["exprId"]["id"]] = ref
        env = level
    top = chain[0]
    if top["class"] != PLAN + "Project":
        return None
    wanted = [expression_tree(e)[0] for e in expressions(top["projectList"])]
    columns = []
    for column in wanted:
        ref = env.get(column["exprId"]["id"])
        if ref is None:
            return None
        columns.append(SourceColumn(column["name"], ref[0], ref[1]))
    if [c.name for c in columns] != list(df.columns):
        return None
    watermarked = any(node["class"] == WATERMARK for node in chain)
    return SourceRead(read_options, schema, tuple(columns), streaming, watermarked)


def _chain(nodes: list[dict[str, Any]], streaming: bool) -> list[dict[str, Any]] | None:
    """The plan's nodes top to bottom if each has one child but the last and each is a
    projection, a pass-through or (a stream's one) watermark, else None."""
    watermarks = 0
    for node in nodes[:-1]:
        if node.get("num-children") != 1:
            return None
        if node["class"] == WATERMARK and streaming:
            watermarks += 1
        elif node["class"] != PLAN + "Project" and node["class"] not in PASS_THROUGH:
            return None
    if watermarks > 1:
        return None
    return nodes if nodes and nodes[-1].get("num-children") == 0 else None


def _reference(
    tree: dict[str, Any], env: dict[int, tuple[str, tuple[int, ...]]], schema: StructType
) -> tuple[str, tuple[int, ...]] | None:
    """The source field an expression is, unchanged, or None."""
    kind = tree["class"]
    if kind == EXPR + "AttributeReference":
        return env.get(tree["exprId"]["id"])
    if kind == EXPR + "GetStructField":
        inner = _reference(tree["children"][0], env, schema)
        return None if inner is None else (inner[0], (*inner[1], int(tree["ordinal"])))
    if kind == EXPR + "Cast":
        inner = _reference(tree["children"][0], env, schema)
        if inner is None or type_at(schema[inner[0]].dataType, inner[1]) != data_type(
            tree["dataType"]
        ):
            return None  # a cast that converts is Spark's to run
        return inner
    return None
