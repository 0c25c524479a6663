"""Window specs: TUMBLE, HOP and CUMULATE windows on an event-time column, durations in µs.

Plain values made by :func:`tumble`, :func:`hop` and :func:`cumulate`, taken by
:func:`sliceflow.window.aggregate` and :func:`sliceflow.spark.window_agg`;
:mod:`sliceflow.window` re-exports these names (``W.tumble(...)``).

>>> tumble("ts", "1 minute").slice_size
60000000
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from sliceflow._runtime.durations import DurationLike, format_duration, parse_duration
from sliceflow.aggregates import ColumnArg, is_column_object

__all__ = ["WindowKind", "WindowSpec", "cumulate", "hop", "tumble"]

WindowKind = Literal["tumble", "hop", "cumulate"]


@dataclass(frozen=True)
class WindowSpec:
    """A window definition: its kind, the event-time column and its durations in µs.

    Made by :func:`tumble`, :func:`hop` and :func:`cumulate`. ``size`` is the window length
    (cumulate: the max size), ``slide`` the distance between window starts (tumble: ``size``;
    cumulate: the step), ``offset`` shifts the alignment (Spark's ``startTime``).

    >>> hop("ts", "10 minutes", "5 minutes")
    WindowSpec(kind='hop', time_col='ts', size=600000000, slide=300000000, offset=0)
    """

    kind: WindowKind
    #: The event-time column: a name (``sliceflow.spark.window_agg`` also takes a nested field
    #: ``"event.ts"`` or a pyspark Column).
    time_col: ColumnArg
    size: int
    slide: int
    offset: int = 0

    def __post_init__(self) -> None:
        if self.kind not in ("tumble", "hop", "cumulate"):
            raise ValueError(f"unknown window kind {self.kind!r} (tumble, hop or cumulate)")
        time_col: object = self.time_col  # a caller without a type checker may pass anything
        if not (isinstance(time_col, str) and time_col) and not is_column_object(time_col):
            raise TypeError(
                f"the time column must be a column name or a pyspark Column, not {time_col!r}"
            )
        for field in ("size", "slide", "offset"):
            value = getattr(self, field)
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError(f"{field} must be an int (µs), not {type(value).__name__}")
        size_name, slide_name = {
            "tumble": ("size", "size"),
            "hop": ("size", "slide"),
            "cumulate": ("max_size", "step"),
        }[self.kind]
        if self.size <= 0:
            raise ValueError(
                f"the window {size_name} must be positive, got {format_duration(self.size)}"
            )
        if self.slide <= 0:
            raise ValueError(
                f"the window {slide_name} must be positive, got {format_duration(self.slide)}"
            )
        if self.kind == "tumble" and self.slide != self.size:
            raise ValueError("a tumbling window slides by its size (slide must equal size)")
        if self.kind == "hop" and self.slide > self.size:
            raise ValueError(
                f"the slide ({format_duration(self.slide)}) must not be larger than the window "
                f"size ({format_duration(self.size)}), as in Spark's window()"
            )
        if self.kind == "cumulate" and self.size % self.slide != 0:
            raise ValueError(
                f"the max_size ({format_duration(self.size)}) must be a multiple of the step "
                f"({format_duration(self.slide)})"
            )

    @property
    def step(self) -> int:
        """The step of a cumulate window (µs); the same as ``slide``."""
        return self.slide

    @property
    def max_size(self) -> int:
        """The max window size of a cumulate window (µs); the same as ``size``."""
        return self.size

    @property
    def period(self) -> int:
        """The alignment period (a tumble or cumulate window's size, a hop window's slide); only
        ``offset mod period`` matters."""
        return self.slide if self.kind == "hop" else self.size

    @property
    def normalized_offset(self) -> int:
        """``offset`` reduced to ``[0, period)``, which gives the same windows."""
        return self.offset % self.period

    @property
    def slice_size(self) -> int:
        """The length of the slices windows are made of (for hop, the gcd of size and slide)."""
        return math.gcd(self.size, self.slide) if self.kind == "hop" else self.slide


def _check_time_col(ts: ColumnArg) -> ColumnArg:
    if not isinstance(ts, str) and not is_column_object(ts):
        raise TypeError(
            "the time column must be given by name (a str) or as a pyspark Column, not "
            f"{type(ts).__name__}"
        )
    return ts


def _offset(offset: DurationLike | None) -> int:
    return 0 if offset is None else parse_duration(offset, "offset")


def tumble(ts: ColumnArg, size: DurationLike, offset: DurationLike | None = None) -> WindowSpec:
    """Tumbling windows of ``size`` on the time column ``ts``: ``[offset + k·size, + size)``.

    Durations are Spark interval strings (``"5 minutes"``, ``"1 hour 30 minutes"``) or
    ``datetime.timedelta``; ``offset`` is Spark's ``startTime`` and may be negative.

    >>> tumble("ts", "1 minute")
    WindowSpec(kind='tumble', time_col='ts', size=60000000, slide=60000000, offset=0)
    """
    n = parse_duration(size, "size")
    return WindowSpec("tumble", _check_time_col(ts), n, n, _offset(offset))


def hop(
    ts: ColumnArg, size: DurationLike, slide: DurationLike, offset: DurationLike | None = None
) -> WindowSpec:
    """Hopping (sliding) windows of ``size`` every ``slide`` (``0 < slide <= size``).

    Windows start at ``offset + k·slide``. The kernel cuts time into slices of
    ``gcd(size, slide)`` and moves each window forward by retract-merge where it can.

    >>> hop("ts", size="1 day", slide="1 minute").slice_size
    60000000
    """
    return WindowSpec(
        "hop",
        _check_time_col(ts),
        parse_duration(size, "size"),
        parse_duration(slide, "slide"),
        _offset(offset),
    )


def cumulate(
    ts: ColumnArg, step: DurationLike, max_size: DurationLike, offset: DurationLike | None = None
) -> WindowSpec:
    """Cumulating windows (Flink's CUMULATE): cycles of ``max_size`` that grow by ``step``.

    In a cycle starting at ``c`` the windows are ``[c, c + j·step)`` for
    ``j = 1 … max_size/step``; ``max_size`` must be a multiple of ``step``.

    >>> cumulate("ts", step="1 hour", max_size="1 day").kind
    'cumulate'
    """
    return WindowSpec(
        "cumulate",
        _check_time_col(ts),
        parse_duration(max_size, "max_size"),
        parse_duration(step, "step"),
        _offset(offset),
    )
