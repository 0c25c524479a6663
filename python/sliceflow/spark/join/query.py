"""``join``: Flink SQL's regular join of two changelogs (an equi-join whose inputs may update
and delete), on Spark DataFrames, batch and streaming.

::

    batch:     each changelog side ─ (+ __seq: arrival order) ─ repartition(on)
                  ─ mapInArrow(the side's live rows: one kernel step over the partition's rows
                    in arrival order) ─┐
               an insert-only side ────┤
                  ─ Spark's L.join(R, on, how) of the materialized sides

    streaming: left ─┐ each row's bucket pmod(hash(on), buckets), rows packed per bucket
               right ─┘ (sliceflow.spark.join.streaming) ─ union
                  ─ groupBy(__bucket).transformWithStateInPandas(JoinBucketProcessor)
                  ─ the changelog: op, then Spark's columns of L.join(R, on, how)

A batch join is the join of what each side materializes to (Spark's own join does the
joining); a streaming one emits, at every micro-batch, the changes that bring the join of
everything seen so far up to date, Flink's way (mini-batch bundles folded per output row).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from sliceflow._runtime.durations import DurationLike, parse_duration
from sliceflow._runtime.kernels import conform
from sliceflow._runtime.spark_types import spark_struct
from sliceflow.join.plan import DEFAULT_BUNDLE_ROWS, JoinPlan, build_plan, canonical_how
from sliceflow.join.step import JoinStep
from sliceflow.spark._runtime.columns import quote
from sliceflow.spark._runtime.metrics import WindowMetrics
from sliceflow.spark._runtime.recipe import OperatorCall
from sliceflow.spark._runtime.tasks import TaskContext
from sliceflow.spark.join.streaming import join_stream

__all__ = ["JoinMetrics", "join"]

_SEQ = "__sliceflow_seq"
_BATCH_BUNDLE = 1 << 62  # batch: one bundle per partition


class JoinMetrics(WindowMetrics):
    """The join kernel's counters, summed over every task of the queries it is given to:
    ``left_rows_in``, ``right_rows_in``, ``retractions_in``, ``retractions_ignored`` (a
    retraction of a row never added), ``rows_null_key`` (rows of a side that is not outer with
    a null key: they never match), ``keys_loaded``, ``state_reads`` and ``state_writes`` (per
    key: once per bundle with mini-batch, once per row without), ``inserts``,
    ``update_befores``, ``update_afters``, ``deletes``, ``bundles``, ``buckets_touched``,
    ``rows_expired`` (with ``state_ttl``); a streaming query's state counters too
    (``state_bytes_read``, ...). A batch join counts each changelog side's rows, retractions,
    ignored retractions and null keys (Spark's own join does the joining).

    Example:
        >>> metrics = JoinMetrics(spark)
        >>> rows = [("+I", 1, 7), ("-D", 1, 7)]
        >>> orders = spark.createDataFrame(rows, "op STRING, cid INT, n INT")
        >>> customers = spark.createDataFrame([(1, "ann")], "cid INT, name STRING")
        >>> join(orders, customers, "cid", left_op_col="op", metrics=metrics).count()
        0
        >>> metrics.value["left_rows_in"], metrics.value["retractions_in"]
        (2, 1)
    """

    def __repr__(self) -> str:
        return f"JoinMetrics({self.value})"


def _on_names(on: object) -> list[str]:
    if isinstance(on, str):
        return [on]
    if isinstance(on, (list, tuple)) and all(isinstance(n, str) for n in on):
        return list(on)
    raise TypeError(
        "join: on must name the join column(s), a str or a list of str (an equi-join on "
        f"columns of the same name on both sides), not {type(on).__name__}; rename a side's "
        "column (withColumnRenamed) to join columns of different names"
    )


def join(
    left: DataFrame,
    right: DataFrame,
    on: str | Sequence[str],
    how: str = "inner",
    *,
    left_op_col: str | None = None,
    right_op_col: str | None = None,
    mini_batch: bool = True,
    bundle_rows: int = DEFAULT_BUNDLE_ROWS,
    buckets: int | None = None,
    state_ttl: DurationLike | None = None,
    metrics: JoinMetrics | None = None,
) -> DataFrame:
    """The equi-join of two changelogs, Flink SQL's regular join: ``L.join(R, on, how)`` of
    what the two inputs materialize to, kept up to date on streams.

    Args:
        left, right: two batch DataFrames, or two streaming ones (a streaming join needs the
            RocksDB state store).
        on: the join column(s), by name, present on both sides with the same type (Spark's
            case rules). A row with a null in one never matches (SQL's ``=``).
        how: ``inner``, ``left``, ``right`` or ``full``, and Spark's spellings
            (``left_outer``, ``right_outer``, ``outer``, ``full_outer``); semi, anti and
            cross joins are refused.
        left_op_col, right_op_col: a STRING column of ``+I``/``-U``/``+U``/``-D`` (null:
            ``+I``; e.g. ``from_changelog``'s ``op``): that side is a changelog, which
            materializes to a multiset of rows: ``+I``/``+U`` add a row, ``-U``/``-D`` take
            back the latest live row equal to it on all its columns (one that matches none is
            ignored and counted as ``retractions_ignored``). ``None``: insert-only.
        mini_batch: streaming: each output row changes at most once per bundle, as ``+I`` or
            ``-D`` (Flink's mini-batch join); ``False``: every input row emits its changes at
            once (an inner join forwards the row's kind, as Flink's join operator).
        bundle_rows: streaming: bundles are cut every this many rows of a bucket's
            micro-batch.
        buckets: streaming only: state-store entries the keys are hashed into (default: the
            conf ``spark.sliceflow.join.buckets``, else 8); part of the checkpoint.
        state_ttl: streaming only (a batch join keeps no state): a duration (``"1 hour"``, a
            ``datetime.timedelta``): a row leaves the state that long after it arrived (by the
            micro-batches' times, ``current_timestamp()``), as Flink's
            ``table.exec.state.ttl``, when its bucket next gets rows; afterwards
            the join behaves as if the row had never come (a retraction of it is ignored, a
            new row of its key finds no match in it) and nothing is emitted for its leaving,
            so the output no longer materializes to the join of the inputs. Whether rows
            carry their arrival time is part of the checkpoint; the duration is not.
        metrics: a :class:`JoinMetrics` to which the kernel's counters are added.

    Returns:
        Batch: Spark's ``L.join(R, on, how)`` of the materialized sides (the key columns once,
        the left side's others, the right side's; no op columns). Stream: the changelog
        ``op`` then those columns (output mode append), whose materialization after every
        micro-batch is the join of both sides materialized so far. The state is both sides'
        live rows (Flink's regular join keeps them all: it grows with the live rows, unless
        ``state_ttl`` bounds it).

    Example:
        >>> orders = spark.createDataFrame([(1, 10), (2, 20)], "cid INT, amount INT")
        >>> customers = spark.createDataFrame(
        ...     [("+I", 1, "ann"), ("+I", 2, "bob"), ("-D", 2, "bob")],
        ...     "op STRING, cid INT, name STRING",
        ... )
        >>> join(orders, customers, "cid", "left", right_op_col="op").orderBy("cid").show()
        +---+------+----+
        |cid|amount|name|
        +---+------+----+
        |  1|    10| ann|
        |  2|    20|NULL|
        +---+------+----+
        <BLANKLINE>
    """
    lcall = OperatorCall.begin("join", left, metrics)
    rcall = OperatorCall.begin("join", right, metrics)
    how = canonical_how(how)
    names = _on_names(on)
    left_on = lcall.names(names)
    right_on = rcall.names(names)
    left_op = lcall.column(left_op_col) if left_op_col is not None else None
    right_op = rcall.column(right_op_col) if right_op_col is not None else None
    ttl_us = None
    if state_ttl is not None:
        ttl_us = parse_duration(state_ttl, "state_ttl")
        if ttl_us <= 0:
            raise ValueError(f"join: state_ttl must be a positive duration, not {state_ttl!r}")
    if left.isStreaming != right.isStreaming:
        streaming, batch = ("left", "right") if left.isStreaming else ("right", "left")
        raise ValueError(
            f"join: the {streaming} DataFrame is streaming and the {batch} one is not; join two "
            "batch DataFrames or two streams (for a stream with a static table, use Spark's "
            "own stream-static join)"
        )
    lframe = lcall.frame
    # the right side's join columns spelled as the left side's (Spark's case rules found them)
    rframe = rcall.frame
    for ln, rn in zip(left_on, right_on, strict=True):
        if isinstance(ln, str) and isinstance(rn, str) and ln != rn:
            rframe = rframe.withColumnRenamed(rn, ln)
    lschema = lcall.input_schema(lframe.columns, lframe)
    rschema = rcall.input_schema(rframe.columns, rframe)
    jp = build_plan(
        lschema, rschema, left_on, how, left_op_col=left_op, right_op_col=right_op,
        mini_batch=mini_batch, bundle_rows=bundle_rows,
    )  # fmt: skip
    _check_clashes(
        [c for c in lframe.columns if c != left_op],
        [c for c in rframe.columns if c != right_op],
        left_on,
        lcall.settings.case_sensitive,
    )
    if left.isStreaming:
        return join_stream(lcall, jp, lframe, rframe, buckets, ttl_us)
    lm = _materialized(lcall, jp, 0, lframe)
    rm = _materialized(rcall, jp, 1, rframe)
    return lm.join(rm, on=list(jp.on), how=how)


def _check_clashes(
    left: Sequence[str], right: Sequence[str], on: Sequence[str], case_sensitive: bool
) -> None:
    def norm(name: str) -> str:
        return name if case_sensitive else name.lower()

    keys = {norm(n) for n in on}
    theirs = {norm(n): n for n in right if norm(n) not in keys}
    for name in left:
        if norm(name) in theirs:
            raise ValueError(
                f"join: column {name!r} of the left side and {theirs[norm(name)]!r} of the right "
                "side have the same name and are not in on; rename one (withColumnRenamed) or "
                "add it to on"
            )


def _materialized(call: OperatorCall, jp: JoinPlan, side: int, frame: DataFrame) -> DataFrame:
    """A batch side as the multiset its rows materialize to: an insert-only side as it is, a
    changelog's live rows (per key, in the DataFrame's order; no op column)."""
    schema = jp.side_schema(side)
    op = jp.op_col(side)
    names = [n for n in schema.names if n != op]
    if op is None:
        return frame.select(*[F.col(quote(n)) for n in names])
    # The side alone through the kernel: it as the left side of a join with a right side of
    # the keys only; its live rows are the answer. An outer side keeps its rows with a null
    # key (they come out padded), another drops them (they never match) and counts them as
    # the streaming join does.
    keys = pa.schema([schema.field(n) for n in jp.on])
    outer = jp.how == "full" or jp.how == ("left", "right")[side]
    mp = build_plan(
        schema, keys, list(jp.on), "left" if outer else "inner", left_op_col=op,
        bundle_rows=_BATCH_BUNDLE,
    )  # fmt: skip
    rows = schema.append(pa.field(_SEQ, pa.int64(), nullable=False))
    output = pa.schema([schema.field(n) for n in names])
    task: TaskContext = call.task

    def live_fn(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        task.start()
        parts = [conform(b, rows) for b in batches if b.num_rows]
        if not parts:
            return
        batch = pa.concat_batches(parts)
        batch = batch.take(pc.sort_indices(batch.column(_SEQ))).drop_columns([_SEQ])
        step = JoinStep(mp)
        stats: dict[str, int] | None = {} if task.accumulator is not None else None
        _, state = step.run(step.empty_state(), [(0, batch)], stats, changes=False)
        if stats is not None:  # what a batch join's materialization counts: the side's rows
            task.report({
                f"{('left', 'right')[side]}_rows_in": stats["left_rows_in"],
                "retractions_in": stats["retractions_in"],
                "retractions_ignored": stats["retractions_ignored"],
                "rows_null_key": stats["rows_null_key"],
            })  # fmt: skip
        yield state.left.select(output.names)

    live_fn.__name__ = "join_materialize"
    sequenced = frame.select(*[F.col(quote(n)) for n in schema.names]).withColumn(
        _SEQ, F.monotonically_increasing_id()
    )
    keyed = sequenced.repartition(*[F.col(quote(n)) for n in jp.on])
    return keyed.mapInArrow(live_fn, spark_struct(output))
