"""Decode JSON into Arrow with simdjson, with exactly the results of Spark's ``from_json``.

>>> import pyarrow as pa
>>> from sliceflow import json as sj
>>> docs = pa.array(['{"auction": 7, "price": 120}', '{"auction": "x"}', None])
>>> for row in sj.decode(docs, "auction BIGINT, price BIGINT").to_pylist():
...     print(row)
{'auction': 7, 'price': 120}
{'auction': None, 'price': None}
{'auction': None, 'price': None}
>>> sj.decode_to_struct(docs, "auction BIGINT, price BIGINT").to_pylist()
[{'auction': 7, 'price': 120}, {'auction': None, 'price': None}, None]

Types follow Spark SQL: BIGINT -> int64, DECIMAL(p,s) -> decimal128, TIMESTAMP -> timestamp[us,
UTC], TIMESTAMP_NTZ -> timestamp[us], DATE -> date32, ARRAY/STRUCT/MAP -> list/struct/map.
A null, empty or blank document gives a row of nulls (from_json gives a null struct there:
:func:`decode_to_struct` keeps that distinction).
A malformed document gives a row of nulls (and its text in the corrupt-record column, if the
schema has one) in PERMISSIVE mode and raises :class:`MalformedRecordError` in FAILFAST mode.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import closing
from typing import TypeAlias

import pyarrow as pa

from sliceflow._core import json as json_kernel
from sliceflow._runtime.arrow_c_data import buffer_sizes, import_struct
from sliceflow.errors import MalformedRecordError, OptionError, SchemaError
from sliceflow.json.infer import infer_schema, schema_ddl
from sliceflow.json.line_blocks import ReadableBytes, line_blocks
from sliceflow.json.options import FileFormat, JsonOptions, file_format, normalize
from sliceflow.json.records import count_separators, separated_chunks, transcode
from sliceflow.json.schemas import SchemaLike, root_value_type, to_arrow_schema

__all__ = [
    "MalformedRecordError",
    "OptionError",
    "SchemaError",
    "decode",
    "decode_to_struct",
    "infer_schema",
    "iter_ndjson",
    "read_ndjson",
    "schema_ddl",
    "to_arrow_schema",
]

DocumentsLike: TypeAlias = pa.Array | pa.ChunkedArray | bytes | bytearray | memoryview

#: The one column of :func:`decode`'s batch for a whole-document ARRAY or MAP schema.
ROOT_VALUE_FIELD = "value"

#: Bytes read from a file per decoding step in :func:`iter_ndjson` (memory stays bounded by it).
DEFAULT_BLOCK_SIZE = 8 << 20


def _decoded_schema(schema: SchemaLike) -> tuple[pa.Schema, bool]:
    """The schema of the decoded batches, and whether ``schema`` is a whole-document ARRAY or
    MAP (then one column named :data:`ROOT_VALUE_FIELD`)."""
    value_type = root_value_type(schema)
    if value_type is not None:
        return pa.schema([pa.field(ROOT_VALUE_FIELD, value_type)]), True
    return to_arrow_schema(schema), False


class DecodeSession:
    """One decoder for one schema and option set: :meth:`feed` documents, then take the rows
    decoded so far with :meth:`finish` (a RecordBatch), :meth:`finish_struct` or
    :meth:`finish_values`; the decoder is reused for the next rows. What :func:`decode`,
    :func:`iter_ndjson` and ``sliceflow.spark.from_json`` run on.

    A whole-document ARRAY or MAP schema (``root_value``) decodes into a one-field struct
    named ``value``.
    """

    def __init__(
        self,
        schema: SchemaLike,
        options: JsonOptions | None,
        time_zone: str,
        *,
        file_source: bool = False,
    ):
        self.schema, self.root_value = _decoded_schema(schema)
        self.struct_type = pa.struct(list(self.schema))
        normalized = normalize(
            options, self.schema, default_time_zone=time_zone, file_source=file_source
        )
        if self.root_value:
            normalized["root_value"] = "true"
            normalized.pop("corrupt_column_index", None)
        self.decoder = json_kernel.Decoder(self.schema.__arrow_c_schema__(), normalized)

    def feed(self, data: DocumentsLike) -> None:
        """Decodes ``data``: an array of documents, or NDJSON bytes, read in place with no
        slack after them (:mod:`sliceflow.json.line_blocks`)."""
        if isinstance(data, (bytes, bytearray, memoryview)):
            self.decoder.decode_lines(data)
            return
        if isinstance(data, pa.ChunkedArray):
            for chunk in data.chunks:
                self.feed(chunk)
            return
        if not isinstance(data, pa.Array):
            raise TypeError(
                "JSON documents must be a pyarrow string/binary array or NDJSON bytes, "
                f"not {type(data).__name__}"
            )
        if not (
            pa.types.is_string(data.type)
            or pa.types.is_large_string(data.type)
            or pa.types.is_binary(data.type)
            or pa.types.is_large_binary(data.type)
        ):
            if pa.types.is_null(data.type):
                data = pa.array([None] * len(data), pa.string())
            elif hasattr(pa.types, "is_string_view") and pa.types.is_string_view(data.type):
                data = data.cast(pa.large_string())
            else:
                raise TypeError(f"JSON documents must be strings, got an array of {data.type}")
        schema_capsule, array_capsule = data.__arrow_c_array__()
        self.decoder.decode_array(schema_capsule, array_capsule, buffer_sizes(data))

    def finish_struct(self) -> pa.StructArray:
        return import_struct(self.struct_type, self.decoder.finish())

    def finish_values(self) -> pa.Array:
        """The decoded values: the struct for a struct schema, else the ARRAY/MAP values."""
        struct = self.finish_struct()
        # flatten() pushes a null row (null document) down into the field.
        return struct.flatten()[0] if self.root_value else struct

    def finish(self) -> pa.RecordBatch:
        # flatten() pushes a null row (null document) down into every field.
        return pa.RecordBatch.from_arrays(self.finish_struct().flatten(), schema=self.schema)


def decode(
    data: DocumentsLike,
    schema: SchemaLike,
    *,
    options: JsonOptions | None = None,
    time_zone: str = "UTC",
) -> pa.RecordBatch:
    """Decodes JSON documents into a RecordBatch of ``schema``, as Spark's from_json does.

    Args:
        data: a pyarrow string/large_string/binary array (one document per element; null gives
            a null row) or ``bytes`` of NDJSON (one document per line, blank lines skipped).
        schema: a Spark DDL string (``"auction BIGINT, url STRING"``), a pyspark ``StructType``
            or a ``pyarrow.Schema``. A whole-document ``ARRAY<...>`` or ``MAP<STRING, ...>``
            (DDL, ``ArrayType``/``MapType`` or a pyarrow list/map type), as Spark's from_json
            takes, gives a batch of one column named ``value``.
        options: Spark's JSON options (``mode``, ``columnNameOfCorruptRecord``,
            ``timestampFormat``, ``dateFormat``, ``allowSingleQuotes``, ...), Spark's defaults.
        time_zone: the zone of timestamps without an offset (Spark's session time zone);
            the ``timeZone`` option overrides it.

    Example:
        >>> decode(b'{"a": 1}\\n{"a": 2}\\n', "a INT").column(0).to_pylist()
        [1, 2]
    """
    session = DecodeSession(schema, options, time_zone)
    session.feed(data)
    return session.finish()


def decode_to_struct(
    data: pa.Array,
    schema: SchemaLike,
    *,
    options: JsonOptions | None = None,
    time_zone: str = "UTC",
) -> pa.StructArray:
    """Like :func:`decode`, but returns the struct array itself (null documents: null structs)."""
    session = DecodeSession(schema, options, time_zone)
    session.feed(data)
    return session.finish_struct()


def _opened(path: str | os.PathLike[str], stream: ReadableBytes | None) -> ReadableBytes:
    """``stream``, or the local file ``path`` opened when there is none."""
    return open(path, "rb") if stream is None else stream


def iter_ndjson(
    path: str | os.PathLike[str],
    schema: SchemaLike,
    *,
    options: JsonOptions | None = None,
    time_zone: str = "UTC",
    block_size: int = DEFAULT_BLOCK_SIZE,
    start: int = 0,
    end: int | None = None,
    stream: ReadableBytes | None = None,
) -> Iterator[pa.RecordBatch]:
    """Streams a JSON file as RecordBatches, holding about ``block_size`` bytes at a time,
    with the rows ``spark.read.json`` gives for the same file, schema and options.

    Records are lines (CR, LF or CRLF; ``lineSep``), or the whole file with ``multiLine``
    (which reads the file at once, as one split). A top-level array gives a row per element;
    a STRING field given a number, literal, object or array keeps its exact source text (with
    an ``encoding`` option, Spark's parser re-writes the value, as ``from_json`` does); a
    leading UTF-8 BOM is skipped; ``mode`` may be DROPMALFORMED; a FAILFAST error names the
    file and the line. ``encoding`` (UTF-16LE/BE with ``lineSep``, UTF-16/32 with
    ``multiLine``, ISO-8859-1, US-ASCII) is transcoded to UTF-8 block by block.

    ``start``/``end`` select the records that begin in that byte range (as Hadoop splits do),
    so that a file can be read in parallel pieces without losing or doubling a record. With
    ``stream`` (an open binary file, e.g. from :func:`sliceflow._io.codecs.open_input`), the
    bytes come from it instead and ``path`` only names the file in errors; it must be seekable
    when ``start`` > 0 or ``end`` is given, and it is closed at the end.

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "rows.json"
    >>> _ = path.write_bytes(b'{"a": 1.50}\\n[{"a": {"b": 1}}, {"a": "x"}]\\n')
    >>> [b.column(0).to_pylist() for b in iter_ndjson(path, "a STRING")]
    [['1.50', '{"b": 1}', 'x']]
    """
    if block_size <= 0:
        raise ValueError("block_size must be positive")
    layout = file_format(options)
    session = DecodeSession(schema, options, time_zone, file_source=True)
    if layout.multi_line:
        if start == 0:  # a multiLine file is one split
            yield from _read_whole_file(session, path, layout, stream)
        elif stream is not None:
            stream.close()
        return
    if layout.line_sep is not None or layout.encoding not in (None, "utf-8"):
        yield from _read_separated(session, path, layout, block_size, start, end, stream)
        return

    if stream is None:
        size = os.path.getsize(path)
        end = size if end is None else min(end, size)
    with closing(_opened(path, stream)) as f:
        for block in line_blocks(f, block_size, start=start, end=end):
            with memoryview(block.buffer) as view:
                _feed_naming_line(
                    session, view[: block.size], path, block.offset, None, None, stream is None
                )
            if session.decoder.pending_rows:
                yield session.finish()


def _failed_line(
    session: DecodeSession,
    path: str | os.PathLike[str],
    at: int,
    data: bytes | memoryview,
    sep: bytes | None,
    fed_sep: bytes | None,
) -> int:
    """The line of the record that failed in ``data``, fed from file offset ``at``. Counted
    only when a record has failed. ``fed_sep`` None: ``data`` is the file's own bytes, so the
    line ends before the record are counted in the file (a CRLF split between two blocks
    then counts once); else the separators in the file before ``at``, plus those in ``data``
    (written with ``fed_sep``) before the failed record."""
    failed = max(session.decoder.failed_offset, 0)
    if fed_sep is None:
        return 1 + count_separators(path, at + failed, sep)
    return 1 + count_separators(path, at, sep) + bytes(data[:failed]).count(fed_sep)


def _feed_naming_line(
    session: DecodeSession,
    data: bytes | memoryview,
    path: str | os.PathLike[str],
    at: int,
    sep: bytes | None,
    fed_sep: bytes | None,
    countable: bool = True,
) -> None:
    """Feeds records read from file offset ``at``; a FAILFAST error names the file and line
    (``countable`` False: the bytes came from a stream, not from the local file ``path``, so
    the error names the record's offset in the stream instead of counting lines again)."""
    try:
        session.feed(data)
    except MalformedRecordError as exc:
        if not countable:
            offset = at + max(session.decoder.failed_offset, 0)
            raise MalformedRecordError(
                f"{exc} File: {os.fspath(path)!r}, the record at byte {offset} of its text."
            ) from None
        line = _failed_line(session, path, at, data, sep, fed_sep)
        raise MalformedRecordError(f"{exc} File: {os.fspath(path)!r}, line {line}.") from None


def _read_separated(
    session: DecodeSession,
    path: str | os.PathLike[str],
    layout: FileFormat,
    block_size: int,
    start: int,
    end: int | None,
    stream: ReadableBytes | None = None,
) -> Iterator[pa.RecordBatch]:
    """Records cut at ``layout.line_sep`` (or CR / LF / CRLF in a transcoded file)."""
    sep = layout.line_sep
    if sep is None:  # a one-byte encoding with the default line ends
        sep = b"\n"
    codec = layout.encoding
    if stream is None:
        size = os.path.getsize(path)
        end = size if end is None else min(end, size)
    elif end is None:
        end = sys.maxsize  # to the end of the stream
    utf8_sep = sep.decode(codec or "utf-8").encode("utf-8")
    with closing(_opened(path, stream)) as f:
        for at, chunk in separated_chunks(f, sep, start, end, block_size):
            data = chunk if codec in (None, "utf-8") else transcode(chunk, codec)
            _feed_naming_line(session, data, path, at, sep, utf8_sep, stream is None)
            if session.decoder.pending_rows:
                yield session.finish()


def _read_whole_file(
    session: DecodeSession,
    path: str | os.PathLike[str],
    layout: FileFormat,
    stream: ReadableBytes | None = None,
) -> Iterator[pa.RecordBatch]:
    """multiLine: the file is one record (a top-level array gives a row per element)."""
    with closing(_opened(path, stream)) as f:
        data = f.read() or b""
    if layout.encoding not in (None, "utf-8"):
        data = transcode(data, layout.encoding)
    try:
        session.decoder.decode_record(data)
    except MalformedRecordError as exc:
        raise MalformedRecordError(f"{exc} File: {os.fspath(path)!r}.") from None
    if session.decoder.pending_rows:
        yield session.finish()


def read_ndjson(
    path: str | os.PathLike[str],
    schema: SchemaLike,
    *,
    options: JsonOptions | None = None,
    time_zone: str = "UTC",
    block_size: int = DEFAULT_BLOCK_SIZE,
) -> pa.Table:
    """Reads an NDJSON file into a Table, decoding it block by block (bounded working memory).

    >>> read_ndjson("bids.json", "auction BIGINT, price BIGINT")  # doctest: +SKIP
    """
    arrow_schema, _ = _decoded_schema(schema)
    batches = list(
        iter_ndjson(path, schema, options=options, time_zone=time_zone, block_size=block_size)
    )
    return pa.Table.from_batches(batches, schema=arrow_schema)
