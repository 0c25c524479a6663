"""A brute-force, plain-Python model of ``deduplicate`` (``cpp/dedup/``'s semantics), to test
the kernel and the Spark operator against: per key the live rows, the kept row by the rule of
``keep`` and ``order_by``, one net change per key per bundle with mini-batch.

>>> model = DedupModel(["k"], keep="last", order_by="t")
>>> model.micro_batch([{"k": 1, "t": 2}, {"k": 1, "t": 1}])
[('+I', {'k': 1, 't': 2})]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

__all__ = ["DedupModel", "materialize_rows", "sort_key"]


def sort_key(value: Any) -> tuple[int, Any]:
    """Spark's ascending order of one value: nulls first, NaN last."""
    if value is None:
        return (0, 0)
    if isinstance(value, float) and math.isnan(value):
        return (2, 0)
    return (1, value)


class DedupModel:
    """Rows in, changes out (``(op, row)`` pairs), micro-batch by micro-batch."""

    def __init__(
        self,
        by: Sequence[str],
        *,
        keep: str = "first",
        order_by: str | None = None,
        op_col: str | None = None,
        mini_batch: bool = True,
        bundle_rows: int = 5000,
    ) -> None:
        self.by, self.keep, self.order_by, self.op_col = list(by), keep, order_by, op_col
        self.mini_batch, self.bundle_rows = mini_batch, bundle_rows
        self.live: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
        self.emitted: dict[tuple[Any, ...], dict[str, Any]] = {}
        self.ignored = 0

    def _best(self, rows: list[dict[str, Any]]) -> dict[str, Any] | None:
        best = None
        for r in rows:
            if best is None:
                best = r
            elif self.order_by is None:
                best = r if self.keep == "last" else best
            else:
                a, b = sort_key(r[self.order_by]), sort_key(best[self.order_by])
                if (a < b) if self.keep == "first" else (a >= b):
                    best = r
        return best

    def _flush(self, key: tuple[Any, ...], out: list[tuple[str, dict[str, Any]]]) -> None:
        old = self.emitted.get(key)
        new = self._best(self.live.get(key, []))
        if old is new or (old is not None and new is not None and self.op_col and old == new):
            if new is not None:
                self.emitted[key] = new
            return
        if new is None:
            out.append(("-D", old))  # type: ignore[arg-type]
            del self.emitted[key]
        elif old is None:
            out.append(("+I", new))
            self.emitted[key] = new
        else:
            out += [("-U", old), ("+U", new)]
            self.emitted[key] = new

    def micro_batch(self, rows: Sequence[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
        out: list[tuple[str, dict[str, Any]]] = []
        touched: dict[tuple[Any, ...], None] = {}
        for i, row in enumerate(rows):
            row = dict(row)
            op = row.pop(self.op_col, None) if self.op_col else None
            key = tuple(row[c] for c in self.by)
            live = self.live.setdefault(key, [])
            if op in ("-U", "-D"):
                matches = [j for j, r in enumerate(live) if r == row]
                if matches:
                    live.pop(matches[-1])
                else:
                    self.ignored += 1
            elif self.op_col is None and self.keep == "first" and self.order_by is None:
                if not live:
                    live.append(row)
            else:
                live.append(row)
                if self.op_col is None:  # only the kept row matters without retractions
                    live[:] = [self._best(live)]  # type: ignore[list-item]
            touched[key] = None
            if not self.mini_batch:
                self._flush(key, out)
            elif (i + 1) % self.bundle_rows == 0:
                for k in touched:
                    self._flush(k, out)
                touched.clear()
        for k in touched:
            self._flush(k, out)
        return out


def materialize_rows(changes: Sequence[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """The rows a changelog leaves once applied in order (a -U/-D removes one equal row)."""
    rows: list[dict[str, Any]] = []
    for op, row in changes:
        if op in ("+I", "+U"):
            rows.append(row)
        else:
            rows.remove(row)
    return rows
