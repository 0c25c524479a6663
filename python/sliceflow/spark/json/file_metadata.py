"""The ``_metadata`` column of ``.option("includeMetadata", "true")``: Spark's file metadata.

Spark's file sources offer a hidden ``_metadata`` struct (``spark.read.json(p)
.select("_metadata.*")``); a Python data source has no hidden columns, so the option adds one
named ``_metadata`` with the same fields, types and values:

* ``file_path`` -- the file's URI as Hadoop's ``Path.toUri`` writes it: ``file:/tmp/d/x%20y.json``
  for a local file (absolute, characters a URI path cannot hold percent-encoded),
  ``s3a://bucket/key`` for a store;
* ``file_name`` -- its last component, encoded the same way;
* ``file_size`` -- bytes (of the compressed file, for ``.gz`` and the like);
* ``file_block_start`` / ``file_block_length`` -- the byte range of the split the row was read
  from (a compressed file: 0 and its size). Spark's splits are the same for a file no larger
  than the split size; a larger file is cut at ``maxPartitionBytes`` here and at Spark's
  ``maxSplitBytes`` (which also weighs the open cost and the cores) there;
* ``file_modification_time`` -- TIMESTAMP, the listing's modification time (milliseconds).

``input_file_name()`` stays empty for a Python data source: it is filled by Spark's own file
scans only.
"""

from __future__ import annotations

import os
import string

import pyarrow as pa
from pyspark.sql.types import LongType, StringType, StructField, StructType, TimestampType

from sliceflow._io.filesystems import split_scheme

__all__ = [
    "METADATA_COLUMN",
    "METADATA_TYPE",
    "check_metadata_type",
    "metadata_array",
    "metadata_field",
    "path_uri",
]

#: The column's name, as Spark's.
METADATA_COLUMN = "_metadata"

#: Spark 4.3's ``_metadata`` struct of a JSON file source, field for field.
METADATA_TYPE = StructType(
    [
        StructField("file_path", StringType(), False),
        StructField("file_name", StringType(), False),
        StructField("file_size", LongType(), False),
        StructField("file_block_start", LongType(), False),
        StructField("file_block_length", LongType(), False),
        StructField("file_modification_time", TimestampType(), False),
    ]
)

#: The characters ``java.net.URI`` keeps in a path (unreserved, punctuation, ``/``);
#: other ASCII is percent-encoded, non-ASCII kept as it is.
_URI_PATH_SAFE = frozenset(string.ascii_letters + string.digits + "-_.!~*'()" + ":@&=+$,;/")


def metadata_field() -> StructField:
    """The ``_metadata`` column as Spark types it."""
    return StructField(METADATA_COLUMN, METADATA_TYPE, False)


def _quote(path: str) -> str:
    return "".join(
        c if c in _URI_PATH_SAFE or ord(c) > 127 else "".join(f"%{b:02X}" for b in c.encode())
        for c in path
    )


def path_uri(path: str) -> str:
    """A listed file's path as Spark's ``_metadata.file_path`` writes it.

    >>> path_uri("/tmp/d/x y%.json"), path_uri("s3a://bucket/k 1.json")
    ('file:/tmp/d/x%20y%25.json', 's3a://bucket/k%201.json')
    """
    scheme, rest = split_scheme(path)
    if scheme in ("", "file"):
        local = rest if scheme == "" else ("/" + rest.lstrip("/"))
        return "file:" + _quote(os.path.abspath(local))
    if path[len(scheme) + 1 :].startswith("//"):
        authority, _, inner = rest.partition("/")
        return f"{scheme}://{authority}/{_quote(inner)}"
    return f"{scheme}:{_quote(rest)}"


def metadata_array(
    arrow_type: pa.DataType,
    path: str,
    size: int,
    block: tuple[int, int],
    modification_time_ms: int | None,
    rows: int,
) -> pa.Array:
    """The ``_metadata`` values of ``rows`` rows of one split, as ``arrow_type`` (the struct the
    read's schema gives the column: any of Spark's fields, in any order)."""
    uri = path_uri(path)
    values: dict[str, object] = {
        "file_path": uri,
        "file_name": uri.rsplit("/", 1)[-1],
        "file_size": size,
        "file_block_start": block[0],
        "file_block_length": block[1],
        "file_modification_time": modification_time_ms,
    }
    children = []
    for child in arrow_type:
        value = values[child.name]
        if child.name == "file_modification_time":
            scalar = pa.scalar(value, pa.timestamp("ms", tz="UTC")).cast(child.type)
        else:
            scalar = pa.scalar(value, child.type)
        children.append(pa.repeat(scalar, rows))
    return pa.StructArray.from_arrays(children, fields=list(arrow_type))


def check_metadata_type(field: StructField) -> None:
    """Refuses a ``_metadata`` column the schema types otherwise than Spark (a subset of its
    fields, in any order, is taken)."""
    from sliceflow.errors import SchemaError

    known = {f.name: f.dataType for f in METADATA_TYPE.fields}
    kind = field.dataType
    wrong = not isinstance(kind, StructType) or any(
        f.name not in known or f.dataType != known[f.name] for f in kind.fields
    )
    if wrong:
        raise SchemaError(
            f"[INVALID_SCHEMA] sliceflow.json: with includeMetadata, the column _metadata must be "
            f"{METADATA_TYPE.simpleString()} (or some of its fields), got "
            f"{field.dataType.simpleString()}"
        )
