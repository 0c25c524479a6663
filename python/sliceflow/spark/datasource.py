"""The ``sliceflow.json`` Spark data source: NDJSON files decoded where they are read.

>>> import sliceflow.spark
>>> sliceflow.spark.register(spark)  # doctest: +SKIP
>>> reader = spark.read.format("sliceflow.json")  # doctest: +SKIP
>>> df = reader.schema("auction BIGINT, price BIGINT").load(path)  # doctest: +SKIP
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import pyarrow as pa
from pyspark.sql import SparkSession
from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    InputPartition,
)
from pyspark.sql.types import StructType

from sliceflow.json_options import normalize
from sliceflow.schemas import resolve_schema
from sliceflow.spark.json_stream_source import JsonStreamReader, StreamOptions
from sliceflow.spark.memory_conf import apply_in_worker
from sliceflow.spark.session_settings import SessionSettings
from sliceflow.spark.source_options import parse_bytes as _parse_bytes
from sliceflow.spark.source_options import pop_option as _pop

#: Split size when the session does not set spark.sql.files.maxPartitionBytes.
DEFAULT_SPLIT_BYTES = 128 << 20


@dataclass
class FileSplit(InputPartition):
    """Lines that start in [start, end) of one file."""

    path: str
    start: int
    end: int


def _list_files(path: str) -> list[str]:
    if os.path.isfile(path):
        return [path]
    if not os.path.isdir(path):
        raise FileNotFoundError(f"sliceflow.json: no such file or directory: {path}")
    files: list[str] = []
    for root, dirs, names in os.walk(path):
        # Spark skips hidden and metadata entries (names starting with '.' or '_').
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")))
        files.extend(os.path.join(root, n) for n in sorted(names) if not n.startswith((".", "_")))
    return files


class JsonDataSourceReader(DataSourceReader):
    def __init__(
        self,
        options: Mapping[str, str],
        schema: StructType,
        session_defaults: dict[str, str],
        memory_limits: dict[str, str] | None = None,
    ) -> None:
        self.memory_limits = dict(memory_limits or {})
        self.options = dict(options)
        path = _pop(self.options, "path")
        if not path:
            raise ValueError(
                "sliceflow.json needs a path: spark.read.format('sliceflow.json').load(path)"
            )
        self.path = path
        self.arrow_schema, _ = resolve_schema(schema)
        self.time_zone = _pop(self.options, "timeZone") or session_defaults.get("timeZone", "UTC")
        normalize(self.options, self.arrow_schema, default_time_zone=self.time_zone)
        split = _pop(self.options, "maxPartitionBytes") or session_defaults.get(
            "maxPartitionBytes", str(DEFAULT_SPLIT_BYTES)
        )
        self.split_bytes = _parse_bytes(split)
        if self.split_bytes <= 0:
            raise ValueError(f"maxPartitionBytes must be positive, got {split!r}")

    def partitions(self) -> list[InputPartition]:
        splits: list[InputPartition] = []
        for file in _list_files(self.path):
            size = os.path.getsize(file)
            for start in range(0, max(size, 1), self.split_bytes):
                splits.append(FileSplit(file, start, min(start + self.split_bytes, size)))
        return splits

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        from sliceflow.json import iter_ndjson

        assert isinstance(partition, FileSplit)
        apply_in_worker(self.memory_limits)
        yield from iter_ndjson(
            partition.path,
            self.arrow_schema,
            options=self.options,
            time_zone=self.time_zone,
            start=partition.start,
            end=partition.end,
        )


class JsonDataSource(DataSource):
    """``spark.read.format("sliceflow.json").schema(s).load(path)`` for NDJSON files.

    Each line is decoded as Spark's ``from_json`` decodes a string (same options, same
    PERMISSIVE/FAILFAST results); blank lines give no row. A schema is required.
    """

    @classmethod
    def name(cls) -> str:
        return "sliceflow.json"

    def schema(self) -> str:
        raise ValueError(
            "sliceflow.json needs a schema: spark.read.format('sliceflow.json').schema(...)"
        )

    #: Session settings captured by :func:`register`: Spark plans Python data sources in a
    #: worker process, where the driver's session is out of reach.
    session_defaults: dict[str, str] = {}
    #: The session's ``spark.sliceflow.memory.*`` settings, captured by :func:`register` too.
    memory_limits: dict[str, str] = {}

    def reader(self, schema: StructType) -> DataSourceReader:
        return JsonDataSourceReader(self.options, schema, self.session_defaults, self.memory_limits)

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        """``spark.readStream.format("sliceflow.json").schema(s).load(folder)``: the files
        arriving under ``folder``, with the file stream source's options
        (:mod:`sliceflow.spark.json_stream_source`)."""
        options = dict(self.options)
        stream = StreamOptions.pop(options)
        decoder = JsonDataSourceReader(options, schema, self.session_defaults, self.memory_limits)
        return JsonStreamReader(stream, decoder, FileSplit, self.session_defaults)


def register(spark: SparkSession) -> None:
    """Registers the ``sliceflow.json`` data source with ``spark``.

    The session's time zone (``spark.sql.session.timeZone``), split size
    (``spark.sql.files.maxPartitionBytes``) and memory limits (``spark.sliceflow.memory.*``)
    are read now; call ``register`` again after changing them, or pass
    ``.option("timeZone", ...)`` / ``.option("maxPartitionBytes", ...)``.
    """
    settings = SessionSettings.read(spark)
    defaults = {
        "timeZone": settings.time_zone,
        "maxPartitionBytes": str(
            spark.conf.get("spark.sql.files.maxPartitionBytes", str(DEFAULT_SPLIT_BYTES))
        ),
    }
    # A class made here travels to the planner worker by value, with its defaults.
    attributes = {"session_defaults": defaults, "memory_limits": settings.memory_limits}
    source = type("JsonDataSource", (JsonDataSource,), attributes)
    spark.dataSource.register(source)
