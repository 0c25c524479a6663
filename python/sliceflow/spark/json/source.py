"""The ``sliceflow.json`` Spark data source: NDJSON files decoded where they are read.

>>> import sliceflow.spark
>>> sliceflow.spark.register(spark)  # doctest: +SKIP
>>> reader = spark.read.format("sliceflow.json")  # doctest: +SKIP
>>> df = reader.schema("auction BIGINT, price BIGINT").load(path)  # doctest: +SKIP
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import pyarrow as pa
from pyspark.sql import SparkSession
from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    InputPartition,
)
from pyspark.sql.types import StructField, StructType

from sliceflow._io.codecs import is_splittable, open_input
from sliceflow._io.filesystems import hadoop_settings, local_path, resolve
from sliceflow._io.listing import FileEntry, list_files, partition_fields
from sliceflow._io.partitions import column_arrays
from sliceflow._runtime.spark_types import spark_type
from sliceflow.errors import FileReadError, SchemaError
from sliceflow.json.line_blocks import ReadableBytes
from sliceflow.json.options import normalize
from sliceflow.json.schemas import resolve_schema
from sliceflow.spark._runtime.memory_conf import apply_in_worker
from sliceflow.spark._runtime.session_settings import SessionSettings
from sliceflow.spark.json.source_options import parse_bytes as _parse_bytes
from sliceflow.spark.json.source_options import pop_option as _pop
from sliceflow.spark.json.stream_source import JsonStreamReader, StreamOptions

#: Split size when the session does not set spark.sql.files.maxPartitionBytes.
DEFAULT_SPLIT_BYTES = 128 << 20


_log = logging.getLogger("sliceflow.json")


@dataclass
class FileSplit(InputPartition):
    """Lines that start in [start, end) of one file (a compressed file: all of it, end None),
    with the file's hive-style partition values."""

    path: str
    start: int
    end: int | None
    partition_values: tuple[tuple[str, str], ...] = ()


def _paths(options: dict[str, str]) -> list[str]:
    """``load(path)`` arrives as the ``path`` option, ``load([p1, p2])`` as ``paths`` (a JSON
    array); Spark reads both when both are set."""
    paths: list[str] = []
    listed = _pop(options, "paths")
    if listed:
        try:
            decoded = json.loads(listed)
        except ValueError:
            decoded = None
        if not isinstance(decoded, list) or not all(isinstance(p, str) for p in decoded):
            raise ValueError(
                f"sliceflow.json: the paths option must be a JSON array of strings, got {listed!r}"
            )
        paths.extend(decoded)
    single = _pop(options, "path")
    if single:
        paths.append(single)
    if not paths:
        raise ValueError(
            "sliceflow.json needs a path: spark.read.format('sliceflow.json').load(path)"
        )
    return paths


def _flag(options: dict[str, str], name: str, default: str) -> bool:
    value = (_pop(options, name) or default).strip().lower()
    if value not in ("true", "false"):
        raise ValueError(f"option {name!r} must be true or false, got {value!r}")
    return value == "true"


def _check_partition_columns(
    entries: Sequence[FileEntry], schema: pa.Schema, type_inference: bool, time_zone: str
) -> None:
    """Spark appends partition columns missing from a user schema; a Python data source's
    columns are the schema's, so a missing one is refused (naming it) rather than dropped."""
    names = {n.lower() for n in schema.names}
    fields = partition_fields(entries, type_inference=type_inference, time_zone=time_zone)
    missing = [f for f in fields if f.name.lower() not in names]
    if missing:
        from sliceflow._runtime.spark_types import spark_type_name

        wanted = ", ".join(f"{f.name} {spark_type_name(f.type)}" for f in missing)
        raise SchemaError(
            f"sliceflow.json: the files are in partition folders ({wanted}) that the schema "
            f"does not name; spark.read.json would add these columns after the schema's: add "
            f"`{wanted}` at the end of the schema"
        )


def _filesystem_settings(session_defaults: Mapping[str, str]) -> dict[str, str]:
    """The Hadoop filesystem keys (``fs.*``) :func:`register` took from the session."""
    return {k: v for k, v in session_defaults.items() if k.startswith("fs.")}


def _with_partition_columns(
    inferred: StructType, entries: Sequence[FileEntry], type_inference: bool, time_zone: str
) -> StructType:
    """Spark's inferred schema: the data columns (less any a partition column names), then the
    partition columns, typed from the folder names."""
    fields = partition_fields(entries, type_inference=type_inference, time_zone=time_zone)
    if not fields:
        return inferred
    names = {f.name.lower() for f in fields}
    kept = [f for f in inferred.fields if f.name.lower() not in names]
    added = [StructField(f.name, spark_type(f.type), nullable=True) for f in fields]
    return StructType(kept + added)


class JsonDataSourceReader(DataSourceReader):
    def __init__(
        self,
        options: Mapping[str, str],
        schema: StructType,
        session_defaults: dict[str, str],
        memory_limits: dict[str, str] | None = None,
        listing: list[FileEntry] | None = None,
    ) -> None:
        #: The files schema inference listed, if it ran: partitions() splits these rather
        #: than listing again (not pickled: the read tasks do not need it).
        self.listing = listing
        self.memory_limits = dict(memory_limits or {})
        self.options = dict(options)
        self.paths = _paths(self.options)
        #: The path of ``load(path)`` (the first of a list); the streaming source lists it.
        self.path = self.paths[0]
        self.ignore_missing = _flag(
            self.options, "ignoreMissingFiles", session_defaults.get("ignoreMissingFiles", "false")
        )
        self.ignore_corrupt = _flag(
            self.options, "ignoreCorruptFiles", session_defaults.get("ignoreCorruptFiles", "false")
        )
        self.settings = _filesystem_settings(session_defaults)
        self.type_inference = (
            session_defaults.get("partitionColumnTypeInference", "true").lower() == "true"
        )
        self.validate_partitions = (
            session_defaults.get("validatePartitionColumns", "true").lower() == "true"
        )
        self.arrow_schema, _ = resolve_schema(schema)
        self.time_zone = _pop(self.options, "timeZone") or session_defaults.get("timeZone", "UTC")
        # Refuse bad options on the driver, as Spark does when it plans the read.
        normalize(
            self.options, self.arrow_schema, default_time_zone=self.time_zone, file_source=True
        )
        split = _pop(self.options, "maxPartitionBytes") or session_defaults.get(
            "maxPartitionBytes", str(DEFAULT_SPLIT_BYTES)
        )
        self.split_bytes = _parse_bytes(split)
        if self.split_bytes <= 0:
            raise ValueError(f"maxPartitionBytes must be positive, got {split!r}")

    def __getstate__(self) -> dict[str, object]:
        state = dict(self.__dict__)
        state["listing"] = None
        return state

    def partitions(self) -> list[InputPartition]:
        # The listing options (pathGlobFilter, recursiveFileLookup, modifiedBefore/After,
        # basePath) stay in self.options: list_files reads only those, the decoder ignores them.
        entries = self.listing
        if entries is None:
            entries = list_files(self.paths, self.options, self.settings, time_zone=self.time_zone)
        if any(e.partition_values for e in entries):
            _check_partition_columns(
                entries, self.arrow_schema, self.type_inference, self.time_zone
            )
        splits: list[InputPartition] = []
        for entry in entries:
            if not is_splittable(entry.path):
                splits.append(FileSplit(entry.path, 0, None, entry.partition_values))
                continue
            for start in range(0, max(entry.size, 1), self.split_bytes):
                end = min(start + self.split_bytes, entry.size)
                splits.append(FileSplit(entry.path, start, end, entry.partition_values))
        return splits

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, FileSplit):  # InputPartition(None): no file was found
            return
        apply_in_worker(self.memory_limits)
        try:
            yield from self._read_split(partition)
        except FileNotFoundError:
            if not self.ignore_missing:
                raise
            _log.warning("Skipped missing file: %s", partition.path)
        except OSError as exc:
            if not self.ignore_corrupt:
                if isinstance(exc, FileReadError):
                    raise
                raise FileReadError(
                    f"cannot read {partition.path}: {exc}", path=partition.path
                ) from exc
            _log.warning(
                "Skipped the rest of the content in the corrupted file: %s (%s)",
                partition.path,
                exc,
            )

    def _read_split(self, split: FileSplit) -> Iterator[pa.RecordBatch]:
        from sliceflow.json import iter_ndjson

        columns = {c.lower() for c, _ in split.partition_values}
        fields = [f for f in self.arrow_schema if f.name.lower() in columns]
        data_schema = pa.schema([f for f in self.arrow_schema if f.name.lower() not in columns])
        local = local_path(split.path, self.settings)
        stream: ReadableBytes | None = None
        end = split.end
        if not is_splittable(split.path):  # compressed: the whole file, whatever the split says
            stream = open_input(split.path, self.settings)
            end = None
        elif local is None:
            fs, inner = resolve(split.path, self.settings)
            stream = fs.open_input_file(inner)
        batches = iter_ndjson(
            local if local is not None else split.path,
            data_schema if fields else self.arrow_schema,
            options=self.options,
            time_zone=self.time_zone,
            start=split.start,
            end=end,
            stream=stream,
        )
        if not fields:
            yield from batches
            return
        names = [f.name for f in fields]
        for batch in batches:
            filled = column_arrays(
                split.partition_values,
                fields,
                batch.num_rows,
                self.time_zone,
                strict=self.validate_partitions,
            )
            constants = dict(zip(names, filled, strict=True))
            arrays = [
                constants[f.name] if f.name in constants else batch.column(f.name)
                for f in self.arrow_schema
            ]
            yield pa.RecordBatch.from_arrays(arrays, schema=self.arrow_schema)


class JsonDataSource(DataSource):
    """``spark.read.format("sliceflow.json").schema(s).load(path)`` for NDJSON files.

    The rows are those of ``spark.read.schema(s).json(path)`` with the same options (see
    :func:`sliceflow.json.iter_ndjson`: lineSep, encoding, multiLine, PERMISSIVE /
    DROPMALFORMED / FAILFAST). Without a schema, the schema
    ``spark.read.json`` would infer is inferred natively (:func:`sliceflow.json.infer_schema`).
    """

    @classmethod
    def name(cls) -> str:
        return "sliceflow.json"

    def schema(self) -> StructType:
        """The schema ``spark.read.json`` infers for the same files and options (called only
        when the read gives no schema); see :func:`sliceflow.json.infer_schema`."""
        from sliceflow.json.infer import infer_schema

        options = dict(self.options)
        paths = _paths(options)
        time_zone = _pop(options, "timeZone") or self.session_defaults.get("timeZone", "UTC")
        session: dict[str, str] = {
            key: self.session_defaults[key]
            for key in ("timestampType", "caseSensitive")
            if key in self.session_defaults
        }
        settings = _filesystem_settings(self.session_defaults)
        # The files the read lists (the listing options stay in `options`; inference ignores
        # them), so both see the same files.
        entries = list_files(paths, options, settings, time_zone=time_zone)
        if not entries:
            # Spark: [UNABLE_TO_INFER_SCHEMA] when there is no file to infer from.
            raise ValueError(
                f"[UNABLE_TO_INFER_SCHEMA] Unable to infer schema for JSON at "
                f"{', '.join(paths)}: it holds no files; sliceflow.json needs a schema there: "
                ".schema(...)"
            )
        inferred = infer_schema(
            [e.path for e in entries],
            options=options,
            time_zone=time_zone,
            session=session,
            settings=settings,
        )
        # The read splits these files (the instance reaches the read's planner pickled, this
        # attribute with it): one listing per DataFrame, as Spark's file index lists once
        # when the DataFrame is made and every action on it reads those files.
        self.listing = entries
        type_inference = (
            self.session_defaults.get("partitionColumnTypeInference", "true").lower() == "true"
        )
        return _with_partition_columns(
            StructType.fromJson(dict(inferred)), entries, type_inference, time_zone
        )

    #: Session settings captured by :func:`register`, since Spark plans Python data sources in
    #: a worker process, where the driver's session is out of reach.
    session_defaults: dict[str, str] = {}
    #: The session's ``spark.sliceflow.memory.*`` settings, captured by :func:`register` too.
    memory_limits: dict[str, str] = {}
    #: The files :meth:`schema` listed to infer from (None when the read gave a schema).
    listing: list[FileEntry] | None = None

    def reader(self, schema: StructType) -> DataSourceReader:
        return JsonDataSourceReader(
            self.options, schema, self.session_defaults, self.memory_limits, self.listing
        )

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        """``spark.readStream.format("sliceflow.json").schema(s).load(folder)``: the files
        arriving under ``folder``, with the file stream source's options
        (:mod:`sliceflow.spark.json.stream_source`)."""
        options = dict(self.options)
        stream = StreamOptions.pop(options)
        decoder = JsonDataSourceReader(options, schema, self.session_defaults, self.memory_limits)
        return JsonStreamReader(stream, decoder, FileSplit, self.session_defaults)


def register(spark: SparkSession) -> None:
    """Registers the ``sliceflow.json`` data source with ``spark``.

    The session's time zone (``spark.sql.session.timeZone``), split size
    (``spark.sql.files.maxPartitionBytes``) and memory limits (``spark.sliceflow.memory.*``)
    are read now; call ``register`` again after changing them, or pass
    ``.option("timeZone", ...)`` / ``.option("maxPartitionBytes", ...)``. So are the
    filesystem settings (``spark.hadoop.fs.*``: S3A credentials and endpoint, mapped as
    ``docs/json-files.md`` lists), ``spark.sql.files.ignoreMissingFiles`` /
    ``ignoreCorruptFiles`` and ``spark.sql.sources.partitionColumnTypeInference.enabled`` /
    ``validatePartitionColumns``.
    """
    settings = SessionSettings.read(spark)
    defaults = {
        "timeZone": settings.time_zone,
        "maxPartitionBytes": str(
            spark.conf.get("spark.sql.files.maxPartitionBytes", str(DEFAULT_SPLIT_BYTES))
        ),
        # Session settings schema inference reads.
        "timestampType": str(spark.conf.get("spark.sql.timestampType", "TIMESTAMP_LTZ")).upper(),
        "caseSensitive": str(spark.conf.get("spark.sql.caseSensitive", "false")).lower(),
    }
    for name, key, default in (
        ("ignoreMissingFiles", "spark.sql.files.ignoreMissingFiles", "false"),
        ("ignoreCorruptFiles", "spark.sql.files.ignoreCorruptFiles", "false"),
        (
            "partitionColumnTypeInference",
            "spark.sql.sources.partitionColumnTypeInference.enabled",
            "true",
        ),
        ("validatePartitionColumns", "spark.sql.sources.validatePartitionColumns", "true"),
    ):
        defaults[name] = str(spark.conf.get(key, default))
    # Filesystem credentials and endpoints (spark.hadoop.fs.s3a.* ...), mapped onto pyarrow's
    # filesystems by sliceflow._io.filesystems.
    defaults.update(hadoop_settings(spark.conf.getAll))
    # A class made here travels to the planner worker by value, with its defaults.
    attributes = {"session_defaults": defaults, "memory_limits": settings.memory_limits}
    source = type("JsonDataSource", (JsonDataSource,), attributes)
    spark.dataSource.register(source)
