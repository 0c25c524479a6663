"""Spark's JSON reader options, normalised for the C++ decoder."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import pyarrow as pa

from sliceflow.errors import OptionError

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


def _as_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def normalize(
    options: Mapping[str, Any] | None,
    schema: pa.Schema,
    *,
    default_time_zone: str = "UTC",
    default_corrupt_column: str = DEFAULT_CORRUPT_COLUMN,
) -> dict[str, str]:
    """Validates Spark JSON options (names are case-insensitive) into the C++ decoder's form."""
    out: dict[str, str] = {}
    corrupt_name = default_corrupt_column
    time_zone = default_time_zone
    for key, raw in (options or {}).items():
        lower = key.lower()
        value = _as_text(raw)
        if lower == "mode":
            mode = value.upper()
            if mode == "DROPMALFORMED":
                # Spark: [PARSE_MODE_UNSUPPORTED], when the plan is analysed.
                raise OptionError(
                    "[PARSE_MODE_UNSUPPORTED] The function `from_json` doesn't support the "
                    "DROPMALFORMED mode. Acceptable modes are PERMISSIVE and FAILFAST."
                )
            if mode not in ("PERMISSIVE", "FAILFAST"):
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
            if lower == "primitivesasstring" and value.lower() == "false":
                continue
            if lower == "multiline" and value.lower() == "false":
                continue
            raise OptionError(f"sliceflow does not support the JSON option {_UNSUPPORTED[lower]!r}")
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
