"""Where an operator's input columns come from, second kind: fields of one
``sliceflow.spark.from_json`` column over another DataFrame's text column (a text file's lines,
a Kafka ``value`` cast to string), through column references only, or not.

:func:`from_json_read` walks the analyzed plan of the DataFrame an operator is about to hand to
Python (its input columns, selected). From the top, every node must be a projection or a
pass-through (``select``, ``withColumn``, ``alias``, a temporary view) of column references,
nested field references of the decoded struct (``F.col("bid.price")``), aliases and casts that
change nothing, and at most one ``withWatermark``, down to the projection that holds the
``from_json`` column. That projection's other columns may pass the text DataFrame's own
columns through (``select(from_json(...), "timestamp")``). The UDF's argument must be a column
of the DataFrame below, or that column cast from BINARY to STRING. Anything else (a filter
above the decoding, two ``from_json`` columns, an expression) gives ``None``, and the operator
reads its input as any DataFrame. What is below the decoding is not looked at: it stays
Spark's plan.

Invariant: the columns the read names, extracted from the decoded struct (a nested field's
null where its parent struct is null, as ``GetStructField`` gives) or passed through, are the
operator's input rows exactly: the decoding is the very :class:`JsonDecoding` the UDF runs.

Cost: one ``toJSON()`` of the analyzed plan on the driver (milliseconds), when the query is
built. Classic sessions (a Spark Connect DataFrame has no analyzed plan on the client:
:mod:`sliceflow.spark.json.connect_from_json_lineage` reads it there).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import BinaryType, DataType, StringType, StructType

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
from sliceflow.spark._runtime.columns import quote
from sliceflow.spark.json.event_time import rewatermarked, timed_phase, with_event_time
from sliceflow.spark.json.from_json import JsonDecoding, decoding_of

__all__ = [
    "FUSED_STEP_PREFIX",
    "DecodedColumn",
    "FromJsonRead",
    "crosses",
    "from_json_read",
]

#: How the name of a fused step (decoding and local phase in one ``mapInArrow``) starts;
#: ``explain()`` shows it, e.g. ``from_json_window_agg_local``.
FUSED_STEP_PREFIX = "from_json_"
#: The column of the fused step's input that holds the JSON text.
TEXT = "__json"


@dataclass(frozen=True)
class DecodedColumn:
    """One input column of the operator: a field of the decoded struct, or a column of the
    text DataFrame passed through."""

    #: The column's name in the operator's input.
    name: str
    #: Ordinals into the decoded struct (empty: the whole struct); None: passed through.
    path: tuple[int, ...] | None
    #: A passed-through column's name in the text DataFrame.
    passed: str | None = None


@dataclass(frozen=True)
class FromJsonRead:
    """The DataFrame under a ``from_json`` decoding and the operator's columns as its parts."""

    #: The DataFrame the ``from_json`` projection reads (Spark's plan, unchanged).
    below: DataFrame
    #: The JSON text column of :attr:`below` (cast to STRING where it is BINARY).
    text: Column
    #: What the UDF decodes.
    decoding: JsonDecoding
    #: The operator's input columns, in order.
    columns: tuple[DecodedColumn, ...]
    #: Whether :attr:`below` has a ``withWatermark`` (the fused step's output would lose it).
    watermarked: bool = False
    #: Whether a ``withWatermark`` sits between the decoding and the operator (a stream's,
    #: on one of the operator's input columns: the fused step keeps it, see :meth:`frame`).
    watermark_above: bool = False

    def frame(
        self,
        phase: Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]],
        output: StructType,
        event_time: tuple[str, int] | None = None,
    ) -> DataFrame:
        """``phase`` over the operator's input, decoded in the same Python step: the text and
        the passed-through columns go out of the JVM, ``phase``'s output comes back. With
        ``event_time`` (the input column a stream's watermark is on, and its delay in ms),
        the output keeps that watermark (:mod:`sliceflow.spark.json.event_time`)."""
        passed = list(dict.fromkeys(c.passed for c in self.columns if c.passed is not None))
        selected = self.below.select(self.text.alias(TEXT), *[F.col(quote(p)) for p in passed])
        decoding, columns = self.decoding, self.columns
        name = FUSED_STEP_PREFIX + getattr(phase, "__name__", "local_phase")
        if event_time is None:

            def fused(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
                return phase(_inputs(decoding, columns, batches))

            fused.__name__ = name
            return selected.mapInArrow(fused, output)
        index = [c.name for c in columns].index(event_time[0])

        def fused_timed(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            return timed_phase(phase, _inputs(decoding, columns, batches), index)

        fused_timed.__name__ = name
        timed = selected.mapInArrow(fused_timed, with_event_time(output))
        return rewatermarked(timed, event_time[1])


def _inputs(
    decoding: JsonDecoding, columns: tuple[DecodedColumn, ...], batches: Iterator[pa.RecordBatch]
) -> Iterator[pa.RecordBatch]:
    """The operator's input batches: each batch's text (its first column) decoded, the
    columns' fields extracted, the passed-through columns taken as they are."""
    session = decoding.session()
    names = [c.name for c in columns]
    for batch in batches:
        session.feed(batch.column(0))
        decoded = session.finish_values()
        arrays = []
        for column in columns:
            if column.passed is not None:
                arrays.append(batch.column(column.passed))
                continue
            array: Any = decoded
            for ordinal in column.path or ():  # a null struct gives null fields
                array = pc.struct_field(array, [ordinal])
            arrays.append(array)
        yield pa.RecordBatch.from_arrays(arrays, names=names)


def from_json_read(df: DataFrame) -> FromJsonRead | None:
    """The ``from_json`` decoding whose fields ``df``'s columns are (module doc), or None."""
    jdf = getattr(df, "_jdf", None)
    if jdf is None:
        return None
    try:
        plan = jdf.queryExecution().analyzed()
        nodes = json.loads(plan.toJSON())
    except Exception:  # a plan toJSON cannot show is not one of ours
        return None
    boundary = _boundary(nodes)
    if boundary is None:
        return None
    at, decoding, text, env = boundary
    watermarks = sum(node["class"] == WATERMARK for node in nodes[:at])
    if watermarks > 1:
        return None
    for node in reversed(nodes[:at]):
        if node["class"] in PASS_THROUGH or node["class"] == WATERMARK:
            continue
        level: dict[int, DecodedColumn] = {}
        for expr in expressions(node["projectList"]):
            tree = expression_tree(expr)[0]
            inner = tree["children"][0] if tree["class"] == EXPR + "Alias" else tree
            ref = _reference(inner, env, decoding.spark_schema)
            if ref is not None:
                level[tree["exprId"]["id"]] = ref
        env = level
    if nodes[0]["class"] != PLAN + "Project":
        return None
    columns = []
    for expr in expressions(nodes[0]["projectList"]):
        tree = expression_tree(expr)[0]
        ref = env.get(tree["exprId"]["id"])
        if ref is None or (ref.path == () and not crosses(decoding.spark_schema)):
            return None
        columns.append(DecodedColumn(tree["name"], ref.path, ref.passed))
    if [c.name for c in columns] != list(df.columns):
        return None
    # Only now the plan below the decoding becomes a DataFrame (Spark analyses it again).
    below_plan = plan
    for _ in range(at + 1):
        below_plan = below_plan.children().apply(0)
    below = _frame(df, below_plan)
    if below is None:
        return None
    names = below.columns
    if len(set(names)) != len(names) or text[0] not in names:
        return None
    column = F.col(quote(text[0]))
    watermarked = any(node["class"] == WATERMARK for node in nodes[at + 1 :])
    return FromJsonRead(below, column.cast("string") if text[1] else column, decoding,
                        tuple(columns), watermarked, watermarks == 1)  # fmt: skip


def _boundary(
    nodes: list[dict[str, Any]],
) -> tuple[int, JsonDecoding, tuple[str, bool], dict[int, DecodedColumn]] | None:
    """The index of the projection that decodes, its decoding, its text column (name, cast
    from BINARY) and its output columns by attribute id; None unless every node above it is a
    projection, a pass-through or a watermark."""
    for at, node in enumerate(nodes):
        if node.get("num-children") != 1:
            return None
        if node["class"] in PASS_THROUGH or node["class"] == WATERMARK:
            continue
        if node["class"] != PLAN + "Project":
            return None
        found = _decoding_projection(node)
        if isinstance(found, str):  # no from_json column here: a projection above it
            continue
        if found is None:
            return None
        decoding, text, env = found
        return at, decoding, text, env
    return None


def _decoding_projection(
    node: dict[str, Any],
) -> tuple[JsonDecoding, tuple[str, bool], dict[int, DecodedColumn]] | str | None:
    """A projection's decoding ("none": it has no ``from_json`` column; None: it has one
    sliceflow cannot take apart)."""
    found: tuple[JsonDecoding, tuple[str, bool]] | None = None
    env: dict[int, DecodedColumn] = {}
    udfs = 0
    for expr in expressions(node["projectList"]):
        udfs += sum(1 for e in expr if e["class"] == EXPR + "PythonUDF")
        tree = expression_tree(expr)[0]
        if tree["class"] == EXPR + "AttributeReference":
            env[tree["exprId"]["id"]] = DecodedColumn(tree["name"], None, tree["name"])
            continue
        if tree["class"] != EXPR + "Alias":
            continue
        udf = tree["children"][0]
        if udf["class"] == EXPR + "Cast":  # from_json's renaming cast (repeated names)
            udf = udf["children"][0]
        if udf["class"] != EXPR + "PythonUDF":
            continue
        decoding = decoding_of(str(udf.get("name", "")))
        text = _text_column(udf["children"][0]) if decoding is not None else None
        if decoding is None or text is None:
            return None
        found = (decoding, text)
        env[tree["exprId"]["id"]] = DecodedColumn(tree["name"], ())
    if udfs == 0:
        return "none"
    if found is None or udfs != 1:
        return None
    return found[0], found[1], env


def _text_column(argument: dict[str, Any]) -> tuple[str, bool] | None:
    """from_json's argument (``CASE WHEN true THEN <column> ELSE <Spark's check> END``) as
    (the column's name, whether it is cast from BINARY), or None."""
    if argument["class"] != EXPR + "CaseWhen" or len(argument["children"]) < 2:
        return None
    column = argument["children"][1]
    cast = column["class"] == EXPR + "Cast"
    if cast:
        if data_type(column["dataType"]) != StringType():
            return None
        column = column["children"][0]
    if column["class"] != EXPR + "AttributeReference":
        return None
    kind = data_type(column["dataType"])
    if kind != (BinaryType() if cast else StringType()):
        return None
    return str(column["name"]), cast


def _reference(
    tree: dict[str, Any], env: dict[int, DecodedColumn], decoded: DataType
) -> DecodedColumn | None:
    """The decoded field or passed-through column an expression is, unchanged, or None."""
    kind = tree["class"]
    if kind == EXPR + "AttributeReference":
        return env.get(tree["exprId"]["id"])
    if kind == EXPR + "GetStructField":
        inner = _reference(tree["children"][0], env, decoded)
        if inner is None or inner.path is None:
            return None
        return DecodedColumn(inner.name, (*inner.path, int(tree["ordinal"])))
    if kind == EXPR + "Cast":
        inner = _reference(tree["children"][0], env, decoded)
        if inner is None or inner.path is None:
            return None  # a passed-through column's cast is Spark's to run
        if type_at(decoded, inner.path) != data_type(tree["dataType"]):
            return None
        return inner
    return None


def crosses(data_type: DataType) -> bool:
    """Whether a struct's names are unique at every level (Arrow's Java side needs them)."""
    if isinstance(data_type, StructType):
        names = data_type.names
        return len(set(names)) == len(names) and all(crosses(f.dataType) for f in data_type)
    return True


def _frame(df: DataFrame, plan: Any) -> DataFrame | None:
    """A classic DataFrame of an analyzed logical ``plan`` of ``df``'s session."""
    try:
        from pyspark.sql.classic.dataframe import DataFrame as ClassicDataFrame

        spark: Any = df.sparkSession
        dataset = spark._jvm.org.apache.spark.sql.classic.Dataset
        return ClassicDataFrame(dataset.ofRows(spark._jsparkSession, plan), spark)
    except Exception:  # a session without that API: not fused
        return None
