"""The analyzed logical plan of a classic DataFrame as Spark's ``toJSON()`` shows it: the
class-name prefixes, the nodes that pass their child's columns through, and the readers of a
node's expressions and data types. Shared by the plan walks that find where an operator's
input columns come from (:mod:`sliceflow.spark.json.lineage`,
:mod:`sliceflow.spark.json.from_json_lineage`).

Invariant: ``toJSON()`` lists a tree's nodes in pre-order, each with ``num-children``; an
expression list holds each expression as such a list. Cost: linear in the plan's size.
"""

from __future__ import annotations

import json
from typing import Any

from pyspark.sql.types import DataType, StructType

__all__ = [
    "EXPR",
    "PASS_THROUGH",
    "PLAN",
    "WATERMARK",
    "data_type",
    "expression_tree",
    "expressions",
    "type_at",
]

#: How the class names of Catalyst's expressions start.
EXPR = "org.apache.spark.sql.catalyst.expressions."
#: How the class names of logical plan nodes start.
PLAN = "org.apache.spark.sql.catalyst.plans.logical."
#: Nodes that pass their child's columns through unchanged (a temporary view's name).
PASS_THROUGH = (PLAN + "SubqueryAlias", PLAN + "View")
#: ``withWatermark``: passes its child's columns through (a stream's).
WATERMARK = PLAN + "EventTimeWatermark"


def expressions(value: Any) -> list[list[dict[str, Any]]]:
    """A node's list of expressions, each as its pre-order node list."""
    if isinstance(value, str):
        value = json.loads(value)
    return [e for e in value if isinstance(e, list)]


def expression_tree(nodes: list[dict[str, Any]], at: int = 0) -> tuple[dict[str, Any], int]:
    """The expression at ``nodes[at]`` with its ``children`` filled in, and the next index."""
    node = dict(nodes[at])
    at += 1
    children = []
    for _ in range(node.get("num-children", 0)):
        child, at = expression_tree(nodes, at)
        children.append(child)
    node["children"] = children
    return node, at


def data_type(value: Any) -> DataType:
    """A ``dataType`` of the plan's JSON (a name such as ``"long"`` or a JSON object)."""
    wrapped = {"type": "struct", "fields": [{"name": "x", "type": value, "nullable": True,
                                             "metadata": {}}]}  # fmt: skip
    return StructType.fromJson(wrapped).fields[0].dataType


def type_at(data_type: DataType, path: tuple[int, ...]) -> DataType:
    """The type of the nested field ``GetStructField`` ordinals ``path`` reach in a struct."""
    for ordinal in path:
        assert isinstance(data_type, StructType)
        data_type = data_type.fields[ordinal].dataType
    return data_type
