"""Spark schemas (DDL strings, ``StructType``) as the pyarrow schemas sliceflow decodes into.

The type rules themselves (which Arrow type a Spark type decodes into) are
:mod:`sliceflow._runtime.spark_types`; this module parses DDL and checks that a schema is
one the JSON decoder can fill.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, TypeAlias, cast

import pyarrow as pa

from sliceflow._runtime.spark_types import JSON_SCALAR_TYPES, json_arrow_type, spark_type
from sliceflow.errors import SchemaError

if TYPE_CHECKING:
    from pyspark.sql.types import DataType, StructType

#: A schema as the decoders take it: Spark DDL, a pyarrow schema, a pyspark ``StructType``, or
#: a whole-document ARRAY / MAP (a pyarrow list or map type, a pyspark ``ArrayType`` /
#: ``MapType``).
SchemaLike: TypeAlias = "str | pa.Schema | pa.DataType | DataType"

_SIMPLE_TYPES: dict[str, pa.DataType] = {
    "BOOLEAN": pa.bool_(),
    "BOOL": pa.bool_(),
    "TINYINT": pa.int8(),
    "BYTE": pa.int8(),
    "SMALLINT": pa.int16(),
    "SHORT": pa.int16(),
    "INT": pa.int32(),
    "INTEGER": pa.int32(),
    "BIGINT": pa.int64(),
    "LONG": pa.int64(),
    "FLOAT": pa.float32(),
    "REAL": pa.float32(),
    "DOUBLE": pa.float64(),
    "STRING": pa.string(),
    "DATE": pa.date32(),
    "TIMESTAMP": pa.timestamp("us", tz="UTC"),
    "TIMESTAMP_LTZ": pa.timestamp("us", tz="UTC"),
    "TIMESTAMP_NTZ": pa.timestamp("us"),
}


class _DDLParser:
    """Spark's DDL grammar for column lists and types (``a INT, b ARRAY<STRUCT<c: STRING>>``)."""

    _TOKEN = re.compile(
        r"\s*(?:(`(?:[^`]|``)*`)|([A-Za-z_][A-Za-z0-9_]*)|(\d+)|('(?:[^'\\]|\\.)*')|(.))"
    )

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens: list[str] = []
        pos = 0
        body = text.rstrip()  # trailing white space is not a token
        while True:
            m = self._TOKEN.match(body, pos)
            if m is None or m.end() == pos:
                break
            pos = m.end()
            self.tokens.append(next(g for g in m.groups() if g is not None))
        if body[pos:].strip():
            raise SchemaError(
                f"[PARSE_SYNTAX_ERROR] cannot parse schema {text!r} at {text[pos:]!r}"
            )
        self.i = 0

    def peek(self) -> str | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def peek_upper(self) -> str | None:
        """The next token in upper case (keywords are case-insensitive); None at the end."""
        tok = self.peek()
        return tok.upper() if tok is not None else None

    def take(self, expected: str | None = None) -> str:
        tok = self.peek()
        if tok is None or (expected is not None and tok.upper() != expected):
            want = expected or "more input"
            raise SchemaError(
                f"[PARSE_SYNTAX_ERROR] cannot parse schema {self.text!r}: "
                f"expected {want}, got {tok!r}"
            )
        self.i += 1
        return tok

    def name(self) -> str:
        tok = self.take()
        if tok.startswith("`"):
            return tok[1:-1].replace("``", "`")
        if not re.match(r"[A-Za-z_0-9]", tok):
            raise SchemaError(
                f"[PARSE_SYNTAX_ERROR] cannot parse schema {self.text!r}: "
                f"expected a name, got {tok!r}"
            )
        return tok

    def fields(self, closing: str | None) -> list[pa.Field]:
        out: list[pa.Field] = []
        while self.peek() is not None and self.peek() != closing:
            name = self.name()
            if self.peek() == ":":
                self.take()
            dtype = self.type()
            nullable = True
            if self.peek_upper() == "NOT":
                self.take()
                self.take("NULL")
                nullable = False
            if self.peek_upper() == "COMMENT":
                self.take()
                self.take()
            out.append(pa.field(name, dtype, nullable=nullable))
            if self.peek() == ",":
                self.take()
                if self.peek() is None or self.peek() == closing:
                    # Spark's DDL parser refuses a trailing comma ([PARSE_SYNTAX_ERROR]).
                    raise SchemaError(
                        f"[PARSE_SYNTAX_ERROR] cannot parse schema {self.text!r}: "
                        "a field name must follow ','"
                    )
            else:
                break
        return out

    def type(self) -> pa.DataType:
        word = self.take().upper()
        if word in ("DECIMAL", "DEC", "NUMERIC"):
            precision, scale = 10, 0
            if self.peek() == "(":
                self.take()
                precision = int(self.take())
                if self.peek() == ",":
                    self.take()
                    scale = int(self.take())
                self.take(")")
            if not 1 <= precision <= 38 or not 0 <= scale <= precision:
                raise SchemaError(f"DECIMAL({precision},{scale}) is not a valid Spark decimal")
            return pa.decimal128(precision, scale)
        if word in ("VARCHAR", "CHAR"):
            raise SchemaError(
                f"{word}(n) columns are not supported; use STRING (Spark pads and checks "
                "CHAR/VARCHAR lengths, which sliceflow does not model)"
            )
        if word == "ARRAY":
            self.take("<")
            element = self.type()
            self.take(">")
            return pa.list_(element)
        if word == "MAP":
            self.take("<")
            key = self.type()
            self.take(",")
            value = self.type()
            self.take(">")
            if key != pa.string():
                raise SchemaError("JSON maps need STRING keys (as Spark's from_json does)")
            return pa.map_(pa.string(), value)
        if word == "STRUCT":
            self.take("<")
            fields = self.fields(">")
            self.take(">")
            return pa.struct(fields)
        if word in _SIMPLE_TYPES:
            return _SIMPLE_TYPES[word]
        raise SchemaError(f"unsupported type {word} in schema {self.text!r}")


def _from_ddl(text: str) -> pa.Schema:
    parser = _DDLParser(text)
    if parser.peek_upper() == "STRUCT" and (len(parser.tokens) > 1 and parser.tokens[1] == "<"):
        dtype = parser.type()
        fields = list(dtype)
    else:
        fields = parser.fields(None)
    if parser.peek() is not None:
        raise SchemaError(
            f"[PARSE_SYNTAX_ERROR] cannot parse schema {text!r}: unexpected {parser.peek()!r}"
        )
    if not fields:
        raise SchemaError(f"schema {text!r} has no fields")
    return pa.schema(fields)


def root_value_type(schema: SchemaLike) -> pa.DataType | None:
    """The Arrow list or map type when ``schema`` is a whole-document ARRAY or MAP, else None.

    Spark's from_json takes ``"ARRAY<INT>"``, ``"MAP<STRING, INT>"``, an ``ArrayType`` or a
    ``MapType`` as well as a struct: each document is then one such value.

    >>> root_value_type("ARRAY<INT>")
    ListType(list<item: int32>)
    >>> root_value_type("a INT") is None
    True
    """
    dtype: pa.DataType | None = None
    if isinstance(schema, pa.DataType):
        dtype = schema if pa.types.is_list(schema) or pa.types.is_map(schema) else None
    elif isinstance(schema, str):
        parser = _DDLParser(schema)
        tokens = parser.tokens
        if len(tokens) > 1 and tokens[0].upper() in ("ARRAY", "MAP") and tokens[1] == "<":
            dtype = parser.type()
            if parser.peek() is not None:
                raise SchemaError(
                    f"[PARSE_SYNTAX_ERROR] cannot parse schema {schema!r}: "
                    f"unexpected {parser.peek()!r}"
                )
    else:
        try:
            from pyspark.sql import types as T
        except ImportError:  # pragma: no cover - pyspark is an optional dependency
            return None
        if isinstance(schema, (T.ArrayType, T.MapType)):
            dtype = json_arrow_type(schema)
    if dtype is not None:
        _check_arrow_type(dtype, "value")
    return dtype


def _check_arrow_type(dtype: pa.DataType, where: str) -> None:
    if pa.types.is_struct(dtype):
        for field in dtype:
            _check_arrow_type(field.type, f"{where}.{field.name}")
    elif pa.types.is_map(dtype):
        if dtype.key_type != pa.string():
            raise SchemaError(f"{where}: JSON maps need string keys")
        _check_arrow_type(dtype.item_type, f"{where}.value")
    elif pa.types.is_list(dtype):
        _check_arrow_type(dtype.value_type, f"{where}.element")
    elif pa.types.is_timestamp(dtype):
        if dtype.unit != "us" or dtype.tz not in (None, "UTC"):
            raise SchemaError(
                f"{where}: timestamps must be timestamp('us', tz='UTC') or timestamp('us')"
            )
    elif pa.types.is_decimal(dtype):
        if not isinstance(dtype, pa.Decimal128Type):
            raise SchemaError(f"{where}: decimals must be decimal128")
    elif dtype not in JSON_SCALAR_TYPES:
        raise SchemaError(f"{where}: unsupported Arrow type {dtype} for JSON decoding")


def to_arrow_schema(schema: SchemaLike) -> pa.Schema:
    """Returns the pyarrow schema that ``schema`` (DDL, StructType or pyarrow) decodes into.

    >>> to_arrow_schema("auction BIGINT, dateTime TIMESTAMP")
    auction: int64
    dateTime: timestamp[us, tz=UTC]
    """
    if isinstance(schema, pa.Schema):
        result = schema
    elif isinstance(schema, str):
        result = _from_ddl(schema)
    else:
        try:
            from pyspark.sql.types import StructType
        except ImportError as exc:  # pragma: no cover - pyspark is an optional dependency
            raise SchemaError(f"unsupported schema {schema!r}") from exc
        if not isinstance(schema, StructType):
            raise SchemaError(
                f"schema must be a DDL string, a pyarrow.Schema or a StructType, not {type(schema)}"
            )
        result = pa.schema(list(json_arrow_type(schema)))
    for field in result:
        _check_arrow_type(field.type, field.name)
    return result


def resolve_schema(schema: SchemaLike) -> tuple[pa.Schema, StructType]:
    """The Arrow schema sliceflow decodes into and the pyspark ``StructType`` it stands for.

    A DDL string is parsed by Spark itself when a session is active, so that the Spark side
    sees exactly the type the user wrote.
    """
    from pyspark.sql import SparkSession
    from pyspark.sql import types as T

    if isinstance(schema, T.StructType):
        return to_arrow_schema(schema), schema
    if isinstance(schema, str):
        spark = SparkSession.getActiveSession()
        if spark is not None:
            parsed = T._parse_datatype_string(schema)
            if isinstance(parsed, T.StructType):
                return to_arrow_schema(parsed), parsed
    arrow_schema = to_arrow_schema(schema)
    return arrow_schema, cast(T.StructType, spark_type(pa.struct(list(arrow_schema))))
