"""A brute-force model of sliceflow's changelog aggregation (docs/changelog-kernel.md).

Deliberately naive: every input row is applied on its own, in arrival order, to a plain Python
state per key (the row rules 1-4 of the contract: Flink's ``GroupAggFunction``), and every
output value is recomputed from that state. With ``mini_batch=True`` each key's emitted value
is snapshotted when the key is first touched in a bundle and compared with its value at the end
of the bundle (``MiniBatchGroupAggFunction``'s net change), keys in first-touch order. The
"Local fold" of the contract is not modelled: the model never folds.

It is meant for tests: slow, but obviously correct.

Seed 000's two-level query (``SELECT day, SUM(cnt) FROM (SELECT day, MOD(user_id, 10),
COUNT(DISTINCT user_id) cnt ... GROUP BY day, MOD(user_id, 10)) GROUP BY day``), one source row
per micro-batch, mini-batch on:

>>> from sliceflow import window as W
>>> src = [[{"day": "d", "user_id": u, "b": u % 10}] for u in (1, 2, 11)]
>>> inner = ChangelogModel(["day", "b"], [W.count_distinct("user_id").alias("cnt")])
>>> per_batch = [inner.process(batch) for batch in src]  # the inner changelog, per batch
>>> per_batch
[[('+I', 'd', 1, 1)], [('+I', 'd', 2, 1)], [('-U', 'd', 1, 1), ('+U', 'd', 1, 2)]]
>>> outer = changelog_reference(
...     [[dict(zip(("op", "day", "b", "cnt"), r)) for r in batch] for batch in per_batch],
...     ["day"], [W.sum("cnt").alias("total")], op_col="op")
>>> [f"{op}{total}" for op, _, total in outer]
['+I1', '-U1', '+U2', '-U2', '+U3']

Modelling choices where the contract leaves room (see also :class:`ChangelogModel`):

* ``sum``/``avg`` of floats accumulate in one double, in arrival order (``s += v`` /
  ``s -= v``): the contract's double state, as in Flink; integers and decimals are exact.
* ``min``/``max``/``count_distinct`` count multiplicities per equality class of Spark's
  grouping (``-0.0 == 0.0``, every NaN equal). ``min``/``max`` emit, for the extreme class,
  the value that made that class live (insert-only: the first value seen among equal ones,
  as Spark's ``min``/``max`` do).
* ``first_value``/``last_value`` keep the live non-null values in arrival order; a retraction
  removes the earliest live value of the same equality class (as above).
* Apache Flink 2.3.0 (``tests/changelog/test_changelog_flink.py``) agrees row for row without
  mini-batch. With mini-batch it emits the same net change per key and bundle, but a bundle's
  keys in ``java.util.HashMap`` order, not first-touch order; it compares doubles with ``==``
  (NaN != NaN, -0.0 == 0.0) and orders them as Java does (-0.0 < 0.0); and it does not clear
  a key whose row count passes 0 inside a bundle (a double sum keeps its rounding residue).
* ``ansi=True``: an overflowing BIGINT or DECIMAL value raises :class:`OverflowError` when it
  is about to be emitted; ``ansi=False``: BIGINT wraps (two's complement, 64 bits) and an
  overflowing DECIMAL is null, and the net change compares those wrapped / null values.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import Any, Literal

import pyarrow as pa

from sliceflow.testing.reference_values import (
    decimal_from_unscaled,
    decimal_unscaled,
    equality_class,
    key_value_shown,
    null_first_order,
    round_half_up,
    value_order,
)
from sliceflow.testing.window_reference import INT64_MAX, INT64_MIN, result_type

__all__ = [
    "ACCUMULATE_OPS",
    "OPS",
    "RETRACT_OPS",
    "ChangelogModel",
    "changelog_reference",
    "materialize",
    "same_value",
]

#: The row kinds of a changelog, as the ``op`` column spells them.
OPS = ("+I", "-U", "+U", "-D")
ACCUMULATE_OPS = frozenset({"+I", "+U"})
RETRACT_OPS = frozenset({"-U", "-D"})

Row = Mapping[str, Any]
Emit = Literal["changelog", "final"]


# ---------------------------------------------------------------------------------------------
# Value equality "as emitted"


def _float_bits(v: float) -> int:
    """The bit pattern of a double; every NaN is one NaN."""
    if math.isnan(v):
        return 0x7FF8000000000000
    bits: int = struct.unpack("<q", struct.pack("<d", v))[0]
    return bits


def same_value(a: Any, b: Any) -> bool:
    """Values compared as emitted: nulls equal each other, floats by bit pattern (every NaN
    equal, ``-0.0 != 0.0``), other values by type and ``==``."""
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, float) and isinstance(b, float) and _float_bits(a) == _float_bits(b)
    return type(a) is type(b) and a == b


def _same_values(a: Sequence[Any], b: Sequence[Any]) -> bool:
    return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b, strict=True))


# ---------------------------------------------------------------------------------------------
# Overflow: a value that cannot be emitted in ANSI mode


@dataclass(frozen=True)
class _Overflowed:
    """An out-of-range BIGINT/DECIMAL value under ANSI mode: an error if it is emitted."""

    message: str


def _checked(values: Sequence[Any]) -> tuple[Any, ...]:
    for v in values:
        if isinstance(v, _Overflowed):
            raise OverflowError(v.message)
    return tuple(values)


# ---------------------------------------------------------------------------------------------
# Accumulators: one per aggregate and key; accumulate(v) / retract(v) / value()


class _Acc:
    def accumulate(self, v: Any) -> None:
        raise NotImplementedError

    def retract(self, v: Any) -> None:
        raise NotImplementedError

    def value(self) -> Any:
        raise NotImplementedError


class _CountRows(_Acc):
    """``count()``: the signed row count."""

    def __init__(self) -> None:
        self.n = 0

    def accumulate(self, v: Any) -> None:
        self.n += 1

    def retract(self, v: Any) -> None:
        self.n -= 1

    def value(self) -> int:
        return self.n


class _CountValues(_CountRows):
    """``count(col)``: the signed count of non-null values."""

    def accumulate(self, v: Any) -> None:
        if v is not None:
            self.n += 1

    def retract(self, v: Any) -> None:
        if v is not None:
            self.n -= 1


class _SumAvg(_Acc):
    """``sum``/``avg``: signed sum (exact for integers and decimals, a double for floats) and
    signed non-null count; the value is null when that count is 0.

    The argument type is looked up in ``types`` at the first non-null value (a model fed
    micro-batch by micro-batch may see only nulls in a column at first)."""

    def __init__(self, fn: str, col: str, types: Mapping[str, pa.DataType], ansi: bool) -> None:
        self.fn, self.col, self.types, self.ansi = fn, col, types, ansi
        self.t: pa.DataType | None = None
        self.kind = ""
        self.s: Any = 0
        self.n = 0

    def _resolve(self) -> pa.DataType:
        """Fixes the argument type (and the kind of sum) from ``types``; returns the type."""
        self.t = self.types[self.col]
        if pa.types.is_integer(self.t):
            self.kind = "int"
        elif pa.types.is_floating(self.t):
            self.kind, self.s = "float", 0.0
        else:
            self.kind = "decimal"
        return self.t

    def _add(self, v: Any, sign: int) -> None:
        if v is None:
            return
        t = self.t if self.t is not None else self._resolve()
        if self.kind == "float":
            self.s = self.s + float(v) if sign > 0 else self.s - float(v)
        elif self.kind == "int":
            self.s += sign * int(v)
        else:
            self.s += sign * decimal_unscaled(Decimal(v), t.scale)
        self.n += sign

    def accumulate(self, v: Any) -> None:
        self._add(v, 1)

    def retract(self, v: Any) -> None:
        self._add(v, -1)

    def _overflow(self, message: str) -> Any:
        return _Overflowed(f"[ARITHMETIC_OVERFLOW] {message}") if self.ansi else None

    def value(self) -> Any:
        if self.n == 0 or self.t is None:
            return None
        if self.fn == "sum":
            if self.kind == "float":
                return self.s
            if self.kind == "int":
                if INT64_MIN <= self.s <= INT64_MAX:
                    return self.s
                if self.ansi:
                    return _Overflowed(f"[ARITHMETIC_OVERFLOW] sum {self.s} overflows bigint")
                return (self.s + (1 << 63)) % (1 << 64) - (1 << 63)
            rt = result_type("sum", self.t)
            if abs(self.s) >= 10**rt.precision:
                return self._overflow(f"decimal sum overflows {rt}")
            return decimal_from_unscaled(self.s, self.t.scale)
        # avg
        if self.kind == "float":
            return self.s / self.n
        if self.kind == "int":
            return float(Fraction(self.s, self.n))
        rt = result_type("avg", self.t)
        st = result_type("sum", self.t)
        if abs(self.s) >= 10**st.precision:
            return self._overflow(f"decimal sum overflows {st}")
        u = round_half_up(Fraction(self.s, self.n * 10**self.t.scale), rt.scale)
        if abs(u) >= 10**rt.precision:
            return self._overflow(f"decimal avg overflows {rt}")
        return decimal_from_unscaled(u, rt.scale)


class _Multiset(_Acc):
    """Value class (Spark's grouping equality) → multiplicity; for each class with positive
    multiplicity, the value that made it positive."""

    def __init__(self) -> None:
        self.mult: dict[Any, int] = {}
        self.rep: dict[Any, Any] = {}

    def _add(self, v: Any, sign: int) -> None:
        if v is None:
            return
        k = equality_class(v)
        before = self.mult.get(k, 0)
        after = before + sign
        if before <= 0 < after:
            self.rep[k] = v
        elif after <= 0:
            self.rep.pop(k, None)
        if after == 0:
            del self.mult[k]
        else:
            self.mult[k] = after

    def accumulate(self, v: Any) -> None:
        self._add(v, 1)

    def retract(self, v: Any) -> None:
        self._add(v, -1)

    def live(self) -> list[Any]:
        return list(self.rep.values())


class _MinMax(_Multiset):
    def __init__(self, fn: str) -> None:
        super().__init__()
        self.fn = fn

    def value(self) -> Any:
        live = self.live()
        if not live:
            return None
        return (min if self.fn == "min" else max)(live, key=value_order)


class _CountDistinct(_Multiset):
    def value(self) -> int:
        return len(self.rep)


class _FirstLast(_Acc):
    """The live non-null values in arrival order; a retraction removes the earliest live value
    of its class (Flink's ``FirstValueWithRetract`` / ``LastValueWithRetract``)."""

    def __init__(self, fn: str) -> None:
        self.fn = fn
        self.values: list[Any] = []

    def accumulate(self, v: Any) -> None:
        if v is not None:
            self.values.append(v)

    def retract(self, v: Any) -> None:
        if v is None:
            return
        k = equality_class(v)
        for i, w in enumerate(self.values):
            if equality_class(w) == k:
                del self.values[i]
                return

    def value(self) -> Any:
        if not self.values:
            return None
        return self.values[0] if self.fn == "first_value" else self.values[-1]


# ---------------------------------------------------------------------------------------------
# Types of the aggregates' arguments (only sum/avg need one)


def _arg_types(
    batches: Sequence[Sequence[Row]], aggs: Sequence[Any], types: Mapping[str, pa.DataType]
) -> dict[str, pa.DataType]:
    """The types of sum/avg arguments: given in ``types``, else inferred by pyarrow from the
    non-null values (a column with none yet is left out)."""
    out: dict[str, pa.DataType] = {}
    for a in aggs:
        if a.fn not in ("sum", "avg") or a.col in out:
            continue
        t = types.get(a.col)
        if t is None:
            vals = [row.get(a.col) for batch in batches for row in batch]
            vals = [v for v in vals if v is not None]
            if not vals:
                continue
            t = pa.array(vals).type
        result_type(a.fn, t)  # TypeError for an argument sum/avg cannot take
        out[a.col] = t
    return out


# ---------------------------------------------------------------------------------------------
# The model


@dataclass
class KeyState:
    shown: tuple[Any, ...]
    rows: int = 0
    accs: list[_Acc] = field(default_factory=list)


def _emitted(st: KeyState) -> tuple[Any, ...]:
    """A present key's values as they would be emitted (keys, then aggregates)."""
    return (*st.shown, *(acc.value() for acc in st.accs))


@dataclass
class ChangelogModel:
    """The model with state: feed it micro-batches one at a time.

    ``stats`` counts ``rows_in``, ``retractions_ignored``, ``state_reads`` and
    ``state_writes`` (an update or a clear) the way Flink's operators do them: with
    mini-batch one read per key per bundle and one write unless every row of the key in the
    bundle was an ignored retraction; without, one read per row and one write per row that is
    not ignored.

    >>> from sliceflow import window as W
    >>> m = ChangelogModel(["k"], [W.count(), W.max("v")], op_col="op")
    >>> m.process([{"op": None, "k": 1, "v": 5}, {"op": "+I", "k": 1, "v": 7}])
    [('+I', 1, 2, 7)]
    >>> m.process([{"op": "-D", "k": 1, "v": 7}, {"op": "-D", "k": 2, "v": 1}])
    [('-U', 1, 2, 7), ('+U', 1, 1, 5)]
    >>> m.stats["retractions_ignored"], m.final()
    (1, [('+I', 1, 1, 5)])
    """

    by: Sequence[str]
    aggs: Sequence[Any]
    op_col: str | None = None
    mini_batch: bool = True
    bundle_rows: int | None = None
    ansi: bool = True
    types: Mapping[str, pa.DataType] = field(default_factory=dict)
    stats: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if isinstance(self.by, str):
            self.by = [self.by]
        self.by = list(self.by)
        self.aggs = list(self.aggs)
        for a in self.aggs:
            for attr in ("fn", "col", "name"):
                if not hasattr(a, attr):
                    raise TypeError(f"an aggregate must be an AggSpec, not {a!r}")
        bundle_rows: object = self.bundle_rows  # a caller may pass anything
        if bundle_rows is not None and (
            not isinstance(bundle_rows, int) or isinstance(bundle_rows, bool) or bundle_rows < 1
        ):
            raise ValueError(
                f"bundle_rows must be a positive int or None, not {self.bundle_rows!r}"
            )
        self._state: dict[tuple[Any, ...], KeyState] = {}
        self._arg_t: dict[str, pa.DataType] = dict(self.types)
        for name in ("rows_in", "retractions_ignored", "state_reads", "state_writes"):
            self.stats.setdefault(name, 0)

    # -- one row -------------------------------------------------------------------------------

    def _new_acc(self, a: Any) -> _Acc:
        if a.fn == "count":
            return _CountRows() if a.col is None else _CountValues()
        if a.fn in ("sum", "avg"):
            return _SumAvg(a.fn, a.col, self._arg_t, self.ansi)
        if a.fn in ("min", "max"):
            return _MinMax(a.fn)
        if a.fn == "count_distinct":
            return _CountDistinct()
        if a.fn in ("first_value", "last_value"):
            return _FirstLast(a.fn)
        raise ValueError(f"unknown aggregate {a.fn!r}")

    def _op(self, row: Row) -> str:
        if self.op_col is None:
            return "+I"
        op = row[self.op_col]
        if op is None:
            return "+I"
        if not isinstance(op, str) or op not in OPS:
            raise ValueError(
                f"invalid changelog op {op!r} in column {self.op_col!r} "
                f"(expected one of {', '.join(OPS)} or null)"
            )
        return op

    def _apply(self, norm: tuple[Any, ...], shown: tuple[Any, ...], op: str, row: Row) -> bool:
        """Row rules 1-4 on one row; False when the row is ignored (rule 1)."""
        st = self._state.get(norm)
        retract = op in RETRACT_OPS
        if st is None:
            if retract:
                self.stats["retractions_ignored"] += 1
                return False
            st = KeyState(shown, 0, [self._new_acc(a) for a in self.aggs])
            self._state[norm] = st
        for a, acc in zip(self.aggs, st.accs, strict=True):
            v = None if a.col is None else row[a.col]
            (acc.retract if retract else acc.accumulate)(v)
        st.rows += -1 if retract else 1
        if st.rows == 0:
            del self._state[norm]
        return True

    def _values(self, norm: tuple[Any, ...]) -> tuple[Any, ...] | None:
        """The key's values as they would be emitted, or None when the key is absent."""
        st = self._state.get(norm)
        return None if st is None else _emitted(st)

    @staticmethod
    def _change(
        before: tuple[Any, ...] | None, after: tuple[Any, ...] | None
    ) -> list[tuple[Any, ...]]:
        """The net-change table."""
        if before is None:
            return [] if after is None else [("+I", *_checked(after))]
        if after is None:
            return [("-D", *_checked(before))]
        if _same_values(before, after):
            return []
        return [("-U", *_checked(before)), ("+U", *_checked(after))]

    # -- micro-batches -------------------------------------------------------------------------

    def _key(self, row: Row) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        raw = tuple(row[k] for k in self.by)
        return tuple(equality_class(v) for v in raw), tuple(key_value_shown(v) for v in raw)

    def _prepare(
        self, rows: list[Row]
    ) -> tuple[list[str], list[tuple[tuple[Any, ...], tuple[Any, ...]]]]:
        """The ops and keys of a micro-batch (every op is checked before any row is applied);
        fixes the argument types of sum/avg on the first micro-batch that has values."""
        missing = [a for a in self.aggs if a.fn in ("sum", "avg") and a.col not in self._arg_t]
        if missing:
            self._arg_t.update(_arg_types([rows], missing, self.types))
        ops = [self._op(r) for r in rows]
        keys = [self._key(r) for r in rows]
        self.stats["rows_in"] += len(rows)
        return ops, keys

    def apply_only(self, rows: Sequence[Row]) -> None:
        """One micro-batch applied row by row without emitting anything (``emit="final"``:
        only the final values are emitted, so only they are judged for overflow)."""
        rows = list(rows)
        ops, keys = self._prepare(rows)
        for (norm, shown), op, row in zip(keys, ops, rows, strict=True):
            self._apply(norm, shown, op, row)

    def process(self, rows: Sequence[Row]) -> list[tuple[Any, ...]]:
        """One micro-batch: the changelog rows it emits, in emission order."""
        rows = list(rows)
        ops, keys = self._prepare(rows)
        out: list[tuple[Any, ...]] = []
        if not self.mini_batch:
            for (norm, shown), op, row in zip(keys, ops, rows, strict=True):
                before = self._values(norm)
                self.stats["state_reads"] += 1
                if self._apply(norm, shown, op, row):
                    self.stats["state_writes"] += 1
                out += self._change(before, self._values(norm))
            return out
        size = len(rows) if self.bundle_rows is None else self.bundle_rows
        for start in range(0, len(rows), max(size, 1)):
            befores: dict[tuple[Any, ...], tuple[Any, ...] | None] = {}  # first-touch order
            applied: set[tuple[Any, ...]] = set()
            for i in range(start, min(start + size, len(rows))):
                norm, shown = keys[i]
                if norm not in befores:
                    befores[norm] = self._values(norm)
                if self._apply(norm, shown, ops[i], rows[i]):
                    applied.add(norm)
            for norm, before in befores.items():
                self.stats["state_reads"] += 1
                if norm in applied:  # an update or a clear; none for ignored rows alone
                    self.stats["state_writes"] += 1
                out += self._change(before, self._values(norm))
        return out

    def final(self) -> list[tuple[Any, ...]]:
        """One ``+I`` row per present key, sorted by key (nulls first, NaN last)."""
        rows = [("+I", *_checked(_emitted(st))) for st in self._state.values()]
        rows.sort(key=lambda r: tuple(null_first_order(v) for v in r[1 : 1 + len(self.by)]))
        return rows


def changelog_reference(
    batches: Sequence[Sequence[Row]],
    by: Sequence[str],
    aggs: Sequence[Any],
    *,
    op_col: str | None = None,
    mini_batch: bool = True,
    bundle_rows: int | None = None,
    emit: Emit = "changelog",
    ansi: bool = True,
    types: Mapping[str, pa.DataType] | None = None,
    stats: dict[str, int] | None = None,
) -> list[tuple[Any, ...]]:
    """The changelog (or final table) of a group aggregation over ``batches``, by brute force.

    Args:
        batches: micro-batches, each a list of dict rows (column name → Python value). State
            carries across micro-batches; each is cut into bundles of ``bundle_rows`` rows.
        by: the key columns.
        aggs: ``sliceflow.window`` aggregate specs (anything with ``fn``, ``col``, ``name``).
        op_col: the column holding ``+I``/``-U``/``+U``/``-D`` (null: ``+I``); ``None``:
            every row is an insert. Any other op raises ``ValueError`` naming it.
        mini_batch: fold each bundle per key and emit one net change per touched key, in
            first-touch order; ``False``: one change per row.
        bundle_rows: rows per bundle (``None``: each micro-batch is one bundle).
        emit: ``"changelog"``, or ``"final"``: one ``+I`` row per key present at the end,
            sorted by key (nulls first, NaN last).
        ansi: an overflowing BIGINT/DECIMAL value raises ``OverflowError`` when emitted;
            ``False``: BIGINT wraps, DECIMAL becomes null.
        types: the argument columns' pyarrow types (only ``sum``/``avg`` use them; default:
            inferred from the values, e.g. a decimal's precision and scale).
        stats: a dict that receives the model's counters (see :class:`ChangelogModel`).

    Returns:
        Tuples ``(op, *key_values, *agg_values)``; float keys normalised (``-0.0`` → ``0.0``).
    """
    if emit not in ("changelog", "final"):
        raise ValueError(f"emit must be 'changelog' or 'final', not {emit!r}")
    batches = [list(b) for b in batches]
    model = ChangelogModel(
        by,
        aggs,
        op_col=op_col,
        mini_batch=mini_batch,
        bundle_rows=bundle_rows,
        ansi=ansi,
        types=_arg_types(batches, list(aggs), dict(types or {})),
    )
    out: list[tuple[Any, ...]] = []
    for batch in batches:
        if emit == "final":
            model.apply_only(batch)
        else:
            out += model.process(batch)
    if stats is not None:
        stats.update(model.stats)
    return model.final() if emit == "final" else out


def materialize(
    changelog: Iterable[Sequence[Any]], num_keys: int
) -> dict[tuple[Any, ...], tuple[Any, ...]]:
    """Applies a changelog to a table keyed by its first ``num_keys`` values (after the op):
    ``+I``/``+U`` upsert, ``-U``/``-D`` delete. Returns normalised key → the row's values
    (keys, then aggregates)."""
    table: dict[tuple[Any, ...], tuple[Any, ...]] = {}
    for op, *values in changelog:
        key = tuple(equality_class(v) for v in values[:num_keys])
        if op in ACCUMULATE_OPS:
            table[key] = tuple(values)
        elif op in RETRACT_OPS:
            table.pop(key, None)
        else:
            raise ValueError(f"invalid changelog op {op!r}")
    return table
