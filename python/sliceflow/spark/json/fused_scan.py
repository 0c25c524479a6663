"""The fused scan: an operator's local phase run inside the ``sliceflow.json`` read.

An operator over a ``sliceflow.json`` read (through column references only:
:mod:`sliceflow.spark.json.lineage`) does not take the source's rows into the JVM and back
out to a Python worker for its local phase. :func:`local_phase_frame` instead makes a data
source, ``sliceflow.json+<operator>.<digest>``, whose read task decodes only the fields the
operator reads (Spark's required schema: nested structs cut to the fields read), extracts its
input columns from them, and runs the operator's local phase on those batches; only the local
phase's output (window partials, pre-folded changes, ...) crosses into the JVM::

    unfused: sliceflow.json (every field) ─ JVM rows ─ mapInArrow(local phase) ─ shuffle ...
    fused:   sliceflow.json+window_agg (fields read, local phase) ─ JVM partials ─ shuffle ...

Invariants: the fused read lists, splits and decodes the files with the source's own reader
(:class:`~sliceflow.spark.json.source.JsonDataSourceReader`: same options, session settings,
partition columns and errors), and hands the local phase the same columns, names and types
the unfused plan would; so the operator's result is the same. One difference is Spark's
own: a value that does not fit its declared type in a field the operator does not read makes
the unfused row null in PERMISSIVE mode (the source decodes every field), while the fused
scan, like ``spark.read.json`` with a column selection, does not decode that field.

A stream (``readStream.format("sliceflow.json")``) is fused the same way, with
``spark.sliceflow.fusion.streams.enabled=true``, for a local phase that keeps nothing across
micro-batches (a packing step, an encoder): :class:`FusedStreamReader` keeps the stream's
offsets, listing, splits and commits, so a checkpoint restarts fused or not. A watermark
between the scan and the operator is kept only for an operator that names its event-time
column: each fused row carries its task's largest event time under the same delay.

An operator over the fields of a ``sliceflow.spark.from_json`` column (a text file's lines, a
Kafka value; :mod:`sliceflow.spark.json.from_json_lineage`) is fused one step later: the text
column leaves the JVM, and the decoding and the local phase run in one ``mapInArrow``, so the
decoded rows never cross::

    unfused: text ─ from_json (decoded rows into the JVM) ─ mapInArrow(local phase) ─ shuffle ...
    fused:   text ─ mapInArrow(from_json + local phase) ─ JVM partials ─ shuffle ...

``df.explain()`` shows a fused plan by its scan's name (``sliceflow.json+window_agg.…``), a
fused ``from_json`` by its step's (``from_json_window_agg_local``, no ``from_json.<digest>``
UDF); ``spark.sliceflow.fusion.enabled=false`` turns fusion off.

Cost: on the driver, one plan walk and one data source registration per query built; in the
tasks, the decode of the fields read, and no row conversion to or from the JVM of the input.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any, cast

import pyarrow as pa
import pyarrow.compute as pc
from pyspark import cloudpickle
from pyspark.sql import DataFrame
from pyspark.sql.datasource import DataSourceReader, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadLimit, SupportsTriggerAvailableNow
from pyspark.sql.types import StructType

from sliceflow.spark.json.connect_from_json_lineage import connect_from_json_read
from sliceflow.spark.json.connect_lineage import connect_source_read
from sliceflow.spark.json.event_time import rewatermarked, timed_phase, with_event_time
from sliceflow.spark.json.from_json_lineage import FromJsonRead, from_json_read
from sliceflow.spark.json.lineage import SourceRead, json_source_read
from sliceflow.spark.json.source import (
    FileSplit,
    JsonDataSource,
    JsonDataSourceReader,
    session_attributes,
)
from sliceflow.spark.json.source_errors import spark_shaped
from sliceflow.spark.json.stream_source import FailedStream, JsonStreamReader, StreamOptions

__all__ = ["FUSED_SOURCE_PREFIX", "LocalPhase", "local_phase_frame"]

#: A local phase: the operator's input batches in, its partial batches out (one task's).
LocalPhase = Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]

#: How a fused scan's data source name starts (``explain()`` shows it).
FUSED_SOURCE_PREFIX = "sliceflow.json+"


def local_phase_frame(
    selected: DataFrame,
    phase: LocalPhase,
    output: StructType,
    operator: str,
    fusion: bool,
    *,
    streams: bool = False,
    event_time: str | None = None,
) -> DataFrame:
    """``selected.mapInArrow(phase, output)``, fused into the scan when ``fusion`` is on and
    ``selected`` is a ``sliceflow.json`` read through column references (module doc): a batch
    read, or, when ``streams`` (the phase keeps nothing across micro-batches), a stream. A
    stream with a watermark is fused only when ``event_time`` names the input column the
    watermark is on (the fused rows then carry it; otherwise the watermark would be lost), and
    one without only when ``event_time`` is None.

    Over the fields of a ``sliceflow.spark.from_json`` column (:mod:`from_json_lineage`), the
    decoding and the local phase run in one Python step (a stream's only when ``streams``,
    nothing below the decoding sets a watermark, and ``event_time`` is given exactly when a
    watermark sits between the decoding and the operator: the step keeps it).

    ``selected`` holds exactly the local phase's input columns, in order."""
    read = _source_read(selected) if fusion else None
    if read is None:
        streaming = selected.isStreaming
        decoded = _from_json_read(selected) if fusion and (streams or not streaming) else None
        if decoded is not None and not streaming:
            return decoded.frame(phase, output)
        if decoded is not None and not decoded.watermarked:
            if event_time is None and not decoded.watermark_above:
                return decoded.frame(phase, output)
            if event_time is not None and decoded.watermark_above:
                return decoded.frame(phase, output, (event_time, _delay_ms(selected, event_time)))
        return selected.mapInArrow(phase, output)
    if read.streaming and (not streams or read.watermarked != (event_time is not None)):
        return selected.mapInArrow(phase, output)
    return _fused_read(selected, read, phase, output, operator, event_time)


def _source_read(df: DataFrame) -> SourceRead | None:
    """The ``sliceflow.json`` read ``df``'s columns are, on a classic or a Connect session."""
    if getattr(df, "_jdf", None) is None:
        return connect_source_read(df)
    return json_source_read(df)


def _from_json_read(df: DataFrame) -> FromJsonRead | None:
    """The ``from_json`` decoding ``df``'s columns are fields of, on a classic or a Connect
    session."""
    if getattr(df, "_jdf", None) is None:
        return connect_from_json_read(df)
    return from_json_read(df)


def _fused_read(
    selected: DataFrame,
    read: SourceRead,
    phase: LocalPhase,
    output: StructType,
    operator: str,
    event_time: str | None,
) -> DataFrame:
    spark = selected.sparkSession
    names = [c.name for c in read.columns]
    attributes: dict[str, Any] = {
        **session_attributes(spark),
        "source_schema": read.schema,
        "required": read.required(),
        "columns": [(c.name, c.field, read.pruned_path(c)) for c in read.columns],
        "phase": staticmethod(phase),
        "output": output,
        "event_time": names.index(event_time) if read.watermarked and event_time else None,
    }
    dumps = cast(Callable[[Any], bytes], cloudpickle.dumps)
    digest = hashlib.sha256(
        dumps((sorted(read.options.items()), list(attributes.items())))
    ).hexdigest()[:12]
    attributes["fused_name"] = f"{FUSED_SOURCE_PREFIX}{operator}.{digest}"
    # A class made here travels to the planner worker and the tasks by value (as register()'s
    # does); the digest gives each distinct fused read its own name, so a plan analysed again
    # later (Spark Connect, a cached plan) finds the class it was built with.
    source = type("FusedJsonSource", (_FusedJsonSource,), attributes)
    spark.dataSource.register(source)
    if not read.streaming:
        reader = spark.read.format(attributes["fused_name"]).schema(output)
        return reader.options(**read.options).load()
    if attributes["event_time"] is None:
        stream = spark.readStream.format(attributes["fused_name"]).schema(output)
        return stream.options(**read.options).load()
    # A watermarked stream: each output row also carries the largest event time its task has
    # read so far, under the same watermark delay as the input's (module event_time).
    assert event_time is not None
    stream = spark.readStream.format(attributes["fused_name"]).schema(with_event_time(output))
    return rewatermarked(stream.options(**read.options).load(), _delay_ms(selected, event_time))


def _delay_ms(selected: DataFrame, event_time: str) -> int:
    """The watermark delay Spark keeps in the metadata of the stream's event-time column."""
    return int(selected.schema[event_time].metadata["spark.watermarkDelayMs"])


class _FusedJsonSource(JsonDataSource):
    """The ``sliceflow.json`` source with an operator's local phase in its read (the
    attributes are set on the subclass :func:`_fused_read` makes)."""

    fused_name: str = FUSED_SOURCE_PREFIX
    source_schema: StructType
    required: StructType
    columns: list[tuple[str, str, tuple[int, ...]]]
    phase: LocalPhase
    output: StructType
    #: A watermarked stream's: the index of the input column whose largest value each row
    #: carries (None: no such column).
    event_time: int | None

    @classmethod
    def name(cls) -> str:
        return cls.fused_name

    def schema(self) -> StructType:
        return self.output

    def reader(self, schema: StructType) -> DataSourceReader:
        with spark_shaped():
            files = JsonDataSourceReader(
                self.options,
                self.source_schema,
                self.session_defaults,
                self.memory_limits,
                required=self.required,
            )
        return FusedScanReader(files, self.columns, type(self).phase)

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        try:
            options = dict(self.options)
            stream = StreamOptions.pop(options)
            with spark_shaped():
                decoder = JsonDataSourceReader(
                    options,
                    self.source_schema,
                    self.session_defaults,
                    self.memory_limits,
                    required=self.required,
                )
        except Exception as exc:  # raised by the stream's first call (see FailedStream)
            return FailedStream(exc)
        files = JsonStreamReader(stream, decoder, FileSplit, self.session_defaults)
        return FusedStreamReader(files, self.columns, type(self).phase, self.event_time)


class FusedScanReader(DataSourceReader):
    """Splits as the source does; a split's decoded fields become the operator's input
    columns, which its local phase folds before anything leaves the task."""

    def __init__(
        self,
        files: JsonDataSourceReader,
        columns: list[tuple[str, str, tuple[int, ...]]],
        phase: LocalPhase,
    ) -> None:
        self.files = files
        self.columns = columns
        self.phase = phase

    def partitions(self) -> list[InputPartition]:
        return self.files.partitions()

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        return self.phase(self._inputs(self.files.read(partition)))

    def _inputs(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        return _input_columns(batches, self.columns)


def _input_columns(
    batches: Iterator[pa.RecordBatch], columns: list[tuple[str, str, tuple[int, ...]]]
) -> Iterator[pa.RecordBatch]:
    """The operator's input columns of each decoded batch (nested fields extracted)."""
    names = [name for name, _, _ in columns]
    for batch in batches:
        arrays = []
        for _, field, path in columns:
            array: Any = batch.column(field)
            for ordinal in path:  # a null struct gives null fields, as GetStructField
                array = pc.struct_field(array, [ordinal])
            arrays.append(array)
        yield pa.RecordBatch.from_arrays(arrays, names=names)


class FusedStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """The ``sliceflow.json`` stream's micro-batches (its offsets, listing, splits and commits
    unchanged, so a checkpoint restarts fused or not); a split's decoded fields go through the
    operator's local phase; with ``event_time``, each output row carries the largest event
    time the task has read so far (:mod:`sliceflow.spark.json.event_time`)."""

    def __init__(
        self,
        files: JsonStreamReader,
        columns: list[tuple[str, str, tuple[int, ...]]],
        phase: LocalPhase,
        event_time: int | None,
    ) -> None:
        self.files = files
        self.columns = columns
        self.phase = phase
        self.event_time = event_time

    def initialOffset(self) -> dict[str, Any]:
        return self.files.initialOffset()

    def getDefaultReadLimit(self) -> ReadLimit:
        return self.files.getDefaultReadLimit()

    def prepareForTriggerAvailableNow(self) -> None:
        self.files.prepareForTriggerAvailableNow()

    def latestOffset(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, Any]:
        return self.files.latestOffset(start, limit)

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> Sequence[InputPartition]:
        return self.files.partitions(start, end)

    def commit(self, end: dict[str, Any]) -> None:
        self.files.commit(end)

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if self.event_time is None:
            return self.phase(_input_columns(self.files.read(partition), self.columns))
        return self._read_timed(partition, self.event_time)

    def _read_timed(self, partition: InputPartition, event_time: int) -> Iterator[pa.RecordBatch]:
        inputs = _input_columns(self.files.read(partition), self.columns)
        return timed_phase(self.phase, inputs, event_time)
