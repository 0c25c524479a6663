"""Spark's JSON reader options, normalised for the C++ decoder."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypeAlias

import pyarrow as pa

from sliceflow.errors import OptionError

#: An option's value as ``DataFrameReader.option`` takes it; it is read as text (``str``,
#: booleans as ``true`` / ``false``).
OptionValue: TypeAlias = str | bool | int | float | None
#: Spark's JSON reader options (names in any case).
JsonOptions: TypeAlias = Mapping[str, OptionValue]

DEFAULT_CORRUPT_COLUMN = "_corrupt_record"

_log = logging.getLogger("sliceflow.json")

_BOOLEAN_OPTIONS = {
    "allowsinglequotes": "allowSingleQuotes",
    "allownonnumericnumbers": "allowNonNumericNumbers",
    "allownumericleadingzeros": "allowNumericLeadingZeros",
    "allowunquotedfieldnames": "allowUnquotedFieldNames",
    "allowcomments": "allowComments",
    "allowbackslashescapinganycharacter": "allowBackslashEscapingAnyCharacter",
    "allowunquotedcontrolchars": "allowUnquotedControlChars",
}
_FORMAT_OPTIONS = {
    "timestampformat": "timestampFormat",
    "timestampntzformat": "timestampNTZFormat",
    "dateformat": "dateFormat",
}
# Options that do not change how from_json reads, but whose value Spark's JSONOptions parses
# (as a boolean, or samplingRatio as a double): a bad value fails Spark's query, so it is
# refused here too (when the decoder is made, where Spark fails the first task).
_PARSED_BOOLEANS = {
    "prefersdecimal": "prefersDecimal",
    "dropfieldifallnull": "dropFieldIfAllNull",
    "infertimestamp": "inferTimestamp",
    "ignorenullfields": "ignoreNullFields",
    "pretty": "pretty",
    "writenonasciicharacterascodepoint": "writeNonAsciiCharacterAsCodePoint",
}
# Options whose effect sliceflow does not reproduce: refused rather than silently wrong.
_UNSUPPORTED = {
    "primitivesasstring": "primitivesAsString",
    "multiline": "multiLine",
    "enabledatetimeparsingfallback": "enableDateTimeParsingFallback",
    "singlevariantcolumn": "singleVariantColumn",
    "allowtrailingcomma": "allowTrailingComma",
}


# The unsupported options Spark parses as booleans (a bad value is refused as Spark does).
_PARSED_UNSUPPORTED = {"primitivesasstring", "multiline", "enabledatetimeparsingfallback"}


# The charsets spark.read.json accepts (JSONOptionsInRead), by Spark's lower-case name: the
# Python codec that reads them. UTF-16 and UTF-32 without a BOM are big-endian, as in Java.
_CHARSETS = {
    "utf-8": "utf-8",
    "utf-16": "utf-16",
    "utf-16be": "utf-16-be",
    "utf-16le": "utf-16-le",
    "utf-32": "utf-32",
    "iso-8859-1": "latin-1",
    "us-ascii": "ascii",
}
# Charsets whose line mode Spark refuses (their BOM-less default makes a line split ambiguous).
_LINE_MODE_DENIED = {"utf-16", "utf-32"}


@dataclass(frozen=True)
class FileFormat:
    """How the files of ``spark.read.json`` are cut into records: ``multiLine`` (a file is one
    record), ``encoding`` (a Python codec name; None for UTF-8 read as bytes) and
    ``line_sep`` (the record separator in the file's encoding; None for CR, LF or CRLF)."""

    multi_line: bool = False
    encoding: str | None = None
    line_sep: bytes | None = None


def _option(options: JsonOptions, *names: str) -> str | None:
    for key, value in options.items():
        if key.lower() in names:
            return as_text(value)
    return None


def file_format(options: JsonOptions | None) -> FileFormat:
    """The record layout of ``spark.read.json`` options, refused where Spark refuses it.

    >>> file_format({"encoding": "UTF-16LE", "lineSep": "\\n"}).line_sep
    b'\\n\\x00'
    """
    options = options or {}
    multi = (_option(options, "multiline") or "false").lower()
    if multi not in ("true", "false"):
        raise OptionError(f"option 'multiLine' must be true or false, got {multi!r}")
    multi_line = multi == "true"
    charset = _option(options, "encoding", "charset")
    codec = None
    if charset is not None:
        codec = _CHARSETS.get(charset.lower())
        if codec is None:
            raise OptionError(
                "[INVALID_PARAMETER_VALUE.CHARSET] option 'encoding' expects one of "
                f"{', '.join(sorted(_CHARSETS))}, but got {charset!r}"
            )
        if not multi_line and charset.lower() in _LINE_MODE_DENIED:
            raise OptionError(
                f"the {charset} encoding reads with multiLine=true only (Spark denies it in "
                "line mode): use UTF-16LE / UTF-16BE with lineSep, or multiLine"
            )
    sep_text = _option(options, "linesep")
    if sep_text is not None and not sep_text:
        raise OptionError("'lineSep' cannot be an empty string")
    if codec not in (None, "utf-8") and sep_text is None and not multi_line:
        raise OptionError(f"the lineSep option must be specified for the {charset} encoding")
    line_sep = None
    if sep_text is not None:
        line_sep = sep_text.encode("utf-16-be" if codec == "utf-16" else codec or "utf-8")
    return FileFormat(multi_line, codec, line_sep)


def as_text(value: OptionValue) -> str:
    """An option's value as Spark reads it (``True`` -> ``true``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def normalize(
    options: JsonOptions | None,
    schema: pa.Schema,
    *,
    default_time_zone: str = "UTC",
    default_corrupt_column: str = DEFAULT_CORRUPT_COLUMN,
    file_source: bool = False,
) -> dict[str, str]:
    """Validates Spark JSON options (names are case-insensitive) into the C++ decoder's form.

    ``file_source``: the options of ``spark.read.json`` (records of files: DROPMALFORMED,
    ``multiLine``, ``encoding`` and ``lineSep`` allowed, exact source text for non-string
    values of STRING fields when the bytes are UTF-8 read as bytes), not of ``from_json``.
    """
    out: dict[str, str] = {}
    if file_source:
        layout = file_format(options)
        out["file_records"] = "true"
        # Without an encoding Spark's parser reads the record's bytes; with one, characters.
        out["exact_string_text"] = "true" if layout.encoding is None else "false"
        out["skip_byte_order_mark"] = "true" if layout.encoding in (None, "utf-8") else "false"
        if layout.line_sep is not None:
            # Transcoded records are separated by the separator's UTF-8 form.
            out["lineSep"] = layout.line_sep.decode(layout.encoding or "utf-8")
    corrupt_name = default_corrupt_column
    time_zone = default_time_zone
    for key, raw in (options or {}).items():
        lower = key.lower()
        value = as_text(raw)
        if lower == "mode":
            mode = value.upper()
            if mode == "DROPMALFORMED" and not file_source:
                # Spark: [PARSE_MODE_UNSUPPORTED], when the plan is analysed.
                raise OptionError(
                    "[PARSE_MODE_UNSUPPORTED] The function `from_json` doesn't support the "
                    "DROPMALFORMED mode. Acceptable modes are PERMISSIVE and FAILFAST."
                )
            if mode not in ("PERMISSIVE", "FAILFAST", "DROPMALFORMED"):
                # Spark's ParseMode.fromString logs a warning and reads any other value as
                # PERMISSIVE.
                _log.warning("%s is not a valid parse mode. Using PERMISSIVE.", value)
                mode = "PERMISSIVE"
            out["mode"] = mode
        elif lower == "columnnameofcorruptrecord":
            corrupt_name = value
        elif lower == "timezone":
            time_zone = value
        elif lower in _BOOLEAN_OPTIONS:
            if value.lower() not in ("true", "false"):
                raise OptionError(f"option {key!r} must be true or false, got {raw!r}")
            out[_BOOLEAN_OPTIONS[lower]] = value.lower()
        elif lower in _PARSED_BOOLEANS or (
            lower in _PARSED_UNSUPPORTED and value.lower() not in ("true", "false")
        ):
            if value.lower() not in ("true", "false"):
                raise OptionError(
                    f"option {key!r} must be true or false, got {raw!r} (Spark fails the query "
                    f'with IllegalArgumentException: For input string: "{value}")'
                )
        elif lower == "samplingratio":
            try:
                float(value)
            except ValueError:
                raise OptionError(
                    f"option {key!r} must be a number, got {raw!r} (Spark fails the query with "
                    f'NumberFormatException: For input string: "{value}")'
                ) from None
        elif lower in _FORMAT_OPTIONS:
            out[_FORMAT_OPTIONS[lower]] = value
        elif lower in _UNSUPPORTED:
            if lower == "primitivesasstring" and (value.lower() == "false" or file_source):
                continue  # read.json with a schema: only schema inference reads it
            if lower == "multiline" and (value.lower() == "false" or file_source):
                continue  # file_format() read it
            if lower == "allowtrailingcomma" and file_source:
                continue  # read.json with a schema gives Jackson's strict result (probed)
            raise OptionError(f"sliceflow does not support the JSON option {_UNSUPPORTED[lower]!r}")
        elif lower in ("encoding", "charset", "linesep") and file_source:
            continue  # file_format() read them
        elif lower == "encoding" or lower == "charset":
            if value.replace("-", "").upper() != "UTF8":
                raise OptionError("sliceflow reads UTF-8 JSON only")
        elif lower == "locale":
            if value not in ("en-US", "en_US"):
                raise OptionError("sliceflow parses numbers and dates with the en-US locale only")
        # Every other option is ignored, as Spark ignores options it does not know.
    names = schema.names
    if corrupt_name in names:
        field = schema.field(corrupt_name)
        if field.type != pa.string() or not field.nullable:
            raise OptionError(
                f"the corrupt record column {corrupt_name!r} must be a nullable STRING field"
            )
        out["corrupt_column_index"] = str(names.index(corrupt_name))
    # Spark resolves the zone id up front; the C++ decoder refuses one Spark would not accept.
    out["timeZone"] = time_zone.strip()
    return out
