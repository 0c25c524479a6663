"""The state streaming operators keep: one versioned, little-endian format and one plan identity.

Every value a streaming operator keeps in Spark's state store is *sealed* by the C++ core
(``sliceflow._core.state``, ``cpp/state/format.h``): a header with the format version, the
operator, the plan identity, the lengths and a checksum, then the operator's payload sections.
Opening a value checks all of it and refuses, with an error naming what is wrong, a damaged
value, another operator's, a newer format's or one written under another plan identity (naming
the fields that changed). docs/state.md is the contract.

The *plan identity* holds what decides the meaning of the state and the results, and nothing
else: the key types, the aggregates with their input types, the operator's own fields (window
and time column type; retractions), the bucket count, ANSI mode and the input columns the
state was built from (``input columns``: the key, time, order and argument columns by name, as
the DataFrame names them, so a restart with a key moved to another column of the same type is
refused). Tuning knobs (bundle sizes, fold bounds, mini-batch on or off) are left out, so they
may change when a query restarts from its checkpoint.

A field added to the identity after values were first written is a *later field*
(:data:`LATER_FIELDS`): a value written before it (a checkpoint of an earlier release) is
judged on the fields it has, and carries the field from the first time it is written again.

>>> import pyarrow as pa
>>> from sliceflow import window as W
>>> from sliceflow.changelog.plan import build_plan, identity
>>> cp = build_plan(pa.schema([("k", pa.int64()), ("v", pa.int32())]), "k",
...                 [W.count(), W.max("v")], buckets=4)
>>> identity(cp)  # doctest: +NORMALIZE_WHITESPACE
[('keys', 'BIGINT'), ('aggregates', 'count(*), max(INT)'), ('retractions', 'no'),
 ('buckets', '4'), ('ansi', 'on'), ('input columns', 'by `k`; arguments *, `v`')]
>>> value = seal("changelog_agg", identity(cp), [b"payload"])
>>> open_value("changelog_agg", identity(cp), value, 1)
[b'payload']
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from sliceflow._core import state as state_kernel
from sliceflow._runtime.spark_types import spark_type_name

__all__ = [
    "FORMAT_VERSION",
    "LATER_FIELDS",
    "Identity",
    "aggregate_arguments",
    "aggregate_types",
    "input_columns",
    "inspect",
    "open_value",
    "plan_identity",
    "seal",
]

#: Named fields, in the operator's order: what a checkpoint's state belongs to.
Identity = list[tuple[str, str]]


#: The state format version this build writes and reads.
FORMAT_VERSION: int = state_kernel.FORMAT_VERSION

#: Identity fields added after the format's first values: a value without one of them is
#: judged on the others (``input columns``: 2026-11-28; values written before it restart
#: without the check of which columns the state was built from).
LATER_FIELDS: tuple[str, ...] = ("input columns",)


def plan_identity(
    *,
    keys: Sequence[pa.DataType],
    buckets: int,
    operator_fields: Sequence[tuple[str, str]] = (),
    aggregates: Sequence[tuple[str, pa.DataType | None]] | None = None,
    ansi: bool | None = None,
    columns: str | None = None,
) -> Identity:
    """The identity of a streaming operator's state, the one way every operator's plan builds
    it: its key types, its aggregates (function and input type; an operator without
    aggregates passes None), the operator's own ``operator_fields``, the bucket count and ANSI
    mode (None: the operator's results do not depend on it) and the input ``columns`` by name
    (:func:`input_columns`). Types are named as Spark names them (a STRING key is one identity
    whether Arrow carries it as string or large_string; a TIMESTAMP whatever the session time
    zone).

    >>> plan_identity(keys=[pa.int64()], buckets=4, operator_fields=[("n", "3")],
    ...               columns=input_columns(["k"]))
    [('keys', 'BIGINT'), ('n', '3'), ('buckets', '4'), ('input columns', 'by `k`')]
    """
    shown_aggs = (
        []
        if aggregates is None
        else [
            (
                "aggregates",
                ", ".join(
                    f"{fn}({'*' if t is None else spark_type_name(t)})" for fn, t in aggregates
                ),
            )
        ]
    )
    return [
        ("keys", ", ".join(spark_type_name(t) for t in keys) or "(none)"),
        *shown_aggs,
        *operator_fields,
        ("buckets", str(buckets)),
        *([] if ansi is None else [("ansi", "on" if ansi else "off")]),
        *([] if columns is None else [("input columns", columns)]),
    ]


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def input_columns(
    by: Sequence[str],
    *,
    time: str | None = None,
    order: Sequence[str] = (),
    op: str | None = None,
    arguments: Sequence[str | None] | None = None,
) -> str:
    """The ``input columns`` identity field: the key columns (``by``), the time column, the
    order columns, the op column and each aggregate's argument column (``*`` for none:
    :func:`aggregate_arguments`), by name as the DataFrame names them, backquoted as Spark
    quotes them; a role without columns is left out. A name is an exact column name: the Spark
    entry points resolve the user's spelling with the session's case rules first, so
    ``by="K"`` and ``by="k"`` on a column ``k`` of a case-insensitive session are one
    identity.

    >>> input_columns(["k", "odd`name"], time="ts", arguments=[None, "v"])
    'by `k`, `odd``name`; time `ts`; arguments *, `v`'
    """
    parts = ["by " + (", ".join(_quoted(n) for n in by) or "(none)")]
    if time is not None:
        parts.append(f"time {_quoted(time)}")
    if order:
        parts.append("order " + ", ".join(_quoted(n) for n in order))
    if op is not None:
        parts.append(f"op {_quoted(op)}")
    if arguments:
        parts.append("arguments " + ", ".join("*" if n is None else _quoted(n) for n in arguments))
    return "; ".join(parts)


def aggregate_arguments(plan: dict[str, Any], names: Sequence[str]) -> list[str | None]:
    """Each aggregate's argument column of a kernel plan (``plan["aggs"]``) by its input name
    (None without one, as ``count(*)``), ``names`` being the kernel input's columns by their
    input names: the ``arguments`` of :func:`input_columns`.

    >>> aggregate_arguments({"aggs": [{"fn": "count", "arg": -1}, {"fn": "sum", "arg": 1}]},
    ...                     ["k", "price"])
    [None, 'price']
    """
    return [None if a["arg"] < 0 else names[a["arg"]] for a in plan["aggs"]]


def aggregate_types(
    plan: dict[str, Any], schema: pa.Schema
) -> list[tuple[str, pa.DataType | None]]:
    """Each aggregate of a kernel plan (``plan["aggs"]``) with its input type (``schema``: the
    kernel input), as :func:`plan_identity` takes them."""
    return [(a["fn"], None if a["arg"] < 0 else schema.field(a["arg"]).type) for a in plan["aggs"]]


def seal(operator: str, identity: Identity, sections: Sequence[bytes]) -> bytes:
    """One state value of ``operator`` (``"window_agg"``, ``"changelog_agg"``)."""
    return bytes(state_kernel.seal(operator, identity, list(sections)))


def open_value(operator: str, identity: Identity, value: bytes, sections: int) -> list[bytes]:
    """The ``sections`` payload sections of a value :func:`seal` wrote; ``ValueError`` naming
    what is wrong otherwise (damaged, another operator or format version, another plan
    identity: the fields that changed). A value written before a :data:`LATER_FIELDS` field
    existed is judged on the fields it has."""
    return list(state_kernel.open(operator, identity, value, sections, list(LATER_FIELDS)))


def inspect(value: bytes) -> dict[str, Any]:
    """A state value taken apart without judging its identity (for tools and tests):
    ``operator``, ``format_version``, ``identity`` and ``sections``; ``ValueError`` if it is
    damaged."""
    return dict(state_kernel.inspect(value))
