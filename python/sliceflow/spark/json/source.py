"""The ``sliceflow.json`` Spark data source: NDJSON files decoded where they are read.

pyspark finds it on its own (the ``pyspark_sliceflow`` module); :func:`register` adds the
session's settings (see :class:`JsonDataSource` for which need it).

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
from sliceflow._io.filesystems import local_path, resolve
from sliceflow._io.listing import FileEntry, list_files, partition_fields
from sliceflow._io.partitions import column_arrays
from sliceflow._runtime.spark_types import spark_type
from sliceflow.errors import FileReadError, MalformedRecordError, SchemaError
from sliceflow.json.line_blocks import ReadableBytes
from sliceflow.json.options import normalize
from sliceflow.json.schemas import resolve_schema
from sliceflow.spark._runtime.memory_conf import apply_in_worker, from_task
from sliceflow.spark._runtime.session_settings import SessionSettings
from sliceflow.spark.json.file_metadata import (
    METADATA_COLUMN,
    METADATA_TYPE,
    check_metadata_type,
    metadata_array,
    metadata_field,
)
from sliceflow.spark.json.source_errors import one_line, read_uri, spark_shaped
from sliceflow.spark.json.source_options import pop_flag
from sliceflow.spark.json.source_options import pop_option as _pop
from sliceflow.spark.json.source_settings import (
    DEFAULT_SPLIT_BYTES,
    SourceSettings,
    capture,
)
from sliceflow.spark.json.stream_source import FailedStream, JsonStreamReader, StreamOptions

__all__ = [
    "DEFAULT_SPLIT_BYTES",
    "FileSplit",
    "JsonDataSource",
    "JsonDataSourceReader",
    "register",
    "session_attributes",
]


_log = logging.getLogger("sliceflow.json")


@dataclass
class FileSplit(InputPartition):
    """Lines that start in [start, end) of one file (a compressed file: all of it, end None),
    with the file's hive-style partition values, size and modification time."""

    path: str
    start: int
    end: int | None
    partition_values: tuple[tuple[str, str], ...] = ()
    #: The file's size and modification time (for ``_metadata``; -1 and None: not known).
    size: int = -1
    modification_time_ms: int | None = None


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
        required: StructType | None = None,
    ) -> None:
        #: The files the source listed when it was made, if it did: partitions() splits these
        #: rather than listing again (not pickled: the read tasks do not need it).
        self.listing = listing
        self.memory_limits = dict(memory_limits or {})
        self.options = dict(options)
        self.paths = _paths(self.options)
        #: The path of ``load(path)`` (the first of a list); the streaming source lists it.
        self.path = self.paths[0]
        #: Where each session setting comes from (:mod:`sliceflow.spark.json.source_settings`):
        #: the setting options are taken out of ``options`` here.
        self.source_settings = SourceSettings.pop(self.options, session_defaults)
        planning = self.source_settings
        self.ignore_missing = planning.flag("ignoreMissingFiles")
        self.ignore_corrupt = planning.flag("ignoreCorruptFiles")
        self.settings = planning.filesystem
        self.type_inference = planning.flag("partitionColumnTypeInference")
        self.validate_partitions = planning.flag("validatePartitionColumns")
        self.time_zone = planning.time_zone
        self.split_bytes = planning.split_bytes
        self.include_metadata = pop_flag(self.options, "includeMetadata")
        if self.include_metadata:
            metadata = [f for f in schema.fields if f.name == METADATA_COLUMN]
            if not metadata:
                raise SchemaError(
                    "[INVALID_SCHEMA] sliceflow.json: includeMetadata needs the column "
                    f"{METADATA_COLUMN} in the schema given to .schema(...): add "
                    f"`{METADATA_COLUMN} {METADATA_TYPE.simpleString()}` at its end"
                )
            check_metadata_type(metadata[0])
        self.arrow_schema, _ = resolve_schema(schema)
        #: What the read produces: the schema, or the part of it a fused scan reads (its
        #: fields in the schema's order, structs cut to the nested fields read; Spark's
        #: "required schema"). Only these fields are decoded.
        self.read_schema = self.arrow_schema if required is None else resolve_schema(required)[0]
        # Refuse bad options on the driver, as Spark does when it plans the read.
        normalize(
            self.options, self._data_schema(()), default_time_zone=self.time_zone, file_source=True
        )

    def _data_schema(self, partition_values: tuple[tuple[str, str], ...]) -> pa.Schema:
        """The schema's columns that come from the file's lines: less the partition columns of
        the file's folders and, with includeMetadata, ``_metadata``."""
        skip = {c.lower() for c, _ in partition_values}
        if self.include_metadata:
            skip.add(METADATA_COLUMN.lower())
        return pa.schema([f for f in self.read_schema if f.name.lower() not in skip])

    def __getstate__(self) -> dict[str, object]:
        state = dict(self.__dict__)
        state["listing"] = None
        return state

    def partitions(self) -> list[InputPartition]:
        # The listing options (pathGlobFilter, recursiveFileLookup, modifiedBefore/After,
        # basePath) stay in self.options: list_files reads only those, the decoder ignores them.
        entries = self.listing
        if entries is None:
            with spark_shaped():
                entries = list_files(
                    self.paths, self.options, self.settings, time_zone=self.time_zone
                )
        if any(e.partition_values for e in entries):
            with spark_shaped():
                _check_partition_columns(
                    entries, self.arrow_schema, self.type_inference, self.time_zone
                )
        splits: list[InputPartition] = []
        for entry in entries:
            known = (entry.partition_values, entry.size, entry.modification_time_ms)
            if not is_splittable(entry.path):
                splits.append(FileSplit(entry.path, 0, None, *known))
                continue
            for start in range(0, max(entry.size, 1), self.split_bytes):
                end = min(start + self.split_bytes, entry.size)
                splits.append(FileSplit(entry.path, start, end, *known))
        return splits

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, FileSplit):  # InputPartition(None): no file was found
            return
        # The session's settings as this task sees them (the query's explicitly set confs).
        task = self.source_settings.in_task()
        apply_in_worker({**self.memory_limits, **from_task()})
        ignore_missing = task.flag("ignoreMissingFiles")
        ignore_corrupt = task.flag("ignoreCorruptFiles")
        with spark_shaped():
            try:
                yield from self._read_split(partition, task)
            except FileNotFoundError as exc:
                if not ignore_missing:
                    raise FileNotFoundError(
                        f"[FAILED_READ_FILE.FILE_NOT_EXIST] Encountered error while reading file "
                        f"{read_uri(partition.path)}. File does not exist. It is possible the "
                        f"underlying files have been updated. ({one_line(exc)})"
                    ) from exc
                _log.warning("Skipped missing file: %s", partition.path)
            except MalformedRecordError as exc:
                # Spark's FAILFAST: FAILED_READ_FILE naming the file, caused by
                # MALFORMED_RECORD_IN_PARSING; one line, the file and line at its end.
                raise MalformedRecordError(
                    f"[FAILED_READ_FILE.NO_HINT] Encountered error while reading file "
                    f"{read_uri(partition.path)}. {one_line(exc)}"
                ) from None
            except OSError as exc:
                if not ignore_corrupt:
                    raise FileReadError(
                        f"[FAILED_READ_FILE.NO_HINT] Encountered error while reading file "
                        f"{read_uri(partition.path)}. {one_line(exc)}",
                        path=partition.path,
                    ) from exc
                _log.warning(
                    "Skipped the rest of the content in the corrupted file: %s (%s)",
                    partition.path,
                    exc,
                )

    def _read_split(self, split: FileSplit, task: SourceSettings) -> Iterator[pa.RecordBatch]:
        from sliceflow.json import iter_ndjson

        settings = task.filesystem
        time_zone = task.time_zone
        columns = {c.lower() for c, _ in split.partition_values}
        fields = [f for f in self.read_schema if f.name.lower() in columns]
        data_schema = self._data_schema(split.partition_values)
        local = local_path(split.path, settings)
        stream: ReadableBytes | None = None
        end = split.end
        if not is_splittable(split.path):  # compressed: the whole file, whatever the split says
            stream = open_input(split.path, settings)
            end = None
        elif local is None:
            fs, inner = resolve(split.path, settings)
            stream = fs.open_input_file(inner)
        batches = iter_ndjson(
            local if local is not None else split.path,
            data_schema,
            options=self.options,
            time_zone=time_zone,
            start=split.start,
            end=end,
            stream=stream,
        )
        metadata = self.include_metadata and METADATA_COLUMN in self.read_schema.names
        if not fields and not metadata:
            yield from batches
            return
        names = [f.name for f in fields]
        # Spark's file_block_start / file_block_length: the split's bytes (compressed: all).
        block = (0, split.size) if end is None else (split.start, end - split.start)
        validate = task.flag("validatePartitionColumns")
        for batch in batches:
            filled = column_arrays(
                split.partition_values, fields, batch.num_rows, time_zone, strict=validate
            )
            constants = dict(zip(names, filled, strict=True))
            if metadata:
                kind = self.read_schema.field(METADATA_COLUMN).type
                constants[METADATA_COLUMN] = metadata_array(
                    kind, split.path, split.size, block, split.modification_time_ms, batch.num_rows
                )
            arrays = [
                constants[f.name] if f.name in constants else batch.column(f.name)
                for f in self.read_schema
            ]
            yield pa.RecordBatch.from_arrays(arrays, schema=self.read_schema)


class JsonDataSource(DataSource):
    """``spark.read.format("sliceflow.json").schema(s).load(path)`` for NDJSON files.

    The rows are those of ``spark.read.schema(s).json(path)`` with the same options (see
    :func:`sliceflow.json.iter_ndjson`: lineSep, encoding, multiLine, PERMISSIVE /
    DROPMALFORMED / FAILFAST). Without a schema, the schema
    ``spark.read.json`` would infer is inferred natively (:func:`sliceflow.json.infer_schema`).

    **Found without registering.** pyspark registers the ``DefaultSource`` of every importable
    ``pyspark_*`` module by its ``name()``; the wheel ships ``pyspark_sliceflow``, so
    ``format("sliceflow.json")`` works in any session whose Python can import sliceflow
    (classic, executors, Spark Connect). :func:`register` still works: it registers a
    subclass that carries the session's settings.

    **Session settings.** Spark plans a Python data source in a worker that cannot see the
    session's configuration; its read tasks see the confs set explicitly (as local
    properties). Each setting is therefore the per-read option if given, else (in a read task)
    the session's, else what :func:`register` captured, else Spark's default
    (:mod:`sliceflow.spark.json.source_settings`):

    * time zone (``spark.sql.session.timeZone``; option ``timeZone``): decoding follows the
      session; ``modifiedBefore``/``modifiedAfter`` and timestamp partition values typed
      when planning need the option or ``register`` (default: the local zone, as the JVM's);
    * ``spark.hadoop.fs.*`` (options ``fs.*``: per read, as Spark's file sources take Hadoop
      keys): listing needs the option or ``register``, reading follows the session too;
    * ``spark.sql.files.ignoreMissingFiles`` / ``ignoreCorruptFiles`` (options of the same
      name), ``spark.sql.sources.validatePartitionColumns``, ``spark.sliceflow.memory.*``:
      read in the tasks, so they follow the session;
    * only an option or ``register``: ``spark.sql.files.maxPartitionBytes`` (option
      ``maxPartitionBytes``); only ``register``: ``spark.sql.timestampType`` and
      ``spark.sql.caseSensitive`` (schema inference),
      ``spark.sql.sources.partitionColumnTypeInference.enabled`` and
      ``spark.sql.streaming.schemaInference``.

    **_metadata.** ``.option("includeMetadata", "true")`` adds Spark's ``_metadata`` struct
    (``file_path``, ``file_name``, ``file_size``, ``file_block_start``, ``file_block_length``,
    ``file_modification_time``) as a column (:mod:`sliceflow.spark.json.file_metadata`); with
    ``.schema(s)``, ``s`` must end with it. ``input_file_name()`` stays empty (Spark fills it
    for its own file scans only).

    **Errors** (the Python exception's message is one line that starts with Spark's error
    class; a Spark worker sends it without the traceback):

    * ``load()`` without a schema lists the files and infers then: a missing path raises
      ``pyspark.errors.AnalysisException`` (condition ``PYTHON_DATA_SOURCE_ERROR``, Spark's:
      ``PATH_NOT_FOUND``) whose first line ends ``[PATH_NOT_FOUND] Path does not exist:
      file:/....``. With ``.schema(s)``, Spark creates the source at the first action, so the
      missing path, and a partition column the schema leaves out, raise that
      ``AnalysisException`` there.
    * In a read task (FAILFAST on a malformed line: ``[FAILED_READ_FILE.NO_HINT] Encountered
      error while reading file file:///... [MALFORMED_RECORD_IN_PARSING...] ... line N.``;
      damaged compressed data; a file gone after listing: ``FAILED_READ_FILE.FILE_NOT_EXIST``):
      ``pyspark.errors.PythonException`` (Spark's own JSON reader: ``Py4JJavaError`` /
      ``SparkException``).
    * A stream without a schema, unless ``spark.sql.streaming.schemaInference`` was true when
      :func:`register` ran: ``[_LEGACY_ERROR_TEMP_2048] Schema must be specified when creating
      a streaming source DataFrame...`` when the query starts
      (``StreamingQueryException``; Spark raises ``IllegalArgumentException`` at ``load()``).
    """

    @classmethod
    def name(cls) -> str:
        return "sliceflow.json"

    def schema(self) -> StructType:
        """The schema ``spark.read.json`` infers for the same files and options (called only
        when the read gives no schema); see :func:`sliceflow.json.infer_schema`."""
        with spark_shaped():
            return self._infer()

    def _infer(self) -> StructType:
        from sliceflow.json.infer import infer_schema

        options = dict(self.options)
        paths = _paths(options)
        settings = SourceSettings.pop(options, self.session_defaults)
        include_metadata = pop_flag(options, "includeMetadata")
        time_zone = settings.time_zone
        session = {"timestampType": settings.get("timestampType").upper()}
        session["caseSensitive"] = settings.get("caseSensitive").lower()
        filesystem = settings.filesystem
        # The files the read lists (the listing options stay in `options`; inference ignores
        # them), so both see the same files.
        entries = list_files(paths, options, filesystem, time_zone=time_zone)
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
            settings=filesystem,
        )
        # The read splits these files (the instance reaches the read's planner pickled, this
        # attribute with it): one listing per DataFrame, as Spark's file index lists once
        # when the DataFrame is made and every action on it reads those files.
        self.listing = entries
        self.inferred = True
        schema = _with_partition_columns(
            StructType.fromJson(dict(inferred)),
            entries,
            settings.flag("partitionColumnTypeInference"),
            time_zone,
        )
        if include_metadata:
            schema = StructType([f for f in schema.fields if f.name != METADATA_COLUMN])
            schema.add(metadata_field())
        return schema

    #: Session settings captured by :func:`register` (:func:`source_settings.capture`): the
    #: planner cannot read the session; empty for the class pyspark finds on its own.
    session_defaults: dict[str, str] = {}
    #: The session's ``spark.sliceflow.memory.*`` settings, captured by :func:`register` too.
    memory_limits: dict[str, str] = {}
    #: The files :meth:`schema` listed to infer from (None when the read gave a schema).
    listing: list[FileEntry] | None = None
    #: Whether :meth:`schema` inferred the schema (the read gave none).
    inferred: bool = False

    def reader(self, schema: StructType) -> DataSourceReader:
        with spark_shaped():
            return JsonDataSourceReader(
                self.options, schema, self.session_defaults, self.memory_limits, self.listing
            )

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        """``spark.readStream.format("sliceflow.json").schema(s).load(folder)``: the files
        arriving under ``folder``, with the file stream source's options
        (:mod:`sliceflow.spark.json.stream_source`)."""
        try:
            options = dict(self.options)
            stream = StreamOptions.pop(options)
            decoder = JsonDataSourceReader(
                options, schema, self.session_defaults, self.memory_limits
            )
            if self.inferred and not decoder.source_settings.flag("schemaInference"):
                raise ValueError(STREAM_NEEDS_SCHEMA)
        except Exception as exc:  # raised by the stream's first call (see FailedStream)
            return FailedStream(exc)
        return JsonStreamReader(stream, decoder, FileSplit, self.session_defaults)


#: Spark's refusal of a file stream without a schema (``IllegalArgumentException``, error
#: class ``_LEGACY_ERROR_TEMP_2048``), and how sliceflow reads the setting that allows one.
STREAM_NEEDS_SCHEMA = (
    "[_LEGACY_ERROR_TEMP_2048] Schema must be specified when creating a streaming source "
    "DataFrame. If some files already exist in the directory, then depending on the file "
    "format you may be able to create a static DataFrame on that directory with "
    "'spark.read.load(directory)' and infer schema from it. (sliceflow.json reads "
    "spark.sql.streaming.schemaInference=true when sliceflow.spark.register(spark) is called "
    "after setting it.)"
)


def register(spark: SparkSession) -> None:
    """Registers the ``sliceflow.json`` data source with ``spark``, carrying the session's
    settings to the worker that plans the read.

    Not needed for ``format("sliceflow.json")`` to be found (pyspark finds the installed
    ``pyspark_sliceflow`` module), but the only way the planner sees
    ``spark.sql.files.maxPartitionBytes`` (or the ``maxPartitionBytes`` option),
    ``spark.sql.timestampType``, ``spark.sql.caseSensitive``,
    ``spark.sql.sources.partitionColumnTypeInference.enabled``,
    ``spark.sql.streaming.schemaInference``, and, for listing and timestamp partition
    values, the session time zone and ``spark.hadoop.fs.*`` keys (or their per-read options);
    see :class:`JsonDataSource`. They are read now: call ``register`` again after changing
    them. The read tasks also follow the session's explicitly set confs on their own.
    """
    # A class made here travels to the planner worker by value, with its defaults.
    source = type("JsonDataSource", (JsonDataSource,), session_attributes(spark))
    spark.dataSource.register(source)


def session_attributes(spark: SparkSession) -> dict[str, object]:
    """The class attributes of a :class:`JsonDataSource` subclass that carry ``spark``'s
    settings to the planner worker: ``session_defaults`` (what :func:`capture` takes, with the
    session's zone as Spark resolves it, also when it was never set) and ``memory_limits``."""
    settings = SessionSettings.read(spark)
    defaults = capture(dict(spark.conf.getAll))
    defaults["timeZone"] = settings.time_zone
    return {"session_defaults": defaults, "memory_limits": settings.memory_limits}
