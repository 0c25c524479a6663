"""Streaming ``window_agg`` outputs into which a per-window step downstream can be fused.

A streaming ``window_agg`` emits each window once, complete, from its stateful step (one call
per bucket of keys); a per-window operator after it (the window Top-N) can run a step on each
call's fired windows right there, so that only what that step keeps leaves the stateful step:
no extra Python stage over every window row, and far fewer rows through Spark. ``window_agg``
:func:`remember` s how to rebuild its streaming plan with such a step; an operator asks
:func:`with_emit_step` for the rebuilt plan of the very DataFrame it was given (a DataFrame
derived from it, e.g. by ``filter`` or ``select``, is not fused: its rows may differ).

The step runs once per bucket call on the batches it emits and must be exact per call (e.g. a
local top n per window, which a final top n over all calls completes). It changes no state:
the rebuilt plan has the same stateful operator and checkpoint as the original.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator

import pyarrow as pa
from pyspark.sql import DataFrame

__all__ = ["EmitStep", "remember", "with_emit_step"]

#: A step over one bucket call's emitted batches (the window_agg output schema in, the same
#: schema out).
EmitStep = Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]

_REBUILDS: weakref.WeakKeyDictionary[DataFrame, Callable[[EmitStep], DataFrame]] = (
    weakref.WeakKeyDictionary()
)


def remember(df: DataFrame, rebuild: Callable[[EmitStep], DataFrame]) -> DataFrame:
    """Records that ``df`` (a streaming window_agg output) is rebuilt with an emit step by
    ``rebuild``; returns ``df``."""
    try:
        _REBUILDS[df] = rebuild
    except TypeError:  # a DataFrame class that takes no weak reference: never fused
        pass
    return df


def with_emit_step(df: DataFrame, step: EmitStep) -> DataFrame | None:
    """``df``'s streaming window_agg plan rebuilt with ``step`` run on each bucket call's
    emitted windows; None when ``df`` is not a window_agg output as returned.

    >>> with_emit_step(object(), lambda batches: batches) is None  # type: ignore[arg-type]
    True
    """
    try:
        rebuild = _REBUILDS.get(df)
    except TypeError:
        return None
    return None if rebuild is None else rebuild(step)
