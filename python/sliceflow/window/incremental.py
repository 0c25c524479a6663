"""Incremental CUMULATE output (Flink's FLINK-39030): a key's cumulative window is emitted only
when its aggregate values differ from the ones last emitted for that key in the same cycle.

The first window of a key in a cycle is always emitted. Values are compared as values: null
equals null, NaN equals NaN (any payload), and ``0.0`` equals ``-0.0``. Streaming keeps, per
bucket, each open cycle's latest window in the state store to compare the next one with.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sliceflow.window.plan import WindowPlan

__all__ = ["keep_changed"]

_MARK = "__sliceflow_new"


def _same_as_previous(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """``out[i]``: row i holds the same value as row i - 1 (``out[0]`` is False)."""
    n = len(column)
    out = np.zeros(n, dtype=bool)
    if n < 2:
        return out
    a = column[1:]
    b = column[:-1]
    same = pc.fill_null(pc.equal(a, b), False)
    same = pc.or_(same, pc.and_(pc.is_null(a), pc.is_null(b)))
    if pa.types.is_floating(column.type):
        nan = pc.and_(pc.is_nan(a), pc.is_nan(b))
        same = pc.or_(same, pc.fill_null(nan, False))
    out[1:] = np.asarray(same.to_numpy(zero_copy_only=False), dtype=bool)
    return out


def keep_changed(
    fired: pa.Table, last: pa.Table | None, wp: WindowPlan, limit_us: int | None
) -> tuple[pa.Table, pa.Table]:
    """The rows of ``fired`` (CUMULATE windows, output schema) whose values changed since the
    key's previous window of the cycle, and the new ``last`` table: per (key, cycle) whose
    cycle ends after ``limit_us``, its latest window (``limit_us`` None, for a batch sweep
    whose keys come one after another: the latest window of each group ``fired`` has).

    ``last`` holds such rows from earlier calls (windows emitted before ``fired``'s)."""
    names = wp.output_schema.names
    num_keys = wp.plan["num_keys"]
    keys = names[3 : 3 + num_keys]
    values = names[3 + num_keys :]
    previous = last if last is not None else wp.output_schema.empty_table()
    combined = pa.concat_tables([previous, fired])
    marks = np.r_[np.zeros(previous.num_rows, bool), np.ones(fired.num_rows, bool)]
    combined = combined.append_column(_MARK, pa.array(marks))
    order = [(k, "ascending") for k in keys] + [
        ("window_start", "ascending"),
        ("window_end", "ascending"),
    ]
    combined = combined.sort_by(order)
    n = combined.num_rows
    same_group = np.ones(n, dtype=bool)
    same_group[:1] = False
    for name in [*keys, "window_start"]:
        same_group &= _same_as_previous(combined.column(name))
    same_values = same_group.copy()
    for name in values:
        same_values &= _same_as_previous(combined.column(name))
    is_new = combined.column(_MARK).to_numpy()
    keep = is_new & ~same_values
    # The latest row of each group, for the next call while its cycle is open.
    group_last = np.r_[~same_group[1:], True] if n else np.zeros(0, bool)
    if limit_us is None:
        group_last &= is_new
    elif n:
        size = wp.plan["size"]
        starts = combined.column("window_start").cast(pa.int64()).to_numpy()
        group_last &= starts + size > limit_us
    combined = combined.drop_columns([_MARK])
    return combined.filter(pa.array(keep)), combined.filter(pa.array(group_last))
