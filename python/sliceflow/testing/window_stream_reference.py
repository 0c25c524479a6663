"""A brute-force reference for *streaming* windowed aggregation in append mode, for tests.

It replays a list of micro-batches the way Spark Structured Streaming runs an append-mode
``withWatermark(...).groupBy(window(...), keys).agg(...)`` query (CUMULATE windows follow
Flink's rules), and returns what each micro-batch emits. The aggregates themselves come from the
batch reference :mod:`sliceflow.testing.window_reference` (``aggregate_group``, ``output_schema``):
this module only decides *which* rows count in *which* window and *when* a window is emitted.

The model, batch ``b = 0, 1, ..., n - 1`` being the input batches and batch ``n`` Spark's extra
"no-data" batch:

* **Watermark** (Spark's ``WatermarkTracker``, kept in milliseconds). ``wm_b`` is the watermark
  batch ``b`` runs with, computed from batches ``< b``. ``wm_0`` is ``initial_watermark_ms``
  (default ``None``: no watermark yet). Once some batch ``< b`` has had a non-null time,
  ``wm_b = max(wm_{b-1} or 0, to_ms(max_event_time) - delay_ms)`` where ``max_event_time`` is
  the largest non-null time (µs) of batches ``< b``. ``to_ms`` is Spark's
  ``micros / MICROS_PER_MILLIS``, a ``Long`` division that truncates toward zero (the same as
  flooring for times after the epoch; since the watermark never drops below 0 the difference
  never shows). ``delay_ms = delay_us // 1000`` (Spark's ``IntervalUtils.getDuration`` to
  milliseconds, which truncates).
* **Late rows** (Spark's ``StateStoreSaveExec``, late events watermark = the watermark of the
  previous batch, SPARK-40925). A row of batch ``b`` counts in each window ``w`` of its time with
  ``w.end > wm_{b-1} * 1000`` µs (``wm_{-1}`` is ``wm_0``); the other (row, window) pairs are
  dropped and counted in ``late_pairs``. Without a watermark nothing is late. A row may be
  late for one HOP (or CUMULATE) window and on time for the next. Rows with a null time count
  nowhere (``null_time_rows``).
* **Emission** (eviction watermark = the batch's own watermark). Batch ``b`` emits, once each,
  every (key, window) with at least one counted row and ``window.end <= wm_b * 1000`` µs.
  Without a watermark nothing is emitted. Because ``wm_b >= wm_{b-1}``, a window never gains a
  row after it was emitted (such rows are late).
* **No-data batch**: after the input, one batch without rows runs with ``wm_n``, computed from
  all input, and emits what that watermark closes. (Spark runs it only if the watermark moved;
  here it is always present, possibly empty.)
* **CUMULATE** (``RefWindow("cumulate", size=max_size, slide=step)``): windows
  ``[c, c + k*step)`` for ``k = 1..max_size/step`` per cycle ``c``; a key's window is emitted if
  it has a counted row anywhere in ``[c, c + k*step)``, even if step ``k`` added none (Flink).
  With ``emit="incremental"`` (Flink's FLINK-39030), a key's window is emitted only if its
  aggregate values differ from the values last emitted for that key in that cycle (the first
  window emitted for a key in a cycle always is). Values compare as "the same value": null ==
  null, floats by value (``-0.0 == 0.0``) with NaN == NaN.

Differences from Spark to keep in mind (see :func:`stream_reference`): Spark's watermark starts
at ``0`` and is a real watermark from the first batch on, so windows that end at or before the
epoch are always dropped as late; pass ``initial_watermark_ms=0`` for that behaviour. Spark also
runs a no-data batch between input batches when the watermark moved and no new data was
available; this model assumes the input batches ran back to back. (Spark's event-time
statistics read a null time as 0 ms; as the watermark never drops below 0 this changes
nothing here.)

>>> import pyarrow as pa
>>> ts = pa.timestamp("us")
>>> def batch(times, values):
...     return pa.table({"k": ["a"] * len(times), "t": pa.array(times, ts), "v": values})
>>> S = 1_000_000
>>> batches = [batch([1 * S, 12 * S], [1, 2]), batch([25 * S], [3]), batch([5 * S], [4])]
>>> res = stream_reference(batches, "t", RefWindow("tumble", 10 * S), ["k"],
...                        [RefAgg("sum", "v", "s")], delay_us=0)
>>> res.watermarks_ms  # batch 3 is the final no-data batch
[None, 12000, 25000, 25000]
>>> [[(r["window_end"].second, r["s"]) for r in t.to_pylist()] for t in res.batches]
[[], [(10, 1)], [(20, 2)], []]
>>> res.late_pairs  # the row at 5 s in batch 2: [0 s, 10 s) closed at watermark 12 s
1
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from sliceflow.testing.reference_values import (
    equality_class,
    key_value_shown,
    plain_values,
    to_arrow,
)
from sliceflow.testing.window_reference import (
    RefAgg,
    RefWindow,
    aggregate_group,
    output_schema,
    row_order,
    windows_of,
)

__all__ = ["EMITS", "StreamResult", "all_rows", "same_values", "stream_reference"]

EMITS = ("all", "incremental")


@dataclass
class StreamResult:
    """What :func:`stream_reference` computed.

    ``batches``: the rows each micro-batch emitted (the input batches, then the final no-data
    batch), each sorted canonically (by key, window end, window start), in the schema of
    :func:`~sliceflow.testing.window_reference.reference_aggregate`.
    ``watermarks_ms``: the watermark each batch ran with (``None``: no watermark yet).
    ``late_pairs``: (row, window) pairs dropped as late. ``null_time_rows``: rows with a null
    time (in no window).
    """

    batches: list[pa.Table]
    watermarks_ms: list[int | None]
    late_pairs: int
    null_time_rows: int


def _to_ms(us: int) -> int:
    """Spark's ``micros / 1000`` on a ``Long``: truncation toward zero."""
    return -(-us // 1000) if us < 0 else us // 1000


def _same(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return bool(a == b)


def same_values(a: Sequence[Any], b: Sequence[Any]) -> bool:
    """Whether two rows of aggregate values are "the same values": null == null, NaN == NaN,
    ``-0.0 == 0.0``, numbers (also ``Decimal``) by value.

    >>> same_values([None, float("nan"), -0.0], [None, float("nan"), 0.0])
    True
    >>> same_values([1], [None])
    False
    """
    return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))


def stream_reference(
    batches: Sequence[pa.Table | pa.RecordBatch],
    time_col: str,
    window: RefWindow,
    by: Sequence[str],
    aggs: Sequence[RefAgg],
    *,
    delay_us: int,
    emit: str = "all",
    ansi: bool = True,
    initial_watermark_ms: int | None = None,
) -> StreamResult:
    """Append-mode streaming window aggregation of ``batches`` by brute force (see the module
    docstring for the rules).

    ``batches``: the micro-batches, all with the same schema (key columns, a timestamp time
    column, value columns); at least one (it gives the schema), empty ones allowed.
    ``delay_us``: the ``withWatermark`` delay (µs, >= 0; Spark keeps whole milliseconds).
    ``emit``: ``"all"`` or, for CUMULATE only, ``"incremental"`` (emit a key's window only if
    its values changed since the last window emitted for it in the cycle).
    ``ansi``: as in ``reference_aggregate``; raises ``OverflowError`` when an emitted window's
    aggregate overflows. ``initial_watermark_ms``: the watermark of batch 0 (and the late
    events watermark of batch 0); ``None`` (default): no watermark until a batch has seen a
    time; ``0``: Spark's own start, which makes pre-epoch windows late from the beginning.

    The result has ``len(batches) + 1`` tables: the last is the final no-data batch.

    >>> import pyarrow as pa
    >>> ts = pa.timestamp("us")
    >>> b0 = pa.table({"t": pa.array([0, 3_000, 7_000], ts), "v": [5.0, 5.0, 7.0]})
    >>> res = stream_reference([b0], "t", RefWindow("cumulate", 9_000, 3_000), [],
    ...                        [RefAgg("max", "v", "m")], delay_us=0, emit="incremental")
    >>> res.watermarks_ms  # 7 ms closes [0, 3 ms) and [0, 6 ms) in the no-data batch
    [None, 7]
    >>> [[(r["window_end"].microsecond, r["m"]) for r in t.to_pylist()] for t in res.batches]
    [[], [(3000, 5.0)]]
    """
    if emit not in EMITS:
        raise ValueError(f"emit must be one of {EMITS}, not {emit!r}")
    if emit == "incremental" and window.kind != "cumulate":
        raise ValueError("emit='incremental' is for cumulate windows only")
    if delay_us < 0:
        raise ValueError(f"the watermark delay must not be negative: {delay_us}")
    tables = [pa.Table.from_batches([b]) if isinstance(b, pa.RecordBatch) else b for b in batches]
    if not tables:
        raise ValueError("need at least one batch (it gives the schema)")
    schema = tables[0].schema
    for i, t in enumerate(tables):
        if not t.schema.equals(schema):
            raise ValueError(f"batch {i} has schema {t.schema}, batch 0 has {schema}")
    by = list(by)
    out_schema = output_schema(schema, time_col, by, aggs)
    arg_types = [None if a.column is None else schema.field(a.column).type for a in aggs]
    delay_ms = delay_us // 1000

    # (normalised key, (start, end)) -> the (time, argument values) of its counted rows
    counted: dict[tuple[Any, ...], list[tuple[int, tuple[Any, ...]]]] = {}
    shown: dict[tuple[Any, ...], tuple[Any, ...]] = {}  # normalised key -> key values as output
    emitted: set[tuple[Any, ...]] = set()  # (normalised key, window) already emitted
    last_values: dict[
        tuple[Any, ...], tuple[Any, ...]
    ] = {}  # incremental: (key, cycle start) -> last emitted
    late_pairs = null_time_rows = 0
    max_time: int | None = None
    wm: int | None = initial_watermark_ms
    prev_wm: int | None = initial_watermark_ms
    out_tables: list[pa.Table] = []
    watermarks: list[int | None] = []

    for b in range(len(tables) + 1):
        watermarks.append(wm)
        if b < len(tables):
            t = tables[b]
            times = plain_values(t.column(time_col))
            keys = [plain_values(t.column(k)) for k in by]
            args = [
                [None] * t.num_rows if a.column is None else plain_values(t.column(a.column))
                for a in aggs
            ]
            for i, ts in enumerate(times):
                if ts is None:
                    null_time_rows += 1
                    continue
                max_time = ts if max_time is None else max(max_time, ts)
                raw = tuple(col[i] for col in keys)
                norm = tuple(equality_class(v) for v in raw)
                shown.setdefault(norm, tuple(key_value_shown(v) for v in raw))
                values = tuple(col[i] for col in args)
                for w in windows_of(ts, window):
                    if prev_wm is not None and w[1] <= prev_wm * 1000:
                        late_pairs += 1
                        continue
                    assert (norm, w) not in emitted, "a window gained a row after its emission"
                    counted.setdefault((norm, w), []).append((ts, values))

        rows = []
        if wm is not None:
            due = sorted(
                (g for g in counted if g[1][1] <= wm * 1000),
                key=lambda g: (g[1][1], g[1][0]),  # end order: a cycle's windows in turn
            )
            for g in due:
                norm, (start, end) = g
                pairs = counted.pop(g)
                emitted.add(g)
                values = tuple(
                    aggregate_group(a.fn, at, [(ts, v[j]) for ts, v in pairs], ansi)
                    for j, (a, at) in enumerate(zip(aggs, arg_types, strict=True))
                )
                if emit == "incremental":
                    last = last_values.get((norm, start))
                    if last is not None and same_values(last, values):
                        continue
                    last_values[(norm, start)] = values
                rows.append((start, end, end - 1, *shown[norm], *values))
        rows.sort(key=lambda r: row_order(r, len(by)))
        out_tables.append(_table(rows, out_schema))

        prev_wm = wm
        if max_time is not None:
            base = wm if wm is not None else 0
            wm = max(base, _to_ms(max_time) - delay_ms)

    return StreamResult(out_tables, watermarks, late_pairs, null_time_rows)


def _table(rows: list[tuple[Any, ...]], schema: pa.Schema) -> pa.Table:
    columns: list[Sequence[Any]] = list(zip(*rows, strict=True)) if rows else [[] for _ in schema]
    arrays = [to_arrow(list(c), f.type) for c, f in zip(columns, schema, strict=True)]
    return pa.Table.from_arrays(arrays, schema=schema)


def all_rows(result: StreamResult) -> pa.Table:
    """Every row the stream emitted: the batches' tables concatenated, in batch order.

    Compare with a batch result through ``canonical_rows`` or ``assert_tables_equal``.
    """
    return pa.concat_tables(result.batches)
