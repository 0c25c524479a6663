"""Changelog aggregation: Flink SQL's group aggregation over ``+I/-U/+U/-D`` rows, with
mini-batch bundles, in this process (no Spark).

:func:`aggregate` runs the C++ kernel on Arrow data exactly as
:func:`sliceflow.spark.changelog_agg` runs it inside Spark tasks: the encoder (local phase)
turns rows into signed delta rows, the aggregator (global phase) keeps per-key state and emits
each key's net change per bundle. The semantics are in docs/changelog-kernel.md.

>>> import pyarrow as pa
>>> from sliceflow import window as W
>>> batch = pa.table({"day": ["d", "d", "d"], "user_id": [1, 2, 11]})
>>> one_row_each = [batch.slice(i, 1) for i in range(3)]
>>> out = aggregate(one_row_each, ["day"], [W.count().alias("n")])
>>> [(r["op"], r["n"]) for r in out.to_pylist()]
[('+I', 1), ('-U', 1), ('+U', 2), ('-U', 2), ('+U', 3)]
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, MutableMapping, Sequence
from typing import TYPE_CHECKING

import pyarrow as pa

from sliceflow._core import changelog as changelog_kernel
from sliceflow._core.changes import NotAChangeKindError
from sliceflow._runtime.arrow_c_data import with_user_columns
from sliceflow._runtime.change_kinds import not_a_kind, shown_value
from sliceflow._runtime.kernels import MAX_OUTPUT_ROWS, add_batch, add_stats, conform, drain
from sliceflow._runtime.micro_batches import micro_batches
from sliceflow.aggregates import AggSpec
from sliceflow.changelog.plan import DEFAULT_BUNDLE_ROWS, ChangelogPlan, build_plan

if TYPE_CHECKING:
    from sliceflow._core.changelog import Aggregator

__all__ = ["DEFAULT_BUNDLE_ROWS", "aggregate"]


def encode(
    cp: ChangelogPlan,
    batches: Iterable[pa.RecordBatch],
    stats: MutableMapping[str, int] | None = None,
) -> Iterator[pa.RecordBatch]:
    """The local phase on one partition: input batches → delta batches."""
    enc = changelog_kernel.Encoder(
        cp.plan, cp.encoder_schema.__arrow_c_schema__(), cp.delta_schema.__arrow_c_schema__()
    )
    for batch in batches:
        if batch.num_rows == 0:
            continue
        try:
            add_batch(enc, cp.encoder_batch(batch))
        except NotAChangeKindError as e:
            # Only an op the kernel refused sends it back to the batch (its row): a batch
            # refused by the input validation may not be safe to read from Python.
            raise _bad_op_error(cp, batch, e.row) from None
        except ValueError as e:
            user = [cp.input_schema.field(i).name for i in cp.input_indices]
            raise with_user_columns(e, cp.encoder_schema.names, user) from e
        yield from drain(enc.take, cp.delta_schema)
    enc.finish()
    yield from drain(enc.take, cp.delta_schema)
    if stats is not None:
        add_stats(stats, enc.stats())


def _bad_op_error(cp: ChangelogPlan, batch: pa.RecordBatch, first: int) -> ValueError:
    """The error for row ``first`` of ``batch`` (``cp.input_schema``'s columns, the user's
    names), whose op the kernel refused as no change kind, naming the op column and showing
    the row's values. Runs only after the kernel refused the batch, so the happy path pays
    nothing for it."""
    column_index = cp.input_indices[cp.plan["op_column"]]
    name = cp.input_schema.field(column_index).name
    row = batch.slice(first, 1).to_pylist()[0]
    shown = ", ".join(f"{k}={shown_value(v)}" for k, v in row.items())
    return ValueError(f"{not_a_kind(name, row[name])}. The row: {{{shown}}}")


class GlobalPhase:
    """The aggregator of one partition (batch) or one bucket at a time (streaming).

    ``emit`` is ``"changelog"`` or ``"final"``. Output batches come back from :meth:`add`,
    :meth:`end_bundle` and :meth:`finish` as lists (usually empty or one batch).
    """

    def __init__(self, cp: ChangelogPlan, emit: str = "changelog") -> None:
        self._cp = cp
        self._agg: Aggregator = changelog_kernel.Aggregator(
            cp.plan,
            cp.delta_schema.__arrow_c_schema__(),
            cp.output_schema.__arrow_c_schema__(),
            emit,
            MAX_OUTPUT_ROWS,
        )

    def _drain(self) -> list[pa.RecordBatch]:
        return list(drain(self._agg.take, self._cp.output_schema))

    def load(self, blob: bytes) -> None:
        """Adds the keys of a state blob (from :meth:`dump`)."""
        self._agg.load(blob)

    def add(self, deltas: pa.RecordBatch) -> list[pa.RecordBatch]:
        """Applies delta rows; returns the changes of the bundles they closed."""
        if deltas.num_rows:
            add_batch(self._agg, conform(deltas, self._cp.delta_schema))
        return self._drain()

    def end_bundle(self) -> list[pa.RecordBatch]:
        """Closes the open bundle (the end of a micro-batch); returns its changes."""
        self._agg.end_bundle()
        return self._drain()

    def finish(self) -> list[pa.RecordBatch]:
        """End of input; with ``emit="final"`` the one ``+I`` row per live key."""
        self._agg.finish()
        return self._drain()

    def dump(self) -> bytes:
        """The live keys' state as one blob; every key is clean afterwards."""
        return self._agg.dump()

    def dump_changes(self) -> bytes:
        """The keys changed since the last :meth:`dump` or :meth:`dump_changes`, each with its
        new state or as gone (a *changes* payload, docs/state.md); they are clean afterwards."""
        return self._agg.dump_changes()

    def apply_changes(self, payload: bytes) -> None:
        """Applies a changes payload (:meth:`dump_changes` of the state this one holds): each
        key takes its new state or leaves; the keys stay clean."""
        self._agg.apply_changes(payload)

    def changed_keys(self) -> int:
        """How many keys :meth:`dump_changes` would write."""
        return int(self._agg.changed_keys())

    def key_slots(self) -> int:
        """Key slots held, live or not (a key that left keeps its slot until :meth:`reset`)."""
        return int(self._agg.key_slots())

    def reset(self) -> None:
        """Forgets every key and the counters (reuse for the next bucket)."""
        self._agg.reset()

    def reset_stats(self) -> None:
        """Zeroes the counters, keeping the keys."""
        self._agg.reset_stats()

    def memory_usage(self) -> int:
        """Bytes the kernel holds."""
        return int(self._agg.memory_usage())

    def live_keys(self) -> int:
        return int(self._agg.live_keys())

    def stats(self) -> dict[str, int]:
        return dict(self._agg.stats())


def aggregate(
    data: pa.Table | pa.RecordBatch | Sequence[pa.Table | pa.RecordBatch],
    by: str | Sequence[str] | None,
    aggs: Sequence[AggSpec],
    *,
    op_col: str | None = None,
    mini_batch: bool = True,
    bundle_rows: int = DEFAULT_BUNDLE_ROWS,
    emit: str = "changelog",
    ansi: bool = True,
    fold: bool | None = None,
    stats: MutableMapping[str, int] | None = None,
) -> pa.Table:
    """Group aggregation over a changelog, in this process: the C++ kernel alone, no Spark.

    Args:
        data: one micro-batch (a pyarrow ``Table`` or ``RecordBatch``) or a list of them,
            applied in order with the state carried from one to the next. A bundle never
            spans two micro-batches.
        by: the grouping column(s); ``None`` or ``[]`` for one group.
        aggs: aggregates from :mod:`sliceflow.window` (``W.count()``, ``W.sum("x")``, ...).
        op_col: a STRING column of ``+I``/``-U``/``+U``/``-D`` (null: ``+I``); ``None``: every
            row is an insert.
        mini_batch: fold the rows of a bundle per key and emit one net change per key (Flink's
            ``table.exec.mini-batch.enabled``); ``False``: one change per row.
        bundle_rows: cut bundles every this many (delta) rows (Flink's
            ``table.exec.mini-batch.size``).
        emit: ``"changelog"`` (the changes) or ``"final"`` (one ``+I`` row per key alive at
            the end: what the changelog materializes to, and what a batch DataFrame gives).
        ansi: Spark's ``spark.sql.ansi.enabled``: BIGINT/DECIMAL sum overflow raises
            ``OverflowError`` instead of wrapping / giving null.
        fold: fold rows per key before the (here imaginary) shuffle: ``None`` where it is
            exact (docs/changelog-kernel.md, "Local fold").
        stats: a dict to which the kernel's counters are added (``state_reads``,
            ``state_writes``, ``retractions_ignored``, ``inserts``, ...).

    Returns:
        A Table: ``op``, the ``by`` columns, then one column per aggregate, in emission order.

    Example:
        >>> import pyarrow as pa
        >>> from sliceflow import window as W
        >>> t = pa.table({"k": ["a", "a", "b"], "v": [5, 7, 1], "op": ["+I", "+I", "+I"]})
        >>> fix = pa.table({"k": ["a"], "v": [7], "op": ["-D"]})
        >>> out = aggregate([t, fix], "k", [W.max("v").alias("top")], op_col="op")
        >>> [tuple(r.values()) for r in out.to_pylist()]
        [('+I', 'a', 7), ('+I', 'b', 1), ('-U', 'a', 7), ('+U', 'a', 5)]
    """
    if emit not in ("changelog", "final"):
        raise ValueError(f"emit must be 'changelog' or 'final', not {emit!r}")
    tables = micro_batches(data)
    cp = build_plan(
        tables[0].schema,
        by,
        aggs,
        op_col=op_col,
        mini_batch=mini_batch,
        bundle_rows=bundle_rows,
        fold=fold,
        ansi=ansi,
    )
    phase = GlobalPhase(cp, emit)
    out: list[pa.RecordBatch] = []
    for table in tables:
        table = table.cast(cp.input_schema) if table.schema != cp.input_schema else table
        for deltas in encode(cp, table.to_batches(), stats):
            out += phase.add(deltas)
        out += phase.end_bundle()
    out += phase.finish()
    if stats is not None:
        add_stats(stats, phase.stats())
    return pa.Table.from_batches(out, cp.output_schema)
