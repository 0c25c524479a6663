"""The fused scan: an operator's local phase run inside the ``sliceflow.json`` read.

An operator over a batch ``sliceflow.json`` read (through column references only:
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

``df.explain()`` shows a fused plan by its scan's name (``sliceflow.json+window_agg.…``);
``spark.sliceflow.fusion.enabled=false`` turns fusion off.

Cost: on the driver, one plan walk and one data source registration per query built; in the
tasks, the decode of the fields read, and no row conversion to or from the JVM of the input.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from typing import Any, cast

import pyarrow as pa
import pyarrow.compute as pc
from pyspark import cloudpickle
from pyspark.sql import DataFrame
from pyspark.sql.datasource import DataSourceReader, DataSourceStreamReader, InputPartition
from pyspark.sql.types import StructType

from sliceflow.spark.json.lineage import SourceRead, json_source_read
from sliceflow.spark.json.source import (
    JsonDataSource,
    JsonDataSourceReader,
    session_attributes,
)
from sliceflow.spark.json.source_errors import spark_shaped

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
) -> DataFrame:
    """``selected.mapInArrow(phase, output)``, fused into the scan when ``fusion`` is on and
    ``selected`` is a batch ``sliceflow.json`` read through column references (module doc).

    ``selected`` holds exactly the local phase's input columns, in order."""
    read = json_source_read(selected) if fusion else None
    if read is None:
        return selected.mapInArrow(phase, output)
    return _fused_read(selected, read, phase, output, operator)


def _fused_read(
    selected: DataFrame,
    read: SourceRead,
    phase: LocalPhase,
    output: StructType,
    operator: str,
) -> DataFrame:
    spark = selected.sparkSession
    attributes: dict[str, Any] = {
        **session_attributes(spark),
        "source_schema": read.schema,
        "required": read.required(),
        "columns": [(c.name, c.field, read.pruned_path(c)) for c in read.columns],
        "phase": staticmethod(phase),
        "output": output,
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
    return spark.read.format(attributes["fused_name"]).schema(output).options(**read.options).load()


class _FusedJsonSource(JsonDataSource):
    """The ``sliceflow.json`` source with an operator's local phase in its read (the
    attributes are set on the subclass :func:`_fused_read` makes)."""

    fused_name: str = FUSED_SOURCE_PREFIX
    source_schema: StructType
    required: StructType
    columns: list[tuple[str, str, tuple[int, ...]]]
    phase: LocalPhase
    output: StructType

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
        raise ValueError(f"{self.fused_name}: a fused scan reads batch DataFrames only")


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
        names = [name for name, _, _ in self.columns]
        for batch in batches:
            arrays = []
            for _, field, path in self.columns:
                array: Any = batch.column(field)
                for ordinal in path:  # a null struct gives null fields, as GetStructField
                    array = pc.struct_field(array, [ordinal])
                arrays.append(array)
            yield pa.RecordBatch.from_arrays(arrays, names=names)
