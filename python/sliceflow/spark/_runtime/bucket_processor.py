"""The one stateful processor skeleton of sliceflow's streaming operators.

A streaming operator hashes its grouping keys into *buckets* and ships each bucket's rows of a
micro-batch as Arrow IPC messages (``bucket_rows.pack_by_bucket``), each tagged with the input
it came from (an operator has one input or more: a two-input operator, e.g. a join, unions its
sides' packed rows and reads each with its own schema); Spark groups them by bucket
and runs a :class:`BucketProcessor` under ``transformWithStateInPandas``, one call per
(micro-batch, bucket) and, in event time, one per expired timer. Each call is the same four
steps:

1. **load** the bucket's state: its values in Spark's state store, each a sealed state value
   (``sliceflow._runtime.state_format``: format version, operator, plan identity, checksum) whose
   payload sections the operator reads;
   (or, for a logged state, its image: :mod:`~sliceflow.spark._runtime.bucket_state`, read
   in proportion to the keys the micro-batch touches);
2. **advance** the operator's kernel with the bucket's rows (Arrow record batches, never pandas,
   in arrival order, each with the index of its input);
3. **emit** the output batches it returns (handed to Spark as Arrow-backed pandas frames, one
   frame per batch);
4. **store** the new state (sealed again), or clear it.

The skeleton does the Spark plumbing (value states, sealing, unpacking rows, pandas frames,
the query's ``TaskContext``: worker memory settings and counters); an operator supplies only
:meth:`BucketProcessor.advance` and the names of its value states. Every streaming operator
(``spark/window``, ``spark/changelog``, ``spark/topn``, ``spark/dedup``) is one subclass.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

import pandas as pd
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import types as T
from pyspark.sql.streaming.stateful_processor import StatefulProcessor, StatefulProcessorHandle

from sliceflow._runtime.state_format import Identity, open_value, seal
from sliceflow.spark._runtime.bucket_rows import to_pandas, unpack
from sliceflow.spark._runtime.bucket_state import BucketImage, LoggedState
from sliceflow.spark._runtime.driver_worker import quiet_driver_worker
from sliceflow.spark._runtime.tasks import TaskContext

# PySpark's driver worker prints its progress to the console; this import runs in it.
quiet_driver_worker()

__all__ = ["STATE_SCHEMA", "BucketCall", "BucketProcessor", "process_buckets"]

ImageT = TypeVar("ImageT", bound=BucketImage)

#: The Spark schema of every value state a bucket processor keeps: one sealed state value.
STATE_SCHEMA = T.StructType([T.StructField("blob", T.BinaryType(), False)])


@dataclass
class BucketCall:
    """What one call for a bucket brings to :meth:`BucketProcessor.advance`."""

    #: The bucket's number.
    bucket: int
    #: The bucket's rows of this micro-batch in arrival order, as ``(input, batch)`` with the
    #: batch in that input's schema (none for a timer).
    inputs: Iterator[tuple[int, pa.RecordBatch]]
    #: The current watermark (event time only, else None).
    watermark_ms: int | None
    #: Whether a timer expired (event time).
    expired: bool
    #: Counters the call adds to the operator's metrics.
    stats: dict[str, int] = field(default_factory=dict)

    @property
    def batches(self) -> Iterator[pa.RecordBatch]:
        """The rows of a one-input operator (its only input's batches)."""
        return (batch for _, batch in self.inputs)


class BucketProcessor(StatefulProcessor):
    """``transformWithStateInPandas`` processor: load → advance → emit → store per bucket call.

    A subclass sets :attr:`operator`, :attr:`state_names` (and :attr:`time_mode` for event
    time) and implements :meth:`advance`, which reads and writes the bucket's state with
    :meth:`load` and :meth:`store`.
    """

    #: The operator's name in the state header and in errors (``"window_agg"``, ...).
    operator: ClassVar[str]
    #: The value states the operator keeps per bucket (besides its logged states, made in
    #: :meth:`setup` with :meth:`logged`).
    state_names: ClassVar[tuple[str, ...]] = ()
    #: ``transformWithStateInPandas``'s time mode: ``"None"`` or ``"EventTime"``.
    time_mode: ClassVar[str] = "None"

    def __init__(
        self,
        identity: Identity,
        input_schema: pa.Schema | Sequence[pa.Schema],
        task: TaskContext,
    ) -> None:
        """``input_schema``: the schema of the operator's one input, or one per input (in the
        order of the ``__input`` tags its packing steps give)."""
        self._identity = identity
        self._input_schemas = (
            [input_schema] if isinstance(input_schema, pa.Schema) else list(input_schema)
        )
        self._task = task
        # Tells this operator instance's buckets from any other's in a worker's cache.
        self._scope = uuid.uuid4().hex

    # -- what an operator supplies ---------------------------------------------------------

    def setup(self) -> None:
        """Per task, after the state handle is there: build what every call reuses."""

    def advance(self, call: BucketCall) -> Iterator[pa.RecordBatch]:
        """One call for the bucket: loads the state, advances with ``call.batches``, yields the
        output batches, stores the state; counters go into ``call.stats``."""
        raise NotImplementedError

    # -- the state -------------------------------------------------------------------------

    def load(self, name: str, sections: int) -> list[bytes] | None:
        """The payload sections of the bucket's value ``name``; None when it has none."""
        state = self._states[name]
        # exists() first: Spark's state server logs a warning for every get() of an empty
        # value ("Value state ... doesn't contain a value"), a line per bucket and batch.
        if not state.exists():
            return None
        value = state.get()
        if value is None:
            return None
        return open_value(self.operator, self._identity, bytes(value[0]), sections)

    def store(self, name: str, sections: Sequence[bytes] | None) -> None:
        """Seals ``sections`` as the bucket's value ``name``; None clears it."""
        if sections is None:
            self._states[name].clear()
        else:
            self._states[name].update((seal(self.operator, self._identity, sections),))

    def logged(
        self,
        name: str,
        new_image: Callable[[], ImageT],
        *,
        base_sections: int = 1,
        change_sections: int = 1,
    ) -> LoggedState[ImageT]:
        """The logged state ``name`` (layout 2: base, log and head; call from :meth:`setup`),
        whose images ``new_image()`` makes; a base has ``base_sections`` payload sections and a
        log entry ``change_sections``."""
        return LoggedState(
            self._handle,
            name,
            operator=self.operator,
            identity=self._identity,
            new_image=new_image,
            base_sections=base_sections,
            change_sections=change_sections,
            scope=self._scope,
            cache_bytes=self._task.state_cache_bytes,
            log_share=self._task.state_log_share,
        )

    @property
    def handle(self) -> StatefulProcessorHandle:
        """Spark's handle (timers)."""
        return self._handle

    # -- Spark's calls ---------------------------------------------------------------------

    def init(self, handle: StatefulProcessorHandle) -> None:
        self._task.start()
        self._handle = handle
        self._states = {name: handle.getValueState(name, STATE_SCHEMA) for name in self.state_names}
        self.setup()

    def handleInputRows(
        self, key: Any, rows: Iterator[pd.DataFrame], timerValues: Any
    ) -> Iterator[pd.DataFrame]:
        inputs = (
            tagged for frame in rows for tagged in unpack(frame, self._input_schemas, self.operator)
        )
        yield from self._call(key, inputs, timerValues, expired=False)

    def handleExpiredTimer(
        self, key: Any, timerValues: Any, expiredTimerInfo: Any
    ) -> Iterator[pd.DataFrame]:
        yield from self._call(key, iter(()), timerValues, expired=True)

    def close(self) -> None:
        pass

    def _call(
        self,
        key: Any,
        inputs: Iterator[tuple[int, pa.RecordBatch]],
        timer_values: Any,
        *,
        expired: bool,
    ) -> Iterator[pd.DataFrame]:
        watermark = (
            timer_values.getCurrentWatermarkInMs() if self.time_mode == "EventTime" else None
        )
        call = BucketCall(int(key[0]), inputs, watermark, expired)
        # One frame per kernel output batch: PySpark takes Arrow-backed pandas columns of one
        # chunk only, and memory stays bounded by a batch.
        for batch in self.advance(call):
            if batch.num_rows:
                yield to_pandas(batch)
        self._task.report(call.stats)


def process_buckets(
    packed: DataFrame | Sequence[DataFrame], processor: BucketProcessor, output: T.StructType
) -> DataFrame:
    """``packed`` (``bucket_rows.PACKED_SCHEMA`` rows; one DataFrame per input for an
    operator with several, each packed with its input's index) grouped by bucket through
    ``processor``: the operator's output stream, append mode."""
    if not isinstance(packed, DataFrame):
        first, *others = packed
        for other in others:
            first = first.unionByName(other)
        packed = first
    return packed.groupBy("__bucket").transformWithStateInPandas(
        statefulProcessor=processor,
        outputStructType=output,
        outputMode="Append",
        timeMode=processor.time_mode,
    )
