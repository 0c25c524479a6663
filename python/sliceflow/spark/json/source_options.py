"""Option values of the ``sliceflow.json`` source, read as Spark reads them.

Spark hands data source options over case-insensitively and writes sizes (``128m``) and times
(``7d``) as Hadoop-style strings; these helpers read them the same way for the batch and the
streaming reader.
"""

from __future__ import annotations

import re

from sliceflow.errors import OptionError

__all__ = ["parse_bytes", "parse_flag", "parse_time_ms", "pop_flag", "pop_option"]

_BYTE_UNITS = {
    "b": 1,
    "k": 1 << 10,
    "kb": 1 << 10,
    "m": 1 << 20,
    "mb": 1 << 20,
    "g": 1 << 30,
    "gb": 1 << 30,
}
#: Spark's ``JavaUtils.timeStringAs`` suffixes, in milliseconds (no suffix: milliseconds).
_TIME_UNITS = {
    "us": 0.001,
    "ms": 1,
    "s": 1000,
    "m": 60_000,
    "min": 60_000,
    "h": 3_600_000,
    "d": 86_400_000,
}
_TIME = re.compile(r"(-?[0-9]+)([a-z]+)?")


def pop_option(options: dict[str, str], name: str) -> str | None:
    """Removes an option by name, ignoring case, and returns its value (``None`` if absent).

    >>> opts = {"MaxFilesPerTrigger": "2"}
    >>> pop_option(opts, "maxFilesPerTrigger"), opts
    ('2', {})
    """
    for key in list(options):
        if key.lower() == name.lower():
            return options.pop(key)
    return None


def parse_flag(name: str, value: str) -> bool:
    """A true/false option value (case and surrounding space ignored); an ``OptionError``
    naming the option otherwise.

    >>> parse_flag("latestFirst", " TRUE"), parse_flag("latestFirst", "false")
    (True, False)
    """
    text = value.strip().lower()
    if text not in ("true", "false"):
        raise OptionError(f"option {name!r} must be true or false, got {value!r}")
    return text == "true"


def pop_flag(options: dict[str, str], name: str, default: bool = False) -> bool:
    """Removes a true/false option by name (ignoring case) and parses it; ``default`` when
    absent."""
    value = pop_option(options, name)
    return default if value is None else parse_flag(name, value)


def parse_bytes(value: str | int) -> int:
    """A byte size such as ``128m`` or ``1gb`` (binary units; no unit: bytes).

    >>> parse_bytes("128m"), parse_bytes(4096)
    (134217728, 4096)
    """
    text = str(value).strip().lower()
    for unit in sorted(_BYTE_UNITS, key=len, reverse=True):
        if text.endswith(unit):
            return int(float(text[: -len(unit)]) * _BYTE_UNITS[unit])
    return int(text)


def parse_time_ms(value: str, option: str) -> int:
    """A time such as ``7d``, ``1h`` or ``500ms`` in milliseconds, as Spark's
    ``timeStringAsMs`` reads it (no unit: milliseconds); ``option`` names it in the error.

    >>> parse_time_ms("7d", "maxFileAge"), parse_time_ms("90s", "maxFileAge")
    (604800000, 90000)
    """
    match = _TIME.fullmatch(value.strip().lower())
    if match is None or (match.group(2) or "ms") not in _TIME_UNITS:
        raise ValueError(
            f"option {option!r} must be a time such as 7d, 1h, 30m or 500ms, got {value!r}"
        )
    return int(int(match.group(1)) * _TIME_UNITS[match.group(2) or "ms"])
