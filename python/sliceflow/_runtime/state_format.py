"""The state streaming operators keep: one versioned, little-endian format and one plan identity.

Every value a streaming operator keeps in Spark's state store is *sealed* by the C++ core
(``sliceflow._core.state``, ``cpp/state/format.h``): a header with the format version, the
operator, the plan identity, the lengths and a checksum, then the operator's payload sections.
Opening a value checks all of it and refuses, with an error naming what is wrong, a damaged
value, another operator's, a newer format's or one written under another plan identity (naming
the fields that changed). docs/state.md is the contract.

The *plan identity* holds what decides the meaning of the state and the results, and nothing
else: the key types, the aggregates with their input types, the operator's own fields (window
and time column type; retractions), the bucket count and ANSI mode. Tuning knobs (bundle sizes,
fold bounds, mini-batch on or off) are left out, so they may change when a query restarts from
its checkpoint.

>>> import pyarrow as pa
>>> from sliceflow import window as W
>>> from sliceflow.changelog.plan import build_plan, identity
>>> cp = build_plan(pa.schema([("k", pa.int64()), ("v", pa.int32())]), "k",
...                 [W.count(), W.max("v")], buckets=4)
>>> identity(cp)  # doctest: +NORMALIZE_WHITESPACE
[('keys', 'BIGINT'), ('aggregates', 'count(*), max(INT)'), ('retractions', 'no'),
 ('buckets', '4'), ('ansi', 'on')]
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
    "Identity",
    "aggregate_types",
    "inspect",
    "open_value",
    "plan_identity",
    "seal",
]

#: Named fields, in the operator's order: what a checkpoint's state belongs to.
Identity = list[tuple[str, str]]


#: The state format version this build writes and reads.
FORMAT_VERSION: int = state_kernel.FORMAT_VERSION


def plan_identity(
    *,
    keys: Sequence[pa.DataType],
    buckets: int,
    operator_fields: Sequence[tuple[str, str]] = (),
    aggregates: Sequence[tuple[str, pa.DataType | None]] | None = None,
    ansi: bool | None = None,
) -> Identity:
    """The identity of a streaming operator's state, the one way every operator's plan builds
    it: its key types, its aggregates (function and input type; an operator without
    aggregates passes None), the operator's own ``operator_fields``, the bucket count and ANSI
    mode (None: the operator's results do not depend on it). Types are named as Spark names
    them (a STRING key is one identity whether Arrow carries it as string or large_string; a
    TIMESTAMP whatever the session time zone).

    >>> plan_identity(keys=[pa.int64()], buckets=4, operator_fields=[("n", "3")])
    [('keys', 'BIGINT'), ('n', '3'), ('buckets', '4')]
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
    ]


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
    identity: the fields that changed)."""
    return list(state_kernel.open(operator, identity, value, sections))


def inspect(value: bytes) -> dict[str, Any]:
    """A state value taken apart without judging its identity (for tools and tests):
    ``operator``, ``format_version``, ``identity`` and ``sections``; ``ValueError`` if it is
    damaged."""
    return dict(state_kernel.inspect(value))
