"""A brute-force model of sliceflow's Top-N (``cpp/topn/ranker.h``), for tests.

Deliberately naive: every key keeps a plain Python list of its live rows, sorted with a
comparator written from Spark's ``ORDER BY`` rules (nulls first/last, NaN above every number,
-0.0 equal to 0.0, strings and binary by their bytes), ties by arrival. Each input row is
applied on its own; a retraction (``-U``/``-D``) removes the earliest equal row (unmatched:
ignored). Per bundle (``bundle_rows`` rows of one micro-batch with mini-batch, else each row),
each touched key's top n before and after are compared (keys in first-touch order): with rank,
per rank ``-U``/``+U`` where the row changed and ``+I``/``-D`` where the top grew/shrank;
without, ``-D`` for rows that left then ``+I`` for rows that entered. Rows are told apart by
arrival without an op column (a row never comes back) and by their values with one.

>>> from sliceflow.topn.plan import OrderKey
>>> m = TopNModel(["k"], [OrderKey("v", descending=True)], 2)
>>> m.process([{"k": "a", "v": 1}, {"k": "a", "v": 3}, {"k": "a", "v": 2}])
[('+I', 'a', 3, 1), ('+I', 'a', 2, 2)]
>>> m.process([{"k": "a", "v": 5}])
[('-U', 'a', 3, 1), ('+U', 'a', 5, 1), ('-U', 'a', 2, 2), ('+U', 'a', 3, 2)]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from sliceflow.topn.plan import OrderKey

__all__ = ["TopNModel", "spark_compare"]


def _normal(v: Any) -> Any:
    if isinstance(v, float):
        if math.isnan(v):
            return ("nan",)
        return 0.0 if v == 0 else v
    return v


def _compare_values(a: Any, b: Any) -> int:
    if isinstance(a, float) or isinstance(b, float):
        a_nan = isinstance(a, float) and math.isnan(a)
        b_nan = isinstance(b, float) and math.isnan(b)
        if a_nan or b_nan:
            return int(a_nan) - int(b_nan)
    if isinstance(a, str):
        a, b = a.encode(), b.encode()
    if isinstance(a, Decimal) or isinstance(b, Decimal):
        a, b = Decimal(a), Decimal(b)
    return int(a > b) - int(a < b)


def spark_compare(order: Sequence[OrderKey], x: dict[str, Any], y: dict[str, Any]) -> int:
    """Spark's ``ORDER BY`` comparison of rows ``x`` and ``y`` (dicts) on ``order``."""
    for o in order:
        a, b = x[o.column], y[o.column]
        if a is None or b is None:
            if a is None and b is None:
                continue
            first = -1 if o.nulls_first else 1
            return first if a is None else -first
        c = _compare_values(a, b)
        if c:
            return -c if o.descending else c
    return 0


class TopNModel:
    """The model's state across micro-batches; :meth:`process` takes one micro-batch (a list
    of row dicts) and returns its output rows as tuples (op, the payload values, rank)."""

    def __init__(
        self,
        by: Sequence[str],
        order: Sequence[OrderKey],
        n: int,
        *,
        with_rank: bool = True,
        op_col: str | None = None,
        mini_batch: bool = True,
        bundle_rows: int = 5000,
    ) -> None:
        self.by, self.order, self.n = list(by), list(order), n
        self.with_rank, self.op_col = with_rank, op_col
        self.mini_batch, self.bundle_rows = mini_batch, bundle_rows
        self.keys: dict[tuple[Any, ...], list[tuple[int, dict[str, Any]]]] = {}
        self.seq = 0
        self.ignored = 0

    def _payload(self, row: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in row.items() if k != self.op_col}

    def _same(self, a: tuple[int, dict[str, Any]], b: tuple[int, dict[str, Any]]) -> bool:
        if a[0] == b[0]:
            return True
        if self.op_col is None:
            return False
        return {k: _normal(v) for k, v in a[1].items()} == {k: _normal(v) for k, v in b[1].items()}

    def _apply(self, rows: list[tuple[int, dict[str, Any]]], row: dict[str, Any]) -> None:
        op = row.get(self.op_col) if self.op_col else None
        payload = self._payload(row)
        if op in (None, "+I", "+U"):
            self.seq += 1
            at = len(rows)
            while at > 0 and spark_compare(self.order, rows[at - 1][1], payload) > 0:
                at -= 1
            rows.insert(at, (self.seq, payload))
            return
        normal = {k: _normal(v) for k, v in payload.items()}
        for i, (_, live) in enumerate(rows):
            if {k: _normal(v) for k, v in live.items()} == normal:
                del rows[i]
                return
        self.ignored += 1

    def _emit(self, out: list[tuple[Any, ...]], op: str, row: dict[str, Any], rank: int) -> None:
        out.append((op, *row.values(), *([rank] if self.with_rank else [])))

    def _bundle(self, rows_in: list[dict[str, Any]], out: list[tuple[Any, ...]]) -> None:
        before: dict[tuple[Any, ...], list[tuple[int, dict[str, Any]]]] = {}
        for row in rows_in:
            key = tuple(_normal(row[c]) for c in self.by)
            rows = self.keys.setdefault(key, [])
            if key not in before:
                before[key] = rows[: self.n]
            self._apply(rows, row)
        for key, old in before.items():
            new = self.keys[key][: self.n]
            if self.with_rank:
                for r in range(max(len(old), len(new))):
                    if r < len(old) and r < len(new):
                        if not self._same(old[r], new[r]):
                            self._emit(out, "-U", old[r][1], r + 1)
                            self._emit(out, "+U", new[r][1], r + 1)
                    elif r < len(old):
                        self._emit(out, "-D", old[r][1], r + 1)
                    else:
                        self._emit(out, "+I", new[r][1], r + 1)
            else:
                matched = [False] * len(new)
                for r, o in enumerate(old):
                    j = next(
                        (j for j, w in enumerate(new) if not matched[j] and self._same(o, w)), None
                    )
                    if j is None:
                        self._emit(out, "-D", o[1], r + 1)
                    else:
                        matched[j] = True
                for j, w in enumerate(new):
                    if not matched[j]:
                        self._emit(out, "+I", w[1], j + 1)

    def process(self, batch: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
        out: list[tuple[Any, ...]] = []
        step = self.bundle_rows if self.mini_batch else 1
        for start in range(0, len(batch), step):
            self._bundle(batch[start : start + step], out)
        return out

    def final(self) -> list[tuple[Any, ...]]:
        """Each key's top n now, as ``("+I", payload..., rank)`` rows in key order."""
        out: list[tuple[Any, ...]] = []
        for rows in self.keys.values():
            for r, (_, row) in enumerate(rows[: self.n]):
                self._emit(out, "+I", row, r + 1)
        return out
