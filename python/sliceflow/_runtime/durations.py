"""Durations: Spark interval strings (as ``window()`` takes them) to microseconds (window sizes,
slides and offsets; a join's ``state_ttl``).

Spark parses the duration strings of ``pyspark.sql.functions.window`` with
``IntervalUtils.stringToInterval``; :func:`parse_duration` follows the same grammar, so a
string works here exactly when it works there (measured on Spark 4.3):

* an optional leading ``interval``, then one or more ``<number> <unit>`` pairs separated by
  white space; case does not matter;
* a number is an optional sign (``+``/``-``, white space may follow it) and decimal digits;
  only seconds may have a fraction (up to 9 digits, truncated to microseconds: ``1.5 seconds``,
  ``.5 second``);
* units, singular or plural: ``week``, ``day``, ``hour``, ``minute``, ``second``,
  ``millisecond``, ``microsecond`` (no abbreviations: Spark refuses ``1 sec`` and ``1 h``);
  a day is 24 hours;
* ``month`` and ``year`` parse but are refused, as ``window()`` refuses them ("Intervals
  greater than a month is not supported").

>>> parse_duration("1 hour 30 minutes", "size")
5400000000
>>> parse_duration("interval 1.5 seconds", "slide")
1500000
"""

from __future__ import annotations

import datetime as _dt

__all__ = ["DurationLike", "format_duration", "parse_duration"]

DurationLike = str | _dt.timedelta

MICROS_PER_SECOND = 1_000_000
MICROS_PER_DAY = 86_400 * MICROS_PER_SECOND
_INT32_MAX = (1 << 31) - 1
_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1

# (unit, µs per unit); None: a calendar unit (months) that windows refuse. Checked in this
# order at the start of a unit, as Spark does ('m' tries month, minute, millisecond,
# microsecond).
_UNITS: tuple[tuple[str, int | None], ...] = (
    ("year", None),
    ("week", 7 * MICROS_PER_DAY),
    ("day", MICROS_PER_DAY),
    ("hour", 3600 * MICROS_PER_SECOND),
    ("second", MICROS_PER_SECOND),
    ("month", None),
    ("minute", 60 * MICROS_PER_SECOND),
    ("millisecond", 1000),
    ("microsecond", 1),
)

# Java's Character.isWhitespace on ASCII (Spark's interval parser tests bytes with it).
_WHITESPACE = frozenset(" \t\n\x0b\x0c\r\x1c\x1d\x1e\x1f")


def _fail(text: str, what: str, why: str) -> ValueError:
    return ValueError(f"invalid {what} duration {text!r}: {why}")


def _parse_interval(text: str, what: str) -> int:
    """Microseconds of a Spark interval string (grammar of Spark's ``stringToInterval``)."""
    # UTF8String.trimAll drops white space and ISO control characters at both ends.
    s = text.strip("".join(chr(c) for c in range(33)) + "\x7f").lower()
    if not s:
        raise _fail(text, what, "the string is empty")
    if s.startswith("interval"):
        rest = s[len("interval") :]
        if not rest:
            raise _fail(text, what, "no value after 'interval'")
        if rest[0] not in _WHITESPACE:
            raise _fail(text, what, f"invalid interval prefix {s.split()[0]!r}")
        s = rest
    n = len(s)
    i = 0
    days = 0
    months = 0
    micros = 0
    pairs = 0
    while True:
        while i < n and s[i] in _WHITESPACE:
            i += 1
        if i == n:
            break
        # sign
        negative = False
        if s[i] in "+-":
            negative = s[i] == "-"
            i += 1
            while i < n and s[i] in _WHITESPACE:
                i += 1
        start = i
        while i < n and s[i].isascii() and s[i].isdigit():
            i += 1
        whole = s[start:i]
        fraction: str | None = None
        if i < n and s[i] == ".":
            i += 1
            f_start = i
            while i < n and s[i].isascii() and s[i].isdigit():
                i += 1
            fraction = s[f_start:i]
            if not whole and not fraction:
                raise _fail(text, what, "a number has no digits")
            if len(fraction) > 9:
                raise _fail(text, what, "more than 9 fractional digits (nanoseconds)")
        elif not whole:
            word = s[start:].split()[0] if s[start:].split() else s[start:]
            raise _fail(text, what, f"expected a number, found {word!r}")
        if i == n:
            raise _fail(text, what, f"the number {s[start:]!r} has no unit")
        if s[i] not in _WHITESPACE:
            word = s[start:].split()[0]
            raise _fail(text, what, f"expected '<number> <unit>', found {word!r}")
        while i < n and s[i] in _WHITESPACE:
            i += 1
        if i == n:
            raise _fail(text, what, f"the number {s[start:].strip()!r} has no unit")
        value = int(whole or "0")
        unit_start = i
        while i < n and s[i] not in _WHITESPACE:
            i += 1
        word = s[unit_start:i]
        unit = word[:-1] if word.endswith("s") and word[:-1] in dict(_UNITS) else word
        if unit not in dict(_UNITS):
            raise _fail(
                text,
                what,
                f"unknown unit {word!r} (use week, day, hour, minute, second, millisecond or "
                "microsecond)",
            )
        if fraction is not None and unit != "second":
            raise _fail(text, what, f"{word} cannot have a fractional part (only seconds can)")
        if negative:
            value = -value
        if unit == "year":
            months += 12 * value
        elif unit == "month":
            months += value
        elif unit == "week" or unit == "day":
            days += value * (7 if unit == "week" else 1)
            if abs(days) > _INT32_MAX + (days < 0):
                raise _fail(text, what, "too many days")
        else:
            factor = dict(_UNITS)[unit]
            assert factor is not None
            micros += value * factor
            if fraction is not None:
                frac_us = int((fraction + "000000")[:6])
                micros += -frac_us if negative else frac_us
            if not _INT64_MIN <= micros <= _INT64_MAX:
                raise _fail(text, what, "out of range")
        pairs += 1
    if pairs == 0:
        raise _fail(text, what, "no '<number> <unit>' pair")
    if months:
        raise _fail(
            text,
            what,
            "months and years are not supported (their length varies; Spark's window() "
            "refuses them too)",
        )
    total = days * MICROS_PER_DAY + micros
    if not _INT64_MIN <= total <= _INT64_MAX:
        raise _fail(text, what, "out of range")
    return total


def parse_duration(value: DurationLike, what: str = "window") -> int:
    """A duration in microseconds, from a Spark interval string or a ``datetime.timedelta``.

    ``what`` names the parameter in error messages (``"size"``, ``"slide"``, ``"offset"``).
    Signs are kept (a negative offset is meaningful); callers check positivity.

    Raises:
        TypeError: ``value`` is neither a string nor a timedelta.
        ValueError: the string is not a duration Spark's ``window()`` accepts.

    Example:
        >>> parse_duration("1 day", "size")
        86400000000
        >>> import datetime
        >>> parse_duration(datetime.timedelta(minutes=-5), "offset")
        -300000000
    """
    if isinstance(value, _dt.timedelta):
        return (value.days * 86_400 + value.seconds) * MICROS_PER_SECOND + value.microseconds
    if isinstance(value, str):
        return _parse_interval(value, what)
    raise TypeError(
        f"the {what} must be a duration string such as '5 minutes' or a datetime.timedelta, "
        f"not {type(value).__name__}"
    )


def format_duration(micros: int) -> str:
    """A short Spark interval string for ``micros`` (the largest unit that divides it).

    >>> format_duration(90_000_000)
    '90 seconds'
    >>> format_duration(86_400_000_000)
    '1 day'
    """
    if micros == 0:
        return "0 seconds"
    for unit, factor in (
        ("week", 7 * MICROS_PER_DAY),
        ("day", MICROS_PER_DAY),
        ("hour", 3600 * MICROS_PER_SECOND),
        ("minute", 60 * MICROS_PER_SECOND),
        ("second", MICROS_PER_SECOND),
        ("millisecond", 1000),
    ):
        if micros % factor == 0:
            count = micros // factor
            return f"{count} {unit}{'' if abs(count) == 1 else 's'}"
    return f"{micros} microsecond{'' if abs(micros) == 1 else 's'}"
