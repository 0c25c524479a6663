"""Spark's JSON schema inference, computed natively: the schema ``spark.read.json(path)``
infers for the same files and options, without a JVM.

>>> from sliceflow.json import infer_schema, schema_ddl
>>> schema = infer_schema(b'{"b": 1, "a": [1.5]}\\n{"b": 12345678901234567890, "c": ""}\\n')
>>> print(schema_ddl(schema))
`a` ARRAY<DOUBLE>, `b` DECIMAL(20,0), `c` STRING

The result is Spark's JSON form of the schema (``StructType.fromJson`` takes it). Options are
Spark's JSON reader options (case-insensitive names): ``primitivesAsString``,
``prefersDecimal``, ``dropFieldIfAllNull``, ``inferTimestamp`` with ``timestampFormat`` /
``timestampNTZFormat`` / ``timeZone``, ``mode`` (PERMISSIVE, DROPMALFORMED, FAILFAST),
``columnNameOfCorruptRecord``, ``samplingRatio``, ``multiLine`` and the Jackson flags
(``allowComments``, ``allowNumericLeadingZeros``, ...). ``samplingRatio`` below 1 reads a
deterministic sample of lines that is not the one Spark draws (Spark's depends on how it
splits the files into partitions).
"""

from __future__ import annotations

import io
import json as _json
import logging
import os
from collections import deque
from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from contextlib import closing
from typing import Literal, TypeAlias, TypedDict, cast

from sliceflow._core import json as json_kernel
from sliceflow._io.codecs import is_splittable, open_input
from sliceflow._io.filesystems import local_path
from sliceflow.errors import OptionError, SchemaError
from sliceflow.json.line_blocks import LineBlock, line_blocks, padded
from sliceflow.json.options import JsonOptions, as_text

__all__ = ["ArrayJson", "DataTypeJson", "FieldJson", "StructJson", "infer_schema", "schema_ddl"]


class FieldJson(TypedDict):
    """A field of Spark's JSON form of a StructType (``StructField.jsonValue()``)."""

    name: str
    type: DataTypeJson
    nullable: bool
    metadata: dict[str, object]


class StructJson(TypedDict):
    """Spark's JSON form of a StructType: what :func:`infer_schema` returns."""

    type: Literal["struct"]
    fields: list[FieldJson]


class ArrayJson(TypedDict):
    """Spark's JSON form of an ArrayType."""

    type: Literal["array"]
    elementType: DataTypeJson
    containsNull: bool


#: The types inference gives, in Spark's JSON form: a name (``"long"``, ``"decimal(20,0)"``),
#: a struct or an array (inference never gives a map).
DataTypeJson: TypeAlias = "str | StructJson | ArrayJson"

_log = logging.getLogger("sliceflow.json")

#: Bytes read per inference step: small enough that a block read is still in the CPU's cache
#: when it is parsed (2M bids in 2 files, 2 threads: 0.16 s with 2 MiB blocks, 0.22 s with
#: 16 MiB), and split across the threads when a file has more than one.
DEFAULT_BLOCK_SIZE = 2 << 20

_BOOLEAN_OPTIONS = {
    name.lower(): name
    for name in (
        "allowSingleQuotes",
        "allowNonNumericNumbers",
        "allowNumericLeadingZeros",
        "allowUnquotedFieldNames",
        "allowComments",
        "allowBackslashEscapingAnyCharacter",
        "allowUnquotedControlChars",
        "prefersDecimal",
        "primitivesAsString",
        "dropFieldIfAllNull",
        "inferTimestamp",
    )
}
_TEXT_OPTIONS = {
    name.lower(): name
    for name in ("timestampFormat", "timestampNTZFormat", "dateFormat", "timeZone")
}


def _normalize(
    options: JsonOptions | None, time_zone: str, session: Mapping[str, str]
) -> tuple[dict[str, str], bool]:
    """Spark's option names (any case) in the C++ inference's form, and whether multiLine."""
    out: dict[str, str] = {"timeZone": time_zone}
    out.update(session)
    multi_line = False
    for key, raw in (options or {}).items():
        lower = key.lower()
        value = as_text(raw)
        if lower in _BOOLEAN_OPTIONS:
            if value.lower() not in ("true", "false"):
                raise OptionError(f"option {key!r} must be true or false, got {raw!r}")
            out[_BOOLEAN_OPTIONS[lower]] = value.lower()
        elif lower in _TEXT_OPTIONS:
            out[_TEXT_OPTIONS[lower]] = value.strip() if lower == "timezone" else value
        elif lower == "mode":
            mode = value.upper()
            if mode not in ("PERMISSIVE", "DROPMALFORMED", "FAILFAST"):
                # Spark's ParseMode.fromString warns and reads any other value as PERMISSIVE.
                _log.warning("%s is not a valid parse mode. Using PERMISSIVE.", value)
                mode = "PERMISSIVE"
            out["mode"] = mode
        elif lower == "columnnameofcorruptrecord":
            out["columnNameOfCorruptRecord"] = value
        elif lower == "samplingratio":
            try:
                ratio = float(value)
            except ValueError:
                raise OptionError(f"option {key!r} must be a number, got {raw!r}") from None
            if not ratio > 0:
                raise OptionError(f"option {key!r} must be above 0, got {raw!r}")
            out["samplingRatio"] = repr(ratio)
        elif lower == "multiline":
            if value.lower() not in ("true", "false"):
                raise OptionError(f"option {key!r} must be true or false, got {raw!r}")
            multi_line = value.lower() == "true"
        elif lower in ("encoding", "charset"):
            if value.replace("-", "").upper() != "UTF8":
                raise OptionError(f"sliceflow infers UTF-8 JSON only, got {key}={value!r}")
        elif lower == "linesep":
            if value not in ("\n", "\r", "\r\n"):
                raise OptionError(
                    f"sliceflow infers lines ended by \\n, \\r or \\r\\n only, got lineSep={raw!r}"
                )
        # Every other option does not change inference (Spark ignores unknown ones too).
    return out, multi_line


def _open(path: str, settings: Mapping[str, str] | None) -> io.RawIOBase:
    """A file's bytes: a plain local file opened directly (the fast path), any other file (a
    scheme, a compressed file) through :func:`sliceflow._io.codecs.open_input`."""
    local = local_path(path, settings)
    if local is not None and is_splittable(path):
        return open(local, "rb", buffering=0)
    return open_input(path, settings)


def _buffer_size(f: io.RawIOBase, block_size: int) -> int:
    """The block buffer's size: ``block_size``, or less for a smaller local file (a fresh
    16 MiB buffer costs milliseconds of page faults, a query on a small file pays them)."""
    try:
        size = os.fstat(f.fileno()).st_size
    except (OSError, ValueError, io.UnsupportedOperation):
        return block_size  # a stream (remote, compressed): its size is not known
    return min(block_size, max(size + 1, 64 << 10))


def _file_blocks(
    path: str, block_size: int, settings: Mapping[str, str] | None
) -> Iterator[LineBlock]:
    """A file as blocks of whole lines (:mod:`sliceflow.json.line_blocks`), on two buffers
    taking turns, so a block stays unchanged while the next one is read (:func:`_read_ahead`)."""
    with _open(path, settings) as f:
        yield from line_blocks(f, _buffer_size(f, block_size), buffers=2)


def _read_ahead(blocks: Iterator[LineBlock]) -> Iterator[LineBlock]:
    """``blocks`` with the next block read on a thread of its own while the caller infers the
    current one on several threads: reading a block is a copy from the page cache that would
    otherwise leave every core but one idle. The file's blocks must stay valid one step
    ahead (:func:`_file_blocks`)."""
    with ThreadPoolExecutor(1, thread_name_prefix="sliceflow-infer-read") as pool:
        pending = pool.submit(next, blocks, None)
        try:
            while (block := pending.result()) is not None:
                pending = pool.submit(next, blocks, None)
                yield block
        finally:
            # An early stop (an error in the caller): the read under way ends, then the file
            # is closed here rather than whenever the generator is collected.
            wait([pending])
            cast(Generator[LineBlock, None, None], blocks).close()


def infer_schema(
    source: str | Sequence[str] | bytes | bytearray | memoryview,
    *,
    options: JsonOptions | None = None,
    threads: int | None = None,
    time_zone: str = "UTC",
    session: Mapping[str, str] | None = None,
    block_size: int = DEFAULT_BLOCK_SIZE,
    settings: Mapping[str, str] | None = None,
) -> StructJson:
    """Infers the schema ``spark.read.json`` infers for NDJSON ``source``: a file path, a list
    of file paths (the ``sliceflow.json`` data source lists folders as Spark does), or the
    text itself as bytes.

    Returns Spark's JSON form of a StructType (``pyspark.sql.types.StructType.fromJson``
    reads it; :func:`schema_ddl` prints it). ``threads`` defaults to the number of cores;
    ``session`` takes the session settings that change inference: ``timestampType``
    (``TIMESTAMP_NTZ`` or ``TIMESTAMP_LTZ``) and ``caseSensitive``. Paths may have any
    scheme :mod:`sliceflow._io.filesystems` resolves (``settings``: its Hadoop keys, such as
    ``fs.s3a.endpoint``) and be compressed (:mod:`sliceflow._io.codecs`). Files are inferred
    in parallel, a thread each (the threads left over when there are fewer files than threads
    split each file's blocks), and merged in the list's order; a FAILFAST error names the
    first failing file of the list and the line in that file.

    >>> infer_schema(b'{"a": 1}')["fields"][0]["type"]
    'long'
    """
    if block_size <= 0:
        raise ValueError("block_size must be positive")
    normalized, multi_line = _normalize(options, time_zone, session or {})
    count = threads if threads is not None else (os.cpu_count() or 1)
    if count < 1:
        raise ValueError(f"threads must be at least 1, got {count}")
    inference = json_kernel.SchemaInference(normalized)
    if isinstance(source, (bytes, bytearray, memoryview)):
        if multi_line:
            inference.add_document(bytes(source))
        else:
            block = padded(source)
            inference.add_lines(block.buffer, block.size, count)
    else:
        paths = [source] if isinstance(source, str) else list(source)
        if multi_line:
            for path in paths:
                with _open(path, settings) as f:
                    inference.add_document(f.read())
        else:
            inference = _infer_files(paths, normalized, count, block_size, settings)
    result = cast(StructJson, _json.loads(inference.schema_json()))
    case_sensitive = normalized.get("caseSensitive", "false") == "true"
    _check_duplicates(result, case_sensitive)
    return result


def _infer_file(
    path: str,
    index: int,
    options: Mapping[str, str],
    threads: int,
    block_size: int,
    settings: Mapping[str, str] | None,
) -> json_kernel.SchemaInference:
    """One file's inference (lines numbered from 1 in FAILFAST's errors), on ``threads``
    threads; with more than one, the next block is read while the current one is inferred."""
    inference = json_kernel.SchemaInference(options, sample_seed=index)
    blocks = _file_blocks(path, block_size, settings)
    if threads > 1:
        blocks = _read_ahead(blocks)
    # Closed on the way out, an error's too: the file and the reading thread end here rather
    # than whenever the error's traceback lets the generator go.
    with closing(cast(Generator[LineBlock, None, None], blocks)):
        for block in blocks:
            try:
                inference.add_lines(block.buffer, block.size, threads)
            except ValueError as e:
                raise type(e)(f"{path}: {e}") from None
    return inference


def _infer_files(
    paths: Sequence[str],
    options: Mapping[str, str],
    threads: int,
    block_size: int,
    settings: Mapping[str, str] | None,
) -> json_kernel.SchemaInference:
    """The files' inferences merged in the files' order (so the schema does not depend on
    timing). Files are inferred on their own threads, each reading and parsing its own blocks
    (no step shared across threads per block); a list shorter than ``threads`` shares the rest
    among its files. At most two files per thread are in flight, so memory stays bounded by
    the thread count whatever the number of files. With FAILFAST, the first file in the list
    that fails names the error."""
    if not paths:
        return json_kernel.SchemaInference(options)
    workers = min(threads, len(paths))
    per_file = max(1, threads // len(paths))
    total: json_kernel.SchemaInference | None = None
    pending: deque[Future[json_kernel.SchemaInference]] = deque()

    def merge_next() -> None:
        nonlocal total
        done = pending.popleft().result()
        if total is None:
            total = done
        else:
            total.merge(done)

    with ThreadPoolExecutor(workers, thread_name_prefix="sliceflow-infer") as pool:
        try:
            for index, path in enumerate(paths):
                pending.append(
                    pool.submit(_infer_file, path, index, options, per_file, block_size, settings)
                )
                if len(pending) > 2 * workers:
                    merge_next()
            while pending:
                merge_next()
        except BaseException:
            for future in pending:
                future.cancel()
            raise
    assert total is not None  # paths is not empty
    return total


def _check_duplicates(t: DataTypeJson, case_sensitive: bool) -> None:
    """Spark's SchemaUtils.checkSchemaColumnNameDuplication: a name twice in one struct (at
    any depth; ignoring case unless case_sensitive) fails the read."""
    if isinstance(t, str):
        return
    if t["type"] == "array":
        _check_duplicates(t["elementType"], case_sensitive)
        return
    seen: set[str] = set()
    for f in t["fields"]:
        key = f["name"] if case_sensitive else f["name"].lower()
        if key in seen:
            raise SchemaError(
                f"[COLUMN_ALREADY_EXISTS] The column `{key}` already exists (the JSON records "
                "hold fields whose names differ only in case, or repeat a name; Spark fails the "
                "read the same way). Choose another name or rename the existing column."
            )
        seen.add(key)
        _check_duplicates(f["type"], case_sensitive)


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _type_ddl(t: DataTypeJson) -> str:
    if isinstance(t, str):
        simple = {"long": "BIGINT", "integer": "INT", "void": "VOID"}
        return simple.get(t, t.upper())
    if t["type"] == "array":
        return f"ARRAY<{_type_ddl(t['elementType'])}>"
    inner = ", ".join(f"{_quote(f['name'])}: {_type_ddl(f['type'])}" for f in t["fields"])
    return f"STRUCT<{inner}>"


def _fields_ddl(fields: Iterable[FieldJson]) -> str:
    return ", ".join(f"{_quote(f['name'])} {_type_ddl(f['type'])}" for f in fields)


def schema_ddl(schema: Mapping[str, object]) -> str:
    """A schema from :func:`infer_schema` as Spark DDL (names in backticks).

    >>> schema_ddl({"type": "struct", "fields": [
    ...     {"name": "a", "type": "long", "nullable": True, "metadata": {}}]})
    '`a` BIGINT'
    """
    return _fields_ddl(cast("list[FieldJson]", schema["fields"]))
