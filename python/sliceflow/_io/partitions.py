"""Hive-style partition values (``day=2026-11-24/``): their types and values as Spark's.

Spark (``PartitioningUtils``) reads a folder name ``k=v`` as column ``k`` with the
path-unescaped value ``v`` and, with ``spark.sql.sources.partitionColumnTypeInference.enabled``
(the default), types each value by the first of these that parses it: ``INT``, ``BIGINT``,
``DECIMAL(p, 0)`` (an integral number up to 38 digits, ``1e5`` included), ``DOUBLE`` (Java's
``Double.parseDouble``), ``TIMESTAMP`` (``yyyy-MM-dd HH:mm:ss[.S]`` in the session time zone),
``DATE`` (``yyyy-MM-dd``), else ``STRING``; ``__HIVE_DEFAULT_PARTITION__`` is null. A column's
type is the widest of its values' (INT < BIGINT < DECIMAL, numbers < DOUBLE, DATE < TIMESTAMP;
a DECIMAL with a DOUBLE, or any other mix, is STRING, which keeps each value's raw text).
Without type inference every column is STRING. A schema given by the user types the column
instead, and a value its type cannot hold fails as Spark's ``INVALID_PARTITION_VALUE`` does.

Types are Arrow types as sliceflow's schemas use them (``TIMESTAMP`` is ``timestamp[us, UTC]``).
Cost: a few regular expressions per distinct folder name; columns are filled per batch with
``pyarrow.repeat`` (no per-row Python).
"""

from __future__ import annotations

import datetime as dt
import re
import zoneinfo
from collections.abc import Iterable, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any
from urllib.parse import unquote

import pyarrow as pa

from sliceflow.errors import SchemaError

#: The folder value Hive and Spark write for a null partition value.
DEFAULT_PARTITION_NAME = "__HIVE_DEFAULT_PARTITION__"

_INT = re.compile(r"[+-]?\d+")
_BIG_DECIMAL = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
_JAVA_DOUBLE = re.compile(r"[+-]?(NaN|Infinity|((\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)[fFdD]?)")
_TIMESTAMP = re.compile(r"(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?")
_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
# Spark's string -> DATE cast: yyyy, yyyy-[m]m, yyyy-[m]m-[d]d, optionally followed by ' ' or
# 'T' and anything.
_CAST_DATE = re.compile(r"\s*([+-]?\d{4,7})(?:-(\d{1,2})(?:-(\d{1,2})(?:[ T].*)?)?)?\s*", re.S)
_CAST_TIMESTAMP = re.compile(
    r"\s*(\d{4,7})-(\d{1,2})-(\d{1,2})"
    r"(?:[ T](\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.(\d{1,9}))?)?)?\s*"
)
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
_TIMESTAMP_TYPE = pa.timestamp("us", tz="UTC")


def parse_folder(name: str) -> tuple[str, str] | None:
    """``(column, raw value)`` of a ``k=v`` folder name, None for any other name.

    >>> parse_folder("day=2026-11-24"), parse_folder("data")
    (('day', '2026-11-24'), None)
    """
    column, eq, value = name.partition("=")
    if not eq:
        return None
    if not column:
        raise SchemaError(f"Empty partition column name in '{name}'")
    if not value:
        raise SchemaError(f"Empty partition column value in '{name}'")
    return unquote(column), value


def _java_int(text: str, bits: int) -> int | None:
    if not _INT.fullmatch(text):
        return None
    value = int(text)
    return value if -(1 << (bits - 1)) <= value < (1 << (bits - 1)) else None


def _java_double(text: str) -> float | None:
    stripped = text.strip(" \t\n\r\f\v\x00")
    if not _JAVA_DOUBLE.fullmatch(stripped):
        return None
    body = stripped.rstrip("fFdD") if not stripped.endswith("Infinity") else stripped
    return float(body.replace("Infinity", "inf"))


def _integral_decimal(text: str) -> Decimal | None:
    """Java's ``new BigDecimal(text)`` when its scale is <= 0 and it fits DECIMAL(38, 0)."""
    if not _BIG_DECIMAL.fullmatch(text):
        return None
    value = Decimal(text)
    exponent = value.as_tuple().exponent
    assert isinstance(exponent, int)
    # Java's scale is -exponent; a scale > 0 (a fraction digit written) is not integral.
    if -exponent > 0:
        return None
    integral = value.to_integral_value()
    return integral if len(str(abs(int(integral)))) <= 38 else None


def _date(text: str) -> dt.date | None:
    match = _DATE.fullmatch(text)
    if not match:
        return None
    try:
        return dt.date(*map(int, match.groups()))
    except ValueError:
        return None


def _timestamp(text: str, zone: dt.tzinfo) -> int | None:
    match = _TIMESTAMP.fullmatch(text)
    if not match:
        return None
    return _local_micros(match.groups(), zone)


def _local_micros(parts: Sequence[str | None], zone: dt.tzinfo) -> int | None:
    year, month, day, hour, minute, second, fraction = (list(parts) + [None] * 7)[:7]
    try:
        local = dt.datetime(
            int(year or 0), int(month or 1), int(day or 1), int(hour or 0), int(minute or 0)
        )
        local = local.replace(second=int(second or 0), tzinfo=zone)
    except ValueError:
        return None
    micros = int(((fraction or "") + "000000")[:6])
    return (local - _EPOCH) // dt.timedelta(microseconds=1) + micros


def _zone(time_zone: str) -> dt.tzinfo:
    if time_zone.upper() in ("UTC", "Z", "GMT"):
        return dt.timezone.utc
    return zoneinfo.ZoneInfo(time_zone)


def infer_type(raw: str, *, type_inference: bool = True, time_zone: str = "UTC") -> pa.DataType:
    """The type Spark infers for one raw (still path-escaped) partition value.

    >>> [str(infer_type(v)) for v in ["7", "3000000000", "1e5", "1.5", "2026-11-24", "x"]]
    ['int32', 'int64', 'decimal128(6, 0)', 'double', 'date32[day]', 'string']
    """
    if raw == DEFAULT_PARTITION_NAME:
        return pa.null()
    if not type_inference:
        return pa.string()
    if _java_int(raw, 32) is not None:
        return pa.int32()
    if _java_int(raw, 64) is not None:
        return pa.int64()
    decimal = _integral_decimal(raw)
    if decimal is not None:
        return pa.decimal128(max(len(str(abs(int(decimal)))), 1), 0)
    if _java_double(raw) is not None:
        return pa.float64()
    if _timestamp(unquote(raw), _zone(time_zone)) is not None:
        return _TIMESTAMP_TYPE
    if _date(raw) is not None:
        return pa.date32()
    return pa.string()


def _numeric_rank(t: pa.DataType) -> int | None:
    order = [pa.int8(), pa.int16(), pa.int32(), pa.int64()]
    return order.index(t) if t in order else None


def wider_type(a: pa.DataType, b: pa.DataType) -> pa.DataType:
    """The type of a column holding values of types ``a`` and ``b`` (Spark's rules).

    >>> str(wider_type(pa.int32(), pa.decimal128(23, 0))), str(wider_type(pa.int32(), pa.date32()))
    ('decimal128(23, 0)', 'string')
    """
    if a == b:
        return a
    if pa.types.is_null(a):
        return b
    if pa.types.is_null(b):
        return a
    ra, rb = _numeric_rank(a), _numeric_rank(b)
    if ra is not None and rb is not None:
        return a if ra > rb else b
    if pa.types.is_floating(a) and (rb is not None or pa.types.is_floating(b)):
        return pa.float64()
    if pa.types.is_floating(b) and ra is not None:
        return pa.float64()
    if pa.types.is_decimal(a) or pa.types.is_decimal(b):
        digits = []
        for t in (a, b):
            if pa.types.is_decimal(t):
                digits.append(t.precision - t.scale)
            elif t in (pa.int32(), pa.int64(), pa.int16(), pa.int8()):
                digits.append({8: 3, 16: 5, 32: 10, 64: 20}[t.bit_width])
            else:
                return pa.string()  # DECIMAL with DOUBLE or a non-number: STRING
        return pa.decimal128(min(max(digits), 38), 0)
    if {str(a), str(b)} == {"date32[day]", str(_TIMESTAMP_TYPE)}:
        return _TIMESTAMP_TYPE
    return pa.string()


def infer_column_types(
    values: Iterable[Sequence[tuple[str, str]]],
    *,
    type_inference: bool = True,
    time_zone: str = "UTC",
) -> list[pa.Field]:
    """Partition columns typed as Spark types them, from each folder's ``(column, raw)`` pairs.

    >>> infer_column_types([[("k", "1")], [("k", "1.5")]])
    [pyarrow.Field<k: double>]
    """
    names: list[str] = []
    types: dict[str, pa.DataType] = {}
    seen: dict[str, set[str]] = {}
    for pairs in values:
        for column, raw in pairs:
            if column not in types:
                names.append(column)
                types[column] = pa.null()
                seen[column] = set()
            if raw in seen[column]:
                continue
            seen[column].add(raw)
            found = infer_type(raw, type_inference=type_inference, time_zone=time_zone)
            types[column] = wider_type(types[column], found)
    return [pa.field(n, types[n]) for n in names]


def _invalid(column: str, raw: str, target: pa.DataType) -> SchemaError:
    from sliceflow._runtime.spark_types import spark_type_name

    return SchemaError(
        f"[INVALID_PARTITION_VALUE] Failed to cast value '{unquote(raw)}' to data type "
        f'"{spark_type_name(target)}" for partition column `{column}`. Ensure the value matches '
        "the expected data type for this partition column."
    )


def cast_value(column: str, raw: str, target: pa.DataType, time_zone: str = "UTC") -> Any:
    """A raw partition value as a Python value of ``target`` (Spark's partition value cast).

    >>> cast_value("k", "007", pa.int32()), cast_value("k", "007", pa.string())
    (7, '007')
    """
    if raw == DEFAULT_PARTITION_NAME or pa.types.is_null(target):
        return None
    text = unquote(raw)
    value: Any = None
    if pa.types.is_string(target) or pa.types.is_large_string(target):
        return text
    if pa.types.is_integer(target):
        value = _java_int(raw, target.bit_width)
    elif pa.types.is_decimal(target):
        try:
            value = Decimal(raw) if _BIG_DECIMAL.fullmatch(raw) else None
            if value is not None:
                value = value.quantize(Decimal(1).scaleb(-target.scale))
                if len(value.as_tuple().digits) > target.precision:
                    value = None
        except InvalidOperation:
            value = None
    elif pa.types.is_floating(target):
        value = _java_double(raw)
    elif pa.types.is_boolean(target):
        value = {"true": True, "false": False}.get(text.strip().lower())
    elif pa.types.is_date(target):
        match = _CAST_DATE.fullmatch(text)
        if match:
            try:
                year, month, day = (int(g) if g else 1 for g in match.groups())
                value = dt.date(year, month, day)
            except ValueError:
                value = None
    elif pa.types.is_timestamp(target):
        match = _CAST_TIMESTAMP.fullmatch(text) or _CAST_DATE.fullmatch(text)
        zone = _zone(time_zone) if target.tz is not None else dt.timezone.utc
        micros = _local_micros(match.groups(), zone) if match else None
        if micros is not None:
            value = pa.scalar(micros, pa.int64()).cast(pa.timestamp("us", tz=target.tz))
            return value.cast(target)
    else:
        value = pa.scalar(text).cast(target).as_py()
    if value is None:
        raise _invalid(column, raw, target)
    return value


def column_arrays(
    values: Sequence[tuple[str, str]],
    fields: Sequence[pa.Field],
    num_rows: int,
    time_zone: str = "UTC",
    *,
    strict: bool = True,
) -> list[pa.Array]:
    """One constant array of ``num_rows`` per field, from a file's ``(column, raw)`` pairs.

    A value the field's type cannot hold raises ``INVALID_PARTITION_VALUE``; with ``strict``
    off (Spark's ``spark.sql.sources.validatePartitionColumns=false``) it is null.

    >>> column_arrays([("day", "2026-11-24")], [pa.field("day", pa.date32())], 2)[0].to_pylist()
    [datetime.date(2026, 11, 24), datetime.date(2026, 11, 24)]
    """
    raw_of = {column.lower(): raw for column, raw in values}
    arrays = []
    for field in fields:
        raw = raw_of.get(field.name.lower(), DEFAULT_PARTITION_NAME)
        try:
            value = cast_value(field.name, raw, field.type, time_zone)
        except SchemaError:
            if strict:
                raise
            value = None
        scalar = value if isinstance(value, pa.Scalar) else pa.scalar(value, type=field.type)
        arrays.append(pa.repeat(scalar, num_rows))
    return arrays
