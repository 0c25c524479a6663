"""A brute-force, plain-Python model of the regular join of two changelogs (``cpp/join/``'s
semantics), to test the kernel and the Spark operator against.

Each side is a list of live rows (``+I``/``+U``/null add a row, ``-U``/``-D`` take back the
latest live row equal to it; one that matches none is ignored and counted). The join of the
two lists is computed from scratch, as Spark's ``L.join(R, on, how)`` would: a key with a null
column matches nothing, an outer side's rows without a match come out null-padded. The changes
of a bundle are the multiset difference of the join before and after it: ``-D`` for each row
that left, ``+I`` for each that came (without mini-batch every row is a bundle; an inner join
then forwards the row's kind, as Flink's operator does).

>>> model = JoinModel(["k"], ["a"], ["b"], how="left")
>>> model.micro_batch([{"k": 1, "a": "x"}], [{"k": 1, "b": "y"}])
[('+I', {'k': 1, 'a': 'x', 'b': 'y'})]
>>> model.materialized()
[{'k': 1, 'a': 'x', 'b': 'y'}]
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

__all__ = ["JoinModel", "brute_join", "materialize_changes"]

Row = dict[str, Any]
_RETRACT = ("-U", "-D")


def _same(a: Any, b: Any) -> bool:
    """Equal as the kernel's row identity compares: null equals null, NaN equals NaN, -0.0
    differs from 0.0."""
    if a is None or b is None:
        return a is b
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    return type(a) is type(b) and bool(a == b)


def _equal_rows(a: Row, b: Row) -> bool:
    return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)


def brute_join(
    left: Sequence[Row],
    right: Sequence[Row],
    on: Sequence[str],
    how: str,
    left_columns: Sequence[str],
    right_columns: Sequence[str],
) -> list[Row]:
    """Spark's ``L.join(R, on, how)`` of two lists of rows, by nested loops: the key columns
    once (left's, right's for ``right``, the first not null for ``full``), then each side's
    ``*_columns`` (its columns other than ``on``)."""

    def key(row: Row) -> tuple[Any, ...] | None:
        k = tuple(row[c] for c in on)
        return None if any(v is None for v in k) else k

    def out(lr: Row | None, rr: Row | None) -> Row:
        row: Row = {}
        for c in on:
            lv = None if lr is None else lr[c]
            rv = None if rr is None else rr[c]
            row[c] = rv if how == "right" else (lv if lv is not None or how != "full" else rv)
        for c in left_columns:
            row[c] = None if lr is None else lr[c]
        for c in right_columns:
            row[c] = None if rr is None else rr[c]
        return row

    result: list[Row] = []
    matched_right = [False] * len(right)
    for lr in left:
        lk = key(lr)
        hit = False
        for j, rr in enumerate(right):
            if lk is not None and key(rr) == lk:
                result.append(out(lr, rr))
                hit = matched_right[j] = True
        if not hit and how in ("left", "full"):
            result.append(out(lr, None))
    if how in ("right", "full"):
        result += [out(None, rr) for j, rr in enumerate(right) if not matched_right[j]]
    return result


def _frozen(row: Row) -> tuple[Any, ...]:
    return tuple(
        ("nan",) if isinstance(v, float) and math.isnan(v) else (type(v).__name__, v)
        for v in row.values()
    )


def materialize_changes(changes: Sequence[tuple[str, Row]]) -> Counter[tuple[Any, ...]]:
    """The multiset a changelog materializes to (``+I``/``+U`` add, ``-U``/``-D`` take back),
    as a Counter of row tuples; a count below zero is a retraction of a row never emitted."""
    rows: Counter[tuple[Any, ...]] = Counter()
    for op, row in changes:
        rows[_frozen(row)] += -1 if op in _RETRACT else 1
    return +rows if all(v >= 0 for v in rows.values()) else rows


class JoinModel:
    """Both sides' rows in, changes out (``(op, row)`` pairs), micro-batch by micro-batch."""

    def __init__(
        self,
        on: Sequence[str],
        left_columns: Sequence[str],
        right_columns: Sequence[str],
        *,
        how: str = "inner",
        left_op_col: str | None = None,
        right_op_col: str | None = None,
        mini_batch: bool = True,
        bundle_rows: int = 5000,
    ) -> None:
        self.on, self.how = list(on), how
        self.op_cols = (left_op_col, right_op_col)
        self.mini_batch, self.bundle_rows = mini_batch, bundle_rows
        self.live: tuple[list[Row], list[Row]] = ([], [])
        #: Each side's columns other than ``on`` and its op column.
        self.columns = (list(left_columns), list(right_columns))
        self.ignored = 0

    def _outer(self, side: int) -> bool:
        return self.how == "full" or self.how == ("left", "right")[side]

    def materialized(self) -> list[Row]:
        """The join of both sides' live rows."""
        return brute_join(
            self.live[0], self.live[1], self.on, self.how, self.columns[0], self.columns[1]
        )

    def _apply(self, side: int, row: Row) -> str:
        """Adds or takes back one row; its kind (``""``: it changed nothing)."""
        op_col = self.op_cols[side]
        row = dict(row)
        op = row.pop(op_col, None) if op_col is not None else None
        op = op or "+I"
        null_key = any(row[c] is None for c in self.on)
        if null_key and not self._outer(side):
            return ""  # never matches, never emits: not kept
        live = self.live[side]
        if op in _RETRACT:
            for i in range(len(live) - 1, -1, -1):
                if _equal_rows(live[i], row):
                    del live[i]
                    return op
            self.ignored += 1
            return ""
        live.append(row)
        return op

    def _diff(self, before: list[Row], after: list[Row], kind: str) -> list[tuple[str, Row]]:
        old = Counter(_frozen(r) for r in before)
        new = Counter(_frozen(r) for r in after)
        by_key = {_frozen(r): r for r in [*before, *after]}
        gone, came = old - new, new - old
        forward = not self.mini_batch and self.how == "inner" and kind
        out: list[tuple[str, Row]] = []
        for k, n in gone.items():
            out += [(kind if forward else "-D", by_key[k])] * n
        for k, n in came.items():
            out += [(kind if forward else "+I", by_key[k])] * n
        return out

    def micro_batch(self, left: Sequence[Row], right: Sequence[Row]) -> list[tuple[str, Row]]:
        """The left rows, then the right rows, in bundles of ``bundle_rows`` (each row one
        bundle without mini-batch); the changes, bundle by bundle (within a bundle, in no
        particular order)."""
        arrivals = [(0, r) for r in left] + [(1, r) for r in right]
        size = self.bundle_rows if self.mini_batch else 1
        out: list[tuple[str, Row]] = []
        for start in range(0, len(arrivals), size):
            before = self.materialized()
            kind = ""
            for side, row in arrivals[start : start + size]:
                kind = self._apply(side, row)
            out += self._diff(before, self.materialized(), kind)
        return out
